//! `kumo-gen merge --out DIR`: join the shard files of sharded runs into
//! the dataset files an unsharded run writes, byte for byte.

use std::io;
use std::path::PathBuf;

use super::EXIT_INPUT;
use super::Globals;
use super::generate::{RenderArgs, pool, progress_bar, report, summary_line};
use crate::domain::{Domain, DomainDoc, compile};
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

/// Merges every shard group under `--out`; returns the exit code.
pub fn run(_globals: &Globals, args: &MergeArgs) -> io::Result<i32> {
    let bar = progress_bar(0, "merge", "instances");
    let progress = |done: u64| {
        bar.grow_to(done);
        bar.set_position(done);
    };
    let templates = match args.render.templates() {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
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
    match result {
        Ok(summaries) => {
            for s in &summaries {
                crate::stderr_line!("{}", summary_line("merged", s));
                if let Some(note) = &s.note {
                    crate::stderr_line!("note: {note}");
                }
                let domain = match dataset_domain(&s.path) {
                    Ok(domain) => domain,
                    Err(message) => {
                        crate::stderr_line!("error: {message}");
                        return Ok(EXIT_INPUT);
                    }
                };
                let mut render = args.render.clone();
                render.no_sft |= s.part.as_ref().is_some_and(|part| {
                    args.sft_parts
                        .as_ref()
                        .is_some_and(|names| !names.contains(part))
                });
                if let Err(code) = pool.install(|| {
                    render.derive(&domain, &templates, &s.path, true, s.part.as_deref())
                }) {
                    return Ok(code);
                }
            }
            Ok(0)
        }
        Err(e) => Ok(report(&e)),
    }
}

/// The domain a dataset file was made from, as recorded in the
/// `manifest.json` beside it, with the recorded hash of the domain file
/// (the compiled document has no file bytes; derived files such as the HF
/// card name the file's hash, as an unsharded run does).
fn dataset_domain(dataset: &std::path::Path) -> Result<Domain, String> {
    let manifest = dataset
        .parent()
        .unwrap_or(std::path::Path::new("."))
        .join("manifest.json");
    let name = manifest.display().to_string();
    let text =
        std::fs::read_to_string(&manifest).map_err(|e| format!("cannot read `{name}`: {e}"))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("`{name}` is not JSON: {e}"))?;
    let doc: DomainDoc = serde_json::from_value(value["domain"]["document"].clone())
        .map_err(|e| format!("`{name}` has no readable `domain.document`: {e}"))?;
    let (mut domain, _) = compile(&name, &doc).map_err(|e| e.to_string())?;
    if let Some(hash) = value["domain"]["hash"].as_str() {
        domain.source_hash = hash.to_string();
    }
    Ok(domain)
}
