//! Side tool: new domains from a language model (`kumo-gen propose`),
//! repaired with the validator's own located messages — the one stage of
//! KUMO's pipeline that comes before a domain file exists.
//!
//! One topic ([`propose`]):
//! 1. the model is asked for a domain file ([`prompts`]: the format, the
//!    rules, one shipped domain as an example, the topic and the requested
//!    sizes); a reply cut off for length is continued, up to
//!    [`CONTINUATIONS`] times (KUMO continues truncated generations too);
//! 2. the YAML is cut out of the reply and checked ([`checks`]): the
//!    validator (warnings count), then the requested name and sizes, a
//!    short SAT sample at 4x6 and at the requested setting, and a truth
//!    graph that is not one clique;
//! 3. every finding goes back to the model, with its file, line and column
//!    and the validator's wording, for up to `rounds` repairs. A repair
//!    request carries the first prompt, the last reply and the findings
//!    (not the whole history: the conversation stays the size of one
//!    domain file however many rounds it takes).
//!
//! `review` (optional) asks a second time which rules look factually
//! doubtful; the answer goes to a report for the user, nothing is changed.
//! Files (the accepted domain, the rejected last attempt, the review, the
//! batch's resume and summary) are [`files`]' and [`batch`]'s business.

pub mod batch;
pub mod checks;
pub mod files;
pub mod prompts;

use serde_json::{Value, json};

use crate::domain::Domain;
use crate::eval::client::{CallError, Client, Completion};
pub use checks::Wanted;
pub use prompts::Prompts;

/// Continuation requests for one reply cut off for length.
pub const CONTINUATIONS: usize = 3;

/// The default number of repair rounds after the first proposal.
pub const DEFAULT_ROUNDS: usize = 3;

/// Most repair rounds `--rounds` accepts: each is a request to the model.
pub const MAX_ROUNDS: usize = 100;

/// Findings a repair request (and the findings printed) names at most;
/// the rest are counted in one closing line.
pub const MAX_FINDINGS: usize = 50;

/// Characters of one finding kept in a repair request (a finding quotes
/// the line it is about, which the reply may have made huge).
pub const MAX_FINDING_CHARS: usize = 2_000;

/// Characters of a reply resent as the previous turn of a repair request.
pub const MAX_RESENT_REPLY_CHARS: usize = 256 * 1024;

/// A chat model: the eval client, or a script in tests.
pub trait Chat {
    /// The reply to `messages`; `truncated` when cut off for length.
    fn complete(&mut self, messages: &[Value]) -> Result<Completion, CallError>;
}

impl Chat for Client<'_> {
    fn complete(&mut self, messages: &[Value]) -> Result<Completion, CallError> {
        self.complete_continuable(messages)
    }
}

/// One topic to propose a domain for.
#[derive(Clone, Debug)]
pub struct Request {
    pub topic: String,
    pub wanted: Wanted,
    /// Repairs after the first proposal.
    pub rounds: usize,
}

/// The shipped (or user) domain shown as an example: name and file text.
#[derive(Clone, Debug)]
pub struct Example {
    pub name: String,
    pub text: String,
}

/// An accepted domain.
#[derive(Debug)]
pub struct Accepted {
    /// The file as the model wrote it (cut out of its reply).
    pub text: String,
    pub domain: Domain,
    /// Replies needed: the first proposal and the repairs.
    pub rounds: usize,
    pub tokens: u64,
}

/// A topic that ended without a valid domain.
#[derive(Debug)]
pub struct Rejected {
    /// The model's last domain file, if any reply had one.
    pub last_text: Option<String>,
    /// The findings about it, rendered.
    pub errors: Vec<String>,
    pub rounds: usize,
    pub tokens: u64,
}

/// Why `propose` stopped without an answer either way.
#[derive(Debug, thiserror::Error)]
pub enum ProposeError {
    /// The API failed (after its retries) or refused the run.
    #[error("{0}")]
    Call(#[from] CallError),
    /// A prompt template failed to render.
    #[error("{0}")]
    Template(#[from] prompts::PromptError),
}

/// What one round saw, for progress lines.
#[derive(Clone, Debug)]
pub struct RoundReport {
    /// 1 for the first proposal.
    pub round: usize,
    /// Continuations the reply needed.
    pub continued: usize,
    pub errors: usize,
}

impl RoundReport {
    /// The line `kumo-gen propose` prints for this round of the domain
    /// `name`: `  name: round 2: 3 problem(s) (reply continued 1x)`.
    pub fn line(&self, name: &str) -> String {
        format!(
            "  {name}: round {}: {}{}",
            self.round,
            match self.errors {
                0 => "valid".to_string(),
                n => format!("{n} problem(s)"),
            },
            match self.continued {
                0 => String::new(),
                n => format!(" (reply continued {n}x)"),
            }
        )
    }
}

/// A reply, continued while it was cut off for length.
struct Reply {
    text: Option<String>,
    continued: usize,
    /// Still cut off after every continuation.
    truncated: bool,
    tokens: u64,
}

fn message(role: &str, content: &str) -> Value {
    json!({"role": role, "content": content})
}

/// Asks `chat` for the reply to `messages`, continuing it while cut off.
fn ask(chat: &mut dyn Chat, prompts: &Prompts, messages: &[Value]) -> Result<Reply, ProposeError> {
    let mut conversation = messages.to_vec();
    let mut text = String::new();
    let mut tokens = 0;
    for continued in 0..=CONTINUATIONS {
        let c = chat.complete(&conversation)?;
        tokens += c.tokens;
        let Some(part) = c.text else {
            return Ok(Reply {
                text: None,
                continued,
                truncated: false,
                tokens,
            });
        };
        text.push_str(&part);
        if !c.truncated {
            return Ok(Reply {
                text: Some(text),
                continued,
                truncated: false,
                tokens,
            });
        }
        if continued < CONTINUATIONS {
            conversation.push(message("assistant", &part));
            let more = prompts
                .continuation(continued + 1, CONTINUATIONS)
                .map_err(ProposeError::Template)?;
            conversation.push(message("user", &more));
        }
    }
    Ok(Reply {
        text: Some(text),
        continued: CONTINUATIONS,
        truncated: true,
        tokens,
    })
}

/// Proposes a domain for `request`; `file` names the proposal in the
/// findings (the output path). `on_round` sees every round as it ends.
pub fn propose(
    chat: &mut dyn Chat,
    prompts: &Prompts,
    request: &Request,
    example: &Example,
    file: &str,
    on_round: &mut dyn FnMut(&RoundReport),
) -> Result<Result<Accepted, Rejected>, ProposeError> {
    let wanted = &request.wanted;
    let first = prompts
        .propose(
            &request.topic,
            &wanted.name,
            wanted.truths,
            wanted.actions,
            (&example.name, &example.text),
        )
        .map_err(ProposeError::Template)?;
    let mut messages = vec![message("user", &first)];
    let (mut last_text, mut tokens) = (None, 0);
    let mut errors = Vec::new();
    for round in 1..=request.rounds + 1 {
        let reply = ask(chat, prompts, &messages)?;
        tokens += reply.tokens;
        errors = match &reply.text {
            None => vec!["error: the reply was empty; it must hold the domain file".to_string()],
            Some(_) if reply.truncated => vec![format!(
                "error: the reply was still cut off for length after {CONTINUATIONS} continuations; write a shorter file"
            )],
            Some(text) => {
                let yaml = checks::extract_yaml(text);
                let found = checks::check(file, &yaml, wanted);
                last_text = Some(yaml.clone());
                match found {
                    Ok(domain) => {
                        on_round(&RoundReport {
                            round,
                            continued: reply.continued,
                            errors: 0,
                        });
                        return Ok(Ok(Accepted {
                            text: yaml,
                            domain,
                            rounds: round,
                            tokens,
                        }));
                    }
                    Err(found) => bounded_findings(found.iter().map(ToString::to_string)),
                }
            }
        };
        on_round(&RoundReport {
            round,
            continued: reply.continued,
            errors: errors.len(),
        });
        if round <= request.rounds {
            let repair = prompts
                .repair(&errors, round, request.rounds)
                .map_err(ProposeError::Template)?;
            messages.truncate(1);
            let resent = cut_chars(reply.text.as_deref().unwrap_or(""), MAX_RESENT_REPLY_CHARS);
            messages.push(message("assistant", &resent));
            messages.push(message("user", &repair));
        }
    }
    Ok(Err(Rejected {
        last_text,
        errors,
        rounds: request.rounds + 1,
        tokens,
    }))
}

/// The first [`MAX_FINDINGS`] findings, each cut to
/// [`MAX_FINDING_CHARS`], and a line counting the rest: a reply with
/// 200 000 bad names makes a repair request of a few hundred KB, not
/// tens of MB.
fn bounded_findings(found: impl ExactSizeIterator<Item = String>) -> Vec<String> {
    let total = found.len();
    let mut kept: Vec<String> = found
        .take(MAX_FINDINGS)
        .map(|f| cut_chars(&f, MAX_FINDING_CHARS))
        .collect();
    if total > MAX_FINDINGS {
        kept.push(format!(
            "error: {} more findings not shown (the first {MAX_FINDINGS} of {total} are above); fix these and the file is checked again",
            total - MAX_FINDINGS
        ));
    }
    kept
}

/// `text` cut to `max` characters, saying how much was cut.
fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{} [... {} more bytes cut]", &text[..at], text.len() - at),
    }
}

/// Asks which rules of the accepted domain `text` look factually
/// doubtful; the model's answer, for a report (nothing is changed).
pub fn review(
    chat: &mut dyn Chat,
    prompts: &Prompts,
    topic: &str,
    text: &str,
) -> Result<String, ProposeError> {
    let prompt = prompts
        .review(topic, text)
        .map_err(ProposeError::Template)?;
    let reply = ask(chat, prompts, &[message("user", &prompt)])?;
    Ok(reply
        .text
        .unwrap_or_else(|| "(the model gave no review)".to_string()))
}

/// Why the `--example` domain cannot be the example (the user's flag:
/// each message is prefixed with it).
#[derive(Debug, thiserror::Error)]
pub enum ExampleError {
    /// It names no domain, or its file does not load.
    #[error("--example: {0}")]
    Domain(#[from] crate::domain::LoadError),
    #[error("--example: cannot read `{}`: {source}", path.display())]
    Unreadable {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Example {
    /// The domain `spec` (a name or a path, as `--domain` takes) as the
    /// example; it must load.
    pub fn load(registry: &crate::domain::Registry, spec: &str) -> Result<Example, ExampleError> {
        use crate::domain::DomainSource;
        let source = registry.resolve(spec)?;
        let (domain, _) = source.load()?;
        let text = match &source {
            DomainSource::Shipped(d) => d.text.to_string(),
            DomainSource::File(path) => crate::files::read::read_text_at_most(
                path,
                crate::domain::MAX_FILE_BYTES as u64,
                "a domain file",
            )
            .map_err(|source| ExampleError::Unreadable {
                path: path.clone(),
                source,
            })?,
        };
        Ok(Example {
            name: domain.name,
            text,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_with_200_000_findings_makes_a_bounded_repair_request() {
        let long_line = "x".repeat(50_000);
        // Lazily: only the findings kept are ever made.
        let found = (0..200_000).map(|i| format!("error: truth {i}: {long_line}"));
        let kept = bounded_findings(found);
        assert_eq!(kept.len(), MAX_FINDINGS + 1);
        assert!(
            kept[..MAX_FINDINGS]
                .iter()
                .all(|f| f.len() < MAX_FINDING_CHARS + 64)
        );
        assert!(
            kept[MAX_FINDINGS].contains("199950 more findings"),
            "{}",
            kept[MAX_FINDINGS]
        );
        let few = bounded_findings(vec!["error: a".to_string()].into_iter());
        assert_eq!(few, ["error: a"]);
        assert_eq!(cut_chars("ééé", 2), "éé [... 2 more bytes cut]");
    }

    /// Replies from a list, each `(text, cut off)`; records what it saw.
    struct Script {
        replies: Vec<(&'static str, bool)>,
        seen: Vec<Vec<Value>>,
    }

    impl Chat for Script {
        fn complete(&mut self, messages: &[Value]) -> Result<Completion, CallError> {
            let (text, truncated) = self.replies[self.seen.len().min(self.replies.len() - 1)];
            self.seen.push(messages.to_vec());
            Ok(Completion {
                text: Some(text.to_string()),
                truncated,
                tokens: 1,
                retried: 0,
            })
        }
    }

    #[test]
    fn cut_off_replies_are_continued_up_to_the_limit() {
        let prompts = Prompts::load(None).unwrap();
        let ask_with = |replies: Vec<(&'static str, bool)>| {
            let mut chat = Script {
                replies,
                seen: Vec::new(),
            };
            let reply = ask(&mut chat, &prompts, &[message("user", "hi")]).unwrap();
            (reply, chat.seen)
        };
        let (reply, seen) = ask_with(vec![("a", true), ("b", true), ("c", true), ("d", false)]);
        assert_eq!(reply.text.as_deref(), Some("abcd"));
        assert!(!reply.truncated);
        assert_eq!(reply.continued, 3);
        assert_eq!(seen.len(), 4);
        assert_eq!(seen[3].len(), 7, "each part and a request to continue");
        assert_eq!(seen[3][5]["content"], "c");
        let (reply, seen) = ask_with(vec![("a", true)]);
        assert!(reply.truncated);
        assert_eq!(seen.len(), 1 + CONTINUATIONS);
    }
}
