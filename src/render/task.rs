//! The rendering stage's input view of one instance ([`TaskView`], and
//! [`OwnedTask`] with owned indices, which `game::task_from_json` reads
//! back from an instance line); why one does not fit its domain is
//! [`TaskError`].

use super::error::TaskError;
use crate::domain::{Domain, TruthSet};

/// One instance as rendering sees it: indices into the domain, in instance
/// order. The generator's `Instance` and the search's `Label` map onto it.
#[derive(Clone, Copy, Debug)]
pub struct TaskView<'a> {
    pub domain: &'a Domain,
    /// Domain truth indices, instance order.
    pub truths: &'a [usize],
    /// The valid truths (domain indices), a subset of `truths`.
    pub valid: &'a [usize],
    /// Domain action indices, instance order.
    pub actions: &'a [usize],
    /// Observed state index per instance action (`observed[i]` is a state of
    /// `actions[i]`).
    pub observed: &'a [usize],
    /// Numeric observation per instance action; `None` for `str` actions.
    pub values: &'a [Option<f64>],
    pub seed: u64,
}

impl TaskView<'_> {
    /// The instance's truths as a set (domain indices).
    pub fn truth_set(&self) -> TruthSet {
        TruthSet::from_indices(self.domain.truths.len(), self.truths.iter().copied())
    }

    /// The instance truths that state `state` of instance action `pos`
    /// rules out, in instance order.
    pub fn ruled_out(&self, pos: usize, state: usize) -> impl Iterator<Item = usize> + '_ {
        let set = &self.domain.actions[self.actions[pos]].states[state].rules_out;
        self.truths
            .iter()
            .copied()
            .filter(move |&t| set.contains(t))
    }

    /// Whether KUMO's guarantee holds: every truth that is not valid is
    /// ruled out by the observed state of at least one instance action.
    /// True of every instance kumo-gen writes and of KUMO's published ones;
    /// the book states it only when it holds.
    pub fn every_wrong_truth_ruled_out(&self) -> bool {
        self.truths
            .iter()
            .filter(|t| !self.valid.contains(t))
            .all(|&t| {
                (0..self.actions.len()).any(|pos| {
                    self.domain.actions[self.actions[pos]].states[self.observed[pos]]
                        .rules_out
                        .contains(t)
                })
            })
    }

    /// The observation of instance action `pos` as text: the state label of
    /// a `str` action, the value of a numeric one (shortest round-trip
    /// form, as KUMO prints it).
    pub fn observation_text(&self, pos: usize) -> String {
        let action = &self.domain.actions[self.actions[pos]];
        match self.values.get(pos).copied().flatten() {
            Some(v) if action.kind.is_numeric() => format_number(v),
            _ => action.states[self.observed[pos]].label.to_string(),
        }
    }

    /// The observation of instance action `pos` as the dataset line holds
    /// it and `eval` shows it: an integer for `int` actions, a float for
    /// `float` actions, the state label for `str` actions.
    pub fn observation_value(&self, pos: usize) -> serde_json::Value {
        let action = &self.domain.actions[self.actions[pos]];
        match self.values.get(pos).copied().flatten() {
            Some(v) if action.kind == crate::domain::ActionKind::Int => {
                serde_json::Value::from(v as i64)
            }
            Some(v) if action.kind.is_numeric() => serde_json::Value::from(v),
            _ => serde_json::Value::from(action.states[self.observed[pos]].label.to_string()),
        }
    }

    /// Checks that the indices fit the domain and each other.
    pub fn validate(&self) -> Result<(), TaskError> {
        let d = self.domain;
        let n = self.actions.len();
        if self.observed.len() != n || self.values.len() != n {
            return Err(TaskError::Lengths {
                actions: n,
                observed: self.observed.len(),
                values: self.values.len(),
            });
        }
        if let Some(&t) = self.truths.iter().find(|&&t| t >= d.truths.len()) {
            return Err(TaskError::TruthOutside(t));
        }
        if let Some(&t) = self.valid.iter().find(|t| !self.truths.contains(t)) {
            return Err(TaskError::ValidNotATruth(t));
        }
        for (pos, (&a, &s)) in self.actions.iter().zip(self.observed).enumerate() {
            let Some(action) = d.actions.get(a) else {
                return Err(TaskError::ActionOutside(a));
            };
            if s >= action.states.len() {
                return Err(TaskError::NoState {
                    action: action.name.clone(),
                    position: pos,
                    state: s,
                });
            }
        }
        Ok(())
    }
}

/// Shortest round-trip decimal form of a number (`5` for 5.0, `1.1`).
pub fn format_number(v: f64) -> String {
    format!("{v}")
}

/// An instance with owned indices, e.g. read back from a JSONL line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OwnedTask {
    pub truths: Vec<usize>,
    pub valid: Vec<usize>,
    pub actions: Vec<usize>,
    pub observed: Vec<usize>,
    pub values: Vec<Option<f64>>,
    pub seed: u64,
    /// `optimal.golden_trajectory` as instance positions, when the line has it.
    pub golden: Option<Vec<usize>>,
}

impl OwnedTask {
    /// Borrows the task as a view over `domain`.
    pub fn view<'a>(&'a self, domain: &'a Domain) -> TaskView<'a> {
        TaskView {
            domain,
            truths: &self.truths,
            valid: &self.valid,
            actions: &self.actions,
            observed: &self.observed,
            values: &self.values,
            seed: self.seed,
        }
    }

    /// The task of a synthesized instance (no golden trajectory: that is the
    /// search's label).
    pub fn from_instance(instance: &crate::synth::Instance) -> OwnedTask {
        OwnedTask {
            truths: instance.truths.clone(),
            valid: instance.valid.clone(),
            actions: instance.actions.clone(),
            observed: instance.observations.iter().map(|o| o.state).collect(),
            values: instance.observations.iter().map(|o| o.value).collect(),
            seed: instance.index,
            golden: None,
        }
    }
}
