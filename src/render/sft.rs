//! SFT golden trajectories: chat `messages` and per-step
//! `prompt`/`completion` records, in exactly the messages `kumo-gen eval`
//! sends ([`super::protocol`]: KUMO's round instruction, observation
//! message and conversation), so a model is trained on the format it is
//! evaluated with.
//!
//! The chat record is: the system message (the platform prompt with the
//! knowledge book, or with the symbolic rule table), then per round the
//! user text `eval` sends that round — the instruction on the first round,
//! `Observation from previous action: {'action': ..., 'observation': ...}`
//! followed by `"\n\n"` and the instruction later — and the assistant's reply
//! `<ANSWER> action </ANSWER>` along the golden trajectory, ending with
//! `<ANSWER> truth </ANSWER>`. Every assistant message carries
//! `"weight": 1`; no other message has a weight (OpenAI's fine-tuning
//! convention; TRL, axolotl and LLaMA-Factory read `messages`).
//!
//! A step record is `eval`'s request of that round, byte for byte (the
//! history KUMO keeps: `"Begin the game."` for the first user turn,
//! observations without the instruction except the last) and the reply as
//! the completion.
//!
//! The optional rationale (`rationale.j2`) is built only from facts of the
//! instance: which remaining truths the last observation ruled out, which
//! remain, and why the predicted truth is the answer.
//!
//! The predicted truth is the golden player's (`optimal.golden_answer`):
//! the first remaining truth no action left relates to (DESIGN.md: the
//! policy predicts when there is one; it is certainly valid, since every
//! invalid truth is ruled out by some observation), else the only truth
//! left. With N_valid > 1 the record so never names a valid truth the
//! observations do not yet prove. docs/output.md's "The golden player's
//! answer rule" states it, and `tests/docs.rs` checks it.

use minijinja::Value as Jinja;
use serde::Serialize;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::book::{Renderer, Words, trim_end_in_place};
use super::error::TemplateError;
use super::options::SftBook;
use super::protocol::{Conversation, answer_tag, instruction, observation_message};
use super::task::TaskView;

/// Everything rendered for one instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// The knowledge book (`knowledge_book/<setting>/seed=<i>.txt`).
    pub book: String,
    /// The platform prompt with the book: the system prompt for evaluation.
    pub prompt: String,
    /// The SFT record as one JSON line (no newline): `{"messages": [...]}`.
    pub sft: String,
    /// One JSON line per assistant turn: `{"seed", "step", "prompt"
    /// (the messages before the turn, without weights), "completion" ([the
    /// assistant message])}` (TRL's conversational prompt-completion
    /// format).
    pub steps: Vec<String>,
}

impl Rendered {
    /// The SFT record as a JSON value.
    pub fn sft_value(&self) -> Value {
        serde_json::from_str(&self.sft).expect("rendered SFT records are JSON")
    }
}

/// One chat message as JSON text.
#[derive(Serialize)]
struct Message<'a> {
    role: &'a str,
    content: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    weight: Option<u8>,
}

fn message(role: &str, content: &str, weight: Option<u8>) -> String {
    serde_json::to_string(&Message {
        role,
        content,
        weight,
    })
    .expect("a message serialises")
}

#[derive(Serialize)]
struct PreviousCtx<'a> {
    action: &'a str,
    observation: String,
    unit: Option<&'a str>,
    ruled_out: Vec<&'a str>,
}

#[derive(Serialize)]
struct RationaleCtx<'a> {
    #[serde(flatten)]
    words: Words<'a>,
    step: usize,
    previous: Option<PreviousCtx<'a>>,
    remaining: Vec<&'a str>,
    answer: &'a str,
    answer_kind: &'static str,
    /// For a truth: `only` (it is the only one left), `unrelated` (no
    /// remaining action can rule it out) or `not_ruled_out`.
    reason: &'static str,
}

impl Renderer<'_> {
    /// Book, prompt and SFT records of one instance; `golden` lists the
    /// instance action positions taken before the prediction.
    pub fn render(&self, task: &TaskView, golden: &[usize]) -> Result<Rendered, TemplateError> {
        let book = self.book(task)?;
        let prompt = self.prompt(task, Some(&book), "prose")?;
        let (sft, steps) = match self.options.sft_book {
            SftBook::Prose => self.sft(task, golden, &prompt)?,
            SftBook::Symbolic => {
                let table = self.symbolic(task)?;
                let system = self.prompt(task, Some(&table), "symbolic")?;
                self.sft(task, golden, &system)?
            }
        };
        Ok(Rendered {
            book,
            prompt,
            sft,
            steps,
        })
    }

    /// The SFT chat record and the per-step records for `golden`, with
    /// `system` as the system message: `eval`'s messages, driven by the
    /// golden replies.
    pub fn sft(
        &self,
        task: &TaskView,
        golden: &[usize],
        system: &str,
    ) -> Result<(String, Vec<String>), TemplateError> {
        let d = task.domain;
        let action_names: Vec<&str> = task
            .actions
            .iter()
            .map(|&a| d.actions[a].name.as_str())
            .collect();
        let truth_names: Vec<&str> = task.truths.iter().map(|&t| d.truths[t].as_str()).collect();
        let instruction = instruction(&action_names, &truth_names);
        // The model name only picks the system message's role; any name
        // outside KUMO's list gives `system`.
        let mut conversation = Conversation::new("", system.to_string());
        let mut messages: Vec<String> = Vec::with_capacity(2 * golden.len() + 3);
        messages.push(message("system", system, None));
        let mut steps: Vec<String> = Vec::with_capacity(golden.len() + 1);
        let mut remaining: Vec<usize> = task.truths.to_vec();
        let mut taken = vec![false; task.actions.len()];
        let mut previous: Option<PreviousCtx> = None;
        let mut shown: Option<(&str, Value)> = None;
        let name = |t: &usize| d.truths[*t].as_str();

        for step in 0..=golden.len() {
            let request = conversation.request(shown.as_ref().map(|(a, v)| (*a, v)), &instruction);
            let user = request
                .last()
                .and_then(|m| m["content"].as_str())
                .unwrap_or_default()
                .to_string();
            messages.push(message("user", &user, None));
            let content = match golden.get(step) {
                Some(&pos) => self.assistant(
                    task,
                    step,
                    previous.take(),
                    remaining.iter().map(name).collect(),
                    action_names[pos],
                    "action",
                    "",
                )?,
                None => {
                    let (truth, reason) = predict(task, &remaining, &taken);
                    self.assistant(
                        task,
                        step,
                        previous.take(),
                        remaining.iter().map(name).collect(),
                        &d.truths[truth],
                        "truth",
                        reason,
                    )?
                }
            };
            steps.push(step_record(task.seed, step, &request, &content));
            messages.push(message("assistant", &content, Some(1)));
            conversation.reply(Some(&content));
            let Some(&pos) = golden.get(step) else {
                break;
            };
            let state = &d.actions[task.actions[pos]].states[task.observed[pos]];
            let ruled: Vec<usize> = remaining
                .iter()
                .copied()
                .filter(|&t| state.rules_out.contains(t))
                .collect();
            remaining.retain(|t| !state.rules_out.contains(*t));
            taken[pos] = true;
            shown = Some((action_names[pos], task.observation_value(pos)));
            previous = Some(PreviousCtx {
                action: action_names[pos],
                observation: task.observation_text(pos),
                unit: d.actions[task.actions[pos]].unit.as_deref(),
                ruled_out: ruled.iter().map(name).collect(),
            });
        }
        let record = format!("{{\"messages\":[{}]}}", messages.join(","));
        Ok((record, steps))
    }

    #[allow(clippy::too_many_arguments)]
    fn assistant(
        &self,
        task: &TaskView,
        step: usize,
        previous: Option<PreviousCtx>,
        remaining: Vec<&str>,
        answer: &str,
        answer_kind: &'static str,
        reason: &'static str,
    ) -> Result<String, TemplateError> {
        let tag = answer_tag(answer);
        if !self.options.rationale {
            return Ok(tag);
        }
        let ctx = RationaleCtx {
            words: Words::of(task.domain),
            step,
            previous,
            remaining,
            answer,
            answer_kind,
            reason,
        };
        let mut text = self
            .templates
            .render("rationale", Jinja::from(minijinja::value::Serde(&ctx)))?;
        trim_end_in_place(&mut text);
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&tag);
        Ok(text)
    }
}

/// A record (one JSON object: the chat record or a step record) of a
/// certified line (docs/output.md, "Certified labels") with a last member
/// saying what its golden trajectory is worth:
/// `"certified": {"expected_steps_at_most": upper,
/// "expected_steps_at_least": lower}`. Its messages follow a strategy of
/// at most `upper` expected actions, not one proven optimal; the optimum
/// is at least `lower`. A record of an exact line has no such member.
pub fn with_certificate(record: &str, lower: f64, upper: f64) -> String {
    let member = serde_json::json!({
        "expected_steps_at_most": upper,
        "expected_steps_at_least": lower,
    });
    let body = record.strip_suffix('}').unwrap_or(record);
    format!("{body},\"certified\":{member}}}")
}

/// One step record: `{"seed", "step", "prompt" (the request `eval`
/// sends), "completion" ([the assistant message])}` (TRL's conversational
/// prompt-completion format).
fn step_record(seed: u64, step: usize, request: &[Value], content: &str) -> String {
    let mut line = String::with_capacity(
        64 + content.len()
            + request
                .iter()
                .map(|m| m["content"].as_str().map_or(0, str::len) + 32)
                .sum::<usize>(),
    );
    let _ = write!(line, "{{\"seed\":{seed},\"step\":{step},\"prompt\":[");
    for (i, m) in request.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        line.push_str(&m.to_string());
    }
    line.push_str("],\"completion\":[");
    line.push_str(&message("assistant", content, None));
    line.push_str("]}");
    line
}

/// The truth the trajectory predicts, and why.
fn predict(task: &TaskView, remaining: &[usize], taken: &[bool]) -> (usize, &'static str) {
    let d = task.domain;
    if let [only] = remaining {
        return (*only, "only");
    }
    let unrelated = |t: usize| {
        task.actions
            .iter()
            .zip(taken)
            .all(|(&a, &done)| done || !d.actions[a].related.contains(t))
    };
    // The golden player's answer: the first candidate no action left can
    // rule out (certainly valid), else the one left; with one valid truth
    // that candidate is the valid one.
    let pick = remaining
        .iter()
        .copied()
        .find(|&t| unrelated(t))
        .or_else(|| remaining.iter().copied().find(|t| task.valid.contains(t)))
        .or_else(|| remaining.first().copied())
        .or_else(|| task.valid.first().copied())
        .unwrap_or(0);
    if remaining.contains(&pick) && unrelated(pick) {
        (pick, "unrelated")
    } else {
        (pick, "not_ruled_out")
    }
}

/// Why an SFT transcript does not replay: the message and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("no `messages` list")]
    NoMessages,
    #[error("a transcript starts with system and user messages")]
    BadStart,
    /// Message `index` is not of the role the turn order wants.
    #[error("message {index} should be `{expected}`")]
    Role {
        index: usize,
        expected: &'static str,
    },
    /// `weight`: the message's weight as found (`None`: none).
    #[error("message {index} has the wrong weight: {weight:?}")]
    Weight { index: usize, weight: Option<Value> },
    #[error("message {0} has no <ANSWER>")]
    NoAnswer(usize),
    #[error("final answer `{0}` is not a truth of the instance")]
    NotATruth(String),
    #[error("final answer `{0}` was ruled out")]
    RuledOut(String),
    #[error("`{answer}` in message {index} is not an action of the instance")]
    NotAnAction { answer: String, index: usize },
    #[error("message {index} does not start with the observation of `{answer}`: `{shown}`")]
    NoObservation {
        index: usize,
        answer: String,
        shown: String,
    },
    #[error("the transcript does not end with an assistant answer")]
    NoFinalAnswer,
}

/// Replays an SFT chat record against its instance, independently of the
/// templates: checks the message roles and weights, that each assistant
/// action is an instance action whose observation message (KUMO's) the
/// next user turn starts with, and returns the predicted truth (a domain index) if it is an
/// instance truth that no observation shown ruled out.
pub fn replay_sft(task: &TaskView, record: &Value) -> Result<usize, ReplayError> {
    let d = task.domain;
    let messages = record
        .get("messages")
        .and_then(Value::as_array)
        .ok_or(ReplayError::NoMessages)?;
    let role = |i: usize| messages[i].get("role").and_then(Value::as_str);
    let content = |i: usize| {
        messages[i]
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    if messages.len() < 3 || role(0) != Some("system") || role(1) != Some("user") {
        return Err(ReplayError::BadStart);
    }
    let mut remaining = task.truth_set();
    for i in 2..messages.len() {
        let expected = if i % 2 == 0 { "assistant" } else { "user" };
        if role(i) != Some(expected) {
            return Err(ReplayError::Role { index: i, expected });
        }
        let weight = messages[i].get("weight");
        if (expected == "assistant") != (weight == Some(&json!(1))) {
            return Err(ReplayError::Weight {
                index: i,
                weight: weight.cloned(),
            });
        }
        if expected == "user" {
            continue;
        }
        let text = content(i);
        let answer = text
            .rsplit("<ANSWER>")
            .next()
            .and_then(|tail| tail.split("</ANSWER>").next())
            .map(str::trim)
            .filter(|_| text.contains("<ANSWER>"))
            .ok_or(ReplayError::NoAnswer(i))?;
        let last = i + 1 == messages.len();
        if last {
            let t = task
                .truths
                .iter()
                .copied()
                .find(|&t| d.truths[t] == answer)
                .ok_or_else(|| ReplayError::NotATruth(answer.to_string()))?;
            if !remaining.contains(t) {
                return Err(ReplayError::RuledOut(answer.to_string()));
            }
            return Ok(t);
        }
        let pos = task
            .actions
            .iter()
            .position(|&a| d.actions[a].name == answer)
            .ok_or_else(|| ReplayError::NotAnAction {
                answer: answer.to_string(),
                index: i,
            })?;
        let shown = observation_message(answer, &task.observation_value(pos));
        if !content(i + 1).starts_with(&shown) {
            return Err(ReplayError::NoObservation {
                index: i + 1,
                answer: answer.to_string(),
                shown,
            });
        }
        let state = &d.actions[task.actions[pos]].states[task.observed[pos]];
        for t in state.rules_out.iter() {
            remaining.remove(t);
        }
    }
    Err(ReplayError::NoFinalAnswer)
}
