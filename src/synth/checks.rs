//! What a request may ask of a domain, checked up front
//! ([`check_params`]), the bound on distinct instances, the error that
//! names the parameter to change when the bounded search fails
//! ([`infeasible`]), and the check of one finished instance against the
//! three KUMO constraints ([`Instance::check`]).

use super::{Instance, MAX_SAMPLES, Observation, Params, sample};
use crate::domain::Domain;

/// Which part of a request failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A parameter is out of range for the domain (checked up front).
    Invalid,
    /// The bounded search found no instance for these parameters.
    Infeasible,
    /// Fewer distinct instances exist than asked for.
    TooFewDistinct,
}

/// A request the domain cannot satisfy. All are exit code 1.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SynthError {
    pub kind: ErrorKind,
    /// The flag to change, e.g. `--actions`.
    pub parameter: &'static str,
    /// What is wrong (lowercase, names in backticks).
    pub message: String,
    /// How to fix it.
    pub help: String,
}

impl SynthError {
    pub fn new(
        kind: ErrorKind,
        parameter: &'static str,
        message: String,
        help: impl Into<String>,
    ) -> Self {
        SynthError {
            kind,
            parameter,
            message,
            help: help.into(),
        }
    }
}

pub(super) fn check_params(domain: &Domain, params: &Params) -> Result<(), SynthError> {
    let name = &domain.name;
    let (nt, na) = (domain.truths.len(), domain.actions.len());
    let invalid = |parameter, message: String, help: String| {
        Err(SynthError::new(
            ErrorKind::Invalid,
            parameter,
            message,
            help,
        ))
    };
    if params.truths < 2 {
        return invalid(
            "--truths",
            format!(
                "`--truths {}` is too few: an instance needs a valid truth and at least one invalid truth",
                params.truths
            ),
            "use `--truths 2` or more".into(),
        );
    }
    if params.truths > nt {
        return invalid(
            "--truths",
            format!(
                "`--truths {}` is more than the {nt} truths of domain `{name}`",
                params.truths
            ),
            format!("use `--truths {nt}` or fewer"),
        );
    }
    if params.actions == 0 {
        return invalid(
            "--actions",
            "`--actions 0` leaves nothing to rule truths out".into(),
            "use `--actions 1` or more".into(),
        );
    }
    if params.actions > na {
        return invalid(
            "--actions",
            format!(
                "`--actions {}` is more than the {na} actions of domain `{name}`",
                params.actions
            ),
            format!("use `--actions {na}` or fewer"),
        );
    }
    if params.valid == 0 {
        return invalid(
            "--valid",
            "`--valid 0`: an instance needs at least one valid truth".into(),
            "use `--valid 1`".into(),
        );
    }
    if params.valid >= params.truths {
        return invalid(
            "--valid",
            format!(
                "`--valid {}` must be less than `--truths {}`: at least one truth must be invalid",
                params.valid, params.truths
            ),
            format!(
                "use `--valid {}` or fewer, or raise `--truths`",
                params.truths - 1
            ),
        );
    }
    if params.decimals > 12 {
        return invalid(
            "--decimals",
            format!(
                "`--decimals {}` is more precision than a float observation carries",
                params.decimals
            ),
            "use `--decimals 12` or fewer".into(),
        );
    }
    Ok(())
}

/// log-space upper bound on distinct canonical keys: truth subsets times
/// valid choices times action subsets times state choices.
pub(super) fn distinct_bound(domain: &Domain, params: &Params) -> f64 {
    fn ln_choose(n: usize, k: usize) -> f64 {
        (0..k)
            .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
            .sum()
    }
    let max_states = domain
        .actions
        .iter()
        .map(|a| a.states.len())
        .max()
        .unwrap_or(1);
    let ln = ln_choose(domain.truths.len(), params.truths)
        + ln_choose(params.truths, params.valid)
        + ln_choose(domain.actions.len(), params.actions)
        + params.actions as f64 * (max_states as f64).ln();
    if ln > 700.0 {
        f64::INFINITY
    } else {
        ln.exp().round()
    }
}

pub(super) fn infeasible(
    domain: &Domain,
    params: &Params,
    failures: &sample::Failures,
) -> SynthError {
    use sample::Failure::*;
    let (t, a, v) = (params.truths, params.actions, params.valid);
    let name = &domain.name;
    let (parameter, message, help) = match failures.dominant() {
        Unsat => (
            "--actions",
            format!(
                "no sample of {t} truths of domain `{name}` could be ruled out with at most `--actions {a}` actions ({MAX_SAMPLES} samples tried, {} UNSAT)",
                failures.unsat + failures.uncoverable
            ),
            "raise `--actions` or lower `--truths`".to_string(),
        ),
        Uncoverable => (
            "--truths",
            format!(
                "in {MAX_SAMPLES} samples of {t} truths of domain `{name}`, no state could rule out every invalid truth without ruling out a valid one"
            ),
            if v > 1 {
                "lower `--valid` or `--truths`".to_string()
            } else {
                "lower `--truths`".to_string()
            },
        ),
        TooFewActions => (
            "--valid",
            format!(
                "with `--valid {v}` too few actions of domain `{name}` have a state that rules out no valid truth to fill `--actions {a}`"
            ),
            "lower `--valid` or `--actions`".to_string(),
        ),
        Shortcut => (
            "--allow-shortcuts",
            format!(
                "in {MAX_SAMPLES} samples of domain `{name}` with {t} truths and {a} actions, a valid truth was always unrelated to every instance action (the book alone would name it)"
            ),
            "pass `--allow-shortcuts`, or raise `--actions`".to_string(),
        ),
    };
    SynthError::new(ErrorKind::Infeasible, parameter, message, help)
}

impl Instance {
    /// Checks the instance against its domain and setting: sizes, distinct
    /// truths and actions, the three KUMO constraints (no observation rules
    /// out a valid truth; every invalid truth is ruled out; one observation
    /// per action), numeric values that read as their state, and the
    /// shortcut guard unless `params.allow_shortcuts`. Returns the first
    /// violation.
    pub fn check(&self, domain: &Domain, params: &Params) -> Result<(), Violation> {
        let distinct = |v: &[usize]| {
            let mut sorted = v.to_vec();
            sorted.sort_unstable();
            sorted.windows(2).all(|w| w[0] != w[1])
        };
        if self.truths.len() != params.truths || !distinct(&self.truths) {
            return Err(Violation::Truths {
                expected: params.truths,
                truths: self.truths.clone(),
            });
        }
        if self.truths.iter().any(|&t| t >= domain.truths.len()) {
            return Err(Violation::TruthOutside);
        }
        if self.valid.len() != params.valid
            || !distinct(&self.valid)
            || self.valid.iter().any(|v| !self.truths.contains(v))
        {
            return Err(Violation::Valid {
                expected: params.valid,
            });
        }
        if self.actions.len() != params.actions
            || !distinct(&self.actions)
            || self.observations.len() != self.actions.len()
        {
            return Err(Violation::Actions {
                expected: params.actions,
            });
        }
        let mut ruled_out = vec![false; domain.truths.len()];
        for (&a, o) in self.actions.iter().zip(&self.observations) {
            let action = domain.actions.get(a).ok_or(Violation::ActionOutside)?;
            let state = action.states.get(o.state).ok_or(Violation::StateOutside)?;
            for t in state.rules_out.iter() {
                ruled_out[t] = true;
            }
            check_value(action, o)?;
        }
        for &t in &self.truths {
            let valid = self.valid.contains(&t);
            if valid && ruled_out[t] {
                return Err(Violation::ValidRuledOut {
                    truth: domain.truths[t].clone(),
                });
            }
            if !valid && !ruled_out[t] {
                return Err(Violation::InvalidKept {
                    truth: domain.truths[t].clone(),
                });
            }
        }
        if !params.allow_shortcuts {
            for &v in &self.valid {
                if !self
                    .actions
                    .iter()
                    .any(|&a| domain.actions[a].related.contains(v))
                {
                    return Err(Violation::Shortcut {
                        truth: domain.truths[v].clone(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// An observation's value fits its action: a number for a numeric action
/// (none for another), which reads as the observed state alone, whole for
/// an `int` action.
fn check_value(action: &crate::domain::Action, o: &Observation) -> Result<(), Violation> {
    match (action.kind.is_numeric(), o.value) {
        (false, None) => {}
        (true, Some(value)) => {
            let reads = action
                .states
                .iter()
                .enumerate()
                .filter(|(_, s)| {
                    s.label
                        .range()
                        .is_some_and(|(lo, hi)| lo <= value && value <= hi)
                })
                .map(|(i, _)| i)
                .collect::<Vec<_>>();
            if reads != [o.state] {
                return Err(Violation::ValueReads {
                    value,
                    action: action.name.clone(),
                    reads,
                    state: o.state,
                });
            }
            if action.kind == crate::domain::ActionKind::Int && value.fract() != 0.0 {
                return Err(Violation::NotIntegral {
                    value,
                    action: action.name.clone(),
                });
            }
        }
        _ => {
            return Err(Violation::ValueKind {
                action: action.name.clone(),
            });
        }
    }
    Ok(())
}

/// A KUMO constraint an instance breaks.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Violation {
    #[error("expected {expected} distinct truths: {truths:?}")]
    Truths { expected: usize, truths: Vec<usize> },
    #[error("truth index out of range")]
    TruthOutside,
    #[error("expected {expected} distinct valid truths among the truths")]
    Valid { expected: usize },
    #[error("expected {expected} distinct actions, one observation each")]
    Actions { expected: usize },
    #[error("action index out of range")]
    ActionOutside,
    #[error("state index out of range")]
    StateOutside,
    /// A numeric value that reads as other states than its own.
    #[error("value {value} of `{action}` reads as states {reads:?}, not {state}")]
    ValueReads {
        value: f64,
        action: String,
        reads: Vec<usize>,
        state: usize,
    },
    #[error("value {value} of int action `{action}` is not integral")]
    NotIntegral { value: f64, action: String },
    #[error("observation of `{action}` has the wrong value kind")]
    ValueKind { action: String },
    #[error("valid truth `{truth}` is ruled out")]
    ValidRuledOut { truth: String },
    #[error("invalid truth `{truth}` is not ruled out")]
    InvalidKept { truth: String },
    #[error("valid truth `{truth}` is related to no instance action (shortcut)")]
    Shortcut { truth: String },
}
