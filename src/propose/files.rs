//! The files of one proposed domain, beside the output `DIR/NAME.yaml`:
//! - `NAME.yaml`, written atomically and only when every check passed;
//! - `NAME.last-attempt.txt`, the model's last file when it failed (not
//!   `.yaml`, so a `--domains-dir DIR` never loads a rejected domain),
//!   removed once a later run succeeds;
//! - `NAME.review.txt`, the `--review` report.

use std::path::{Path, PathBuf};

use super::{
    Accepted, Chat, Example, Prompts, ProposeError, Rejected, Request, RoundReport, propose, review,
};
use crate::files::write_atomic;

/// Where the rejected last attempt of `out` goes.
pub fn last_attempt_path(out: &Path) -> PathBuf {
    out.with_extension("last-attempt.txt")
}

/// Where the review report of `out` goes.
pub fn review_path(out: &Path) -> PathBuf {
    out.with_extension("review.txt")
}

/// How one topic ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Written to the output.
    Passed,
    /// Still failing after every round; the last attempt is saved.
    Failed,
    /// The output existed already as a valid domain: not asked again.
    DoneEarlier,
}

/// One topic's result, for progress lines and the summary table.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub status: Status,
    /// Replies used (0 when not asked).
    pub rounds: usize,
    /// Sizes of the accepted domain.
    pub sizes: Option<(usize, usize)>,
    /// The last findings of a failure, rendered.
    pub errors: Vec<String>,
    /// Files written besides the domain (last attempt, review).
    pub notes: Vec<PathBuf>,
}

/// Why a topic's files could not be written: the file layer's kinds.
pub use crate::files::FileError as WriteError;

fn write(path: &Path, text: &str) -> Result<(), WriteError> {
    write_atomic(path, text.as_bytes())
}

/// Proposes a domain for `request` and writes its files beside `out`;
/// with `with_review`, also the review report. An output that does not
/// pass is never written.
pub fn propose_to_file(
    chat: &mut dyn Chat,
    prompts: &Prompts,
    request: &Request,
    example: &Example,
    out: &Path,
    with_review: bool,
    on_round: &mut dyn FnMut(&RoundReport),
) -> Result<Result<Outcome, WriteError>, ProposeError> {
    let file = out.display().to_string();
    match propose(chat, prompts, request, example, &file, on_round)? {
        Ok(accepted) => {
            let report = match with_review {
                true => Some(review(chat, prompts, &request.topic, &accepted.text)?),
                false => None,
            };
            Ok(write_accepted(
                out,
                &accepted,
                report.as_deref(),
                &request.topic,
            ))
        }
        Err(rejected) => Ok(write_rejected(out, rejected)),
    }
}

fn write_accepted(
    out: &Path,
    accepted: &Accepted,
    report: Option<&str>,
    topic: &str,
) -> Result<Outcome, WriteError> {
    let mut notes = Vec::new();
    if let Some(report) = report {
        let path = review_path(out);
        let text = format!(
            "Review of `{}` ({topic}) by the model; nothing in the domain was changed.\n\n{}\n",
            out.display(),
            report.trim_end()
        );
        write(&path, &text)?;
        notes.push(path);
    }
    write(out, &accepted.text)?;
    let stale = last_attempt_path(out);
    if stale.exists() {
        std::fs::remove_file(&stale).map_err(|source| WriteError::io(&stale, source))?;
    }
    Ok(Outcome {
        status: Status::Passed,
        rounds: accepted.rounds,
        sizes: Some((accepted.domain.truths.len(), accepted.domain.actions.len())),
        errors: Vec::new(),
        notes,
    })
}

fn write_rejected(out: &Path, rejected: Rejected) -> Result<Outcome, WriteError> {
    let mut notes = Vec::new();
    if let Some(text) = &rejected.last_text {
        let path = last_attempt_path(out);
        write(&path, text)?;
        notes.push(path);
    }
    Ok(Outcome {
        status: Status::Failed,
        rounds: rejected.rounds,
        sizes: None,
        errors: rejected.errors,
        notes,
    })
}
