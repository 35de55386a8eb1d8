//! The explore-then-predict protocol (ORACLE's black boxes; opt-in, KUMO's
//! protocol stays the default): the rules every player of it plays by
//! (docs/black-boxes.md "The explore-then-predict protocol").
//!
//! In KUMO's terms: the hidden function is the instance's valid truth, an
//! input is an action, its output the state the valid truth shows there.
//! - **Exploration**: at most [`PredictRules::turns`] replies, each naming
//!   one of the instance's actions (a probe; a repeat costs a turn too) or
//!   `stop`, which ends exploration early. Under [`Feedback::Each`] each
//!   probe's output is shown at once; under [`Feedback::End`] (the
//!   non-adaptive control) only after the last exploration reply, all
//!   together.
//! - **Test inputs**: [`PredictRules::tests`] actions of the domain that
//!   are *not* among the instance's actions (so never probeable, let alone
//!   probed), whose output the valid truth determines (exactly one state
//!   does not rule it out), drawn by [`draw_tests`] from the instance seed
//!   alone: every player, model and trial of an instance is tested on the
//!   same inputs, as the exact best explorer's curve holds out the same
//!   probes (`kumo-gen family NAME --explorer`).
//! - **Prediction**: the test inputs one by one, each with
//!   [`PredictRules::attempts`] attempts; an answer names one of the
//!   input's listed outputs (its states); with more than one attempt a
//!   wrong one is told "wrong" and costs an attempt, a right one is told
//!   "Right."; with one attempt no verdict is shown (it would tell the
//!   player about the hidden truth before the next test). The right output
//!   is never shown. An answer that names no listed output is a
//!   wrong attempt (and marks the trial's `parse_error`).
//! - **Prompts** ([`prompt`]) state these rules, the box's goal, the
//!   candidate hypotheses (all of the instance's truths, the prior the
//!   exact best explorer assumes) and the probes; they are a function of
//!   public facts and what the player was shown: never the valid truth,
//!   never a test input's output.
//! - **Record** ([`PredictRecord`]): the trial in KUMO's result format
//!   (one `actions`, `generated_text` and `observations` entry per reply;
//!   a prediction's entry is `{"input", "predicted_output"}`) with a
//!   `predict` object of the rules and per-test outcomes; `successful`
//!   means every test was predicted within its attempts.
//!
//! [`bayes`] is the Bayes-optimal predictor the offline players use and
//! the exact best explorer's reference score computes with.

pub mod bayes;
mod game;
pub mod prompt;

pub use game::{Phase, PredictGame, PredictStep};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::domain::Domain;
use crate::game::InstanceLine;

/// When exploration outputs are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Feedback {
    /// After each probe (the adaptive protocol).
    Each,
    /// All at once after the last exploration reply (the non-adaptive
    /// control).
    End,
}

impl std::str::FromStr for Feedback {
    type Err = String;
    fn from_str(text: &str) -> Result<Feedback, String> {
        match text {
            "each" => Ok(Feedback::Each),
            "end" => Ok(Feedback::End),
            _ => Err(format!("no feedback `{text}`; use `each` or `end`")),
        }
    }
}

impl Feedback {
    pub fn name(self) -> &'static str {
        match self {
            Feedback::Each => "each",
            Feedback::End => "end",
        }
    }
}

/// Most exploration turns, test inputs or attempts the protocol takes.
pub const MAX_PREDICT: usize = 1000;

/// The rules of one explore-then-predict trial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PredictRules {
    /// Exploration turns at most (T).
    pub turns: usize,
    /// Test inputs (K).
    pub tests: usize,
    /// Attempts per test input (s).
    pub attempts: usize,
    pub feedback: Feedback,
}

impl PredictRules {
    /// The protocol's part of an agent name: `predict=T@s`, with `-end`
    /// under the non-adaptive control (`VanillaAgent-predict=10@1`), so
    /// protocols never share a results file and `score` gives each
    /// turn@shot setting its rows.
    pub fn agent_suffix(&self) -> String {
        let end = match self.feedback {
            Feedback::Each => "",
            Feedback::End => "-end",
        };
        format!("predict={}@{}{end}", self.turns, self.attempts)
    }

    /// Rules outside 1..=[`MAX_PREDICT`] are refused.
    pub fn check(&self) -> Result<(), PredictError> {
        for (flag, value) in [
            ("--turns", self.turns),
            ("--tests", self.tests),
            ("--attempts", self.attempts),
        ] {
            if value == 0 || value > MAX_PREDICT {
                return Err(PredictError::OutOfRange { flag, value });
            }
        }
        Ok(())
    }
}

/// Why an instance cannot be played under the protocol.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PredictError {
    #[error("`{flag} {value}` is out of range: use 1 to {MAX_PREDICT}", MAX_PREDICT = MAX_PREDICT)]
    OutOfRange { flag: &'static str, value: usize },
    #[error(
        "seed {seed}: `--tests {tests}` asks for more test inputs than the {eligible} actions of domain `{domain}` outside the instance whose output its valid truth determines; pass `--tests {eligible}` or fewer, or generate instances with fewer `--actions` (a test input is never one of the instance's actions)"
    )]
    TooFewInputs {
        seed: u64,
        tests: usize,
        eligible: usize,
        domain: String,
    },
    #[error("seed {seed}: {message}")]
    Instance { seed: u64, message: String },
}

/// One held-out test input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestInput {
    /// Domain action index.
    pub action: usize,
    pub name: String,
    /// The outputs listed to the player: the action's state labels.
    pub outputs: Vec<String>,
    /// The state the valid truth shows (index into `outputs`).
    pub expected: usize,
}

/// A state's label as the player reads and names it.
pub fn output_label(domain: &Domain, action: usize, state: usize) -> String {
    domain.actions[action].states[state].label.to_string()
}

/// The state of `action` that truth `truth` shows: the one state that
/// does not rule it out, `None` when none or several do.
pub fn output_of(domain: &Domain, action: usize, truth: usize) -> Option<usize> {
    let mut keeps = domain.actions[action]
        .states
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.rules_out.contains(truth));
    let (first, _) = keeps.next()?;
    keeps.next().is_none().then_some(first)
}

/// The valid truth of an instance (domain index): its one valid truth.
pub fn valid_truth(domain: &Domain, instance: &InstanceLine) -> Result<usize, PredictError> {
    let bad = |message: &str| PredictError::Instance {
        seed: instance.seed,
        message: message.to_string(),
    };
    let names: Vec<&str> = match &instance.valid_truth {
        serde_json::Value::String(s) => vec![s.as_str()],
        serde_json::Value::Array(a) => a.iter().filter_map(|v| v.as_str()).collect(),
        _ => Vec::new(),
    };
    let [name] = names.as_slice() else {
        return Err(bad(
            "the explore-then-predict protocol needs exactly one valid truth",
        ));
    };
    domain
        .truth_index(name)
        .ok_or_else(|| bad("its valid truth is not a truth of the domain"))
}

/// The `k` test inputs of `instance`: domain actions not among the
/// instance's, whose output the valid truth determines, in a shuffled
/// order drawn from the instance seed alone (the same for every player,
/// model and trial). Error when fewer than `k` are eligible.
pub fn draw_tests(
    domain: &Domain,
    instance: &InstanceLine,
    k: usize,
) -> Result<Vec<TestInput>, PredictError> {
    let valid = valid_truth(domain, instance)?;
    let eligible: Vec<(usize, usize)> = (0..domain.actions.len())
        .filter(|&a| !instance.actions.contains(&domain.actions[a].name))
        .filter_map(|a| output_of(domain, a, valid).map(|s| (a, s)))
        .collect();
    if eligible.len() < k {
        return Err(PredictError::TooFewInputs {
            seed: instance.seed,
            tests: k,
            eligible: eligible.len(),
            domain: domain.name.clone(),
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(instance.seed);
    rng.set_stream(TEST_STREAM);
    // A partial Fisher-Yates shuffle: the first `k` of a seeded order.
    let mut order: Vec<usize> = (0..eligible.len()).collect();
    for i in 0..k {
        let j = rand::RngExt::random_range(&mut rng, i..order.len());
        order.swap(i, j);
    }
    Ok(order[..k]
        .iter()
        .map(|&i| {
            let (action, expected) = eligible[i];
            TestInput {
                action,
                name: domain.actions[action].name.clone(),
                outputs: (0..domain.actions[action].states.len())
                    .map(|s| output_label(domain, action, s))
                    .collect(),
                expected,
            }
        })
        .collect())
}

/// The random stream test inputs are drawn on (apart from every other
/// use of an instance seed).
const TEST_STREAM: u64 = 0x7e57;

/// One test input's outcome, as the result line records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TestOutcome {
    pub input: String,
    /// The right output (recorded for scoring; never shown to the player).
    pub expected: String,
    /// Each attempt's answer (`null`: the reply named no output).
    pub answers: Vec<Option<String>>,
    /// The attempt (1-based) that named the right output, if any.
    pub right_at: Option<usize>,
}

/// The `predict` object of a trial.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PredictRecord {
    pub turns: usize,
    pub attempts: usize,
    pub feedback: Feedback,
    /// Probes taken (exploration replies that named an action).
    pub explored: usize,
    pub tests: Vec<TestOutcome>,
    /// Share of tests right within the attempts.
    pub accuracy: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_name_their_agent_and_refuse_zero() {
        let rules = PredictRules {
            turns: 10,
            tests: 5,
            attempts: 2,
            feedback: Feedback::End,
        };
        assert_eq!(rules.agent_suffix(), "predict=10@2-end");
        assert!(rules.check().is_ok());
        let zero = PredictRules { tests: 0, ..rules };
        assert_eq!(
            zero.check(),
            Err(PredictError::OutOfRange {
                flag: "--tests",
                value: 0
            })
        );
        assert_eq!("end".parse::<Feedback>(), Ok(Feedback::End));
        assert!("later".parse::<Feedback>().is_err());
    }
}
