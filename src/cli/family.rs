//! `kumo-gen family NAME [params] -o DOMAIN.yaml`: compile a procedural
//! task family (`rules3`, `circuits`, `ciphers`, `programs`, `mechanics`,
//! `puzzles`, `opponents`; the table `crate::family::FAMILIES`) into
//! an ordinary domain file, and with `--curve` print the exact optimal
//! expected number of probes as the number of hypotheses per instance
//! grows, with the golden trajectory's hypothesis-space size after each
//! probe (WILT's reduction curve, exact).

use std::path::PathBuf;

use super::flags::in_range;
use super::graph::write_atomic;
use super::{Error, Report, out};
use crate::domain::Domain;
use crate::family::{
    self, FamilyParams, ciphers, circuits, default_counts, domain_file, rules3, table,
};
use crate::pipeline::explorer_curve;
use crate::pipeline::family_curve::{self as curve, CurveRequest};
use crate::search::SearchBudget;

/// Most points `--curve-truths` may name.
const MAX_CURVE_POINTS: usize = 64;

#[derive(clap::Args, Debug)]
pub struct FamilyArgs {
    /// The family: `rules3` (hidden rules over integer triples), `circuits`
    /// (boolean circuits), `ciphers` (cipher keys), `programs` (programs read
    /// at checkpoints), `mechanics` (a launch with hidden parameters,
    /// positions rounded), `puzzles` (a secret code with near-miss
    /// feedback), `opponents` (a rock-paper-scissors strategy).
    name: String,
    /// Write the domain here (YAML).
    #[arg(short = 'o', long, value_name = "DOMAIN.yaml")]
    output: Option<PathBuf>,
    /// Hypotheses to draw (equivalent ones are merged) [default: 200;
    /// ciphers 80; programs 60; mechanics 40; puzzles 64, --hard 100].
    #[arg(long, value_parser = in_range("hypotheses", family::HYPOTHESES_RANGE))]
    hypotheses: Option<usize>,
    /// Probes to draw [default: 40; ciphers 25; programs 16, --hard 24;
    /// mechanics 16; puzzles 30].
    #[arg(long, value_parser = in_range("probes", family::PROBES_RANGE))]
    probes: Option<usize>,
    /// Seed of the hypotheses and probes drawn (the same seed gives the
    /// same domain file, byte for byte).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// rules3: probe numbers lie in 0..=MAX.
    #[arg(long, value_name = "MAX", default_value_t = FamilyParams::default().max_value as usize, value_parser = in_range("numbers", rules3::MAX_VALUE_RANGE))]
    max_value: usize,
    /// circuits: number of inputs.
    #[arg(long, default_value_t = FamilyParams::default().inputs as usize, value_parser = in_range("inputs", circuits::INPUTS_RANGE))]
    inputs: usize,
    /// circuits: gates per circuit at most.
    #[arg(long, default_value_t = FamilyParams::default().gates as usize, value_parser = in_range("gates", circuits::GATES_RANGE))]
    gates: usize,
    /// ciphers: alphabet size (letters from A).
    #[arg(long, default_value_t = FamilyParams::default().alphabet as usize, value_parser = in_range("letters", ciphers::ALPHABET_RANGE))]
    alphabet: usize,
    /// ciphers: plaintext length of a probe.
    #[arg(long, default_value_t = FamilyParams::default().length as usize, value_parser = in_range("letters", ciphers::LENGTH_RANGE))]
    length: usize,
    /// programs, mechanics, puzzles, opponents: draw the family's hard
    /// boxes (longer programs with checkpoints, 2-D launches, longer codes,
    /// longer games with more strategies).
    #[arg(long)]
    hard: bool,
    /// Print the family's knowledge book (how its boxes work, never the
    /// hidden member) and exit.
    #[arg(long)]
    book: bool,
    /// Print the curve: for each hypotheses-per-instance count, the mean
    /// exact optimal expected probes and the golden reduction curve.
    #[arg(long)]
    curve: bool,
    /// Print the exact best explorer instead of --curve's probes: the
    /// expected accuracy on the held-out probes (the domain's probes not in
    /// the instance) after T = 0..=--turns probes, of the golden policy and
    /// of the best T-probe policy (docs/black-boxes.md).
    #[arg(long)]
    explorer: bool,
    /// --explorer: the most probes T (0 to 12).
    #[arg(long, default_value_t = 6, value_parser = in_range("turns", 0..=12))]
    turns: usize,
    /// Hypotheses per instance for --curve (2 to 24 each, at most 64
    /// points).
    #[arg(long, value_delimiter = ',', default_values_t = [4usize, 6, 8, 10, 12, 14], value_parser = in_range("hypotheses per instance", 2..=curve::MAX_CURVE_HYPOTHESES))]
    curve_truths: Vec<usize>,
    /// Probes per instance for --curve (1 up to the domain's probes)
    /// [default: 16, or every probe if the domain has fewer; --explorer:
    /// at most half the domain's probes].
    #[arg(long, value_parser = in_range("probes per instance", 1..=usize::MAX))]
    curve_actions: Option<usize>,
    /// Instances per point of --curve (1 to 10 000).
    #[arg(long, default_value_t = 50, value_parser = in_range("instances per point", 1..=curve::MAX_CURVE_N))]
    curve_n: usize,
    /// --curve: most memo entries one instance's search may store (its
    /// memory); an instance over it is not labelled.
    #[arg(long, value_name = "ENTRIES", default_value_t = curve::CURVE_MEMO_ENTRIES, value_parser = super::flags::parse_entries)]
    search_budget: usize,
    /// --curve: most node expansions one instance's search may make.
    #[arg(long, value_name = "NODES", default_value_t = curve::CURVE_NODES, value_parser = super::flags::parse_nodes)]
    search_nodes: u64,
    /// Print the curve as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `kumo-gen family`.
pub fn run(args: &FamilyArgs) -> Result<Report, Error> {
    let (hypotheses, probes) = default_counts(&args.name, args.hard);
    let params = FamilyParams {
        hypotheses: args.hypotheses.unwrap_or(hypotheses),
        probes: args.probes.unwrap_or(probes),
        seed: args.seed,
        // Each is at most 26 (its parser's range).
        max_value: args.max_value as u32,
        inputs: args.inputs as u32,
        gates: args.gates as u32,
        alphabet: args.alphabet as u32,
        length: args.length as u32,
        hard: args.hard,
    };
    if args.book {
        let family = table::find(&args.name)?;
        out(&format!(
            "{} ({}; {})\n\n{}\n",
            family.name, family.about, family.box_type, family.book
        ))?;
        return Ok(Report::Done);
    }
    if args.curve_truths.len() > MAX_CURVE_POINTS {
        return Err(Error::Usage {
            message: format!(
                "`--curve-truths` names {} points, more than {MAX_CURVE_POINTS}",
                args.curve_truths.len()
            ),
            help: Some("name fewer hypotheses-per-instance counts".into()),
        });
    }
    if args.output.is_none() && !args.curve && !args.explorer {
        return Err(Error::input_with_help(
            "nothing to do",
            "pass -o DOMAIN.yaml, --curve, --explorer, --book, or both",
        ));
    }
    let (text, report) = domain_file(&args.name, &params)?;
    let file = args
        .output
        .as_ref()
        .map_or_else(|| format!("<{}>", args.name), |p| p.display().to_string());
    let (domain, _warnings) = Domain::from_yaml(&file, &text)?;
    if let Some(path) = &args.output {
        write_atomic(path, text.as_bytes())?;
        crate::stderr_line!("{}", report.summary(&args.name, path));
    }
    if args.curve || args.explorer {
        return print_curve(&domain, args);
    }
    Ok(Report::Done)
}

/// Prints the curve of `crate::pipeline::family_curve`.
fn print_curve(domain: &Domain, args: &FamilyArgs) -> Result<Report, Error> {
    let request = CurveRequest {
        hypotheses: &args.curve_truths,
        probes: args
            .curve_actions
            .unwrap_or_else(|| curve::default_probes(domain, args.explorer)),
        instances: args.curve_n as u64,
        // A curve's points are exact values: a search over budget leaves
        // its point out rather than certifying it.
        budget: SearchBudget {
            certify: false,
            ..SearchBudget::new(args.search_budget, args.search_nodes)
        },
    };
    if args.explorer {
        let points = explorer_curve::explorer_curve(domain, &request, args.turns)?;
        let text = if args.json {
            format!("{}\n", explorer_curve::to_json(&points))
        } else {
            explorer_curve::to_table(domain, &points)
        };
        out(&text)?;
        return Ok(Report::Done);
    }
    let points = curve::curve(domain, &request)?;
    let text = if args.json {
        format!("{}\n", curve::to_json(&points))
    } else {
        curve::to_table(domain, &request, &points)
    };
    out(&text)?;
    Ok(Report::Done)
}
