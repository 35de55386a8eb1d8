//! The instance line: KUMO's fields (`truths`, `actions`,
//! `observations`, `seed`, `valid_truth` as a string or a list) plus our
//! optional `optimal` labels — the one type every reader of instance files
//! uses (`label`, the derived files, `check-books`, `eval`, `play`,
//! `score`, `stats`), and the one way a line is resolved against a domain
//! ([`InstanceLine::resolve`], observations read by
//! [`crate::domain::Action::observed_state`]), so they accept and reject
//! the same lines.
//!
//! Unknown fields are ignored so KUMO's own files and ours both read.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::domain::Domain;
use crate::render::{LineMismatch, OwnedTask, TaskError};

/// One line of an instance file.
#[derive(Clone, Debug, Deserialize)]
pub struct InstanceLine {
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
#[derive(Clone, Debug, Deserialize)]
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
    /// `expected_steps` is the exact optimum (`true`, and what a line
    /// without the field means: KUMO's files and lines written before
    /// certified labels), or a certified upper bound (`false`: the search
    /// ran over budget, DESIGN.md "Certified labels").
    #[serde(default = "exact_by_default")]
    pub exact: bool,
    /// The proven lower bound of a certified label (`exact: false`).
    #[serde(default)]
    pub lower_bound: Option<f64>,
}

fn exact_by_default() -> bool {
    true
}

impl Default for Optimal {
    fn default() -> Self {
        Optimal {
            expected_steps: None,
            first_action: None,
            golden_actions: None,
            golden_trajectory: Vec::new(),
            golden_answer: None,
            exact: true,
            lower_bound: None,
        }
    }
}

/// What a line's label proves about the optimal expected number of
/// actions `E`: its exact value, or a certified interval (docs/output.md,
/// "Certified labels"). Every reader that compares, bands or scores by
/// `E` goes through it, so none takes a certified upper bound for `E`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Steps {
    /// `E` exactly.
    Exact(f64),
    /// `lower <= E <= upper`; `upper` is the value of the strategy the
    /// golden trajectory follows, or a bound on it.
    Certified { lower: f64, upper: f64 },
}

impl Steps {
    /// `(lower, upper)`: a point when exact.
    pub fn interval(self) -> (f64, f64) {
        match self {
            Steps::Exact(e) => (e, e),
            Steps::Certified { lower, upper } => (lower, upper),
        }
    }

    pub fn is_exact(self) -> bool {
        matches!(self, Steps::Exact(_))
    }

    /// The exact value; `None` for a certified interval.
    pub fn exact(self) -> Option<f64> {
        match self {
            Steps::Exact(e) => Some(e),
            Steps::Certified { .. } => None,
        }
    }

    /// The upper end: the exact value, or the certified upper bound.
    pub fn upper(self) -> f64 {
        self.interval().1
    }

    /// `(upper - lower) / lower`; 0 when exact (or when `lower` is 0).
    pub fn relative_gap(self) -> f64 {
        let (lower, upper) = self.interval();
        if lower > 0.0 {
            (upper - lower) / lower
        } else {
            0.0
        }
    }
}

impl Optimal {
    /// What the label proves about `E` (`None` when unlabelled). A line
    /// that says `exact: false` without a finite `lower_bound` proves no
    /// more than `0 <= E`.
    pub fn steps(&self) -> Option<Steps> {
        let upper = self.expected_steps.filter(|e| e.is_finite())?;
        Some(if self.exact {
            Steps::Exact(upper)
        } else {
            let lower = self
                .lower_bound
                .filter(|l| l.is_finite())
                .map_or(0.0, |l| l.clamp(0.0, upper));
            Steps::Certified { lower, upper }
        })
    }
}

impl InstanceLine {
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

    /// The line's `optimal.expected_steps` when labelled: the exact
    /// optimum, or a certified upper bound (see [`InstanceLine::steps`]).
    pub fn expected_steps(&self) -> Option<f64> {
        self.optimal.as_ref().and_then(|o| o.expected_steps)
    }

    /// The actions the golden player takes on this instance before it
    /// answers (`optimal.golden_actions`, else the golden trajectory's
    /// length), when labelled.
    pub fn golden_length(&self) -> Option<usize> {
        let optimal = self.optimal.as_ref()?;
        optimal.expected_steps?;
        Some(
            optimal
                .golden_actions
                .map_or(optimal.golden_trajectory.len(), |g| g as usize),
        )
    }

    /// What the line's label proves about `E`: exact or an interval.
    pub fn steps(&self) -> Option<Steps> {
        self.optimal.as_ref().and_then(Optimal::steps)
    }

    /// The line in `domain`'s indices. Every name must be the domain's and
    /// listed once; every instance action needs an observation naming a
    /// state ([`crate::domain::Action::observed_state`]); a number in no
    /// range of its action is kept as `None` (KUMO reads it as no state);
    /// `optimal.golden_trajectory` must name instance actions.
    pub fn resolve(&self, domain: &Domain) -> Result<ResolvedLine, LineMismatch> {
        let index =
            |field: &'static str, names: &[String], find: &dyn Fn(&str) -> Option<usize>| {
                let mut out: Vec<usize> = Vec::with_capacity(names.len());
                for (i, name) in names.iter().enumerate() {
                    let x = find(name).ok_or_else(|| LineMismatch::UnknownName {
                        field,
                        name: name.clone(),
                        domain: domain.name.clone(),
                    })?;
                    if out.contains(&x) {
                        return Err(LineMismatch::Repeated { field, index: i });
                    }
                    out.push(x);
                }
                Ok(out)
            };
        let truths = index("truths", &self.truths, &|n| domain.truth_index(n))?;
        let actions = index("actions", &self.actions, &|n| domain.action_index(n))?;
        let valid = match &self.valid_truth {
            Value::String(_) | Value::Array(_) => {
                let names = self.valid_truths();
                if matches!(&self.valid_truth, Value::Array(a) if a.len() != names.len()) {
                    return Err(LineMismatch::ValidNotString);
                }
                index("valid_truth", &names, &|n| domain.truth_index(n))?
            }
            _ => return Err(LineMismatch::ValidMissing),
        };
        if let Some(t) = valid.iter().find(|t| !truths.contains(t)) {
            return Err(LineMismatch::ValidNotInTruths {
                truth: domain.truths[*t].clone(),
            });
        }
        let mut observed = Vec::with_capacity(actions.len());
        let mut values = Vec::with_capacity(actions.len());
        for &a in &actions {
            let action = &domain.actions[a];
            let seen =
                self.observations
                    .get(&action.name)
                    .ok_or_else(|| LineMismatch::NoObservation {
                        action: action.name.clone(),
                    })?;
            let state = action
                .observed_state(seen)
                .ok_or_else(|| LineMismatch::NoState {
                    action: action.name.clone(),
                    observed: seen.to_string(),
                })?;
            observed.push(state);
            values.push(match seen {
                Value::Number(n) if action.kind.is_numeric() => n.as_f64(),
                _ => None,
            });
        }
        let golden = match &self.optimal {
            Some(o) if !o.golden_trajectory.is_empty() || o.golden_answer.is_some() => Some(
                o.golden_trajectory
                    .iter()
                    .map(|name| {
                        self.actions
                            .iter()
                            .position(|n| n == name)
                            .ok_or_else(|| LineMismatch::GoldenNotInActions { name: name.clone() })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            _ => None,
        };
        Ok(ResolvedLine {
            truths,
            valid,
            actions,
            observed,
            values,
            seed: self.seed,
            golden,
        })
    }
}

impl ResolvedLine {
    /// How many of the instance's truths are left before and after each of
    /// `positions` (instance action positions, in order), each ruling out
    /// what its observed state rules out: a reduction curve.
    pub fn remaining_after(&self, domain: &Domain, positions: &[usize]) -> Vec<f64> {
        self.candidates_after(domain, positions)
            .iter()
            .map(|left| left.len() as f64)
            .collect()
    }

    /// The candidates (domain truth indices, in instance order) before and
    /// after each of `positions`: the truths no observation so far rules
    /// out. `remaining_after` counts them; the report's replay names them.
    pub fn candidates_after(&self, domain: &Domain, positions: &[usize]) -> Vec<Vec<usize>> {
        let mut left = self.truths.clone();
        let mut out = vec![left.clone()];
        for &pos in positions {
            if let Some(state) = self.observed[pos] {
                let rules_out = &domain.actions[self.actions[pos]].states[state].rules_out;
                left.retain(|&t| !rules_out.contains(t));
            }
            out.push(left.clone());
        }
        out
    }
}

/// An instance line in its domain's indices ([`InstanceLine::resolve`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResolvedLine {
    pub truths: Vec<usize>,
    pub valid: Vec<usize>,
    pub actions: Vec<usize>,
    /// Observed state per instance action; `None` for a number in no
    /// range of its action (it rules nothing out).
    pub observed: Vec<Option<usize>>,
    /// The number observed, for numeric actions.
    pub values: Vec<Option<f64>>,
    pub seed: u64,
    /// `optimal.golden_trajectory` as instance positions, when labelled.
    pub golden: Option<Vec<usize>>,
}

/// A line of an instance file that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct InstanceError {
    pub line: usize,
    pub message: String,
}

/// Parses every non-blank line of an instance file, in order.
pub fn parse_instances(text: &str) -> Result<Vec<InstanceLine>, InstanceError> {
    if text.starts_with('\u{feff}') {
        return Err(InstanceError {
            line: 1,
            message: super::text::bom_message(),
        });
    }
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

/// Reads an instance line in KUMO's format (`truths`, `actions`,
/// `observations`, `seed`, `valid_truth` as a string or a list; ours
/// adds `optimal`) as rendering's [`OwnedTask`], the one way every reader
/// does ([`InstanceLine::resolve`]). A number that lies in no range of its
/// action is an error here: a book cannot show it.
pub fn task_from_json(domain: &Domain, line: &Value) -> Result<OwnedTask, TaskError> {
    let parsed = InstanceLine::deserialize(line).map_err(TaskError::NotALine)?;
    let resolved = parsed.resolve(domain)?;
    let observed = resolved
        .observed
        .iter()
        .zip(&resolved.actions)
        .map(|(state, &a)| {
            state.ok_or_else(|| TaskError::NoRange {
                action: domain.actions[a].name.clone(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let task = OwnedTask {
        truths: resolved.truths,
        valid: resolved.valid,
        actions: resolved.actions,
        observed,
        values: resolved.values,
        seed: resolved.seed,
        golden: resolved.golden,
    };
    task.view(domain).validate()?;
    Ok(task)
}
