//! `kumo-gen label`: add optimal-search labels to existing KUMO-format
//! instance lines (KUMO's published ones included).
//!
//! In: a domain (name or path) and a JSONL file of instances with KUMO's
//! fields `truths`, `actions`, `observations` (state label, or the value of
//! a numeric action) and `valid_truth`. Out: every input line, unchanged
//! except for an `optimal` member added (or replaced) at the end, in input
//! order, on stdout or atomically into `-o FILE`.
//!
//! The run is the library's [`pipeline::label`] (the input opened, the
//! lines labelled by [`pipeline::relabel`] in parallel chunks and input
//! order, the same output for any `--threads`, `-o FILE` written
//! atomically, a malformed line the user's input, exit code 1, naming the
//! line); this file turns the flags into its [`LabelJob`].

use std::io::{self, BufWriter};
use std::path::PathBuf;
use std::time::Duration;

use super::progress::Stderr;
use super::{Error, Report};
use crate::domain::Registry;
use crate::files::target::{Input, Written};
use crate::pipeline::{self, LabelJob};
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
    #[command(flatten)]
    pub pool: super::flags::PoolFlags,
    #[command(flatten)]
    pub budget: super::flags::BudgetFlags,
    /// Also limit each search's wall time (a positive number of seconds up
    /// to a day); which instances get labelled then depends on the machine.
    #[arg(long, value_name = "SECONDS", value_parser = super::flags::parse_timeout)]
    pub search_time: Option<f64>,
}

/// Runs `kumo-gen label`, resolving the domain in `registry`.
pub fn run_in(registry: &Registry, args: &LabelArgs) -> Result<Report, Error> {
    if let Some(output) = &args.output {
        let mut inputs = vec![Input::file("--instances", &args.instances)];
        inputs.extend(super::flags::domain_input(
            registry,
            "--domain",
            &args.domain,
        ));
        super::flags::refuse_over_inputs("-o", output, Written::File, &inputs)?;
    }
    let (domain, warnings) = registry.load(&args.domain)?;
    super::report_warnings(&domain, &warnings);
    let budget = SearchBudget {
        // Checked as the flag was read: positive, finite, at most a day.
        max_time: args.search_time.map(Duration::from_secs_f64),
        ..args.budget.budget()
    };
    let pool = args.pool.pool()?;
    let job = LabelJob {
        domain,
        instances: args.instances.clone(),
        output: args.output.clone(),
        budget,
    };
    let mut stdout = BufWriter::new(io::stdout().lock());
    pipeline::label(&job, &pool, &mut stdout, &Stderr::new())?;
    Ok(Report::Done)
}
