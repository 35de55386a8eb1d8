//! `kumo-gen stats`: per model, chi-square test of independence between
//! instance structure signature and correctness.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::{Error, Globals, Report, out};
use crate::dataset;
use crate::domain::Domain;
use crate::score::{self, Sources};
use crate::stats;

#[derive(clap::Args, Debug)]
pub struct StatsArgs {
    /// Result files or directories in KUMO's layout.
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
    /// Instance files or directories the results were played on (required:
    /// signatures and correctness come from them).
    #[arg(long, value_name = "FILE|DIR", required = true)]
    instances: Vec<PathBuf>,
    /// Domain (name or path); by default the result's domain name is looked up.
    #[arg(long, value_name = "NAME|PATH")]
    domain: Option<String>,
    /// Pool signatures seen fewer than N times into one `other` row.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pool: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(globals: &Globals, args: &StatsArgs) -> Result<Report, Error> {
    let files = score::read_result_files(&args.paths)?;
    let (instance_sets, skipped) = dataset::instance_sets(&args.instances)?;
    let given = match &args.domain {
        Some(spec) => Some(globals.registry.load(spec)?.0),
        None => None,
    };
    for f in &files {
        for w in &f.repeated {
            crate::stderr_line!("warning: {w}");
        }
    }
    for file in &skipped {
        crate::stderr_line!("note: skipping `{}`: not an instance file", file.display());
    }
    let names: BTreeSet<&str> = files.iter().map(|f| f.key.domain.as_str()).collect();
    let domains: BTreeMap<String, Domain> = match given {
        Some(domain) => names
            .iter()
            .map(|n| (n.to_string(), domain.clone()))
            .collect(),
        None => score::domains_by_name(&globals.registry, names, &instance_sets)?,
    };
    let sources = Sources {
        instance_sets,
        ..Sources::default()
    };
    if let Some(message) = sources.ambiguity(files.iter().map(|f| &f.key)) {
        return Err(Error::input_with_help(
            message,
            "pass `--instances` the dataset directory the results were played on (as `eval --data DIR --domain D` reads `DIR/D/`), e.g. `--instances generated/medical`",
        ));
    }
    let observed = stats::observe(&files, &sources, &domains)?;
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
    let mut text = String::new();
    for t in &tests {
        text.push_str(&format!(
            "{}: {} instances ({} correct by majority), {} signatures{}, table {}x{}\n",
            t.model,
            t.instances,
            t.correct,
            t.signatures,
            if t.pooled > 0 {
                format!(" ({} pooled into `other`)", t.pooled)
            } else {
                String::new()
            },
            t.rows,
            t.columns
        ));
        match (&t.refused, t.chi_square, t.dof, t.p_value, t.cramers_v) {
            (Some(reason), ..) => text.push_str(&format!("  refused: {reason}\n")),
            (None, Some(chi), Some(dof), p, Some(v)) => text.push_str(&format!(
                "  chi-square {chi:.4}, dof {dof}, p {}, Cramér's V {v:.4}\n",
                p.map_or("n/a".to_string(), |p| format!("{p:.4e}"))
            )),
            _ => {}
        }
    }
    out(&text)?;
    Ok(Report::Done)
}
