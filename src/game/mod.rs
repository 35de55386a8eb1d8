//! The rules of one play-through, shared by `play`, `eval` and `score`.
//!
//! In: an [`InstanceLine`] (one line of a KUMO-format instance file) and its
//! compiled [`Domain`]. Out: a [`Trial`] in KUMO's result format, built one
//! reply at a time by an [`Episode`], and success decided by a [`Judge`].
//!
//! The semantics follow KUMO's reference code exactly (linhaowei1/kumo):
//! - `main.py`: every reply appends one entry to `actions` (the action or
//!   truth named, or `null` when the reply names neither); a truth ends the
//!   trial and appends `{"predicted_truth": t}` as a second entry; an
//!   unusable reply ends it as a parse error; running out of steps ends it
//!   unsuccessful without a parse error. `observations[i]` is what reply `i`
//!   was shown: `null` first, then `{"action", "observation"}`. KUMO's action
//!   count is `len(actions)`, so a prediction counts twice and repeated
//!   actions count every time.
//! - `env/engine.py` `evaluate_answer`: an answer succeeds when it is a
//!   truth of the instance and no observation of the instance (all of them,
//!   not only those the player saw) rules it out; for a numeric observation
//!   every range containing the value applies.
//!
//! - The budgeted protocol (Interactive Benchmarks), opt-in with
//!   [`Episode::budgeted`]: a wrong truth does not end the trial; it is
//!   recorded like a prediction (the name, then `{"predicted_truth": t}`),
//!   the next reply is shown `{"action": t, "observation": "wrong"}`, and
//!   play goes on until a right answer or the turn budget (the caller's
//!   reply limit) is spent. The trial records `budget`.
//!
//! Why here: the three tools must agree on these rules to the letter, and
//! none of them should re-derive them.

mod agent;
mod line;
mod menu;
pub mod predict;
pub mod protocol;
mod record;
pub mod session;
mod task;
pub mod text;
mod verdict;

pub use agent::{Agent, HUMAN_AGENT, MODEL_AGENT, is_human};
pub use line::{
    InstanceError, InstanceLine, Optimal, ResolvedLine, Steps, parse_instances, task_from_json,
};
pub use menu::menu_choice;
pub use record::{ResultLine, Trial};
pub use task::{
    BudgetError, MAX_REPLIES, Task, budget_rule, check_budget, largest_budget, render_book,
};
pub use text::read_jsonl;
pub use verdict::{Verdict, actions_taken, kumo_action_count};

use serde_json::{Value, json};

use crate::domain::{ActionKind, Domain, StateLabel, TruthSet};
use crate::render::LineMismatch;

/// Decides success the way KUMO's `evaluate_answer` does.
#[derive(Clone, Debug)]
pub struct Judge {
    /// Truths of the instance, in instance order.
    truths: Vec<String>,
    /// Domain truth indices ruled out by the instance's observations.
    ruled_out: TruthSet,
    domain_truths: Vec<String>,
    /// Observations that matched no state of their action (KUMO lets them
    /// rule out nothing); a sign that domain and instance disagree.
    pub unmatched: Vec<String>,
}

impl Judge {
    /// Builds the judge; an action of the instance missing from the domain
    /// is an error (the domain is the wrong one).
    pub fn new(domain: &Domain, instance: &InstanceLine) -> Result<Judge, LineMismatch> {
        let mut ruled_out = TruthSet::with_capacity(domain.truths.len());
        let mut unmatched = Vec::new();
        for (name, value) in &instance.observations {
            let Some(index) = domain.action_index(name) else {
                return Err(LineMismatch::ActionNotInDomain {
                    name: name.clone(),
                    seed: instance.seed,
                    domain: domain.name.clone(),
                });
            };
            let action = &domain.actions[index];
            let mut matched = false;
            for state in &action.states {
                if state_matches(action.kind, &state.label, value) {
                    matched = true;
                    ruled_out.union_with(&state.rules_out);
                }
            }
            if !matched {
                unmatched.push(format!("{name} = {value}"));
            }
        }
        Ok(Judge {
            truths: instance.truths.clone(),
            ruled_out,
            domain_truths: domain.truths.clone(),
            unmatched,
        })
    }

    /// Whether `answer` is a truth of the instance no observation rules out.
    pub fn evaluate(&self, answer: &str) -> bool {
        self.truths.iter().any(|t| t == answer)
            && self
                .domain_truths
                .iter()
                .position(|t| t == answer)
                .is_some_and(|i| !self.ruled_out.contains(i))
    }
}

/// KUMO's state test: a `str` state matches an equal observation, a range
/// matches a number inside it (both ends included). Scalar keys that the
/// importer turned into `str` labels match the number's text.
fn state_matches(kind: ActionKind, label: &StateLabel, value: &Value) -> bool {
    match (label, value) {
        (StateLabel::Named(name), Value::String(s)) => name == s,
        (StateLabel::Named(name), Value::Number(n)) if kind == ActionKind::Str => {
            *name == n.to_string()
        }
        (StateLabel::Range { lo, hi }, Value::Number(n)) => {
            n.as_f64().is_some_and(|v| *lo <= v && v <= *hi)
        }
        (StateLabel::Range { lo, hi }, Value::String(s)) => {
            s.trim().parse::<f64>().is_ok_and(|v| *lo <= v && v <= *hi)
        }
        _ => false,
    }
}

/// What one reply led to.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// The reply named an action; this is what the player observes.
    Observation { action: String, value: Value },
    /// The reply named a truth: the trial is over.
    Predicted { truth: String, successful: bool },
    /// The reply named neither: the trial is over as a parse error.
    ParseError,
    /// Budgeted protocol only: the reply named a truth that is not the
    /// valid one; the trial goes on.
    Wrong { truth: String },
}

/// One trial in progress, recorded exactly as KUMO's `main.py` does.
#[derive(Debug)]
pub struct Episode<'a> {
    instance: &'a InstanceLine,
    judge: &'a Judge,
    progress: Progress,
}

impl<'a> Episode<'a> {
    pub fn new(instance: &'a InstanceLine, judge: &'a Judge) -> Self {
        Episode {
            instance,
            judge,
            progress: Progress::default(),
        }
    }

    /// The budgeted protocol with `budget` turns: a wrong answer is told
    /// "wrong" and costs a turn instead of ending the trial. The caller
    /// stops after `budget` replies (as it stops KUMO's protocol after
    /// `max_steps`).
    pub fn budgeted(mut self, budget: usize) -> Self {
        self.progress = self.progress.budgeted(budget);
        self
    }

    /// The observation the next reply answers (`null` before the first).
    pub fn observation(&self) -> &Value {
        self.progress.observation()
    }

    /// Number of replies recorded so far.
    pub fn replies(&self) -> usize {
        self.progress.replies()
    }

    pub fn is_finished(&self) -> bool {
        self.progress.is_finished()
    }

    /// Records one reply: `answer` as parsed from `text` (or `None` when
    /// nothing could be parsed), with the tokens it cost.
    pub fn respond(&mut self, answer: Option<&str>, text: Option<String>, tokens: u64) -> Step {
        self.progress
            .respond(self.instance, self.judge, answer, text, tokens)
    }

    /// The finished (or abandoned at the step limit) trial.
    pub fn into_trial(self) -> Trial {
        self.progress.into_trial()
    }
}

/// What an [`Episode`] records, owned and apart from the instance and
/// judge it is played on: a [`session::Session`] keeps one beside its
/// shared task and records each reply in time and memory of that reply
/// alone (no replay of the earlier ones).
#[derive(Clone, Debug, Default)]
pub struct Progress {
    trial: Trial,
    observation: Value,
    finished: bool,
    /// Whether a wrong truth lets play go on (the budgeted protocol).
    budgeted: bool,
}

impl Progress {
    /// [`Episode::budgeted`].
    pub fn budgeted(mut self, budget: usize) -> Self {
        self.budgeted = true;
        self.trial.budget = Some(budget);
        self
    }

    /// The observation the next reply answers (`null` before the first).
    pub fn observation(&self) -> &Value {
        &self.observation
    }

    /// Number of replies recorded so far.
    pub fn replies(&self) -> usize {
        self.trial.generated_text.len()
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The trial so far.
    pub fn trial(&self) -> &Trial {
        &self.trial
    }

    /// [`Episode::respond`] on `instance`, judged by `judge` (the same
    /// pair for every reply of one trial).
    pub fn respond(
        &mut self,
        instance: &InstanceLine,
        judge: &Judge,
        answer: Option<&str>,
        text: Option<String>,
        tokens: u64,
    ) -> Step {
        debug_assert!(!self.finished, "respond after the trial ended");
        let inst = instance;
        let answer = answer.filter(|a| inst.truths.iter().chain(&inst.actions).any(|x| x == a));
        self.trial
            .actions
            .push(answer.map_or(Value::Null, |a| Value::String(a.to_string())));
        self.trial.consumed_tokens += tokens;
        self.trial
            .generated_text
            .push(text.map_or(Value::Null, |t| {
                Value::String(crate::render::protocol::kept_reply(&t).into_owned())
            }));
        self.trial.observations.push(self.observation.clone());
        match answer {
            Some(a) if inst.truths.iter().any(|t| t == a) => {
                self.trial.actions.push(json!({ "predicted_truth": a }));
                let successful = judge.evaluate(a);
                if self.budgeted && !successful {
                    self.observation = json!({ "action": a, "observation": "wrong" });
                    return Step::Wrong {
                        truth: a.to_string(),
                    };
                }
                self.trial.successful = successful;
                self.finished = true;
                Step::Predicted {
                    truth: a.to_string(),
                    successful,
                }
            }
            Some(a) => {
                let value = inst.observation(a).cloned().unwrap_or(Value::Null);
                self.observation = json!({ "action": a, "observation": value });
                Step::Observation {
                    action: a.to_string(),
                    value,
                }
            }
            None => {
                self.trial.parse_error = true;
                self.finished = true;
                Step::ParseError
            }
        }
    }

    /// The finished (or abandoned at the step limit) trial.
    pub fn into_trial(self) -> Trial {
        self.trial
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Domain {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/ok/tiny.yaml"
        ))
        .unwrap();
        Domain::from_yaml("tiny.yaml", &text).unwrap().0
    }

    fn instance() -> InstanceLine {
        let line = r#"{"truths": ["Fuse", "Relay", "Switch", "Lamp"],
            "actions": ["Continuity check", "Voltage", "Clicks"],
            "observations": {"Continuity check": "closed", "Voltage": 5.0, "Clicks": 1},
            "seed": 0, "valid_truth": "Lamp"}"#;
        parse_instances(&line.replace('\n', " ")).unwrap().remove(0)
    }

    #[test]
    fn judge_applies_every_matching_range_like_kumo() {
        let judge = Judge::new(&tiny(), &instance()).unwrap();
        // 5.0 lies in both voltage ranges: Switch and Fuse are both out.
        assert!(!judge.evaluate("Switch"));
        assert!(!judge.evaluate("Fuse"));
        assert!(!judge.evaluate("Relay"));
        assert!(judge.evaluate("Lamp"));
        assert!(!judge.evaluate("Nonsense"));
        assert!(judge.unmatched.is_empty());
    }

    #[test]
    fn episode_counts_like_kumo() {
        let (domain, inst) = (tiny(), instance());
        let judge = Judge::new(&domain, &inst).unwrap();
        let mut ep = Episode::new(&inst, &judge);
        let step = ep.respond(
            Some("Voltage"),
            Some("<ANSWER> Voltage </ANSWER>".into()),
            7,
        );
        assert!(matches!(step, Step::Observation { .. }));
        ep.respond(Some("Voltage"), Some("again".into()), 1);
        let step = ep.respond(Some("Lamp"), Some("<ANSWER> Lamp </ANSWER>".into()), 2);
        assert_eq!(
            step,
            Step::Predicted {
                truth: "Lamp".into(),
                successful: true
            }
        );
        let trial = ep.into_trial();
        assert_eq!(
            trial.actions.len(),
            4,
            "2 actions + truth + predicted_truth"
        );
        assert_eq!(trial.observations[0], Value::Null);
        assert_eq!(
            trial.observations[1],
            json!({"action": "Voltage", "observation": 5.0})
        );
        assert_eq!(trial.consumed_tokens, 10);
        assert!(trial.successful && !trial.parse_error);

        // The budgeted protocol: a wrong truth costs a turn, play goes on.
        let mut ep = Episode::new(&inst, &judge).budgeted(5);
        let step = ep.respond(Some("Fuse"), Some("<ANSWER> Fuse </ANSWER>".into()), 1);
        assert_eq!(
            step,
            Step::Wrong {
                truth: "Fuse".into()
            }
        );
        assert!(!ep.is_finished());
        assert_eq!(
            ep.observation(),
            &json!({"action": "Fuse", "observation": "wrong"})
        );
        let step = ep.respond(Some("Lamp"), None, 1);
        assert!(matches!(
            step,
            Step::Predicted {
                successful: true,
                ..
            }
        ));
        let trial = ep.into_trial();
        assert_eq!(
            trial.actions,
            [
                json!("Fuse"),
                json!({"predicted_truth": "Fuse"}),
                json!("Lamp"),
                json!({"predicted_truth": "Lamp"})
            ]
        );
        assert_eq!(trial.budget, Some(5));
        assert!(trial.successful);
        // KUMO's protocol is unchanged: the wrong answer ends the trial.
        let mut ep = Episode::new(&inst, &judge);
        assert!(matches!(
            ep.respond(Some("Fuse"), None, 0),
            Step::Predicted {
                successful: false,
                ..
            }
        ));
        assert!(ep.is_finished() && ep.into_trial().budget.is_none());

        let mut ep = Episode::new(&inst, &judge);
        assert_eq!(ep.respond(Some("Bogus"), None, 0), Step::ParseError);
        let trial = ep.into_trial();
        assert_eq!(trial.actions, vec![Value::Null]);
        assert!(trial.parse_error && !trial.successful);
    }
}
