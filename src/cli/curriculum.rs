//! `kumo-gen curriculum --domain D --levels K ...`: K datasets of
//! increasing difficulty, level `k` under `OUT/level-k/` with its own
//! manifest, books and SFT records, and with `--hf` one export `OUT/hf/`
//! with a config per level. The levels are the equal-count percentile
//! bands of [`crate::difficulty::curriculum`]; each level is an ordinary
//! banded `generate` run (flags as for `generate`, `-n` per level), one
//! [`crate::pipeline::GenerateJob`] with [`Datasets::Levels`].

use super::generate::{GenerateArgs, job, run_job};
use super::{Error, Globals, Report};
use crate::difficulty::curriculum::MAX_LEVELS;
use crate::pipeline::Datasets;

/// `generate`'s flags that `curriculum` refuses (hidden from its help).
pub(super) const REFUSED: [&str; 9] = [
    "split",
    "sft_parts",
    "split_key",
    "shard",
    "no_labels",
    "min_expected",
    "max_expected",
    "min_golden",
    "max_golden",
];

#[derive(clap::Args, Debug)]
pub struct CurriculumArgs {
    /// Number of levels: equal-count bands over the percentile of expected
    /// steps in the setting's reference sample, easiest first.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..=MAX_LEVELS as u64))]
    pub levels: u64,
    #[command(flatten)]
    pub generate: GenerateArgs,
}

/// Runs `kumo-gen curriculum`.
pub fn run(globals: &Globals, args: &CurriculumArgs) -> Result<Report, Error> {
    let g = &args.generate;
    // Each of `REFUSED`, by the value it sets.
    let refused = if g.split.is_some() {
        Some("`--split`")
    } else if g.shard.is_some() {
        Some("`--shard`")
    } else if g.band.band().is_some() {
        Some("a band (`--min-expected` ...)")
    } else if g.no_labels {
        Some("`--no-labels`")
    } else {
        None
    };
    if let Some(flag) = refused {
        return Err(Error::Usage {
            message: format!(
                "`curriculum` does not take {flag}: its levels are bands of the labelled instances"
            ),
            help: Some("drop it, or run `generate` per level".into()),
        });
    }
    run_job(g, &job(globals, g, Datasets::Levels(args.levels as usize))?)
}
