//! Many topics at once (`propose --topics FILE -o DIR`), resumable.
//!
//! The topics file has one topic per line; `#` starts a comment line and
//! blank lines are skipped. A line `name | topic` names the domain; a bare
//! topic is named by its slug (`Edible mushrooms of Europe` ->
//! `edible-mushrooms-of-europe`). Each domain goes to `DIR/NAME.yaml`.
//!
//! Resume: a topic whose `DIR/NAME.yaml` exists and loads without errors
//! is finished and not asked again; an existing file that does not load is
//! left alone (never overwritten) and reported. A failed topic leaves only
//! its last attempt, so the next run asks again.

use std::path::{Path, PathBuf};

use super::files::{Outcome, Status, WriteError, propose_to_file};
use super::{Chat, Example, Prompts, ProposeError, Request, RoundReport, Wanted};
use crate::domain::{Domain, LoadError};

/// Longest slug made from a topic.
const MAX_SLUG: usize = 48;

/// One line of a topics file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topic {
    pub topic: String,
    pub name: String,
    /// The file it is written to, in the run's directory: `NAME.yaml` in
    /// a batch, `-o`'s file name for one topic.
    pub file: String,
    /// 1-based line in the topics file.
    pub line: usize,
}

/// A domain name made of a topic: lowercase ASCII letters and digits,
/// words joined by `-`.
pub fn slug(topic: &str) -> String {
    let mut out = String::new();
    for c in topic.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out: String = out.trim_end_matches('-').chars().take(MAX_SLUG).collect();
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// Whether `name` can be a file name and a `--domain` name: ASCII, and
/// none of the folder names kumo-gen gives its own outputs (a domain's
/// datasets go to `OUT/<name>/`; [`crate::dataset::reserved`]).
pub fn check_name(name: &str) -> Result<(), NameError> {
    if let Some(why) = crate::dataset::reserved::reserved(name) {
        return Err(NameError::Reserved { why });
    }
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.starts_with('-');
    match ok {
        true => Ok(()),
        false => Err(NameError::NotAName {
            name: name.to_string(),
        }),
    }
}

/// Why a name cannot name a proposed domain.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// One of kumo-gen's own folder names (`why` says which).
    #[error("domain name {why} (its datasets would be written there); choose another name")]
    Reserved { why: String },
    #[error(
        "domain name `{name}` must be 1 to 64 ASCII letters, digits, `-` or `_`, not starting with `-`"
    )]
    NotAName { name: String },
}

/// An existing output that is not a valid domain: it is left alone.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{}` exists but is not a valid domain, so it is left alone; fix or remove it to propose again:\n{source}",
    path.display()
)]
pub struct NotADomain {
    pub path: PathBuf,
    #[source]
    pub source: LoadError,
}

/// A topics file that cannot be proposed from: the file, the line, what
/// is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {problem}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct TopicsError {
    pub file: String,
    /// `None`: the whole file.
    pub line: Option<usize>,
    pub problem: TopicProblem,
}

/// What is wrong in a topics file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopicProblem {
    #[error("the topic is empty")]
    Empty,
    #[error("{0}; write `name | topic`")]
    Name(NameError),
    /// `name` is already the name of `line` (as `earlier`: the same, or
    /// differing only in letter case).
    #[error(
        "domain `{name}` is already the name of line {line}{}; give one of them another name (`name | topic`)",
        if earlier == name {
            String::new()
        } else {
            format!(
                " (`{earlier}`: they differ only in letter case, one file `{name}.yaml` on a case-insensitive file system)"
            )
        }
    )]
    Repeated {
        name: String,
        line: usize,
        earlier: String,
    },
    #[error("no topics (one per line)")]
    None,
}

/// Reads a topics file; `file` names it in errors.
pub fn parse_topics(file: &str, text: &str) -> Result<Vec<Topic>, TopicsError> {
    let mut topics: Vec<Topic> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |problem: TopicProblem| TopicsError {
            file: file.to_string(),
            line: Some(i + 1),
            problem,
        };
        let (name, topic) = match line.split_once('|') {
            Some((name, topic)) => (name.trim().to_string(), topic.trim().to_string()),
            None => (slug(line), line.to_string()),
        };
        if topic.is_empty() {
            return Err(at(TopicProblem::Empty));
        }
        check_name(&name).map_err(|e| at(TopicProblem::Name(e)))?;
        if let Some(earlier) = topics.iter().find(|t| t.name.eq_ignore_ascii_case(&name)) {
            return Err(at(TopicProblem::Repeated {
                name,
                line: earlier.line,
                earlier: earlier.name.clone(),
            }));
        }
        topics.push(Topic {
            topic,
            file: format!("{name}.yaml"),
            name,
            line: i + 1,
        });
    }
    if topics.is_empty() {
        return Err(TopicsError {
            file: file.to_string(),
            line: None,
            problem: TopicProblem::None,
        });
    }
    Ok(topics)
}

/// What an existing output means for resume: `None` when absent, else
/// the finished domain's sizes or why the file blocks the topic.
pub fn existing(out: &Path) -> Option<Result<(usize, usize), NotADomain>> {
    if !out.exists() {
        return None;
    }
    let loaded = crate::files::read::read_at_most(
        out,
        crate::domain::MAX_FILE_BYTES as u64,
        "a domain file",
    )
    .map_err(|e| LoadError::Io {
        file: out.display().to_string(),
        source: e,
    })
    .and_then(|bytes| crate::domain::load_bytes(&out.display().to_string(), &bytes));
    Some(match loaded {
        Ok((domain, _)) => Ok(sizes(&domain)),
        Err(source) => Err(NotADomain {
            path: out.to_path_buf(),
            source,
        }),
    })
}

fn sizes(domain: &Domain) -> (usize, usize) {
    (domain.truths.len(), domain.actions.len())
}

/// What every topic of a batch shares.
pub struct Settings<'a> {
    pub truths: usize,
    pub actions: usize,
    pub rounds: usize,
    pub review: bool,
    pub example: &'a Example,
}

/// One finished line of the summary.
#[derive(Clone, Debug)]
pub struct Row {
    pub topic: Topic,
    pub out: PathBuf,
    pub outcome: Outcome,
}

impl Row {
    /// The progress line of row `i` of `total` (`[i+1/total] name: ...`)
    /// and a line for each file written besides the domain, each ending
    /// in a newline.
    pub fn progress(&self, i: usize, total: usize) -> String {
        let o = &self.outcome;
        let sizes = o
            .sizes
            .map_or(String::new(), |(t, a)| format!(", {t} truths, {a} actions"));
        let line = match o.status {
            Status::Passed => format!(
                "ok: wrote `{}` after {} round(s){sizes}",
                self.out.display(),
                o.rounds
            ),
            Status::DoneEarlier => {
                format!("skipped: `{}` is done already{sizes}", self.out.display())
            }
            Status::Failed => format!(
                "FAILED after {} round(s); `{}` not written",
                o.rounds,
                self.out.display()
            ),
        };
        let mut text = format!("[{}/{total}] {}: {line}\n", i + 1, self.topic.name);
        for note in &o.notes {
            text += &format!("  see `{}`\n", note.display());
        }
        text
    }
}

/// Why a batch stopped early (the rows finished so far are kept by the
/// caller through `on_topic`).
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error("topic `{topic}`: {source}")]
    Api { topic: String, source: ProposeError },
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// Proposes every topic in order into `dir`, skipping finished ones.
/// `on_round` sees each round of the topic being asked; `on_topic` each
/// finished row (for progress lines).
pub fn run(
    chat: &mut dyn Chat,
    prompts: &Prompts,
    topics: &[Topic],
    dir: &Path,
    settings: &Settings,
    on_round: &mut dyn FnMut(&Topic, &RoundReport),
    on_topic: &mut dyn FnMut(usize, &Row),
) -> Result<Vec<Row>, BatchError> {
    let mut rows = Vec::with_capacity(topics.len());
    for (i, topic) in topics.iter().enumerate() {
        let out = dir.join(&topic.file);
        let outcome = match existing(&out) {
            Some(Ok(sizes)) => Outcome {
                status: Status::DoneEarlier,
                rounds: 0,
                sizes: Some(sizes),
                errors: Vec::new(),
                notes: Vec::new(),
            },
            Some(Err(why)) => Outcome {
                status: Status::Failed,
                rounds: 0,
                sizes: None,
                errors: vec![why.to_string()],
                notes: Vec::new(),
            },
            None => {
                let request = Request {
                    topic: topic.topic.clone(),
                    wanted: Wanted {
                        name: topic.name.clone(),
                        truths: settings.truths,
                        actions: settings.actions,
                    },
                    rounds: settings.rounds,
                };
                propose_to_file(
                    chat,
                    prompts,
                    &request,
                    settings.example,
                    &out,
                    settings.review,
                    &mut |r| on_round(topic, r),
                )
                .map_err(|source| BatchError::Api {
                    topic: topic.topic.clone(),
                    source,
                })??
            }
        };
        let row = Row {
            topic: topic.clone(),
            out,
            outcome,
        };
        on_topic(i, &row);
        rows.push(row);
    }
    Ok(rows)
}

/// The summary table: topic, name, rounds, sizes, result.
pub fn summary_table(rows: &[Row]) -> String {
    let mut lines = vec![[
        "topic".to_string(),
        "name".into(),
        "rounds".into(),
        "truths".into(),
        "actions".into(),
        "result".into(),
    ]];
    for row in rows {
        let o = &row.outcome;
        let (t, a) = o.sizes.map_or(("-".into(), "-".into()), |(t, a)| {
            (t.to_string(), a.to_string())
        });
        let topic: String = row.topic.topic.chars().take(40).collect();
        lines.push([
            topic,
            row.topic.name.clone(),
            if o.rounds == 0 {
                "-".into()
            } else {
                o.rounds.to_string()
            },
            t,
            a,
            match o.status {
                Status::Passed => "pass".into(),
                Status::DoneEarlier => "pass (done earlier)".into(),
                Status::Failed => "FAIL".into(),
            },
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for line in &lines {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .map(|(cell, &w)| format!("{cell:<w$}"))
            .collect();
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_are_named_by_slug_or_explicitly() {
        let topics = parse_topics(
            "t.txt",
            "# mine\nEdible mushrooms of Europe!\n\nwine | Wine regions (France)\n",
        )
        .unwrap();
        assert_eq!(topics[0].name, "edible-mushrooms-of-europe");
        assert_eq!((topics[1].name.as_str(), topics[1].line), ("wine", 4));
        assert_eq!(topics[1].topic, "Wine regions (France)");
        let e = parse_topics("t.txt", "Wine\nwine\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.txt:2:"), "{e}");
        assert!(parse_topics("t.txt", "bad name | x\n").is_err());
        assert!(parse_topics("t.txt", "# nothing\n").is_err());
        assert_eq!(slug("  Über -- café  "), "ber-caf");
    }
}
