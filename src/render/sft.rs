//! SFT golden trajectories: chat `messages` and per-step
//! `prompt`/`completion` records, following KUMO's agent protocol.
//!
//! A transcript is: system (the platform prompt with the knowledge book, or
//! with the symbolic rule table), a user turn with the round instruction,
//! then for every golden action an assistant turn `<ANSWER> action
//! </ANSWER>` and a user turn with the observation followed by the round
//! instruction (KUMO appends the instruction to the observation message),
//! and a final assistant turn `<ANSWER> truth </ANSWER>`. Every assistant
//! message carries `"weight": 1`; no other message has a weight (OpenAI's
//! fine-tuning convention; TRL, axolotl and LLaMA-Factory read `messages`).
//!
//! The optional rationale (`rationale.j2`) is built only from facts of the
//! instance: which remaining truths the last observation ruled out, which
//! remain, and why the predicted truth is the answer.
//!
//! The predicted truth is the one the trajectory leaves: the only truth
//! left, else the first remaining valid truth (DESIGN.md: the policy
//! predicts when a truth is related to no remaining action, and with
//! N_valid = 1 that truth is the valid one).

use minijinja::Value as Jinja;
use serde::Serialize;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::book::{Renderer, Words, trim_end_in_place};
use super::task::TaskView;
use super::templates::TemplateError;

/// What the SFT system message carries besides the game description.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SftBook {
    /// The knowledge book (prose).
    #[default]
    Prose,
    /// The compact symbolic rule table (`symbolic.j2`).
    Symbolic,
}

/// Rendering choices that are not in the templates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderOptions {
    pub sft_book: SftBook,
    /// Assistant turns explain, from facts, what the last observation
    /// ruled out before giving the answer.
    pub rationale: bool,
}

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

/// `<ANSWER> name </ANSWER>`.
pub fn answer_tag(name: &str) -> String {
    format!("<ANSWER> {name} </ANSWER>")
}

#[derive(Serialize)]
struct TurnCtx<'a> {
    #[serde(flatten)]
    words: Words<'a>,
    truths: Vec<&'a str>,
    actions: Vec<&'a str>,
}

#[derive(Serialize)]
struct ObservationCtx<'a> {
    #[serde(flatten)]
    words: Words<'a>,
    action: &'a str,
    kind: &'static str,
    unit: Option<&'a str>,
    observation: &'a str,
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
    /// The round instruction: pick an action or predict a truth, answer
    /// format.
    pub fn instruction(&self, task: &TaskView) -> Result<String, TemplateError> {
        let d = task.domain;
        let ctx = TurnCtx {
            words: Words::of(d),
            truths: task.truths.iter().map(|&t| d.truths[t].as_str()).collect(),
            actions: task
                .actions
                .iter()
                .map(|&a| d.actions[a].name.as_str())
                .collect(),
        };
        let mut text = self
            .templates
            .render("turn", Jinja::from(minijinja::value::Serde(&ctx)))?;
        trim_end_in_place(&mut text);
        Ok(text)
    }

    /// The observation message after instance action `pos`.
    pub fn observation(&self, task: &TaskView, pos: usize) -> Result<String, TemplateError> {
        let action = &task.domain.actions[task.actions[pos]];
        let observation = task.observation_text(pos);
        let ctx = ObservationCtx {
            words: Words::of(task.domain),
            action: &action.name,
            kind: action.kind.as_str(),
            unit: action.unit.as_deref(),
            observation: &observation,
        };
        let mut text = self
            .templates
            .render("observation", Jinja::from(minijinja::value::Serde(&ctx)))?;
        trim_end_in_place(&mut text);
        Ok(text)
    }

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
    /// `system` as the system message.
    pub fn sft(
        &self,
        task: &TaskView,
        golden: &[usize],
        system: &str,
    ) -> Result<(String, Vec<String>), TemplateError> {
        let d = task.domain;
        let instruction = self.instruction(task)?;
        let mut messages = Vec::with_capacity(2 * golden.len() + 3);
        messages.push(message("system", system, None));
        messages.push(message("user", &instruction, None));
        // (messages before the turn, the completion message) per turn.
        let mut turns: Vec<(usize, String)> = Vec::with_capacity(golden.len() + 1);
        let mut remaining: Vec<usize> = task.truths.to_vec();
        let mut taken = vec![false; task.actions.len()];
        let mut previous: Option<PreviousCtx> = None;
        let name = |t: &usize| d.truths[*t].as_str();

        for (step, &pos) in golden.iter().enumerate() {
            let action = d.actions[task.actions[pos]].name.as_str();
            let content = self.assistant(
                task,
                step,
                previous.take(),
                remaining.iter().map(name).collect(),
                action,
                "action",
                "",
            )?;
            turns.push((messages.len(), message("assistant", &content, None)));
            messages.push(message("assistant", &content, Some(1)));

            let state = &d.actions[task.actions[pos]].states[task.observed[pos]];
            let ruled: Vec<usize> = remaining
                .iter()
                .copied()
                .filter(|&t| state.rules_out.contains(t))
                .collect();
            remaining.retain(|t| !state.rules_out.contains(*t));
            taken[pos] = true;
            let mut user = self.observation(task, pos)?;
            user.push_str("\n\n");
            user.push_str(&instruction);
            messages.push(message("user", &user, None));
            previous = Some(PreviousCtx {
                action,
                observation: task.observation_text(pos),
                unit: d.actions[task.actions[pos]].unit.as_deref(),
                ruled_out: ruled.iter().map(name).collect(),
            });
        }

        let (truth, reason) = predict(task, &remaining, &taken);
        let content = self.assistant(
            task,
            golden.len(),
            previous,
            remaining.iter().map(name).collect(),
            &d.truths[truth],
            "truth",
            reason,
        )?;
        turns.push((messages.len(), message("assistant", &content, None)));
        messages.push(message("assistant", &content, Some(1)));

        let record = format!("{{\"messages\":[{}]}}", messages.join(","));
        let steps = turns
            .iter()
            .enumerate()
            .map(|(step, (before, completion))| {
                let mut line = String::with_capacity(
                    64 + completion.len()
                        + messages[..*before]
                            .iter()
                            .map(|m| m.len() + 1)
                            .sum::<usize>(),
                );
                let _ = write!(
                    line,
                    "{{\"seed\":{},\"step\":{step},\"prompt\":[",
                    task.seed
                );
                // Earlier assistant turns without their weight.
                let mut earlier = turns.iter().peekable();
                for (i, m) in messages[..*before].iter().enumerate() {
                    if i > 0 {
                        line.push(',');
                    }
                    match earlier.peek() {
                        Some((at, plain)) if *at == i => {
                            line.push_str(plain);
                            earlier.next();
                        }
                        _ => line.push_str(m),
                    }
                }
                line.push_str("],\"completion\":[");
                line.push_str(completion);
                line.push_str("]}");
                line
            })
            .collect();
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
    let pick = remaining
        .iter()
        .copied()
        .find(|t| task.valid.contains(t))
        .or_else(|| remaining.first().copied())
        .or_else(|| task.valid.first().copied())
        .unwrap_or(0);
    if remaining.contains(&pick) && unrelated(pick) {
        (pick, "unrelated")
    } else {
        (pick, "not_ruled_out")
    }
}

/// Replays an SFT chat record against its instance, independently of the
/// templates: checks the message roles and weights, that each assistant
/// action is an instance action whose observation the next user turn
/// shows, and returns the predicted truth (a domain index) if it is an
/// instance truth that no observation shown ruled out.
pub fn replay_sft(task: &TaskView, record: &Value) -> Result<usize, String> {
    let d = task.domain;
    let messages = record
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("no `messages` list")?;
    let role = |i: usize| messages[i].get("role").and_then(Value::as_str);
    let content = |i: usize| {
        messages[i]
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    if messages.len() < 3 || role(0) != Some("system") || role(1) != Some("user") {
        return Err("a transcript starts with system and user messages".into());
    }
    let mut remaining = task.truth_set();
    for i in 2..messages.len() {
        let expected = if i % 2 == 0 { "assistant" } else { "user" };
        if role(i) != Some(expected) {
            return Err(format!("message {i} should be `{expected}`"));
        }
        let weight = messages[i].get("weight");
        if (expected == "assistant") != (weight == Some(&json!(1))) {
            return Err(format!("message {i} has the wrong weight: {weight:?}"));
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
            .ok_or_else(|| format!("message {i} has no <ANSWER>"))?;
        let last = i + 1 == messages.len();
        if last {
            let t = task
                .truths
                .iter()
                .copied()
                .find(|&t| d.truths[t] == answer)
                .ok_or_else(|| format!("final answer `{answer}` is not a truth of the instance"))?;
            if !remaining.contains(t) {
                return Err(format!("final answer `{answer}` was ruled out"));
            }
            return Ok(t);
        }
        let pos = task
            .actions
            .iter()
            .position(|&a| d.actions[a].name == answer)
            .ok_or_else(|| format!("`{answer}` in message {i} is not an action of the instance"))?;
        let shown = task.observation_text(pos);
        if !content(i + 1).contains(&shown) {
            return Err(format!(
                "message {} does not show the observation `{shown}` of `{answer}`",
                i + 1
            ));
        }
        let state = &d.actions[task.actions[pos]].states[task.observed[pos]];
        for t in state.rules_out.iter() {
            remaining.remove(t);
        }
    }
    Err("the transcript does not end with an assistant answer".into())
}
