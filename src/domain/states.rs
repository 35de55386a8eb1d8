//! Pass 3 of loading a domain for one action's states (see
//! [`super::compile`]): the labels of a `str` action, the ranges of a
//! `float` or `int` action, and every state's rule-outs, each checked
//! against the rules of DESIGN.md "Domain config" and compiled into
//! [`State`]s.

use std::collections::HashMap;

use super::context::Context;
use super::diagnostic::Kind;
use super::document::{ActionDoc, RangeStateDoc, StatesDoc};
use super::{ActionKind, State, StateLabel, TruthSet};

/// The states of `action` (at `path`, of kind `kind`), with a diagnostic
/// for each problem; a state with a problem is still compiled, so that
/// every problem of the file is found in one run.
pub(super) fn compile_states(
    cx: &mut Context,
    path: &str,
    action: &ActionDoc,
    kind: ActionKind,
    truths: &[String],
    truth_index: &HashMap<&str, usize>,
) -> Vec<State> {
    let names = TruthNames {
        truths,
        truth_index,
    };
    match (&action.states, kind) {
        (StatesDoc::Named(pairs), ActionKind::Str) => named_states(cx, path, pairs, &names),
        (StatesDoc::Ranges(ranges), ActionKind::Float | ActionKind::Int) => {
            let states = ranges
                .iter()
                .enumerate()
                .map(|(i, range)| {
                    range_state(cx, &format!("{path}.states[{i}]"), range, kind, &names)
                })
                .collect();
            warn_overlapping_ranges(cx, path, ranges);
            states
        }
        (StatesDoc::Named(_), _) => {
            cx.error(
                Kind::Shape,
                format!("{path}.states"),
                format!(
                    "states of a `{}` action must be a list of ranges, found a mapping of labels",
                    kind.as_str()
                ),
                "write `- range: [lo, hi]` entries, or make the action `type: str`",
            );
            Vec::new()
        }
        (StatesDoc::Ranges(_), _) => {
            cx.error(
                Kind::Shape,
                format!("{path}.states"),
                "states of a `str` action must be a mapping of labels, found a list of ranges",
                "write `label: [truths]` entries, or make the action `type: float`",
            );
            Vec::new()
        }
    }
}

/// The domain's truths, and each one's index by name.
struct TruthNames<'a> {
    truths: &'a [String],
    truth_index: &'a HashMap<&'a str, usize>,
}

/// The truths a rule-out list (at `list_path`) names: an unknown name is
/// an error (with the name of another case suggested), a repeated one a
/// warning.
fn rule_outs(cx: &mut Context, list_path: &str, listed: &[String], names: &TruthNames) -> TruthSet {
    let mut set = TruthSet::with_capacity(names.truths.len());
    for (i, name) in listed.iter().enumerate() {
        match names.truth_index.get(name.as_str()) {
            Some(&t) => {
                if set.contains(t) {
                    cx.warning(
                        Kind::Duplicate,
                        list_path,
                        format!("truth `{name}` is listed twice"),
                        "remove the repeated entry",
                    );
                }
                set.insert(t);
            }
            None => {
                let suggestion = names
                    .truths
                    .iter()
                    .find(|k| k.eq_ignore_ascii_case(name))
                    .map(|k| format!("did you mean `{k}`? "))
                    .unwrap_or_default();
                cx.error(
                    Kind::UnknownTruth,
                    format!("{list_path}[{i}]"),
                    format!("unknown truth `{name}`"),
                    &format!("{suggestion}every rule-out must name a truth listed under `truths`"),
                );
            }
        }
    }
    set
}

/// The labelled states of a `str` action: each label non-empty and once.
fn named_states(
    cx: &mut Context,
    path: &str,
    pairs: &[(String, Vec<String>)],
    names: &TruthNames,
) -> Vec<State> {
    let mut states = Vec::new();
    let mut seen: HashMap<&str, ()> = HashMap::new();
    for (label, listed) in pairs {
        let state_path = format!("{path}.states.{label}");
        if label.trim().is_empty() {
            cx.error(
                Kind::Name,
                state_path.clone(),
                "a state has an empty label",
                "name the state",
            );
        }
        if seen.insert(label, ()).is_some() {
            cx.error(
                Kind::Duplicate,
                state_path.clone(),
                format!("duplicate state `{label}`"),
                "each state of an action needs its own label",
            );
        }
        let rules_out = rule_outs(cx, &state_path, listed, names);
        states.push(State {
            label: StateLabel::Named(label.clone()),
            rules_out,
        });
    }
    states
}

/// One range state of a `float` or `int` action (at `state_path`).
fn range_state(
    cx: &mut Context,
    state_path: &str,
    range: &RangeStateDoc,
    kind: ActionKind,
    names: &TruthNames,
) -> State {
    let [lo, hi] = range.range;
    check_range(cx, &format!("{state_path}.range"), lo, hi, kind);
    let list_path = format!("{state_path}.rules_out");
    let rules_out = rule_outs(cx, &list_path, &range.rules_out, names);
    State {
        label: StateLabel::Range { lo, hi },
        rules_out,
    }
}

/// The bounds of one range: finite, `hi - lo` finite, and for an `int`
/// action whole numbers within 2^53; an inverted range is a warning.
fn check_range(cx: &mut Context, range_path: &str, lo: f64, hi: f64, kind: ActionKind) {
    if !lo.is_finite() || !hi.is_finite() {
        cx.error(
            Kind::Range,
            range_path,
            format!("range [{lo}, {hi}] is not finite"),
            "use finite numbers (no `.nan` or `.inf`)",
        );
    } else if lo > hi {
        // KUMO reads a value as a state when `lo <= value <= hi`: an
        // inverted range holds none. Kept (KUMO's data has them); the
        // state counts in the search but is never observed.
        cx.warning(
            Kind::Range,
            range_path,
            format!("range [{lo}, {hi}] has lo > hi, so no value lies in it and this state is never observed"),
            &format!("write it as [{hi}, {lo}] if that is what you mean"),
        );
    } else if !(hi - lo).is_finite() {
        cx.error(
            Kind::Range,
            range_path,
            format!("range [{lo}, {hi}] is too wide: `hi - lo` overflows, so no value can be drawn from it"),
            "narrow the range (finite bounds whose difference is finite)",
        );
    } else if kind == ActionKind::Int && lo.abs().max(hi.abs()) > 9_007_199_254_740_992.0 {
        cx.error(
            Kind::Range,
            range_path,
            format!("range [{lo}, {hi}] of an `int` action goes beyond 2^53, where integers are no longer exact"),
            "keep `int` bounds within ±9007199254740992, or make the action `type: float`",
        );
    } else if kind == ActionKind::Int && (lo.fract() != 0.0 || hi.fract() != 0.0) {
        cx.error(
            Kind::Range,
            range_path,
            format!("range [{lo}, {hi}] of an `int` action has non-integer bounds"),
            "use integer bounds, or make the action `type: float`",
        );
    }
}

/// Overlapping interiors are allowed with a warning, as in KUMO: a value
/// belongs to the first range in state order that holds it, and synthesis
/// only emits values inside exactly one range. One warning per range, for
/// the first earlier range it overlaps.
fn warn_overlapping_ranges(cx: &mut Context, path: &str, ranges: &[RangeStateDoc]) {
    for i in 0..ranges.len() {
        for j in 0..i {
            let [a_lo, a_hi] = ranges[j].range;
            let [b_lo, b_hi] = ranges[i].range;
            if a_lo > a_hi || b_lo > b_hi {
                continue; // an empty range overlaps nothing
            }
            let overlap = if a_lo == a_hi || b_lo == b_hi {
                // A point range overlaps when it lies strictly inside the other.
                (a_lo == a_hi && b_lo < a_lo && a_lo < b_hi)
                    || (b_lo == b_hi && a_lo < b_lo && b_lo < a_hi)
                    || (a_lo == a_hi && b_lo == b_hi && a_lo == b_lo)
            } else {
                a_lo < b_hi && b_lo < a_hi
            };
            if overlap {
                cx.warning(
                    Kind::Range,
                    format!("{path}.states[{i}].range"),
                    format!(
                        "range [{b_lo}, {b_hi}] overlaps range [{a_lo}, {a_hi}] of `states[{j}]`; a value in both reads as `states[{j}]`"
                    ),
                    "make the ranges share at most endpoints, unless first-match order is intended",
                );
                break;
            }
        }
    }
}
