//! `kumo-gen stats`: per model, chi-square test of independence between
//! instance structure signature and correctness.

use super::score::{ScoreInputs, read};
use super::{Error, Globals, Report, out};
use crate::stats;

// `--instances` is required: signatures and correctness come from them.
#[derive(clap::Args, Debug)]
#[command(mut_arg("instances", |a| a.required(true)))]
pub struct StatsArgs {
    #[command(flatten)]
    inputs: ScoreInputs,
    /// Pool signatures seen fewer than N times into one `other` row.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pool: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(globals: &Globals, args: &StatsArgs) -> Result<Report, Error> {
    let (files, sources) = read(globals, &args.inputs, None)?;
    if sources.instance_sets.is_empty() {
        // Nothing to take signatures from (the loader noted each file it skipped).
        return Err(Error::input_with_help(
            "no instance file under `--instances`: signatures and correctness come from the instances",
            "pass `--instances` the dataset directory the results were played on, e.g. `--instances generated/medical`",
        ));
    }
    let observed = stats::observe(&files, &sources, &sources.domains)?;
    if observed.unmatched > 0 {
        crate::stderr_line!(
            "note: {} result line(s) without a matching instance were left out",
            observed.unmatched
        );
    }
    let tests: Vec<stats::Test> = observed
        .per_model
        .iter()
        .map(|(model, data)| stats::test(model, data, args.pool))
        .collect();
    if args.json {
        let mut s = serde_json::to_string_pretty(&tests).expect("tests serialize");
        s.push('\n');
        out(&s)?;
        return Ok(Report::Done);
    }
    let text: String = tests.iter().map(stats::Test::text).collect();
    out(&text)?;
    Ok(Report::Done)
}
