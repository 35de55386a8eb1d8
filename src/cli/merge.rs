//! `kumo-gen merge --out DIR`: join the shard files of sharded runs into
//! the dataset files an unsharded run writes, byte for byte: flags to one
//! [`MergeJob`], run by the library's [`pipeline::merge`].

use std::path::PathBuf;

use super::flags::PoolFlags;
use super::generate::RenderArgs;
use super::progress::Stderr;
use super::{Error, Globals, Report};
use crate::pipeline::{self, MergeJob};

/// Flags of `kumo-gen merge`.
#[derive(clap::Args, Debug, Clone)]
#[command(mut_arg("threads", |a| a.help("Worker threads for redrawing duplicates (0: one per core)")))]
pub struct MergeArgs {
    /// Output root the shards were written to (OUT/DOMAIN/shards/).
    #[arg(long, default_value = "generated", value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub pool: PoolFlags,
    /// Replace an existing dataset file.
    #[arg(long)]
    pub force: bool,
    /// The search budget of the labels: redrawn instances are labelled
    /// under the shards' recorded budget; a larger one here then labels the
    /// lines that budget left unlabelled (and is recorded).
    #[command(flatten)]
    pub budget: super::flags::BudgetFlags,
    /// Shards of a `--split` run: the parts that get SFT records (default:
    /// every part), as `generate --sft-parts`.
    #[arg(
        long,
        value_name = "PART,...",
        value_delimiter = ',',
        conflicts_with = "no_sft"
    )]
    pub sft_parts: Option<Vec<String>>,
    /// The `--exclude` the shards were generated with.
    #[command(flatten)]
    pub exclude: super::contamination::ExcludeArgs,
    #[command(flatten)]
    pub render: RenderArgs,
}

/// Merges every shard group under `--out`.
pub fn run(globals: &Globals, args: &MergeArgs) -> Result<Report, Error> {
    super::flags::check_out_dir(&args.out, "--out")?;
    let job = MergeJob {
        registry: &globals.registry,
        out: args.out.clone(),
        force: args.force,
        labels: args.budget.budget(),
        exclude: args.exclude.for_merge(),
        derived: args.render.derived_files()?,
        sft_parts: args.sft_parts.clone(),
    };
    let pool = args.pool.pool()?;
    pool.install(|| pipeline::merge(&job, &Stderr::new()))?;
    Ok(Report::Done)
}
