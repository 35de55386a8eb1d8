//! `kumo-gen score`: read result files, print success rate, action counts
//! and relative action count per model x domain x setting.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use super::{EXIT_INPUT, Globals, out};
use crate::game::parse_instances;
use crate::score::{self, InstanceSet, OracleEntry, Sources, parse_setting};

#[derive(clap::Args, Debug)]
pub struct ScoreArgs {
    /// Result files or directories (walked in sorted order for `*.jsonl`),
    /// laid out as `results/<model>/<agent>/<domain>/<setting>/eval_times=K.jsonl`.
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
    /// Instance files or directories (`<domain>/<setting>.jsonl`): success is
    /// then checked against the instance (with a domain), and optimal labels
    /// (`optimal.expected_steps`) are read from them.
    #[arg(long, value_name = "FILE|DIR")]
    instances: Vec<PathBuf>,
    /// Domain (name or path) to judge answers with; by default the result's
    /// domain name is looked up (`MedicalEnv` also tries `medical`).
    #[arg(long, value_name = "NAME|PATH")]
    domain: Option<String>,
    /// Optimal labels in oracle-medical.jsonl's format
    /// (`{env, truth_num, action_num, seed, expected_steps}` per line).
    #[arg(long, value_name = "FILE")]
    oracle: Option<PathBuf>,
    /// Print a JSON array of rows instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write an SVG bar chart of success rate and relative action count.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Also write an SVG of reduction curves: hypotheses left after each
    /// action, the player's mean next to the optimal policy's, per result
    /// file (needs `--instances` and the domain).
    #[arg(long, value_name = "FILE")]
    curve_svg: Option<PathBuf>,
}

/// Every `*.jsonl` file under `paths`, each directory walked in sorted order.
pub(crate) fn jsonl_files(paths: &[PathBuf]) -> io::Result<Vec<PathBuf>> {
    fn walk(path: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
        if path.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
                .map(|e| e.map(|e| e.path()))
                .collect::<io::Result<_>>()?;
            entries.sort();
            for e in entries {
                walk(&e, out)?;
            }
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path.to_path_buf());
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if !p.exists() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("`{}` does not exist", p.display()),
            ));
        }
        if p.is_file() {
            out.push(p.clone());
        } else {
            walk(p, &mut out)?;
        }
    }
    Ok(out)
}

fn read(path: &Path) -> io::Result<String> {
    crate::game::read_jsonl(path)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot read `{}`: {e}", path.display())))
}

/// Reads instance files into sets keyed by directory name and file stem.
/// Inside directories only files named like a setting count, and files
/// that are not instance files (a dataset's `sft/` lines, say) are skipped
/// with a note; a file named explicitly must parse.
pub(crate) fn load_instance_sets(paths: &[PathBuf]) -> Result<Vec<InstanceSet>, String> {
    let mut sets = Vec::new();
    for given in paths {
        let explicit = given.is_file();
        for file in jsonl_files(std::slice::from_ref(given)).map_err(|e| e.to_string())? {
            let setting = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if !explicit && parse_setting(&setting).is_none() {
                continue;
            }
            let text = read(&file).map_err(|e| e.to_string())?;
            let instances = match parse_instances(&text) {
                Ok(i) => i,
                Err(e) if explicit => return Err(format!("{}:{e}", file.display())),
                Err(_) => {
                    crate::stderr_line!(
                        "note: skipping `{}`: not an instance file",
                        file.display()
                    );
                    continue;
                }
            };
            let domain = file
                .parent()
                .and_then(Path::file_name)
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            sets.push(InstanceSet {
                domain,
                setting,
                instances,
                dir: file.parent().map(Path::to_path_buf),
            });
        }
    }
    Ok(sets)
}

pub fn run(globals: &Globals, args: &ScoreArgs) -> io::Result<i32> {
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
        let text = match read(&path) {
            Ok(text) => text,
            Err(e) => {
                crate::stderr_line!("error: {e}");
                return Ok(EXIT_INPUT);
            }
        };
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
    if files.is_empty() {
        crate::stderr_line!("error: no result files (`*.jsonl`) under the given paths");
        return Ok(EXIT_INPUT);
    }
    let mut sources = Sources::default();
    match load_instance_sets(&args.instances) {
        Ok(sets) => sources.instance_sets = sets,
        Err(e) => {
            crate::stderr_line!("error: {e}");
            return Ok(EXIT_INPUT);
        }
    }
    if let Some(oracle) = &args.oracle {
        let text = match read(oracle) {
            Ok(text) => text,
            Err(e) => {
                crate::stderr_line!("error: {e}");
                return Ok(EXIT_INPUT);
            }
        };
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            match serde_json::from_str::<OracleEntry>(line) {
                Ok(e) => sources.oracle.push(e),
                Err(e) => {
                    crate::stderr_line!(
                        "error: {}:{}: not an oracle line ({e}); expected {{env, truth_num, action_num, seed, expected_steps}}",
                        oracle.display(),
                        i + 1
                    );
                    return Ok(EXIT_INPUT);
                }
            }
        }
    }
    let names: BTreeSet<String> = files.iter().map(|f| f.key.domain.clone()).collect();
    if let Some(spec) = &args.domain {
        match globals.registry.load(spec) {
            Ok((d, _)) => {
                for n in &names {
                    sources.domains.insert(n.clone(), d.clone());
                }
            }
            Err(e) => {
                crate::stderr_line!("{e}");
                return Ok(EXIT_INPUT);
            }
        }
    } else if !sources.instance_sets.is_empty() {
        for n in &names {
            // A known domain of that name, else the dataset's manifest.
            let found = globals.registry.load(n).ok().map(|(d, _)| d).or_else(|| {
                sources
                    .instance_sets
                    .iter()
                    .filter(|s| s.domain == *n)
                    .find_map(|s| s.dir.as_deref())
                    .and_then(|dir| globals.registry.for_dataset(None, dir).ok())
            });
            match found {
                Some(d) => {
                    sources.domains.insert(n.clone(), d);
                }
                None => crate::stderr_line!(
                    "note: no domain found for `{n}`: success comes from the recorded `successful` fields (give --domain to check answers)"
                ),
            }
        }
    }
    let report = score::score(&files, &sources);
    for note in &report.notes {
        crate::stderr_line!("note: {note}");
    }
    if let Some(svg) = &args.svg {
        std::fs::write(svg, score::render_svg(&report.rows)).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot write `{}`: {e}", svg.display()))
        })?;
    }
    if let Some(path) = &args.curve_svg {
        let curves = score::curves(&files, &sources);
        if curves.is_empty() {
            crate::stderr_line!(
                "error: no result file has both its instances and its domain, so no curve can be drawn\n  = help: pass --instances DIR (and --domain if the domain is not found by name)"
            );
            return Ok(EXIT_INPUT);
        }
        std::fs::write(path, score::render_curve_svg(&curves)).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot write `{}`: {e}", path.display()))
        })?;
    }
    if args.json {
        out(&score::render_json(&report.rows))?;
    } else {
        out(&score::render_table(&report.rows))?;
    }
    Ok(0)
}
