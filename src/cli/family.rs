//! `kumo-gen family NAME [params] -o DOMAIN.yaml`: compile a procedural
//! task family (`rules3`, `circuits`, `ciphers`; see `crate::family`) into
//! an ordinary domain file, and with `--curve` print the exact optimal
//! expected number of probes as the number of hypotheses per instance
//! grows, with the golden trajectory's hypothesis-space size after each
//! probe (WILT's reduction curve, exact).

use std::io;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::graph::write_atomic;
use super::{Error, Report, out};
use crate::domain::Domain;
use crate::family::{FamilyParams, FamilyReport, default_counts, domain_file};
use crate::game::InstanceLine;
use crate::pipeline::generate_lines;
use crate::search::SearchBudget;
use crate::synth::Params;

#[derive(clap::Args, Debug)]
pub struct FamilyArgs {
    /// The family: `rules3` (hidden rules over integer triples), `circuits`
    /// (boolean circuits), `ciphers` (cipher keys).
    name: String,
    /// Write the domain here (YAML).
    #[arg(short = 'o', long, value_name = "DOMAIN.yaml")]
    output: Option<PathBuf>,
    /// Hypotheses to draw (equivalent ones are merged) [default: 200;
    /// ciphers 80].
    #[arg(long)]
    hypotheses: Option<usize>,
    /// Probes to draw [default: 40; ciphers 25].
    #[arg(long)]
    probes: Option<usize>,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// rules3: probe numbers lie in 0..=MAX.
    #[arg(long, value_name = "MAX", default_value_t = FamilyParams::default().max_value)]
    max_value: u32,
    /// circuits: number of inputs.
    #[arg(long, default_value_t = FamilyParams::default().inputs)]
    inputs: u32,
    /// circuits: gates per circuit at most.
    #[arg(long, default_value_t = FamilyParams::default().gates)]
    gates: u32,
    /// ciphers: alphabet size (letters from A).
    #[arg(long, default_value_t = FamilyParams::default().alphabet)]
    alphabet: u32,
    /// ciphers: plaintext length of a probe.
    #[arg(long, default_value_t = FamilyParams::default().length)]
    length: u32,
    /// Print the curve: for each hypotheses-per-instance count, the mean
    /// exact optimal expected probes and the golden reduction curve.
    #[arg(long)]
    curve: bool,
    /// Hypotheses per instance for --curve.
    #[arg(long, value_delimiter = ',', default_values_t = [4usize, 6, 8, 10, 12, 14])]
    curve_truths: Vec<usize>,
    /// Probes per instance for --curve.
    #[arg(long, default_value_t = 16)]
    curve_actions: usize,
    /// Instances per point of --curve.
    #[arg(long, default_value_t = 50)]
    curve_n: u64,
    /// Print the curve as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `kumo-gen family`.
pub fn run(args: &FamilyArgs) -> Result<Report, Error> {
    let (hypotheses, probes) = default_counts(&args.name);
    let params = FamilyParams {
        hypotheses: args.hypotheses.unwrap_or(hypotheses),
        probes: args.probes.unwrap_or(probes),
        seed: args.seed,
        max_value: args.max_value,
        inputs: args.inputs,
        gates: args.gates,
        alphabet: args.alphabet,
        length: args.length,
    };
    if args.output.is_none() && !args.curve {
        return Err(Error::input_with_help(
            "nothing to do",
            "pass -o DOMAIN.yaml, --curve, or both",
        ));
    }
    let (text, report) = domain_file(&args.name, &params)
        .map_err(|e| Error::input_with_help(e.to_string(), e.help.clone()))?;
    let file = args
        .output
        .as_ref()
        .map_or_else(|| format!("<{}>", args.name), |p| p.display().to_string());
    let (domain, _warnings) = Domain::from_yaml(&file, &text)?;
    if let Some(path) = &args.output {
        write_atomic(path, text.as_bytes())
            .map_err(|e| io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))?;
        crate::stderr_line!("{}", summary(&args.name, &report, path));
    }
    if args.curve {
        return print_curve(&domain, args);
    }
    Ok(Report::Done)
}

fn summary(name: &str, report: &FamilyReport, path: &std::path::Path) -> String {
    format!(
        "{name}: {} hypotheses drawn, {} merged as equivalent, {} truths; {} probes kept, {} dropped (every truth answers them alike) -> {}",
        report.hypotheses_drawn,
        report.merged.len(),
        report.truths,
        report.actions,
        report.dropped_probes.len(),
        path.display()
    )
}

/// For each hypotheses-per-instance count: instances generated and labelled
/// as the main command does; the mean exact optimal expected probes, and
/// the mean number of hypotheses left after each probe of the golden
/// trajectory.
fn print_curve(domain: &Domain, args: &FamilyArgs) -> Result<Report, Error> {
    let mut rows = Vec::new();
    for &truths in &args.curve_truths {
        let actions = args.curve_actions.min(domain.actions.len());
        let params = Params::new(truths, actions, 1);
        let lines = generate_lines(domain, params, args.curve_n, Some(SearchBudget::default()))
            .map_err(|e| Error::input(format!("{truths} hypotheses x {actions} probes: {e}")))?;
        let mut expected = Vec::new();
        let mut remaining: Vec<Vec<f64>> = Vec::new();
        for line in &lines {
            let parsed: InstanceLine = serde_json::from_str(line).map_err(io::Error::other)?;
            let Some(steps) = parsed.expected_steps() else {
                continue;
            };
            expected.push(steps);
            let resolved = parsed.resolve(domain).map_err(io::Error::other)?;
            let golden = resolved.golden.as_deref().unwrap_or(&[]);
            let curve = resolved.remaining_after(domain, golden);
            remaining.push(curve);
        }
        let mean = expected.iter().sum::<f64>() / expected.len().max(1) as f64;
        let reduction = crate::score::mean_curve(&remaining);
        rows.push(json!({
            "hypotheses": truths,
            "probes": actions,
            "instances": expected.len(),
            "mean_expected_probes": mean,
            "golden_remaining": reduction,
        }));
    }
    let text = if args.json {
        format!("{}\n", Value::Array(rows))
    } else {
        let mut text = format!(
            "{}: exact optimal expected probes (mean of {} instances per row)\nhypotheses\tprobes\tE[probes]\thypotheses left after each golden probe (mean)\n",
            domain.name, args.curve_n
        );
        for r in &rows {
            let left: Vec<String> = r["golden_remaining"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| format!("{:.2}", v.as_f64().unwrap_or(0.0)))
                .collect();
            text.push_str(&format!(
                "{}\t{}\t{:.4}\t{}\n",
                r["hypotheses"],
                r["probes"],
                r["mean_expected_probes"].as_f64().unwrap_or(0.0),
                left.join(" -> ")
            ));
        }
        text
    };
    out(&text)?;
    Ok(Report::Done)
}
