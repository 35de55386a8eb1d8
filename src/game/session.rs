//! One trial of `eval`, driven one reply at a time: for environments that
//! hand the model's replies in (RL loops, the Python `kumo_gen.Env`)
//! instead of calling an API.
//!
//! In: a [`Task`] (instance, system prompt, judge), the model name (it
//! decides the system message's role, as in eval) and the reply limit
//! (eval's `--max-steps`). Out: the request eval would send next
//! ([`Session::request`]), what each reply led to ([`Step`]), and the
//! trial in KUMO's result format ([`Session::trial`]).
//!
//! The pieces are eval's own, in eval's order: [`Conversation::messages`]
//! builds each request, [`Conversation::reply`] records the reply,
//! [`protocol::parse_answer`] reads it, [`Progress::respond`] applies the
//! rules and counts actions KUMO's way (every reply one entry, a
//! prediction a second, an unusable reply ends the trial as a parse error,
//! the reply limit ends it unsuccessful). A session is eval's trial loop
//! with the API call replaced by [`Session::respond`]; the same replies
//! give the same trial.
//!
//! A step costs time and memory of its reply alone, whatever the trial's
//! length: the trial is recorded as it goes ([`Progress`], no replay of
//! earlier replies), each reply is kept at most [`crate::render::protocol::MAX_KEPT_REPLY`]
//! bytes (in the conversation and in the trial, as eval keeps it), and
//! the whole request, a copy of the history, is built only when asked
//! ([`Session::request`]; [`Session::prompt`] is this round's message
//! alone).

use std::sync::Arc;

use serde_json::Value;

use super::Task;
use super::protocol::{self, Conversation};
use crate::game::{Progress, Step, Trial};

/// A trial in progress.
#[derive(Clone)]
pub struct Session {
    task: Arc<Task>,
    conversation: Conversation,
    instruction: String,
    max_steps: usize,
    progress: Progress,
    /// Whether a request awaits its reply (`false` once the trial is
    /// over).
    open: bool,
    last: Option<Step>,
    /// The budgeted protocol's turns ([`Session::budgeted`]).
    budget: Option<usize>,
}

/// [`Session::respond`] after the trial ended.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the trial is over; start a new one")]
pub struct Finished;

impl Session {
    /// Starts a trial: the first request is ready (none when `max_steps`
    /// is 0).
    pub fn new(task: Arc<Task>, model: &str, max_steps: usize) -> Session {
        let system_prompt = task.system_prompt.clone();
        Session::start(task, model, system_prompt, max_steps, None)
    }

    /// A trial of the budgeted protocol with `budget` turns, as `kumo-gen
    /// eval --budget`: the system prompt ends with
    /// [`crate::game::budget_rule`], each reply is a turn, a wrong answer
    /// is told "wrong" ([`crate::game::Episode::budgeted`]) and the trial
    /// goes on until a right answer, a parse error or the `budget`-th
    /// reply. The caller checks the budget first
    /// ([`crate::game::check_budget`]).
    pub fn budgeted(task: Arc<Task>, model: &str, budget: usize) -> Session {
        let system_prompt = format!("{}\n\n{}", task.system_prompt, super::budget_rule(budget));
        Session::start(task, model, system_prompt, budget, Some(budget))
    }

    fn start(
        task: Arc<Task>,
        model: &str,
        system_prompt: String,
        max_steps: usize,
        budget: Option<usize>,
    ) -> Session {
        let instruction = protocol::instruction(&task.instance.actions, &task.instance.truths);
        let mut conversation = Conversation::new(model, system_prompt);
        let open = max_steps > 0;
        if open {
            conversation.observe(None);
        }
        let progress = match budget {
            Some(b) => Progress::default().budgeted(b),
            None => Progress::default(),
        };
        Session {
            task,
            conversation,
            instruction,
            max_steps,
            progress,
            open,
            last: None,
            budget,
        }
    }

    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The messages eval sends for the next reply; `None` once the trial
    /// is over. Built when asked: a copy of the conversation.
    pub fn request(&self) -> Option<Vec<Value>> {
        self.open
            .then(|| self.conversation.messages(&self.instruction))
    }

    /// The last message of [`Session::request`] (the user message of this
    /// round), without copying the rest; `None` once the trial is over.
    pub fn prompt(&self) -> Option<Value> {
        if !self.open {
            return None;
        }
        self.conversation
            .last_message(&self.instruction)
            .and_then(|m| m.get("content").cloned())
    }

    pub fn is_finished(&self) -> bool {
        !self.open
    }

    /// Replies recorded so far.
    pub fn replies(&self) -> usize {
        self.progress.replies()
    }

    /// What the last reply led to.
    pub fn last_step(&self) -> Option<&Step> {
        self.last.as_ref()
    }

    /// Records the model's reply (`None`: the call gave no text) with the
    /// tokens it cost, and returns what it led to. After an observation
    /// the next request is ready unless the reply limit is reached.
    pub fn respond(&mut self, text: Option<&str>, tokens: u64) -> Result<Step, Finished> {
        self.respond_as(protocol::parse_answer(text), text, tokens)
    }

    /// [`Session::respond`] with the answer already read from the reply
    /// by the caller: `play` and the server's page read a person's menu
    /// choice (a number, a name in any case) as the name it picks, and
    /// record what the person typed.
    pub fn respond_as(
        &mut self,
        answer: Option<String>,
        text: Option<&str>,
        tokens: u64,
    ) -> Result<Step, Finished> {
        if !self.open {
            return Err(Finished);
        }
        self.open = false;
        self.conversation.reply(text);
        let step = self.progress.respond(
            &self.task.instance,
            &self.task.judge,
            answer.as_deref(),
            text.map(str::to_string),
            tokens,
        );
        let shown = match &step {
            Step::Observation { action, value } => Some((action.as_str(), value.clone())),
            Step::Wrong { truth } => Some((truth.as_str(), Value::from("wrong"))),
            Step::Predicted { .. } | Step::ParseError => None,
        };
        if let Some((action, value)) = shown
            && self.progress.replies() < self.max_steps
        {
            self.conversation.observe(Some((action, &value)));
            self.open = true;
        }
        self.last = Some(step.clone());
        Ok(step)
    }

    /// The trial so far in KUMO's result format (final once
    /// [`Session::is_finished`]).
    pub fn trial(&self) -> Trial {
        self.progress.trial().clone()
    }

    /// Whether the trial named a truth no observation rules out.
    pub fn successful(&self) -> bool {
        matches!(
            self.last,
            Some(Step::Predicted {
                successful: true,
                ..
            })
        )
    }

    /// KUMO's action count so far: one per reply, plus one for a
    /// prediction (a wrong answer of the budgeted protocol adds its
    /// `predicted_truth` entry too).
    pub fn action_count(&self) -> usize {
        self.progress.trial().actions.len()
    }

    /// The budgeted protocol's turns, if this trial plays it.
    pub fn budget(&self) -> Option<usize> {
        self.budget
    }
}

/// The reward of a finished trial: 0 unless it succeeded; on success
/// `(1 - w) + w * min(1, (E + 2) / n)`, where `w` is `efficiency` (0 to 1;
/// 0 rewards success alone), `n` the trial's KUMO action count and `E + 2`
/// the count of optimal play (`E` = the instance's exact `expected_steps`
/// actions, then the predicting reply and its `predicted_truth` entry:
/// the relative action count's baseline in `score`). A trial as short as
/// optimal play or shorter earns 1; one twice as long, `1 - w / 2`.
/// Without `E` (an unlabelled instance) a success earns 1.
pub fn reward(
    successful: bool,
    action_count: usize,
    expected_steps: Option<f64>,
    efficiency: f64,
) -> f64 {
    if !successful {
        return 0.0;
    }
    let w = efficiency.clamp(0.0, 1.0);
    match expected_steps {
        Some(e) if w > 0.0 && action_count > 0 && e.is_finite() => {
            (1.0 - w) + w * ((e + 2.0) / action_count as f64).min(1.0)
        }
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Judge, parse_instances};

    fn task() -> Arc<Task> {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/ok/tiny.yaml"
        ))
        .unwrap();
        let domain = crate::domain::Domain::from_yaml("tiny.yaml", &text)
            .unwrap()
            .0;
        let line = r#"{"truths": ["Fuse", "Relay", "Switch", "Lamp"],
            "actions": ["Continuity check", "Voltage"],
            "observations": {"Continuity check": "closed", "Voltage": 3.5},
            "seed": 0, "valid_truth": "Lamp"}"#;
        let instance = parse_instances(&line.replace('\n', " ")).unwrap().remove(0);
        let judge = Judge::new(&domain, &instance).unwrap();
        Arc::new(Task {
            instance,
            system_prompt: "SYS".into(),
            judge,
        })
    }

    #[test]
    fn a_session_is_evals_trial_loop() {
        let mut s = Session::new(task(), "gpt-4o", 50);
        let first = s.request().unwrap().to_vec();
        assert_eq!(first.len(), 2);
        assert_eq!(first[0]["role"], "system");
        let step = s.respond(Some("<ANSWER> Voltage </ANSWER>"), 3).unwrap();
        assert!(matches!(step, Step::Observation { .. }));
        let second = s.request().unwrap();
        assert_eq!(second[1]["content"], "Begin the game.");
        assert!(second[3]["content"].as_str().unwrap().starts_with(
            "Observation from previous action: {'action': 'Voltage', 'observation': 3.5}\n\n"
        ));
        let step = s.respond(Some("<ANSWER> Lamp </ANSWER>"), 4).unwrap();
        assert_eq!(
            step,
            Step::Predicted {
                truth: "Lamp".into(),
                successful: true
            }
        );
        assert!(s.is_finished() && s.successful());
        assert_eq!(s.action_count(), 3);
        let trial = s.trial();
        assert_eq!(trial.actions.len(), 3);
        assert_eq!(trial.consumed_tokens, 7);
        assert_eq!(s.respond(Some("again"), 0), Err(Finished));
    }

    #[test]
    fn parse_errors_and_the_reply_limit_end_the_trial() {
        let mut s = Session::new(task(), "gpt-4o", 50);
        assert_eq!(s.respond(Some("no idea"), 0).unwrap(), Step::ParseError);
        assert!(s.is_finished() && !s.successful());
        assert!(s.trial().parse_error);

        let mut s = Session::new(task(), "gpt-4o", 2);
        s.respond(Some("<ANSWER> Voltage </ANSWER>"), 0).unwrap();
        s.respond(Some("<ANSWER> Voltage </ANSWER>"), 0).unwrap();
        assert!(s.is_finished());
        let trial = s.trial();
        assert!(!trial.successful && !trial.parse_error);
        assert_eq!(s.action_count(), 2);
        assert!(Session::new(task(), "gpt-4o", 0).is_finished());
    }

    #[test]
    fn a_budgeted_session_tells_wrong_and_goes_on() {
        let mut s = Session::budgeted(task(), "gpt-4o", 3);
        assert!(
            s.request().unwrap()[0]["content"]
                .as_str()
                .unwrap()
                .ends_with(&crate::game::budget_rule(3))
        );
        let step = s.respond(Some("<ANSWER> Fuse </ANSWER>"), 0).unwrap();
        assert_eq!(
            step,
            Step::Wrong {
                truth: "Fuse".into()
            }
        );
        let next = s.request().unwrap();
        assert!(
            next.last().unwrap()["content"]
                .as_str()
                .unwrap()
                .starts_with(
                    "Observation from previous action: {'action': 'Fuse', 'observation': 'wrong'}"
                )
        );
        s.respond(Some("<ANSWER> Lamp </ANSWER>"), 0).unwrap();
        assert!(s.is_finished() && s.successful());
        assert_eq!(s.trial().budget, Some(3));
        // Three wrong answers spend the budget.
        let mut s = Session::budgeted(task(), "gpt-4o", 3);
        for _ in 0..3 {
            s.respond(Some("<ANSWER> Relay </ANSWER>"), 0).unwrap();
        }
        assert!(s.is_finished() && !s.successful());
        assert_eq!(s.replies(), 3);
    }

    #[test]
    fn a_step_costs_its_reply_not_the_history() {
        // 5 000 replies of a long trial, then one of 1 MiB: each step is
        // recorded without replaying the others (quadratic before: 73 ms
        // a step at step 1 000), and the huge reply is kept at the
        // conversation's cap in the trial and the next request alike.
        let mut s = Session::new(task(), "gpt-4o", 5_002);
        let started = std::time::Instant::now();
        for _ in 0..5_000 {
            s.respond(Some("<ANSWER> Voltage </ANSWER>"), 1).unwrap();
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let huge = format!("{}<ANSWER> Voltage </ANSWER>", "x".repeat(1 << 20));
        s.respond(Some(&huge), 0).unwrap();
        let kept = crate::render::protocol::MAX_KEPT_REPLY + 100;
        let trial = s.trial();
        assert!(trial.generated_text.last().unwrap().as_str().unwrap().len() < kept);
        let request = s.request().unwrap();
        let reply = &request[request.len() - 2];
        assert_eq!(reply["role"], "assistant");
        assert!(reply["content"].as_str().unwrap().len() < kept);
        // The round's message alone is the request's last.
        assert_eq!(
            s.prompt().as_ref(),
            request.last().and_then(|m| m.get("content"))
        );
        assert_eq!(s.action_count(), 5_001);
    }

    #[test]
    fn the_prompt_is_the_requests_last_message_for_every_model() {
        for model in ["gpt-4o", "claude-3", "gemma-2", "o1-mini"] {
            for budget in [None, Some(3)] {
                let mut s = match budget {
                    None => Session::new(task(), model, 50),
                    Some(b) => Session::budgeted(task(), model, b),
                };
                for reply in ["<ANSWER> Voltage </ANSWER>", "<ANSWER> Fuse </ANSWER>"] {
                    let request = s.request().unwrap();
                    assert_eq!(
                        s.prompt().as_ref(),
                        request.last().and_then(|m| m.get("content")),
                        "{model}"
                    );
                    s.respond(Some(reply), 0).unwrap();
                }
                assert_eq!(s.prompt().is_none(), s.request().is_none());
            }
        }
    }

    #[test]
    fn reward_formula() {
        assert_eq!(reward(false, 3, Some(1.0), 0.5), 0.0);
        assert_eq!(reward(true, 30, Some(1.0), 0.0), 1.0);
        assert_eq!(reward(true, 3, Some(1.0), 0.5), 1.0);
        assert_eq!(reward(true, 6, Some(1.0), 0.5), 0.75);
        assert_eq!(reward(true, 2, Some(1.5), 1.0), 1.0);
        assert_eq!(reward(true, 6, None, 1.0), 1.0);
    }
}
