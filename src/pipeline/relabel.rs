//! `kumo-gen label` as a library: optimal-search labels for existing
//! KUMO-format instance lines (KUMO's published ones included).
//!
//! In: a domain, a search budget and instance lines with KUMO's fields
//! `truths`, `actions`, `observations` (state label, or the value of a
//! numeric action) and `valid_truth`. Out: every line unchanged except for
//! an `optimal` member (and `difficulty` when labelled) added or replaced at the end, in input order.
//!
//! Lines are labelled in parallel on the current rayon pool in chunks
//! (memory stays flat in the input size) and written in order, so the
//! output is the same for any number of threads. A search over budget
//! yields `"optimal": {"unlabelled": "budget exceeded", ...}` and a
//! warning; a malformed line stops the run and is named. The `optimal`
//! object is formatted by the record writer ([`Optimal`]), as in the
//! lines the main command writes.

use std::fmt;
use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use serde_json::Value;

use std::collections::HashMap;
use std::sync::Arc;

use crate::dataset::record::{Difficulty, Optimal};
use crate::difficulty::Reference;
use crate::domain::Domain;
use crate::game::InstanceLine;
use crate::search::{Problem, SearchBudget, SearchError, Searcher};

/// Lines labelled per parallel batch.
const CHUNK: usize = 2048;

/// A line that cannot be labelled: where it is (`FILE:LINE`) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    pub at: String,
    pub message: String,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

impl std::error::Error for LineError {}

/// Why [`relabel`] stopped.
#[derive(Debug)]
pub enum RelabelError {
    /// Problems with the input, one per bad line of the failing chunk.
    Input(Vec<LineError>),
    Io(io::Error),
}

impl From<io::Error> for RelabelError {
    fn from(e: io::Error) -> Self {
        RelabelError::Io(e)
    }
}

/// Lines labelled, and lines left unlabelled (search over budget).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub labelled: usize,
    pub unlabelled: usize,
}

/// What labelling one line gave: the output line, whether it carries an
/// `unlabelled` marker, and a warning (naming the line) to print in order.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub text: String,
    pub unlabelled: bool,
    pub warning: Option<String>,
}

/// Labels every line of `input` (blank lines skipped) on `pool` and
/// writes the results to `out` in input order; `source` names the input in
/// errors (`SOURCE:LINE`), `warn` receives each warning in order and
/// `progress` the number of lines labelled so far.
#[allow(clippy::too_many_arguments)]
pub fn relabel(
    pool: &rayon::ThreadPool,
    domain: &Domain,
    budget: SearchBudget,
    source: &str,
    input: impl BufRead,
    out: &mut dyn Write,
    mut warn: impl FnMut(&str),
    progress: &dyn crate::progress::Progress,
) -> Result<Summary, RelabelError> {
    let done = AtomicU64::new(0);
    let line_done = || progress.position(done.fetch_add(1, Ordering::Relaxed) + 1);
    let mut summary = Summary::default();
    // The line cap of every user file (stdin included).
    let mut lines = crate::files::read::Lines::new(input).enumerate();
    loop {
        let mut chunk = Vec::with_capacity(CHUNK);
        for (i, line) in lines.by_ref() {
            // Text that is not plain UTF-8 is the input's fault (exit 1).
            let bad_text = |message: String| {
                RelabelError::Input(vec![LineError {
                    at: format!("{source}:{}", i + 1),
                    message,
                }])
            };
            let line = match line {
                Ok(line) => line,
                Err(e) if crate::files::read::is_refusal(&e) => {
                    return Err(bad_text(e.to_string()));
                }
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    return Err(bad_text(
                        "the line is not UTF-8 text; save the file as UTF-8".into(),
                    ));
                }
                Err(e) => {
                    return Err(
                        io::Error::new(e.kind(), format!("cannot read `{source}`: {e}")).into(),
                    );
                }
            };
            if i == 0 && line.starts_with('\u{feff}') {
                return Err(bad_text(crate::game::text::bom_message()));
            }
            if !line.trim().is_empty() {
                chunk.push((format!("{source}:{}", i + 1), line));
            }
            if chunk.len() == CHUNK {
                break;
            }
        }
        if chunk.is_empty() {
            break;
        }
        let results = pool.install(|| {
            label_lines_counted(domain, budget, Percentiles::PerLine, &chunk, &line_done)
        });
        let errors: Vec<LineError> = results
            .iter()
            .filter_map(|r| r.as_ref().err().cloned())
            .collect();
        if !errors.is_empty() {
            return Err(RelabelError::Input(errors));
        }
        for outcome in results.into_iter().flatten() {
            if outcome.unlabelled {
                summary.unlabelled += 1;
            } else {
                summary.labelled += 1;
            }
            if let Some(w) = &outcome.warning {
                warn(w);
            }
            writeln!(out, "{}", outcome.text)?;
        }
    }
    out.flush()?;
    Ok(summary)
}

/// Where the `percentile` of a labelled line's `difficulty` comes from.
#[derive(Clone, Copy)]
pub enum Percentiles<'a> {
    /// The reference sample of the dataset the lines belong to (none: no
    /// percentile).
    Of(Option<&'a Reference>),
    /// The reference sample of each line's own setting (its numbers of
    /// truths, actions and valid truths, with the default `--decimals` and
    /// shortcut guard), when the domain can synthesize that setting:
    /// `kumo-gen label` and the Python `label_lines`.
    PerLine,
}

/// Labels `(at, line)` pairs in parallel on the current rayon pool; the
/// results are in input order.
pub fn label_lines(
    domain: &Domain,
    budget: SearchBudget,
    percentiles: Percentiles,
    lines: &[(String, String)],
) -> Vec<Result<Outcome, LineError>> {
    label_lines_counted(domain, budget, percentiles, lines, &|| {})
}

/// The setting `(truths, actions, valid truths)` of a line, if it reads.
fn line_setting(line: &str) -> Option<(usize, usize, usize)> {
    #[derive(serde::Deserialize)]
    struct Sizes {
        truths: Vec<serde::de::IgnoredAny>,
        actions: Vec<serde::de::IgnoredAny>,
        valid_truth: Value,
    }
    let sizes: Sizes = serde_json::from_str(line).ok()?;
    let valid = match &sizes.valid_truth {
        Value::Array(v) => v.len(),
        _ => 1,
    };
    Some((sizes.truths.len(), sizes.actions.len(), valid))
}

type Setting = (usize, usize, usize);

/// [`label_lines`], calling `line_done` as each line is labelled (in any
/// order), for progress.
pub fn label_lines_counted(
    domain: &Domain,
    budget: SearchBudget,
    percentiles: Percentiles,
    lines: &[(String, String)],
    line_done: &(dyn Fn() + Sync),
) -> Vec<Result<Outcome, LineError>> {
    // Each setting's sample is drawn here, before the parallel labelling
    // (never from inside it).
    let mut samples: HashMap<Setting, Option<Arc<Reference>>> = HashMap::new();
    let settings: Vec<Option<Setting>> = match percentiles {
        Percentiles::Of(_) => Vec::new(),
        Percentiles::PerLine => lines.par_iter().map(|(_, l)| line_setting(l)).collect(),
    };
    for &(t, a, v) in settings.iter().flatten() {
        samples
            .entry((t, a, v))
            .or_insert_with(|| Reference::cached(domain, &crate::synth::Params::new(t, a, v)).ok());
    }
    lines
        .par_iter()
        .enumerate()
        .map_init(Searcher::new, |searcher, (i, (at, line))| {
            let reference = match percentiles {
                Percentiles::Of(reference) => reference,
                Percentiles::PerLine => settings[i]
                    .and_then(|s| samples.get(&s))
                    .and_then(|r| r.as_deref()),
            };
            let outcome = label_line(domain, budget, reference, searcher, at, line);
            line_done();
            outcome
        })
        .collect()
}

/// Labels one instance line exactly as `kumo-gen label` does; `at` names
/// the line in errors and warnings.
pub fn label_line(
    domain: &Domain,
    budget: SearchBudget,
    reference: Option<&Reference>,
    searcher: &mut Searcher,
    at: &str,
    text: &str,
) -> Result<Outcome, LineError> {
    let error = |message: String| LineError {
        at: at.to_string(),
        message,
    };
    let line: InstanceLine =
        serde_json::from_str(text).map_err(|e| error(format!("not an instance line: {e}")))?;
    let instance = line.resolve(domain).map_err(|e| error(e.to_string()))?;
    let problem = Problem::new(domain, &instance.truths, &instance.actions)
        .map_err(|e| error(e.to_string()))?;
    let labelled = searcher.label(&problem, &instance.observed, budget);
    let warning = match &labelled {
        Ok(label) => label.answer().and_then(|t| {
            let answer = &domain.truths[instance.truths[t]];
            (!instance.valid.contains(&instance.truths[t])).then(|| {
                format!(
                    "{at}: the golden trajectory ends on `{answer}`, which is not a valid truth; \
                     the instance's observations do not single out its valid truth"
                )
            })
        }),
        Err(e @ SearchError::BudgetExceeded { .. }) => Some(format!("{at}: unlabelled: {e}")),
        Err(e) => return Err(error(e.to_string())),
    };
    let optimal = Optimal {
        labelled: &labelled,
        domain,
        truths: &instance.truths,
        actions: &instance.actions,
    };
    let text = set_member(text, "optimal", Some(&optimal.to_json()));
    let difficulty = labelled.as_ref().ok().map(|label| {
        Difficulty::of(
            label,
            domain,
            &instance.truths,
            &instance.actions,
            &instance.observed,
            reference,
        )
        .to_json()
    });
    Ok(Outcome {
        text: set_member(&text, "difficulty", difficulty.as_deref()),
        unlabelled: labelled.is_err(),
        warning,
    })
}

/// `object` (one JSON object, already known to parse) with member `key`
/// set to `value`: appended at the end, or replacing an existing member
/// (moved to the end); with `None`, without member `key`. The other members keep their exact text, and the
/// new member is written in the line's own style: the separators after a
/// key and between members are copied from the line (`"k":v,"k2":...` as
/// the main command writes, `"k": v, "k2": ...` as Python's `json.dumps`
/// in KUMO's files), so relabelling a generated line reproduces it.
fn set_member(object: &str, key: &str, value: Option<&str>) -> String {
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
    let Some(value) = value else {
        return format!("{{{kept}}}");
    };
    let sep = if kept.trim().is_empty() { "" } else { comma };
    let encoded_key = Value::from(key).to_string();
    format!("{{{kept}{sep}{encoded_key}{colon}{value}}}")
}

/// The text between a member's key and its value (`:` or `: `).
fn key_separator(member: &str) -> Option<&str> {
    let (member, close) = key_end(member)?;
    let rest = &member[close + 1..];
    let len = rest
        .find(|c: char| c != ':' && !c.is_whitespace())
        .unwrap_or(rest.len());
    Some(&rest[..len])
}

/// A member without its leading whitespace, and the position of the quote
/// that closes its key (escapes skipped).
fn key_end(member: &str) -> Option<(&str, usize)> {
    let member = member.trim_start();
    let mut escaped = false;
    for (i, c) in member.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some((member, i)),
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
    let (member, close) = key_end(member)?;
    serde_json::from_str(&member[..=close]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_member_appends_or_replaces_keeping_other_text() {
        assert_eq!(
            set_member(r#"{"a": 1,"b":[1, {"c": ","}]}"#, "optimal", Some("2")),
            r#"{"a": 1,"b":[1, {"c": ","}],"optimal": 2}"#
        );
        assert_eq!(set_member("{}", "optimal", Some("2")), r#"{"optimal": 2}"#);
        assert_eq!(
            set_member(
                r#"{"optimal": {"x": 1}, "s": "q\"}"}"#,
                "optimal",
                Some("3")
            ),
            r#"{"s": "q\"}", "optimal": 3}"#
        );
        // The main command's compact lines and KUMO's Python-style ones.
        let ours = r#"{"seed":0,"valid_truth":"A","optimal":{"expected_steps":1.0}}"#;
        assert_eq!(
            set_member(ours, "optimal", Some(r#"{"expected_steps":1.0}"#)),
            ours
        );
        assert_eq!(
            set_member(r#"{"seed": 0, "valid_truth": "A"}"#, "optimal", Some("{}")),
            r#"{"seed": 0, "valid_truth": "A", "optimal": {}}"#
        );
        assert_eq!(
            set_member(r#"{"optimal":1,"seed":0}"#, "optimal", Some("2")),
            r#"{"seed":0,"optimal":2}"#
        );
        // Without a value the member goes, whatever its place.
        assert_eq!(
            set_member(
                r#"{"seed":0,"difficulty":{"a":1},"x":2}"#,
                "difficulty",
                None
            ),
            r#"{"seed":0,"x":2}"#
        );
        assert_eq!(
            set_member(r#"{"difficulty":1, "seed": 0}"#, "difficulty", None),
            r#"{"seed": 0}"#
        );
        assert_eq!(
            set_member(r#"{"seed":0}"#, "difficulty", None),
            r#"{"seed":0}"#
        );
    }
}
