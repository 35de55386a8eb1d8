//! `kumo-gen label`: add optimal-search labels to existing KUMO-format
//! instance lines (KUMO's published ones included).
//!
//! In: a domain (name or path) and a JSONL file of instances with KUMO's
//! fields `truths`, `actions`, `observations` (state label, or the value of
//! a numeric action) and `valid_truth`. Out: every input line, unchanged
//! except for an `optimal` member added (or replaced) at the end, in input
//! order, on stdout or atomically into `-o FILE`.
//!
//! The labelling itself is the library's [`pipeline::relabel`]
//! (parallel chunks, input order, the same output for any `--threads`);
//! this file reads the arguments, opens the input, writes `-o FILE`
//! atomically and turns failures into [`super::Error`]s (a malformed
//! line: the user's input, exit code 1, naming the line).

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::time::Duration;

use super::{Error, Report};
use crate::domain::Registry;
use crate::output::files::{NamingWriter, write_atomic_with};
use crate::pipeline::relabel::{self, RelabelError, Summary};
use crate::pipeline::{Progress as _, Stage};
use crate::search::SearchBudget;

#[derive(clap::Args, Debug)]
pub struct LabelArgs {
    /// Domain of the instances: a name (`kumo-gen domains`) or a .yaml path.
    #[arg(long, value_name = "NAME|PATH")]
    pub domain: String,
    /// KUMO-format instance lines (JSONL); `-` reads stdin.
    #[arg(long, value_name = "FILE.jsonl")]
    pub instances: PathBuf,
    /// Write here (atomically) instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = super::generate::parse_threads)]
    pub threads: Option<usize>,
    /// Most memo entries one instance's search may store before it is
    /// marked unlabelled (the table takes up to 48 bytes per entry up to 64
    /// truths + actions in all, 64 up to 128, 96 beyond).
    #[arg(long, value_name = "ENTRIES", default_value_t = SearchBudget::DEFAULT_MAX_MEMO_ENTRIES, value_parser = super::generate::parse_entries)]
    pub search_budget: usize,
    /// Most nodes one instance's search may expand before it is marked
    /// unlabelled: a time budget that gives the same output on every
    /// machine.
    #[arg(long, value_name = "NODES", default_value_t = SearchBudget::DEFAULT_MAX_NODES, value_parser = super::generate::parse_nodes)]
    pub search_nodes: u64,
    /// Also limit each search's wall time; which instances get labelled
    /// then depends on the machine.
    #[arg(long, value_name = "SECONDS")]
    pub search_time: Option<f64>,
}

/// Runs `kumo-gen label` with the shipped domains.
pub fn run(args: &LabelArgs) -> Result<Report, Error> {
    run_in(&Registry::new(None), args)
}

/// Runs `kumo-gen label`, resolving the domain in `registry`.
pub fn run_in(registry: &Registry, args: &LabelArgs) -> Result<Report, Error> {
    let (domain, warnings) = registry.load(&args.domain)?;
    super::report_warnings(&domain, &warnings);
    let budget = budget(args).map_err(|message| Error::Usage {
        message,
        help: None,
    })?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
        .map_err(|e| io::Error::other(format!("cannot start worker threads: {e}")))?;
    let source = args.instances.display().to_string();
    // The total is known for a file (its lines), not for stdin.
    let total = match args.instances.as_os_str() == "-" {
        true => 0,
        false => count_lines(&args.instances),
    };
    let progress = super::progress::Stderr::new();
    progress.stage(Stage::new("labels", "lines", total));
    let input: Box<dyn BufRead> = if args.instances.as_os_str() == "-" {
        Box::new(BufReader::new(io::stdin().lock()))
    } else {
        let f = File::open(&args.instances)
            .map_err(|e| Error::input(format!("cannot read `{source}`: {e}")))?;
        Box::new(BufReader::new(f))
    };
    let job = |out: &mut dyn Write| {
        relabel::relabel(
            &pool,
            &domain,
            budget,
            &source,
            input,
            out,
            |w| crate::stderr_line!("warning: {w}"),
            &progress,
        )
    };
    let outcome = match &args.output {
        None => {
            let stdout = io::stdout();
            let mut w = BufWriter::new(stdout.lock());
            job(&mut w)
        }
        Some(path) => write_atomic_with(
            path,
            |w| job(&mut NamingWriter::new(w, path)),
            |p, e| {
                RelabelError::Io(io::Error::new(
                    e.kind(),
                    format!("cannot write `{}`: {e}", p.display()),
                ))
            },
        ),
    };
    progress.finish();
    match outcome {
        Ok(Summary {
            labelled,
            unlabelled,
        }) => {
            if unlabelled > 0 {
                crate::stderr_line!(
                    "warning: {unlabelled} of {} instances left unlabelled (search budget exceeded)",
                    labelled + unlabelled
                );
            }
            Ok(Report::Done)
        }
        Err(RelabelError::Input(errors)) => {
            let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
            Err(Error::input(messages.join("\nerror: ")))
        }
        Err(RelabelError::Io(e)) => Err(e.into()),
    }
}

/// Newlines in the file at `path` (0 when it cannot be read: the error
/// comes when it is opened for labelling).
fn count_lines(path: &std::path::Path) -> u64 {
    let Ok(file) = File::open(path) else {
        return 0;
    };
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut lines = 0;
    while let Ok(buf) = reader.fill_buf() {
        if buf.is_empty() {
            break;
        }
        lines += buf.iter().filter(|&&c| c == b'\n').count() as u64;
        let len = buf.len();
        reader.consume(len);
    }
    lines
}

fn budget(args: &LabelArgs) -> Result<SearchBudget, String> {
    let max_time = match args.search_time {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => {
            return Err(format!(
                "`--search-time` must be a positive number of seconds, not {s}"
            ));
        }
    };
    Ok(SearchBudget {
        max_memo_entries: args.search_budget,
        max_nodes: args.search_nodes,
        max_time,
    })
}
