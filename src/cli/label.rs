//! `kumo-gen label`: add optimal-search labels to existing KUMO-format
//! instance lines (KUMO's published ones included).
//!
//! In: a domain (name or path) and a JSONL file of instances with KUMO's
//! fields `truths`, `actions`, `observations` (state label, or the value of
//! a numeric action) and `valid_truth`. Out: every input line, unchanged
//! except for an `optimal` member added (or replaced) at the end, in input
//! order, on stdout or atomically into `-o FILE`.
//!
//! Lines are labelled in parallel in chunks (memory stays flat in the file
//! size) and written in order, so the output is the same for any
//! `--threads`. A search over budget yields
//! `"optimal": {"unlabelled": "budget exceeded", ...}` and a warning; a
//! malformed line stops the run with exit code 1 and names the line.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rayon::prelude::*;
use serde_json::Value;

use super::{EXIT_INPUT, EXIT_OTHER};
use crate::domain::{Domain, Registry};
use crate::game::InstanceLine;
use crate::search::{Problem, SearchBudget, SearchError, Searcher, optimal_json, unlabelled_json};

/// Lines labelled per parallel batch.
const CHUNK: usize = 2048;

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
    /// marked unlabelled (the table takes 32-64 bytes per entry up to 64
    /// truths + actions in all, twice that beyond).
    #[arg(long, value_name = "ENTRIES", default_value_t = SearchBudget::DEFAULT_MAX_MEMO_ENTRIES)]
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

/// Runs `kumo-gen label` with the shipped domains and returns the exit code.
pub fn run(args: &LabelArgs) -> i32 {
    run_in(&Registry::new(None), args)
}

/// Runs `kumo-gen label`, resolving the domain in `registry`.
pub fn run_in(registry: &Registry, args: &LabelArgs) -> i32 {
    let domain = match registry.load(&args.domain) {
        Ok((domain, warnings)) => {
            super::report_warnings(&domain, &warnings);
            domain
        }
        Err(e) => {
            eprintln!("{e}");
            return EXIT_INPUT;
        }
    };
    let budget = match budget(args) {
        Ok(b) => b,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_OTHER;
        }
    };
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
    {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("error: cannot start worker threads: {e}");
            return EXIT_OTHER;
        }
    };
    let source = args.instances.display().to_string();
    let input: Box<dyn BufRead> = if args.instances.as_os_str() == "-" {
        Box::new(BufReader::new(io::stdin().lock()))
    } else {
        match File::open(&args.instances) {
            Ok(f) => Box::new(BufReader::new(f)),
            Err(e) => {
                eprintln!("error: cannot read `{source}`: {e}");
                return EXIT_INPUT;
            }
        }
    };
    let job = Job {
        domain: &domain,
        budget,
        source: &source,
        pool: &pool,
    };
    let outcome = match &args.output {
        None => {
            let stdout = io::stdout();
            let mut w = BufWriter::new(stdout.lock());
            job.run(input, &mut w)
        }
        Some(path) => write_atomically(path, |w| job.run(input, w)),
    };
    match outcome {
        Ok(Summary {
            labelled,
            unlabelled,
        }) => {
            if unlabelled > 0 {
                eprintln!(
                    "warning: {unlabelled} of {} instances left unlabelled (search budget exceeded)",
                    labelled + unlabelled
                );
            }
            0
        }
        Err(Failure::Input(messages)) => {
            for m in messages {
                eprintln!("error: {m}");
            }
            EXIT_INPUT
        }
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(Failure::Io(e)) => {
            eprintln!("error: {e}");
            EXIT_OTHER
        }
    }
}

fn budget(args: &LabelArgs) -> Result<SearchBudget, String> {
    if args.search_budget == 0 {
        return Err("`--search-budget` must be at least 1".into());
    }
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

enum Failure {
    /// Problems with the input, one message per bad line.
    Input(Vec<String>),
    Io(io::Error),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

struct Summary {
    labelled: usize,
    unlabelled: usize,
}

/// What labelling one line gave: the output line, whether it carries an
/// `unlabelled` marker, and a warning (naming the line) to print in order.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub text: String,
    pub unlabelled: bool,
    pub warning: Option<String>,
}

struct Job<'a> {
    domain: &'a Domain,
    budget: SearchBudget,
    source: &'a str,
    pool: &'a rayon::ThreadPool,
}

impl Job<'_> {
    fn run(&self, input: Box<dyn BufRead>, out: &mut dyn Write) -> Result<Summary, Failure> {
        let mut summary = Summary {
            labelled: 0,
            unlabelled: 0,
        };
        let mut lines = input.lines().enumerate();
        loop {
            let mut chunk = Vec::with_capacity(CHUNK);
            for (i, line) in lines.by_ref() {
                let line = line.map_err(|e| {
                    Failure::Io(io::Error::new(
                        e.kind(),
                        format!("cannot read `{}`: {e}", self.source),
                    ))
                })?;
                if !line.trim().is_empty() {
                    chunk.push((i + 1, line));
                }
                if chunk.len() == CHUNK {
                    break;
                }
            }
            if chunk.is_empty() {
                break;
            }
            let results: Vec<Result<Outcome, String>> = self.pool.install(|| {
                chunk
                    .par_iter()
                    .map_init(Searcher::new, |searcher, (number, line)| {
                        self.line(searcher, *number, line)
                    })
                    .collect()
            });
            let errors: Vec<String> = results
                .iter()
                .filter_map(|r| r.as_ref().err().cloned())
                .collect();
            if !errors.is_empty() {
                return Err(Failure::Input(errors));
            }
            for outcome in results.into_iter().flatten() {
                if outcome.unlabelled {
                    summary.unlabelled += 1;
                } else {
                    summary.labelled += 1;
                }
                if let Some(w) = &outcome.warning {
                    eprintln!("warning: {w}");
                }
                writeln!(out, "{}", outcome.text)?;
            }
        }
        out.flush()?;
        Ok(summary)
    }

    /// Labels one line; errors name the file and line.
    fn line(&self, searcher: &mut Searcher, number: usize, text: &str) -> Result<Outcome, String> {
        let at = format!("{}:{number}", self.source);
        label_line(self.domain, self.budget, searcher, &at, text)
    }
}

/// Labels one instance line exactly as `kumo-gen label` does (for
/// embedders that hold lines in memory); `at` names the line in errors
/// and warnings.
pub fn label_line(
    domain: &Domain,
    budget: SearchBudget,
    searcher: &mut Searcher,
    at: &str,
    text: &str,
) -> Result<Outcome, String> {
    let line: InstanceLine =
        serde_json::from_str(text).map_err(|e| format!("{at}: not an instance line: {e}"))?;
    let instance = line.resolve(domain).map_err(|e| format!("{at}: {e}"))?;
    let problem = Problem::new(domain, &instance.truths, &instance.actions)
        .map_err(|e| format!("{at}: {e}"))?;
    let (optimal, warning) = match searcher.label(&problem, &instance.observed, budget) {
        Ok(label) => {
            let warning = label.answer().and_then(|t| {
                let answer = &domain.truths[instance.truths[t]];
                (!instance.valid.contains(&instance.truths[t])).then(|| {
                    format!(
                        "{at}: the golden trajectory ends on `{answer}`, which is not a valid truth; \
                         the instance's observations do not single out its valid truth"
                    )
                })
            });
            (
                optimal_json(&label, domain, &instance.truths, &instance.actions),
                warning,
            )
        }
        Err(e @ SearchError::BudgetExceeded { .. }) => {
            return Ok(Outcome {
                text: set_member(text, "optimal", &unlabelled_json(&e).to_string()),
                unlabelled: true,
                warning: Some(format!("{at}: unlabelled: {e}")),
            });
        }
        Err(e) => return Err(format!("{at}: {e}")),
    };
    Ok(Outcome {
        text: set_member(text, "optimal", &optimal.to_string()),
        unlabelled: false,
        warning,
    })
}

/// `object` (one JSON object, already known to parse) with member `key`
/// set to `value`: appended at the end, or replacing an existing member
/// (moved to the end). The other members keep their exact text, and the
/// new member is written in the line's own style: the separators after a
/// key and between members are copied from the line (`"k":v,"k2":...` as
/// the main command writes, `"k": v, "k2": ...` as Python's `json.dumps`
/// in KUMO's files), so relabelling a generated line reproduces it.
fn set_member(object: &str, key: &str, value: &str) -> String {
    let body = object.trim();
    let inner = &body[1..body.len() - 1];
    let members = top_level_members(inner);
    let offset = |m: &str| m.as_ptr() as usize - inner.as_ptr() as usize;
    let colon = members
        .first()
        .and_then(|m| key_separator(m))
        .unwrap_or(": ");
    let comma = match members.get(1) {
        Some(m) => &inner[offset(m) - 1..offset(m) + m.len() - m.trim_start().len()],
        None => ", ",
    };
    let mut kept = inner.to_string();
    if let Some(i) = members
        .iter()
        .position(|m| member_key(m).as_deref() == Some(key))
    {
        let m = members[i];
        let (from, to) = if i > 0 {
            // The comma before it, up to the member's end.
            (offset(m) - 1, offset(m) + m.len())
        } else if let Some(next) = members.get(1) {
            // From the start up to the next member's text.
            (0, offset(next) + next.len() - next.trim_start().len())
        } else {
            (0, inner.len())
        };
        kept.replace_range(from..to, "");
    }
    let kept = kept.trim_end();
    let sep = if kept.trim().is_empty() { "" } else { comma };
    let encoded_key = Value::from(key).to_string();
    format!("{{{kept}{sep}{encoded_key}{colon}{value}}}")
}

/// The text between a member's key and its value (`:` or `: `).
fn key_separator(member: &str) -> Option<&str> {
    let member = member.trim_start();
    let mut escaped = false;
    for (i, c) in member.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => {
                let rest = &member[i + 1..];
                let len = rest
                    .find(|c: char| c != ':' && !c.is_whitespace())
                    .unwrap_or(rest.len());
                return Some(&rest[..len]);
            }
            _ => {}
        }
    }
    None
}

/// Splits an object's inside at its top-level commas.
fn top_level_members(inner: &str) -> Vec<&str> {
    let mut members = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut start) = (0i32, false, false, 0);
    for (i, c) in inner.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                members.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !inner[start..].trim().is_empty() {
        members.push(&inner[start..]);
    }
    members
}

/// The decoded key of a `"key": value` member.
fn member_key(member: &str) -> Option<String> {
    let member = member.trim_start();
    let mut escaped = false;
    for (i, c) in member.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return serde_json::from_str(&member[..=i]).ok(),
            _ => {}
        }
    }
    None
}

/// Runs `write` into a temporary file next to `path` and renames it into
/// place only if everything succeeded. A path that exists and is not a
/// regular file (`/dev/null`, a pipe) is written directly, never replaced.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<Summary, Failure>,
) -> Result<Summary, Failure> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| {
                Failure::Io(io::Error::new(
                    e.kind(),
                    format!("cannot write `{}`: {e}", path.display()),
                ))
            })?;
        let mut w = BufWriter::new(file);
        let summary = write(&mut w)?;
        w.flush()?;
        return Ok(summary);
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir
        .unwrap_or(Path::new("."))
        .join(format!(".{name}.tmp-{}", std::process::id()));
    let file = File::create(&tmp).map_err(|e| {
        Failure::Io(io::Error::new(
            e.kind(),
            format!("cannot write `{}`: {e}", tmp.display()),
        ))
    })?;
    let mut w = BufWriter::new(file);
    let result = write(&mut w).and_then(|summary| {
        let file = w.into_inner().map_err(|e| Failure::Io(e.into_error()))?;
        file.sync_all()?;
        std::fs::rename(&tmp, path).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot write `{}`: {e}", path.display()))
        })?;
        Ok(summary)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_member_appends_or_replaces_keeping_other_text() {
        assert_eq!(
            set_member(r#"{"a": 1,"b":[1, {"c": ","}]}"#, "optimal", "2"),
            r#"{"a": 1,"b":[1, {"c": ","}],"optimal": 2}"#
        );
        assert_eq!(set_member("{}", "optimal", "2"), r#"{"optimal": 2}"#);
        assert_eq!(
            set_member(r#"{"optimal": {"x": 1}, "s": "q\"}"}"#, "optimal", "3"),
            r#"{"s": "q\"}", "optimal": 3}"#
        );
        // The main command's compact lines and KUMO's Python-style ones.
        let ours = r#"{"seed":0,"valid_truth":"A","optimal":{"expected_steps":1.0}}"#;
        assert_eq!(
            set_member(ours, "optimal", r#"{"expected_steps":1.0}"#),
            ours
        );
        assert_eq!(
            set_member(r#"{"seed": 0, "valid_truth": "A"}"#, "optimal", "{}"),
            r#"{"seed": 0, "valid_truth": "A", "optimal": {}}"#
        );
        assert_eq!(
            set_member(r#"{"optimal":1,"seed":0}"#, "optimal", "2"),
            r#"{"seed":0,"optimal":2}"#
        );
    }
}
