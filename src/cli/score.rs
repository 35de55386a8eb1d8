//! `kumo-gen score`: read result files, print success rate, action counts
//! and relative action count per model x domain x setting.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Error, Globals, Report, out};
use crate::dataset;
use crate::files::target::{Input, Written};
use crate::results::{self, ResultFile, Sources};
use crate::score;

/// The results `score`, `report`, `moves` and `stats` read and what
/// judging them consults (`--instances`, `--domain`); [`load`] reads them.
/// A command that cannot work without the instances makes `--instances`
/// required with `mut_arg`.
#[derive(clap::Args, Debug)]
pub struct ScoreInputs {
    /// Result files or directories (walked in sorted order for `*.jsonl`),
    /// laid out as `results/<model>/<agent>/<domain>/<setting>/eval_times=K.jsonl`.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Instance files or directories the results were played on
    /// (`<domain>/<setting>.jsonl`): answers are then checked against the
    /// instance (with a domain), and optimal labels
    /// (`optimal.expected_steps`), structure signatures and replays come
    /// from them.
    #[arg(long, value_name = "FILE|DIR")]
    pub instances: Vec<PathBuf>,
    /// Domain (name or path) to judge answers with; by default the result's
    /// domain name is looked up (`MedicalEnv` also tries `medical`).
    #[arg(long, value_name = "NAME|PATH")]
    pub domain: Option<String>,
}

#[derive(clap::Args, Debug)]
#[command(mut_arg("threads", |a| a.help("Worker threads for `--moves` (0: one per core)")))]
pub struct ScoreArgs {
    #[command(flatten)]
    inputs: ScoreInputs,
    /// Optimal labels in oracle-medical.jsonl's format
    /// (`{env, truth_num, action_num, seed, expected_steps}` per line).
    #[arg(long, value_name = "FILE")]
    oracle: Option<PathBuf>,
    /// Print a JSON array of rows instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write an SVG bar chart of success rate and relative action count,
    /// with their 95% intervals as whiskers.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Also write an SVG of reduction curves: hypotheses left after each
    /// action, the player's mean next to the optimal policy's, per result
    /// file (needs `--instances` and the domain).
    #[arg(long, value_name = "FILE")]
    curve_svg: Option<PathBuf>,
    /// Also score every move against the exact optimum (needs
    /// `--instances`): `mean_regret` (expected actions wasted per game),
    /// `optimal_move_rate` and `mean_efficiency` per row; see
    /// docs/analytics.md.
    #[arg(long)]
    moves: bool,
    #[command(flatten)]
    pool: super::flags::PoolFlags,
}

impl ScoreInputs {
    /// What these flags read, for refusing an output over it: the result
    /// paths, the instances and the domain file.
    pub fn inputs(&self, globals: &Globals) -> Vec<Input> {
        let mut inputs: Vec<Input> = self
            .paths
            .iter()
            .map(|p| Input::data("results path", p))
            .collect();
        inputs.extend(self.instances.iter().map(|p| Input::data("--instances", p)));
        inputs.extend(
            self.domain
                .as_deref()
                .and_then(|d| super::flags::domain_input(&globals.registry, "--domain", d)),
        );
        inputs
    }
}

/// Reads the result files and what scoring consults beside them (the
/// instances, their domains, an oracle file), printing the notes `score`
/// prints: the one loader of `score`, `report` and `moves`, so all score
/// the same (`stats` reads through [`read`]).
pub(super) fn load(
    globals: &Globals,
    inputs: &ScoreInputs,
    oracle: Option<&Path>,
) -> Result<(Vec<ResultFile>, Sources), Error> {
    let (files, sources) = read(globals, inputs, oracle)?;
    if inputs.domain.is_none() && !sources.instance_sets.is_empty() {
        let names: BTreeSet<&str> = files.iter().map(|f| f.key.domain.as_str()).collect();
        for n in names.iter().filter(|n| !sources.domains.contains_key(**n)) {
            crate::stderr_line!(
                "note: no domain found for `{n}`: success comes from the recorded `successful` fields (give --domain to check answers)"
            );
        }
    }
    Ok((files, sources))
}

/// [`load`] without its notes on results whose domain is not found (for
/// `stats`, which refuses them): the result files, the instance sets, the
/// oracle, and the domains (`--domain`, or found by the results' names when
/// instances are given).
pub(super) fn read(
    globals: &Globals,
    inputs: &ScoreInputs,
    oracle: Option<&Path>,
) -> Result<(Vec<ResultFile>, Sources), Error> {
    let files = results::read_result_files(&inputs.paths)?;
    let (instance_sets, skipped) = dataset::instance_sets(&inputs.instances)?;
    // An `--instances` that gives no instance would leave every answer
    // unchecked without a word: refused, naming it.
    if let Some(given) = dataset::path_without_instances(&inputs.instances, &instance_sets) {
        return Err(Error::input_with_help(
            format!(
                "`--instances {}` holds no instance (no non-empty `<domain>/truth_num=T+action_num=A+valid_truth_num=V.jsonl`)",
                given.display()
            ),
            "give the dataset directory or instance files the results were played on, or drop `--instances` to score the recorded outcomes",
        ));
    }
    let oracle = match oracle {
        Some(path) => results::read_oracle(path)?,
        None => Vec::new(),
    };
    for f in &files {
        for w in &f.repeated {
            crate::stderr_line!("warning: {w}");
        }
    }
    for file in &skipped {
        crate::stderr_line!("note: skipping `{}`: not an instance file", file.display());
    }
    if files.is_empty() {
        return Err(Error::input(
            "no result files (`*.jsonl`) under the given paths",
        ));
    }
    let mut sources = Sources {
        instance_sets,
        oracle,
        ..Sources::default()
    };
    if let Some(message) = sources.ambiguity(files.iter().map(|f| &f.key)) {
        return Err(Error::input_with_help(
            message,
            "pass `--instances` the dataset directory the results were played on (as `eval --data DIR --domain D` reads `DIR/D/`), e.g. `--instances generated/medical`",
        ));
    }
    let names: BTreeSet<String> = files.iter().map(|f| f.key.domain.clone()).collect();
    if let Some(spec) = &inputs.domain {
        let (d, _) = globals.registry.load(spec)?;
        for n in &names {
            sources.domains.insert(n.clone(), d.clone());
        }
    } else if !sources.instance_sets.is_empty() {
        sources.domains = results::domains_by_name(
            &globals.registry,
            names.iter().map(String::as_str),
            &sources.instance_sets,
        )?;
    }
    Ok((files, sources))
}

pub fn run(globals: &Globals, args: &ScoreArgs) -> Result<Report, Error> {
    let mut inputs = args.inputs.inputs(globals);
    inputs.extend(args.oracle.iter().map(|p| Input::file("--oracle", p)));
    for (flag, path) in [("--svg", &args.svg), ("--curve-svg", &args.curve_svg)] {
        if let Some(path) = path {
            super::flags::refuse_over_inputs(flag, path, Written::File, &inputs)?;
        }
    }
    let (files, mut sources) = load(globals, &args.inputs, args.oracle.as_deref())?;
    if args.moves {
        if sources.instance_sets.is_empty() {
            return Err(Error::input_with_help(
                "--moves needs the instances the results were played on",
                "pass --instances DIR (the dataset directory or its instance files)",
            ));
        }
        sources.moves = Some(crate::search::SearchBudget::default());
    }
    let pool = args.pool.pool()?;
    let report = pool.install(|| {
        let analyses = crate::analysis::files::analyse_files(&files, &sources);
        score::score(&files, &sources, analyses.as_deref())
    });
    for note in &report.notes {
        crate::stderr_line!("note: {note}");
    }
    if let Some(svg) = &args.svg {
        // Atomically, replacing a link there rather than writing through it.
        crate::files::write_atomic(
            svg,
            score::render_svg(&report.rows, &report.lines).as_bytes(),
        )?;
    }
    if let Some(path) = &args.curve_svg {
        let curves = score::curves(&files, &sources);
        if curves.is_empty() {
            return Err(Error::input_with_help(
                "no result file has both its instances and its domain, so no curve can be drawn",
                "pass --instances DIR (and --domain if the domain is not found by name)",
            ));
        }
        crate::files::write_atomic(path, score::render_curve_svg(&curves).as_bytes())?;
    }
    if args.json {
        out(&score::render_json(&report.rows))?;
    } else {
        out(&score::render_table(&report.rows))?;
    }
    Ok(Report::Done)
}
