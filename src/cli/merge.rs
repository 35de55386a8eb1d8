//! `kumo-gen merge --out DIR`: join the shard files of sharded runs into
//! the dataset files an unsharded run writes, byte for byte.

use std::io;
use std::path::PathBuf;

use super::Globals;
use super::generate::{pool, progress_bar, report, summary_line};
use crate::output;

/// Flags of `kumo-gen merge`.
#[derive(clap::Args, Debug, Clone)]
pub struct MergeArgs {
    /// Output root the shards were written to (OUT/DOMAIN/shards/).
    #[arg(long, default_value = "generated", value_name = "DIR")]
    pub out: PathBuf,
    /// Worker threads for redrawing duplicates (0: one per core).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub threads: usize,
    /// Replace an existing dataset file.
    #[arg(long)]
    pub force: bool,
}

/// Merges every shard group under `--out`; returns the exit code.
pub fn run(_globals: &Globals, args: &MergeArgs) -> io::Result<i32> {
    let bar = progress_bar(0);
    let progress = |done: u64| {
        if let Some(bar) = &bar {
            bar.set_length(bar.length().unwrap_or(0).max(done));
            bar.set_position(done);
        }
    };
    let result =
        pool(args.threads)?.install(|| output::merge(&args.out, args.force, None, Some(&progress)));
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    match result {
        Ok(summaries) => {
            for s in &summaries {
                eprintln!("{}", summary_line("merged", s));
            }
            Ok(0)
        }
        Err(e) => Ok(report(&e)),
    }
}
