//! `kumo-gen graph`: the domain graph of one domain as a text summary,
//! JSON, Graphviz DOT or a self-contained SVG picture, on stdout or into a
//! file (written atomically: temp file + rename).

use std::path::{Path, PathBuf};

use super::{Error, Globals, Report, out};
use crate::graph::report::GraphReport;
use crate::graph::{DomainGraph, LOUVAIN_RUNS};

#[derive(clap::Args, Debug)]
pub struct GraphArgs {
    /// Domain name or path to a .yaml file.
    #[arg(long, value_name = "NAME|PATH")]
    domain: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = GraphFormat::Text)]
    format: GraphFormat,
    /// Write to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Seed of the Louvain runs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Louvain runs; the partition with the highest modularity is kept.
    #[arg(long, default_value_t = LOUVAIN_RUNS, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: u32,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum GraphFormat {
    Text,
    Json,
    Dot,
    Svg,
}

/// Runs `kumo-gen graph`.
pub fn run(globals: &Globals, args: &GraphArgs) -> Result<Report, Error> {
    if let Some(path) = &args.output {
        super::flags::refuse_overwriting_domain(&globals.registry, &args.domain, path, "-o")?;
    }
    let (domain, _warnings) = globals.registry.load(&args.domain)?;
    let graph = DomainGraph::build(&domain);
    let partition = graph.communities(args.seed, args.runs);
    let report = GraphReport::new(&domain, &graph, &partition, args.seed, args.runs);
    let text = match args.format {
        GraphFormat::Text => report.text(),
        GraphFormat::Json => report.json(),
        GraphFormat::Dot => report.dot(),
        GraphFormat::Svg => report.svg(),
    };
    match &args.output {
        Some(path) => {
            write_atomic(path, text.as_bytes())?;
            Ok(Report::Done)
        }
        None => {
            out(&text)?;
            Ok(Report::Done)
        }
    }
}

/// Writes `bytes` to `path` atomically (the crate's one atomic writer).
pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), crate::files::FileError> {
    crate::files::write_atomic(path, bytes)
}
