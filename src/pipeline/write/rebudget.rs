//! The search budget belongs to the data: a dataset's manifest records the
//! `--search-budget` / `--search-nodes` its labels were searched under, and
//! a re-run with a larger budget labels the lines a smaller one left
//! unlabelled (DESIGN.md "Outputs").
//!
//! In: the recorded and the requested budget, the dataset file. Out: the
//! file with every `"optimal": {"unlabelled": ...}` line searched again
//! under the larger budget and rewritten in place (temp file + rename:
//! readers never see a partial file); every other byte is kept. A label is
//! the exact optimum whatever the budget, so the result is the file a
//! fresh run with the larger budget writes, byte for byte (a line still
//! over budget gets the larger budget's counts, as in that fresh run).
//!
//! "Larger" means at least as large in both limits and larger in one. A
//! budget that is not larger (smaller in either limit) cannot change a
//! finished file: it is kept as it is, under its recorded budget. A
//! manifest written before budgets were recorded counts as the default.

use super::manifest::Parameters;
use super::{OutputError, files};
use crate::difficulty::Reference;
use crate::domain::Domain;
use crate::pipeline::relabel::{Percentiles, label_lines};
use crate::progress::Progress;
use crate::search::SearchBudget;
use std::path::Path;

/// The budget a labelled dataset's manifest records (the defaults when it
/// records none).
pub fn recorded(parameters: &Parameters) -> SearchBudget {
    SearchBudget::new(
        parameters
            .search_budget
            .unwrap_or(SearchBudget::DEFAULT_MAX_MEMO_ENTRIES),
        parameters
            .search_nodes
            .unwrap_or(SearchBudget::DEFAULT_MAX_NODES),
    )
}

/// How a requested budget compares with the recorded one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Same,
    /// At least as large in both limits, larger in one: relabel.
    Larger,
    /// Smaller in at least one limit: the labels stay as they are.
    NotLarger,
}

pub fn compare(recorded: SearchBudget, requested: SearchBudget) -> Change {
    let (old, new) = (
        (recorded.max_memo_entries, recorded.max_nodes),
        (requested.max_memo_entries, requested.max_nodes),
    );
    if old == new {
        Change::Same
    } else if new.0 >= old.0 && new.1 >= old.1 {
        Change::Larger
    } else {
        Change::NotLarger
    }
}

/// `--search-budget N --search-nodes M`, for messages.
pub fn flags(budget: SearchBudget) -> String {
    format!(
        "`--search-budget {} --search-nodes {}`",
        budget.max_memo_entries, budget.max_nodes
    )
}

/// Whether two parameters agree in everything but the search budget.
pub fn same_but_budget(a: &Parameters, b: &Parameters) -> bool {
    let mut a = a.clone();
    a.search_budget = b.search_budget;
    a.search_nodes = b.search_nodes;
    a == *b
}

/// The note of a run that relabelled under `budget`.
pub fn relabelled_note(budget: SearchBudget, done: Relabelled) -> String {
    format!(
        "relabelled under {}: {} of {} unlabelled or certified lines labelled exactly",
        flags(budget),
        done.searched - done.still_unlabelled,
        done.searched
    )
}

/// What a relabelling did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Relabelled {
    /// Unlabelled lines searched again.
    pub searched: u64,
    /// Of those, lines still over the budget.
    pub still_unlabelled: u64,
}

/// The text every unlabelled line of a dataset file holds (the writer's
/// compact JSON; a string value cannot hold an unescaped quote).
const UNLABELLED: &[u8] = br#""optimal":{"unlabelled""#;

/// The text every certified line holds (`optimal.exact` is false only
/// there, and `difficulty` holds no boolean).
const CERTIFIED: &[u8] = br#""exact":false"#;

fn holds(line: &[u8], text: &[u8]) -> bool {
    line.windows(text.len()).any(|w| w == text)
}

/// The line has no exact label: unlabelled, or certified (DESIGN.md
/// "Certified labels"), so a larger budget searches it again.
fn is_unlabelled(line: &[u8]) -> bool {
    holds(line, UNLABELLED) || holds(line, CERTIFIED)
}

/// Searches the unlabelled lines among the first `lines` lines of `path`
/// again under `budget` (in parallel on the current rayon pool) and
/// rewrites the file atomically; `progress` gets the lines passed.
pub fn relabel_unlabelled(
    domain: &Domain,
    path: &Path,
    lines: u64,
    budget: SearchBudget,
    reference: Option<&Reference>,
    progress: &dyn Progress,
) -> Result<Relabelled, OutputError> {
    let mut done = Relabelled::default();
    files::write_atomic_with(
        path,
        |w| {
            files::for_each_batch(path, lines, |start, batch| {
                let todo: Vec<(String, String)> = (start..)
                    .zip(batch)
                    .filter(|(_, line)| is_unlabelled(line))
                    .map(|(i, line)| {
                        (
                            format!("{}:{}", path.display(), i + 1),
                            String::from_utf8_lossy(line).into_owned(),
                        )
                    })
                    .collect();
                let mut outcomes =
                    label_lines(domain, budget, Percentiles::Of(reference), &todo).into_iter();
                for line in batch {
                    if is_unlabelled(line) {
                        let outcome = outcomes.next().ok_or_else(|| OutputError::Internal {
                            message: "a relabelled line went missing".into(),
                        })?;
                        let outcome = outcome.map_err(|e| OutputError::Corrupt {
                            path: path.to_path_buf(),
                            message: e.to_string(),
                        })?;
                        done.searched += 1;
                        done.still_unlabelled += u64::from(
                            outcome.unlabelled || holds(outcome.text.as_bytes(), CERTIFIED),
                        );
                        w.write_all(outcome.text.as_bytes())
                    } else {
                        w.write_all(line)
                    }
                    .and_then(|()| w.write_all(b"\n"))
                    .map_err(|e| OutputError::io(path, e))?;
                }
                progress.position(start + batch.len() as u64);
                Ok(())
            })
        },
        OutputError::io,
    )?;
    Ok(done)
}

/// A shard keeps the budget it was started with (`merge` requires one
/// budget across the shards): another budget is refused, naming the
/// way to relabel (merge, then re-run the unsharded command).
pub fn shard_conflict(
    path: &Path,
    resume: Option<&super::manifest::DatasetEntry>,
    requested: &Parameters,
) -> Result<(), OutputError> {
    let Some(entry) = resume.filter(|e| e.parameters.labels && requested.labels) else {
        return Ok(());
    };
    let (old, new) = (recorded(&entry.parameters), recorded(requested));
    if compare(old, new) == Change::Same {
        return Ok(());
    }
    Err(OutputError::Exists {
        path: path.to_path_buf(),
        reason: format!(
            "this shard was labelled under {}, this run has {}",
            flags(old),
            flags(new)
        ),
        help: format!(
            "finish every shard with {}, merge, then re-run the unsharded command with the larger budget to label what it left unlabelled (or pass `--force` to start this shard over)",
            flags(old)
        ),
    })
}
