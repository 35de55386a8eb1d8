//! KUMO's result format: one line per instance with its `trajectories`
//! (one per trial) and the per-line averages KUMO's `main.py` writes.
//!
//! Our files are the same format; the optional top-level fields `model`,
//! `agent`, `domain` and `setting` say what the path would (readers prefer
//! the path when it has KUMO's layout), and `episode_id`, which `serve`
//! writes, names one served episode: the lines of one seed with distinct
//! episode ids are trials of that instance (one line per episode), which
//! the readers count as one line of k trials.

use serde::Serialize;
use serde_json::Value;

/// One trial, field for field as KUMO records it.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Trial {
    /// One entry per reply (action, truth or `null`), then
    /// `{"predicted_truth": t}` after a truth.
    pub actions: Vec<Value>,
    /// The raw replies (`null` when the model gave none).
    pub generated_text: Vec<Value>,
    pub consumed_tokens: u64,
    /// What each reply was shown: `null`, then `{"action", "observation"}`.
    pub observations: Vec<Value>,
    pub successful: bool,
    pub parse_error: bool,
    /// The turn budget of the budgeted protocol ([`super::Episode::budgeted`]);
    /// absent under KUMO's protocol, so KUMO's format is unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<usize>,
    /// The explore-then-predict protocol's rules and per-test outcomes
    /// ([`super::predict`]); absent under the other protocols.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predict: Option<super::predict::PredictRecord>,
}

/// One result line: every trial of one instance.
#[derive(Clone, Debug, Serialize)]
pub struct ResultLine {
    pub trajectories: Vec<Trial>,
    pub seed: u64,
    pub average_actions: f64,
    pub average_tokens: f64,
    pub average_correct: f64,
    pub average_parse_error: f64,
    pub average_successful_action_num: f64,
    pub average_successful_tokens: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
    /// The served episode this line records (`serve`; absent elsewhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub episode_id: Option<String>,
}

impl ResultLine {
    /// Builds the line with KUMO's averages (sums divided by the number of
    /// trials; the successful-only averages are 0 without a success).
    pub fn new(seed: u64, trajectories: Vec<Trial>) -> Self {
        let k = trajectories.len().max(1) as f64;
        let sum = |f: &dyn Fn(&Trial) -> f64| trajectories.iter().map(f).sum::<f64>();
        let wins = sum(&|t| f64::from(u8::from(t.successful)));
        let win_sum = |f: &dyn Fn(&Trial) -> f64| {
            trajectories
                .iter()
                .filter(|t| t.successful)
                .map(f)
                .sum::<f64>()
        };
        ResultLine {
            average_actions: sum(&|t| super::kumo_action_count(&t.actions) as f64) / k,
            average_tokens: sum(&|t| t.consumed_tokens as f64) / k,
            average_correct: wins / k,
            average_parse_error: sum(&|t| f64::from(u8::from(t.parse_error))) / k,
            average_successful_action_num: if wins > 0.0 {
                win_sum(&|t| super::kumo_action_count(&t.actions) as f64) / wins
            } else {
                0.0
            },
            average_successful_tokens: if wins > 0.0 {
                win_sum(&|t| t.consumed_tokens as f64) / wins
            } else {
                0.0
            },
            trajectories,
            seed,
            model: None,
            agent: None,
            domain: None,
            setting: None,
            episode_id: None,
        }
    }

    /// The line as one line of JSON, newline included.
    pub fn to_jsonl(&self) -> String {
        let mut s = serde_json::to_string(self).expect("result lines serialize");
        s.push('\n');
        s
    }
}
