//! `kumo-gen stats`: per model, chi-square test of independence between
//! instance structure signature and correctness.

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use super::score::{jsonl_files, load_instance_sets};
use super::{EXIT_INPUT, Globals, out};
use crate::domain::Domain;
use crate::game::Judge;
use crate::score::{self, Sources};
use crate::stats::{self, Signature};

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

pub fn run(globals: &Globals, args: &StatsArgs) -> io::Result<i32> {
    let mut files = Vec::new();
    // A missing or unreadable input named by the user is bad input (1).
    let paths = match jsonl_files(&args.paths) {
        Ok(paths) => paths,
        Err(e) => {
            crate::stderr_line!("error: {e}");
            return Ok(super::EXIT_INPUT);
        }
    };
    for path in paths {
        let text = crate::game::read_jsonl(&path).map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot read `{}`: {e}", path.display()))
        })?;
        match score::parse_result_file(&path, &text) {
            Ok(f) => {
                for w in &f.repeated {
                    crate::stderr_line!("warning: {w}");
                }
                files.push(f);
            }
            Err(e) => {
                crate::stderr_line!("error: {e}");
                return Ok(EXIT_INPUT);
            }
        }
    }
    let sources = match load_instance_sets(&args.instances) {
        Ok(sets) => Sources {
            instance_sets: sets,
            ..Sources::default()
        },
        Err(e) => {
            crate::stderr_line!("error: {e}");
            return Ok(EXIT_INPUT);
        }
    };
    let mut domains: BTreeMap<String, Option<Domain>> = BTreeMap::new();
    let mut per_model: BTreeMap<String, Vec<(Signature, bool)>> = BTreeMap::new();
    let mut skipped = 0usize;
    for file in &files {
        let domain = domains.entry(file.key.domain.clone()).or_insert_with(|| {
            let spec = args.domain.as_deref().unwrap_or(&file.key.domain);
            globals.registry.load(spec).ok().map(|(d, _)| d)
        });
        let Some(domain) = domain.as_ref() else {
            crate::stderr_line!(
                "error: no domain for `{}` (give --domain NAME|PATH)",
                file.key.domain
            );
            return Ok(EXIT_INPUT);
        };
        let set = sources.instances(&file.key);
        for line in &file.lines {
            let inst = line
                .seed
                .and_then(|s| set.and_then(|set| set.instances.iter().find(|i| i.seed == s)));
            let Some(inst) = inst else {
                skipped += 1;
                continue;
            };
            let judge = match Judge::new(domain, inst) {
                Ok(j) => j,
                Err(e) => {
                    crate::stderr_line!("error: {}: {e}", file.path);
                    return Ok(EXIT_INPUT);
                }
            };
            let wins = line
                .trials
                .iter()
                .filter(|t| t.predicted.as_deref().is_some_and(|p| judge.evaluate(p)))
                .count();
            let correct = 2 * wins > line.trials.len();
            per_model
                .entry(file.key.model.clone())
                .or_default()
                .push((stats::signature(domain, inst), correct));
        }
    }
    if skipped > 0 {
        crate::stderr_line!(
            "note: {skipped} result line(s) without a matching instance were left out"
        );
    }
    let tests: Vec<stats::Test> = per_model
        .iter()
        .map(|(model, data)| stats::test(model, data, args.pool))
        .collect();
    if args.json {
        let mut s = serde_json::to_string_pretty(&tests).expect("tests serialize");
        s.push('\n');
        out(&s)?;
        return Ok(0);
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
    Ok(0)
}
