//! Reading instance lines: KUMO's fields (`truths`, `actions`,
//! `observations`, `seed`, `valid_truth`) plus our optional `optimal` labels.
//!
//! Unknown fields are ignored so KUMO's own files and ours both read.

use serde::Deserialize;
use serde_json::{Map, Value};

/// One task instance.
#[derive(Clone, Debug, Deserialize)]
pub struct Instance {
    pub truths: Vec<String>,
    pub actions: Vec<String>,
    /// Action -> observed state label (string) or measured value (number).
    pub observations: Map<String, Value>,
    pub seed: u64,
    /// A string when one truth is valid, else a list.
    #[serde(default)]
    pub valid_truth: Value,
    #[serde(default)]
    pub optimal: Option<Optimal>,
}

/// Optimal-play labels written by the generator (DESIGN.md "Optimal search").
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Optimal {
    #[serde(default)]
    pub expected_steps: Option<f64>,
    #[serde(default)]
    pub first_action: Option<String>,
    /// Number of actions the golden trajectory takes before predicting.
    #[serde(default)]
    pub golden_actions: Option<u64>,
    /// The golden trajectory's actions, in order.
    #[serde(default)]
    pub golden_trajectory: Vec<String>,
    /// The truth the golden trajectory predicts.
    #[serde(default)]
    pub golden_answer: Option<String>,
}

impl Instance {
    /// What the instance shows for `action`.
    pub fn observation(&self, action: &str) -> Option<&Value> {
        self.observations.get(action)
    }

    /// The valid truths (one or more).
    pub fn valid_truths(&self) -> Vec<String> {
        match &self.valid_truth {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The optimal expected number of actions, when labelled.
    pub fn expected_steps(&self) -> Option<f64> {
        self.optimal.as_ref().and_then(|o| o.expected_steps)
    }
}

/// A line of an instance file that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct InstanceError {
    pub line: usize,
    pub message: String,
}

/// Parses every non-blank line of an instance file, in order.
pub fn parse_instances(text: &str) -> Result<Vec<Instance>, InstanceError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| InstanceError {
                line: i + 1,
                message: format!("not an instance line ({e})"),
            })
        })
        .collect()
}
