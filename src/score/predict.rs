//! `score` under the explore-then-predict protocol (docs/black-boxes.md
//! "Scoring"): per row (model x agent x box x setting; the agent names
//! the turn@shot setting, `VanillaAgent-predict=10@1`) the accuracy on
//! held-out test inputs with its 95% Wilson interval over the tests
//! ([`super::interval::wilson`], the method of every rate `score`
//! reports), beside the exact accuracy the golden explorer reaches on the
//! same instances after the same `T` probes
//! ([`crate::game::predict::bayes::golden_reference`], averaged over the
//! valid truth and every held-out input) when the instances are at hand.

use serde::Serialize;

use super::LineScore;
use super::interval::{Interval, wilson};
use crate::domain::Domain;
use crate::game::InstanceLine;
use crate::game::predict::bayes::golden_reference;
use crate::results::LineFacts;

/// One line's prediction figures (its trials under the protocol).
#[derive(Clone, Debug, PartialEq)]
pub struct LinePrediction {
    /// Tests over the line's trials, and those predicted right.
    pub tests: usize,
    pub right: usize,
    pub explored: f64,
    /// The golden explorer's exact accuracy on the line's instance.
    pub reference: Option<f64>,
}

/// A row's prediction figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PredictionScore {
    /// The turn@shot setting (`10@1`; `10@1-end` under `--feedback end`).
    pub turn_at_shot: String,
    /// Share of test inputs predicted right within the attempts.
    pub accuracy: f64,
    pub accuracy_interval: Option<Interval>,
    pub tests: usize,
    /// Mean probes taken per trial.
    pub mean_explored: f64,
    /// The golden explorer's exact accuracy after the same `T` probes,
    /// the mean over the instances it was computed on.
    pub golden_explorer_accuracy: Option<f64>,
    pub golden_explorer_instances: usize,
}

/// The line's figures when every trial of it was played under the
/// protocol; the reference needs the instance and its domain.
pub fn line_prediction(
    line: &LineFacts,
    instance: Option<&InstanceLine>,
    domain: Option<&Domain>,
) -> Option<LinePrediction> {
    let facts: Vec<_> = line.trials.iter().map(|t| t.prediction.as_ref()).collect();
    if facts.is_empty() || facts.iter().any(Option::is_none) {
        return None;
    }
    let facts: Vec<_> = facts.into_iter().flatten().collect();
    let turns = facts[0].turns;
    let reference = match (instance, domain) {
        (Some(i), Some(d)) => i
            .resolve(d)
            .ok()
            .and_then(|r| golden_reference(d, &r.truths, &r.actions, turns)),
        _ => None,
    };
    Some(LinePrediction {
        tests: facts.iter().map(|f| f.tests).sum(),
        right: facts.iter().map(|f| f.right).sum(),
        explored: facts.iter().map(|f| f.explored as f64).sum::<f64>() / facts.len() as f64,
        reference,
    })
}

/// The row's figures, when every line was played under the protocol.
pub fn row_prediction(agent: &str, lines: &[LineScore]) -> Option<PredictionScore> {
    let scored: Vec<&LinePrediction> = lines
        .iter()
        .map(|l| l.prediction.as_ref())
        .collect::<Option<_>>()?;
    if scored.is_empty() {
        return None;
    }
    let tests: usize = scored.iter().map(|l| l.tests).sum();
    let right: usize = scored.iter().map(|l| l.right).sum();
    let accuracy = right as f64 / tests.max(1) as f64;
    let references: Vec<f64> = scored.iter().filter_map(|l| l.reference).collect();
    Some(PredictionScore {
        turn_at_shot: agent
            .rsplit_once("-predict=")
            .map_or_else(|| "?".to_string(), |(_, t)| t.to_string()),
        accuracy,
        accuracy_interval: wilson(accuracy, tests),
        tests,
        mean_explored: scored.iter().map(|l| l.explored).sum::<f64>() / scored.len() as f64,
        golden_explorer_accuracy: (!references.is_empty())
            .then(|| references.iter().sum::<f64>() / references.len() as f64),
        golden_explorer_instances: references.len(),
    })
}
