//! `kumo-gen overlap A B`: which instances two datasets share.
//!
//! A's keys go into a hash map (key -> first line, lines, whether B has
//! it); B is streamed against it, so memory grows with A only and both
//! files are read once, parsed in parallel batches. Counts:
//! - `b_in_a`: lines of B whose instance is in A;
//! - `a_in_b`: lines of A whose instance is in B;
//! - `shared`: distinct shared instances.
//!
//! Examples are the first shared lines of B, in B's order.
//!
//! SFT records have no exact key (they record only the observations the
//! golden player saw). Under the exact key, when either side holds SFT
//! records (its files are looked at by their first line before anything is
//! counted), both sides are compared by the context key instead and the
//! answer says so (`note`): comparing an SFT record's context against a
//! dataset line's exact key would answer "0 shared" whatever the files
//! hold. A file that mixes SFT records with instance lines is refused under
//! the exact key (pass `--key context`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{KeyKind, ReadError, SourceFile, dataset_files, read_keys};
use crate::domain::Domain;

/// Examples kept.
pub const EXAMPLES: usize = 5;

/// One side of an overlap.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Side {
    pub path: String,
    /// Instance lines read.
    pub lines: u64,
    /// Distinct instances among them.
    pub distinct: u64,
    /// Lines whose instance the other side has.
    pub shared_lines: u64,
}

/// A line of B whose instance is in A.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Example {
    pub a_file: String,
    pub a_line: u64,
    pub b_file: String,
    pub b_line: u64,
}

/// The answer of `overlap`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overlap {
    pub key: KeyKind,
    pub a: Side,
    pub b: Side,
    /// Distinct instances both sides hold.
    pub shared: u64,
    pub examples: Vec<Example>,
    /// Whether observations were compared by state (a domain was known)
    /// or by recorded value.
    pub by_state: bool,
    /// Why `key` is not the key asked for (SFT records under exact).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

struct Seen {
    file: u32,
    line: u64,
    lines: u64,
    in_b: bool,
}

/// Compares `a` and `b` (dataset directories or .jsonl files) under `key`.
/// With `domain`, numeric observations are compared by the state whose
/// range holds them; without, by value.
pub fn overlap(
    a: &Path,
    b: &Path,
    key: KeyKind,
    domain: Option<&Domain>,
) -> Result<Overlap, ReadError> {
    let a_files = dataset_files(a)?;
    let b_files = dataset_files(b)?;
    let (key, note) = key_for(key, &a_files, &b_files, domain)?;
    let (mut seen, a_lines) = read_a(&a_files, key, domain)?;
    let found_b = stream_b(&a_files, &b_files, key, domain, &mut seen)?;
    Ok(Overlap {
        key,
        a: Side {
            path: display(a),
            lines: a_lines,
            distinct: seen.len() as u64,
            shared_lines: found_b.a_shared_lines,
        },
        b: Side {
            path: display(b),
            lines: found_b.lines,
            distinct: found_b.distinct.len() as u64,
            shared_lines: found_b.shared_lines,
        },
        shared: found_b.shared,
        examples: found_b.examples,
        by_state: domain.is_some(),
        note,
    })
}

/// The key the sides are compared by: the context key instead of the
/// exact one when either side holds SFT records (with the note saying
/// so), else `key`.
fn key_for(
    key: KeyKind,
    a_files: &[SourceFile],
    b_files: &[SourceFile],
    domain: Option<&Domain>,
) -> Result<(KeyKind, Option<String>), ReadError> {
    if key == KeyKind::Exact {
        for (side, files) in [("A", a_files), ("B", b_files)] {
            if let Some(sft) = first_sft_file(files, domain)? {
                let note = format!(
                    "{side} holds SFT records (`{}`), which record only the observations the golden player saw: compared by the context key instead of exact",
                    sft.display()
                );
                return Ok((KeyKind::Context, Some(note)));
            }
        }
    }
    Ok((key, None))
}

/// A line's key under `key`; under the exact key, an SFT record among
/// instance lines (which has none) is refused.
fn line_key(
    key: KeyKind,
    path: &Path,
    line: u64,
    keys: &super::LineKeys,
) -> Result<u128, ReadError> {
    if key == KeyKind::Exact && keys.exact.is_none() {
        return Err(ReadError {
            path: path.to_path_buf(),
            line: Some(line),
            problem: super::ReadProblem::SftAmongInstances,
        });
    }
    Ok(keys.get(key))
}

/// A's keys (each with its first line and count) and its number of lines.
fn read_a(
    a_files: &[SourceFile],
    key: KeyKind,
    domain: Option<&Domain>,
) -> Result<(HashMap<u128, Seen>, u64), ReadError> {
    let mut refused = None;
    let mut seen: HashMap<u128, Seen> = HashMap::new();
    let mut a_lines = 0u64;
    for (f, file) in a_files.iter().enumerate() {
        read_keys(&file.path, domain, |line, keys| {
            let k = match line_key(key, &file.path, line, &keys) {
                Ok(k) => k,
                Err(e) => {
                    refused.get_or_insert(e);
                    return;
                }
            };
            a_lines += 1;
            seen.entry(k).and_modify(|s| s.lines += 1).or_insert(Seen {
                file: f as u32,
                line,
                lines: 1,
                in_b: false,
            });
        })?;
        if let Some(e) = refused.take() {
            return Err(e);
        }
    }
    Ok((seen, a_lines))
}

/// What streaming B against A's keys counts.
#[derive(Default)]
struct FoundB {
    lines: u64,
    shared_lines: u64,
    distinct: HashSet<u128>,
    examples: Vec<Example>,
    shared: u64,
    a_shared_lines: u64,
}

/// Streams B against `seen` (A's keys, each marked when B has it).
fn stream_b(
    a_files: &[SourceFile],
    b_files: &[SourceFile],
    key: KeyKind,
    domain: Option<&Domain>,
    seen: &mut HashMap<u128, Seen>,
) -> Result<FoundB, ReadError> {
    let mut refused = None;
    let mut found = FoundB::default();
    for file in b_files {
        read_keys(&file.path, domain, |line, keys| {
            let k = match line_key(key, &file.path, line, &keys) {
                Ok(k) => k,
                Err(e) => {
                    refused.get_or_insert(e);
                    return;
                }
            };
            found.lines += 1;
            found.distinct.insert(k);
            if let Some(s) = seen.get_mut(&k) {
                if !s.in_b {
                    s.in_b = true;
                    found.shared += 1;
                    found.a_shared_lines += s.lines;
                }
                found.shared_lines += 1;
                if found.examples.len() < EXAMPLES {
                    found.examples.push(Example {
                        a_file: display(&a_files[s.file as usize].path),
                        a_line: s.line,
                        b_file: display(&file.path),
                        b_line: line,
                    });
                }
            }
        })?;
        if let Some(e) = refused.take() {
            return Err(e);
        }
    }
    Ok(found)
}

/// The first of `files` whose first non-blank line is an SFT record.
fn first_sft_file<'a>(
    files: &'a [SourceFile],
    domain: Option<&Domain>,
) -> Result<Option<&'a Path>, ReadError> {
    for file in files {
        if super::sources::first_keys(&file.path, domain)?.is_some_and(|k| k.exact.is_none()) {
            return Ok(Some(&file.path));
        }
    }
    Ok(None)
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// The domain recorded in the `manifest.json` of our layout beside `path`
/// (a dataset file, its directory, or an `sft/` file below it), if any.
pub fn manifest_domain(path: &Path) -> Option<Domain> {
    let start: PathBuf = if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent()?.to_path_buf()
    };
    let candidates = [
        start.join("manifest.json"),
        start.parent()?.join("manifest.json"),
    ];
    let manifest = candidates
        .iter()
        .find(|p| crate::files::read::is_regular(p))?;
    let value: serde_json::Value =
        serde_json::from_slice(&crate::files::read::read(manifest).ok()?).ok()?;
    let doc: crate::domain::DomainDoc =
        serde_json::from_value(value.get("domain")?.get("document")?.clone()).ok()?;
    crate::domain::compile(&manifest.display().to_string(), &doc)
        .ok()
        .map(|(domain, _)| domain)
}

impl Overlap {
    /// The answer as pretty JSON, ending in a newline (`overlap --json`).
    pub fn json(&self) -> serde_json::Result<String> {
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        Ok(text)
    }

    /// The human-readable report.
    pub fn text(&self) -> String {
        let pct = |n: u64, of: u64| {
            if of == 0 {
                0.0
            } else {
                100.0 * n as f64 / of as f64
            }
        };
        let mut out = format!(
            "key: {} ({})\nA: {} ({} lines, {} distinct)\nB: {} ({} lines, {} distinct)\n\
             shared instances: {}\nlines of B whose instance is in A: {} of {} ({:.1}%)\n\
             lines of A whose instance is in B: {} of {} ({:.1}%)\n",
            self.key.name(),
            if self.by_state {
                "observations compared by state"
            } else {
                "no domain known: numeric observations compared by value; pass --domain to compare by state"
            },
            self.a.path,
            self.a.lines,
            self.a.distinct,
            self.b.path,
            self.b.lines,
            self.b.distinct,
            self.shared,
            self.b.shared_lines,
            self.b.lines,
            pct(self.b.shared_lines, self.b.lines),
            self.a.shared_lines,
            self.a.lines,
            pct(self.a.shared_lines, self.a.lines),
        );
        if let Some(note) = &self.note {
            out.insert_str(0, &format!("note: {note}\n"));
        }
        for e in &self.examples {
            out.push_str(&format!(
                "  {}:{} = {}:{}\n",
                e.b_file, e.b_line, e.a_file, e.a_line
            ));
        }
        out
    }
}
