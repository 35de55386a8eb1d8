//! One explore-then-predict trial, driven one reply at a time
//! ([`PredictGame`]): the request to send, what each reply led to
//! ([`PredictStep`]), the public state an offline player reads, and the
//! trial in KUMO's result format with its `predict` record. The rules are
//! [`super`]'s; the messages [`super::prompt`]'s.

use std::sync::Arc;

use serde_json::{Value, json};

use super::prompt::{self, STOP};
use super::{
    Feedback, PredictError, PredictRecord, PredictRules, TestInput, TestOutcome, draw_tests,
};
use crate::domain::Domain;
use crate::game::{Task, Trial};
use crate::render::protocol::{kept_reply, observation_message, parse_answer};

/// Where a trial is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Exploration turn `turn` (1-based) awaits its reply.
    Explore {
        turn: usize,
    },
    /// Test `test` (0-based), attempt `attempt` (1-based) awaits its reply.
    Predict {
        test: usize,
        attempt: usize,
    },
    Over,
}

/// What one reply led to.
#[derive(Clone, Debug, PartialEq)]
pub enum PredictStep {
    /// A probe: its output, when shown now (`None` under
    /// [`Feedback::End`]).
    Probe {
        action: String,
        shown: Option<Value>,
    },
    /// The reply ended exploration early.
    Stopped,
    /// An exploration reply that names no action of the instance (a turn
    /// spent, nothing shown).
    Unusable,
    /// A prediction of test `test`: whether it was right, and whether the
    /// test is done (right, or its last attempt).
    Predicted {
        test: usize,
        answer: Option<String>,
        right: bool,
        done: bool,
    },
}

/// A trial in progress.
#[derive(Clone)]
pub struct PredictGame {
    task: Arc<Task>,
    rules: PredictRules,
    tests: Vec<TestInput>,
    /// The instance's truths and actions (domain indices, instance order).
    truths: Vec<usize>,
    actions: Vec<usize>,
    /// The state each instance action shows (instance order).
    observed: Vec<Option<usize>>,
    history: Vec<Value>,
    /// The system prompt goes into the first user message (models KUMO
    /// sends it to as a user message).
    system_as_user: Option<String>,
    trial: Trial,
    phase: Phase,
    /// Probes taken and their outputs, in order.
    probes: Vec<(String, Value)>,
    /// `(domain action, state)` of the outputs shown so far.
    shown: Vec<(usize, usize)>,
    outcomes: Vec<TestOutcome>,
}

impl PredictGame {
    /// Starts a trial of `task` (an instance of `domain`) under `rules`;
    /// `model` decides the system message's role as in KUMO's protocol.
    pub fn new(
        task: Arc<Task>,
        domain: &Domain,
        rules: PredictRules,
        model: &str,
    ) -> Result<PredictGame, PredictError> {
        rules.check()?;
        let instance = &task.instance;
        let resolved = instance
            .resolve(domain)
            .map_err(|e| PredictError::Instance {
                seed: instance.seed,
                message: e.to_string(),
            })?;
        let tests = draw_tests(domain, instance, rules.tests)?;
        let system = prompt::system_prompt(
            domain,
            &instance.truths,
            &instance.actions,
            &rules,
            &task.system_prompt,
        );
        // KUMO's rule: these models take the platform prompt as a user message.
        let as_user = model == "o1-preview"
            || model == "o1-mini"
            || model.contains("gemma")
            || model.contains("claude");
        let (history, system_as_user) = if as_user {
            (Vec::new(), Some(system))
        } else {
            (vec![json!({"role": "system", "content": system})], None)
        };
        let mut game = PredictGame {
            tests,
            truths: resolved.truths,
            actions: resolved.actions,
            observed: resolved.observed,
            history,
            system_as_user,
            trial: Trial::default(),
            phase: Phase::Explore { turn: 1 },
            probes: Vec::new(),
            shown: Vec::new(),
            outcomes: Vec::new(),
            rules,
            task,
        };
        let first = prompt::explore_instruction(&game.task.instance.actions, 1, rules.turns);
        game.ask(first, Value::Null);
        Ok(game)
    }

    fn ask(&mut self, mut content: String, observation: Value) {
        if let Some(system) = self.system_as_user.take() {
            content = format!("{system}\n\n{content}");
        }
        self.history
            .push(json!({"role": "user", "content": content}));
        self.trial.observations.push(observation);
    }

    pub fn task(&self) -> &Task {
        &self.task
    }

    pub fn rules(&self) -> &PredictRules {
        &self.rules
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Over
    }

    /// The messages to send for the next reply; `None` once the trial is
    /// over.
    pub fn request(&self) -> Option<Vec<Value>> {
        (!self.is_finished()).then(|| self.history.clone())
    }

    /// The user message of this round; `None` once the trial is over.
    pub fn prompt(&self) -> Option<String> {
        (!self.is_finished())
            .then(|| self.history.last()?["content"].as_str().map(str::to_string))
            .flatten()
    }

    /// The system prompt (the rules, candidates, probes and book).
    pub fn system_prompt(&self) -> &str {
        match &self.system_as_user {
            Some(system) => system,
            None => self.history[0]["content"].as_str().unwrap_or_default(),
        }
    }

    /// The names a reply may give this round: the instance's actions and
    /// `stop` while exploring, the test's listed outputs while predicting
    /// (`play` reads a person's menu choice from it).
    pub fn menu(&self) -> Vec<String> {
        match self.phase {
            Phase::Explore { .. } => {
                let mut names = self.task.instance.actions.clone();
                names.push(STOP.to_string());
                names
            }
            Phase::Predict { test, .. } => self.tests[test].outputs.clone(),
            Phase::Over => Vec::new(),
        }
    }

    /// The end of a finished trial in words.
    pub fn summary(&self) -> String {
        let record = self.trial.predict.as_ref();
        let right = self
            .outcomes
            .iter()
            .filter(|o| o.right_at.is_some())
            .count();
        format!(
            "predicted {right} of {} test input(s) right within {} attempt(s) each, after {} probe(s) of at most {}{}",
            self.outcomes.len(),
            self.rules.attempts,
            record.map_or(self.probes.len(), |r| r.explored),
            self.rules.turns,
            match self.rules.feedback {
                Feedback::Each => "",
                Feedback::End => " (outputs shown only after the last)",
            }
        )
    }

    /// The test inputs (held out: none is an action of the instance).
    pub fn tests(&self) -> &[TestInput] {
        &self.tests
    }

    /// The instance's truths and actions, domain indices.
    pub fn truths(&self) -> &[usize] {
        &self.truths
    }

    pub fn actions(&self) -> &[usize] {
        &self.actions
    }

    /// The outputs shown so far, `(domain action, state)`.
    pub fn shown(&self) -> &[(usize, usize)] {
        &self.shown
    }

    /// Probes taken so far (names, in order; shown or not).
    pub fn probes(&self) -> impl Iterator<Item = &str> {
        self.probes.iter().map(|(a, _)| a.as_str())
    }

    /// The answers given so far to the current test.
    pub fn tried(&self) -> &[Option<String>] {
        match self.phase {
            Phase::Predict { test, .. } => self
                .outcomes
                .get(test)
                .map_or(&[][..], |o| o.answers.as_slice()),
            _ => &[],
        }
    }

    /// Records a reply (`None`: the call gave no text) with the tokens it
    /// cost. `None` once the trial is over.
    pub fn respond(&mut self, text: Option<&str>, tokens: u64) -> Option<PredictStep> {
        self.respond_as(parse_answer(text), text, tokens)
    }

    /// [`PredictGame::respond`] with the answer already read (a person's
    /// menu choice).
    pub fn respond_as(
        &mut self,
        answer: Option<String>,
        text: Option<&str>,
        tokens: u64,
    ) -> Option<PredictStep> {
        let kept = text.map(|t| kept_reply(t).into_owned());
        self.history
            .push(json!({"role": "assistant", "content": kept}));
        self.trial.consumed_tokens += tokens;
        self.trial
            .generated_text
            .push(kept.map_or(Value::Null, Value::String));
        match self.phase {
            Phase::Explore { turn } => Some(self.explore(answer, turn)),
            Phase::Predict { test, attempt } => Some(self.predict(answer, test, attempt)),
            Phase::Over => {
                self.history.pop();
                self.trial.generated_text.pop();
                None
            }
        }
    }

    fn explore(&mut self, answer: Option<String>, turn: usize) -> PredictStep {
        let task = Arc::clone(&self.task);
        let instance = &task.instance;
        let answer = answer.map(|a| a.trim().to_string());
        let step = match answer.as_deref() {
            Some(a) if a.eq_ignore_ascii_case(STOP) => {
                self.trial.actions.push(json!({ "stop": true }));
                PredictStep::Stopped
            }
            Some(a) if instance.actions.iter().any(|x| x == a) => {
                let value = instance.observation(a).cloned().unwrap_or(Value::Null);
                self.trial.actions.push(Value::String(a.to_string()));
                self.probes.push((a.to_string(), value.clone()));
                let shown = (self.rules.feedback == Feedback::Each).then(|| value.clone());
                if shown.is_some() {
                    self.show(a);
                }
                PredictStep::Probe {
                    action: a.to_string(),
                    shown,
                }
            }
            _ => {
                self.trial.actions.push(Value::Null);
                self.trial.parse_error = true;
                PredictStep::Unusable
            }
        };
        let more = turn < self.rules.turns && step != PredictStep::Stopped;
        if more {
            let mut message = String::new();
            let mut seen = Value::Null;
            if let PredictStep::Probe { action, .. } = &step {
                let value = &self.probes.last().expect("a probe").1;
                message = prompt::after_probe(self.rules.feedback, action, value) + "\n\n";
                seen = match self.rules.feedback {
                    Feedback::Each => json!({"action": action, "observation": value}),
                    Feedback::End => json!({ "action": action }),
                };
            }
            message += &prompt::explore_instruction(&instance.actions, turn + 1, self.rules.turns);
            self.phase = Phase::Explore { turn: turn + 1 };
            self.ask(message, seen);
        } else {
            self.start_tests(&step);
        }
        step
    }

    /// Exploration is over: reveal the outputs (under [`Feedback::End`])
    /// and ask the first test.
    fn start_tests(&mut self, last: &PredictStep) {
        let mut message = String::new();
        let mut seen = json!({});
        if let (Feedback::Each, PredictStep::Probe { action, shown }) = (self.rules.feedback, last)
        {
            let value = shown.clone().unwrap_or(Value::Null);
            message = format!("{}\n\n", observation_message(action, &value));
            seen["observation"] = json!({"action": action, "observation": value});
        }
        if self.rules.feedback == Feedback::End {
            let probes = std::mem::take(&mut self.probes);
            for (action, _) in &probes {
                self.show(action);
            }
            self.probes = probes;
            message = format!("{}\n\n", prompt::reveal(&self.probes));
            seen["revealed"] = self
                .probes
                .iter()
                .map(|(a, v)| json!({"action": a, "observation": v}))
                .collect();
        }
        message += "Exploration is over; the tests begin.\n\n";
        self.ask_test(message, 0, 1, seen);
    }

    fn ask_test(&mut self, lead: String, test: usize, attempt: usize, mut seen: Value) {
        let Some(input) = self.tests.get(test) else {
            self.finish();
            return;
        };
        if attempt == 1 {
            self.outcomes.push(TestOutcome {
                input: input.name.clone(),
                expected: input.outputs[input.expected].clone(),
                answers: Vec::new(),
                right_at: None,
            });
        }
        let question =
            prompt::test_question(input, test, self.tests.len(), attempt, self.rules.attempts);
        seen["test_input"] = json!(input.name);
        seen["attempt"] = json!(attempt);
        self.phase = Phase::Predict { test, attempt };
        self.ask(format!("{lead}{question}"), seen);
    }

    /// Records the output of probe `action` as shown.
    fn show(&mut self, action: &str) {
        let at = self.task.instance.actions.iter().position(|x| x == action);
        if let Some(p) = at
            && let Some(state) = self.observed[p]
        {
            self.shown.push((self.actions[p], state));
        }
    }

    fn predict(&mut self, answer: Option<String>, test: usize, attempt: usize) -> PredictStep {
        let input = &self.tests[test];
        let answer = answer
            .map(|a| a.trim().to_string())
            .filter(|a| input.outputs.iter().any(|o| o == a));
        if answer.is_none() {
            self.trial.parse_error = true;
        }
        let right = answer.as_deref() == Some(input.outputs[input.expected].as_str());
        self.trial
            .actions
            .push(json!({"input": input.name, "predicted_output": answer}));
        let outcome = &mut self.outcomes[test];
        outcome.answers.push(answer.clone());
        if right {
            outcome.right_at = Some(attempt);
        }
        let done = right || attempt >= self.rules.attempts;
        let step = PredictStep::Predicted {
            test,
            answer: answer.clone(),
            right,
            done,
        };
        if done {
            // With one attempt no verdict is shown: a test's outcome would
            // tell the player about the hidden truth before the next test.
            let lead = match (self.rules.attempts, right) {
                (1, _) => String::new(),
                (_, true) => "Right.\n\n".to_string(),
                (_, false) => format!("{}\n\n", prompt::wrong(answer.as_deref())),
            };
            self.ask_test(lead, test + 1, 1, json!({}));
        } else {
            let lead = format!("{}\n\n", prompt::wrong(answer.as_deref()));
            self.ask_test(lead, test, attempt + 1, json!({}));
        }
        step
    }

    fn finish(&mut self) {
        // The last `ask` was not made: the trial has no pending request.
        self.phase = Phase::Over;
        let right = self
            .outcomes
            .iter()
            .filter(|o| o.right_at.is_some())
            .count();
        self.trial.successful = right == self.outcomes.len();
        self.trial.predict = Some(PredictRecord {
            turns: self.rules.turns,
            attempts: self.rules.attempts,
            feedback: self.rules.feedback,
            explored: self.probes.len(),
            accuracy: right as f64 / self.outcomes.len().max(1) as f64,
            tests: self.outcomes.clone(),
        });
    }

    /// The trial so far in KUMO's result format with its `predict` record
    /// (final once [`PredictGame::is_finished`]).
    pub fn trial(&self) -> Trial {
        self.trial.clone()
    }
}
