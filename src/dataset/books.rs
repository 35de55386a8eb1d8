//! Checking a dataset's knowledge books against its instances
//! (`kumo-gen check-books`): our books with the exact checker
//! ([`crate::render::check_book`]), KUMO's LLM-written books with the
//! conservative heuristic ([`crate::render::check_kumo_book`]).

use std::path::PathBuf;

use super::{Dataset, DatasetError, Setting};
use crate::render::{check_book, check_kumo_book};

/// Whose books these are, which decides the checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BookFormat {
    /// Rendered by kumo-gen: the exact check.
    Ours,
    /// KUMO's LLM-written books: the heuristic check.
    Kumo,
}

impl BookFormat {
    /// Ours when the directory has a `manifest.json` (kumo-gen writes one,
    /// KUMO does not), else KUMO's.
    pub fn of(dataset: &Dataset) -> BookFormat {
        if dataset.dir().join("manifest.json").is_file() {
            BookFormat::Ours
        } else {
            BookFormat::Kumo
        }
    }
}

/// What the check of one instance found, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BookFinding {
    /// Line `line` (from 1) of the instance file is not an instance of
    /// the domain.
    BadLine { line: usize, message: String },
    /// The book at `path` states something wrong or leaves a fact out.
    Failed {
        path: PathBuf,
        problems: Vec<String>,
    },
}

/// The check of one setting's books.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BookCheck {
    /// Books read and checked.
    pub books: usize,
    /// Of those, books with a problem.
    pub failed: usize,
    /// Instances without a book file.
    pub no_book: usize,
    pub bad_lines: usize,
    /// Facts the instances hold (rule-outs a book must state).
    pub facts: usize,
    /// KUMO's books: facts not stated, rule-outs invented, sentences
    /// that confirm instead of ruling out.
    pub missing_facts: usize,
    pub invented: usize,
    pub confirmations: usize,
    pub findings: Vec<BookFinding>,
}

impl BookCheck {
    /// The line `kumo-gen check-books` prints for `setting`'s books,
    /// ending in a newline (`kumo`: KUMO's heuristic checked them).
    pub fn setting_line(&self, setting: &Setting, kumo: bool) -> String {
        format!(
            "{setting}: {} books, {} passed, {} failed{}{}{}\n",
            self.books,
            self.books - self.failed,
            self.failed,
            if self.no_book > 0 {
                format!(", {} instances without a book", self.no_book)
            } else {
                String::new()
            },
            if self.bad_lines > 0 {
                format!(", {} unreadable instance lines", self.bad_lines)
            } else {
                String::new()
            },
            if kumo {
                format!(
                    "; {} of {} facts not stated, {} invented rule-outs, {} confirmation sentences",
                    self.missing_facts, self.facts, self.invented, self.confirmations
                )
            } else {
                format!("; {} facts", self.facts)
            },
        )
    }

    /// Adds `other`'s counts of books, failures, unreadable lines and
    /// instances without a book (what the total line says).
    pub fn add_counts(&mut self, other: &BookCheck) {
        self.books += other.books;
        self.failed += other.failed;
        self.bad_lines += other.bad_lines;
        self.no_book += other.no_book;
    }

    /// The total line over every setting, ending in a newline.
    pub fn total_line(&self, kumo: bool) -> String {
        format!(
            "{} books checked ({} checker): {} passed, {} failed\n",
            self.books,
            if kumo { "kumo heuristic" } else { "exact" },
            self.books - self.failed,
            self.failed
        )
    }
}

/// Checks the book of every instance of `setting` in `dataset`.
pub fn check_books(
    dataset: &Dataset,
    setting: &Setting,
    format: BookFormat,
) -> Result<BookCheck, DatasetError> {
    let file = dataset.file(setting);
    let domain = dataset.domain();
    let text = crate::game::read_jsonl(&file).map_err(|e| DatasetError::io(&file, e))?;
    let mut check = BookCheck::default();
    let lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    for (position, (i, line)) in lines.enumerate() {
        let task = serde_json::from_str(line)
            .map_err(|e| e.to_string())
            .and_then(|v| crate::game::task_from_json(domain, &v).map_err(|e| e.to_string()));
        let task = match task {
            Ok(task) => task,
            Err(message) => {
                check.bad_lines += 1;
                check.findings.push(BookFinding::BadLine {
                    line: i + 1,
                    message,
                });
                continue;
            }
        };
        let Some(book) = dataset.book_file(setting, position)? else {
            check.no_book += 1;
            continue;
        };
        check.books += 1;
        let view = task.view(domain);
        let problems: Vec<String> = match format {
            BookFormat::Kumo => {
                let kumo = check_kumo_book(&book, &view);
                check.facts += kumo.facts;
                check.missing_facts += kumo.missing.len();
                check.invented += kumo.invented.len();
                check.confirmations += kumo.confirmations.len();
                kumo.missing
                    .iter()
                    .map(|(a, s, t)| {
                        format!("`{a}` state `{s}`: the rule-out of `{t}` is not stated")
                    })
                    .chain(kumo.invented.iter().map(|(line, a, s, t)| {
                        format!(
                            "line {line}: `{a}` state `{s}` is said to rule out `{t}`, which it does not"
                        )
                    }))
                    .collect()
            }
            BookFormat::Ours => {
                let exact = check_book(&book, &view);
                check.facts += exact.facts;
                exact.problems.iter().map(ToString::to_string).collect()
            }
        };
        if !problems.is_empty() {
            check.failed += 1;
            check.findings.push(BookFinding::Failed {
                path: dataset.book_path(setting, position),
                problems,
            });
        }
    }
    Ok(check)
}
