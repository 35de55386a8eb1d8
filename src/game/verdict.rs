//! How a finished trial ended, and KUMO's counts of it: the one wording
//! of the end of a game ([`Verdict`], what `play` prints) and of what a
//! trial's actions count ([`kumo_action_count`], [`actions_taken`]), for
//! `play`, `score` (through `results`) and the players.

use serde_json::Value;

use super::InstanceLine;

/// KUMO's action count of a trial: every entry of its `actions` (a
/// prediction adds its `{"predicted_truth"}` entry, so it counts twice; a
/// parse error's `null` counts once).
pub fn kumo_action_count(actions: &[Value]) -> usize {
    actions.len()
}

/// The replies of a trial that named one of the instance's actions
/// (repeats included; answers and unusable replies not).
pub fn actions_taken(actions: &[Value], instance: &InstanceLine) -> usize {
    actions
        .iter()
        .filter(|a| {
            a.as_str()
                .is_some_and(|a| instance.actions.iter().any(|x| x == a))
        })
        .count()
}

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict<'a> {
    /// A truth no observation rules out; `turns` under the budgeted
    /// protocol.
    Correct {
        truth: &'a str,
        turns: Option<usize>,
    },
    /// A truth the observations rule out.
    Wrong { truth: &'a str, valid: Vec<String> },
    /// The budgeted protocol's turns ran out before a right answer.
    Spent { turns: usize, valid: Vec<String> },
}

impl<'a> Verdict<'a> {
    /// The verdict of a game on `instance` that named `truth` last (`None`:
    /// the budget ran out first), `successful` or not, after `turns`
    /// replies; `budgeted` under the budgeted protocol.
    pub fn of(
        instance: &'a InstanceLine,
        truth: Option<&'a str>,
        successful: bool,
        turns: usize,
        budgeted: bool,
    ) -> Verdict<'a> {
        match (truth, successful) {
            (Some(truth), true) => Verdict::Correct {
                truth,
                turns: budgeted.then_some(turns),
            },
            (Some(truth), false) => Verdict::Wrong {
                truth,
                valid: instance.valid_truths(),
            },
            (None, _) => Verdict::Spent {
                turns,
                valid: instance.valid_truths(),
            },
        }
    }
}

impl std::fmt::Display for Verdict<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Correct {
                truth,
                turns: Some(turns),
            } => write!(
                f,
                "correct in {turns} turn(s): no observation rules out {truth}."
            ),
            Verdict::Correct { truth, turns: None } => {
                write!(f, "correct: no observation rules out {truth}.")
            }
            Verdict::Wrong { truth, valid } => write!(
                f,
                "wrong: the observations rule out {truth}; the answer was {}.",
                valid.join(" or ")
            ),
            Verdict::Spent { turns, valid } => write!(
                f,
                "the {turns} turns are spent; the answer was {}.",
                valid.join(" or ")
            ),
        }
    }
}
