//! `kumo-gen merge --out DIR`: join the shard files of sharded runs into
//! the dataset files an unsharded run writes, byte for byte.

use std::path::PathBuf;

use super::generate::{RenderArgs, pool, progress_bar, summary_line};
use super::{Error, Globals, Report};
use crate::dataset::Dataset;
use crate::output;
use crate::search::SearchBudget;

/// Flags of `kumo-gen merge`.
#[derive(clap::Args, Debug, Clone)]
pub struct MergeArgs {
    /// Output root the shards were written to (OUT/DOMAIN/shards/).
    #[arg(long, default_value = "generated", value_name = "DIR")]
    pub out: PathBuf,
    /// Worker threads for redrawing duplicates (0: one per core).
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = super::generate::parse_threads)]
    pub threads: usize,
    /// Replace an existing dataset file.
    #[arg(long)]
    pub force: bool,
    /// Memo budget of the labels: redrawn instances are labelled under the
    /// shards' recorded budget; a larger one here then labels the lines
    /// that budget left unlabelled (and is recorded).
    #[arg(long, default_value_t = SearchBudget::DEFAULT_MAX_MEMO_ENTRIES, value_name = "ENTRIES", value_parser = super::generate::parse_entries)]
    pub search_budget: usize,
    /// Node budget of the labels (as `--search-budget`).
    #[arg(long, default_value_t = SearchBudget::DEFAULT_MAX_NODES, value_name = "NODES", value_parser = super::generate::parse_nodes)]
    pub search_nodes: u64,
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
    let bar = progress_bar(0, "merge", "instances");
    let progress = |done: u64| {
        bar.grow_to(done);
        bar.set_position(done);
    };
    let templates = args.render.templates()?;
    let budget = SearchBudget {
        max_memo_entries: args.search_budget,
        max_nodes: args.search_nodes,
        max_time: None,
    };
    let pool = pool(args.threads)?;
    let exclude = args.exclude.for_merge();
    let result = pool.install(|| {
        output::merge(
            &args.out,
            args.force,
            Some(budget),
            Some(&progress),
            &exclude,
        )
    });
    bar.finish();
    for s in &result? {
        crate::stderr_line!("{}", summary_line("merged", s));
        if let Some(note) = &s.note {
            crate::stderr_line!("note: {note}");
        }
        // The domain the dataset was made from, as its manifest records it.
        let dir = s.path.parent().unwrap_or(std::path::Path::new("."));
        let data = Dataset::open(&globals.registry, dir, None)?;
        let mut render = args.render.clone();
        render.no_sft |= s.part.as_ref().is_some_and(|part| {
            args.sft_parts
                .as_ref()
                .is_some_and(|names| !names.contains(part))
        });
        pool.install(|| {
            render.derive(data.domain(), &templates, &s.path, true, s.part.as_deref())
        })?;
    }
    Ok(Report::Done)
}
