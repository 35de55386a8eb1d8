//! `kumo-gen curriculum --domain D --levels K ...`: K datasets of
//! increasing difficulty, level `k` under `OUT/level-k/` with its own
//! manifest, books and SFT records, and with `--hf` one export `OUT/hf/`
//! with a config per level. The levels are the equal-count percentile
//! bands of [`crate::difficulty::curriculum`]; each level is an ordinary
//! banded `generate` run (flags as for `generate`, `-n` per level).

use super::generate::{GenerateArgs, Setup, run_one, setup};
use super::{Error, Globals, Report};
use crate::difficulty::curriculum::{MAX_LEVELS, level_band, level_name};

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
    let Setup {
        domain,
        params,
        templates,
        exclude,
        pool,
    } = setup(globals, g)?;
    let levels = args.levels as usize;
    for level in 1..=levels {
        let name = level_name(level);
        let out = g.out.join(&name);
        let band = level_band(level, levels);
        crate::stderr_line!(
            "level {level} of {levels}: percentile {:.1} to {:.1} of the setting's reference sample, {} instances into `{}`",
            band.min_percentile.unwrap_or(0.0),
            band.max_percentile.unwrap_or(100.0),
            g.n,
            out.display()
        );
        run_one(
            g,
            &domain,
            &templates,
            &pool,
            params.clone(),
            exclude.clone(),
            &out,
            g.n,
            Some(&name),
            Some(band),
        )?;
    }
    Ok(Report::Done)
}
