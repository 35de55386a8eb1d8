//! One entry of KUMO's outcomes dict -> one [`ActionDoc`]: the type, the
//! states (labels or ranges, bounds exactly as written), the rule-outs
//! (unknown truths dropped), each change noted.

use std::collections::{HashMap, HashSet};

use super::{Ctx, NoteKind};
use crate::domain::{ActionDoc, RangeStateDoc, StatesDoc};
use crate::import::ImportError;
use crate::import::eval::{Value, ValueKind};
use crate::python_repr::py_float;

/// A state key as read from the file.
pub(super) enum Key {
    Label(String),
    /// An int, float, bool or None key.
    Scalar(String),
    Range {
        lo: f64,
        hi: f64,
        text: String,
    },
}

pub(super) fn classify(key: &Value) -> Key {
    match &key.kind {
        ValueKind::Str(s) => Key::Label(s.clone()),
        ValueKind::Tuple(items)
            if items.len() == 2
                && items
                    .iter()
                    .all(|v| matches!(v.kind, ValueKind::Int(_) | ValueKind::Float(_))) =>
        {
            Key::Range {
                lo: items[0].as_number().unwrap_or(0.0),
                hi: items[1].as_number().unwrap_or(0.0),
                text: format!("[{}, {}]", number_text(&items[0]), number_text(&items[1])),
            }
        }
        ValueKind::None | ValueKind::Bool(_) | ValueKind::Int(_) | ValueKind::Float(_) => {
            Key::Scalar(key.repr())
        }
        _ => Key::Label(key.repr()),
    }
}

pub(super) fn number_text(v: &Value) -> String {
    match v.kind {
        ValueKind::Float(f) => py_float(f),
        _ => v.repr(),
    }
}

pub(super) fn is_integral(f: f64) -> bool {
    f.is_finite() && f.fract() == 0.0
}

/// An outcomes entry's `states` (the value and its pairs) and declared
/// `type` (with its place); an error names what is not as KUMO writes it.
#[allow(clippy::type_complexity)]
fn outcome_fields<'v>(
    cx: &mut Ctx,
    src_path: &str,
    name: &str,
    entry: &'v Value,
) -> Result<
    (
        &'v Value,
        &'v [(Value, Value)],
        Option<(String, crate::import::Pos)>,
    ),
    ImportError,
> {
    let ValueKind::Dict(fields) = &entry.kind else {
        return Err(cx.error(
            entry.pos,
            src_path,
            format!(
                "the outcomes of `{name}` must be a dict with `type` and `states`, not a `{}`",
                entry.type_name()
            ),
            "write `{'type': 'str', 'states': {'label': {...}, ...}}`",
        ));
    };
    let field = |f: &str| {
        fields
            .iter()
            .find(|(k, _)| k.as_str() == Some(f))
            .map(|(_, v)| v)
    };
    let Some(states) = field("states") else {
        return Err(cx.error(
            entry.pos,
            src_path,
            format!("the outcomes of `{name}` have no `states`"),
            "add `'states': {label: {ruled-out truths}, ...}`",
        ));
    };
    let ValueKind::Dict(state_pairs) = &states.kind else {
        return Err(cx.error(
            states.pos,
            &format!("{src_path}['states']"),
            format!(
                "the states of `{name}` must be a dict, not a `{}`",
                states.type_name()
            ),
            "map each state (a label or a `(lo, hi)` range) to the set of truths it rules out",
        ));
    };
    let declared = match field("type") {
        Some(t) => match t.as_str() {
            Some(s) => Some((s.to_string(), t.pos)),
            None => {
                return Err(cx.error(
                    t.pos,
                    &format!("{src_path}['type']"),
                    format!(
                        "the type of `{name}` must be a string, found `{}`",
                        t.repr()
                    ),
                    "write `'type': 'str'` or `'type': 'float'`",
                ));
            }
        },
        None => None,
    };

    Ok((states, state_pairs, declared))
}

/// An action of `str` labels (`label_reason` noted when its keys were
/// something else), each label once.
fn labelled_action(
    cx: &mut Ctx,
    (name, path): (&str, &str),
    state_pairs: &[(Value, Value)],
    keys: &[Key],
    rule_outs: Vec<Vec<String>>,
    (declared_type, type_pos, label_reason): (Option<&str>, crate::import::Pos, Option<&str>),
) -> ActionDoc {
    let labels: Vec<String> = keys.iter().map(label_of).collect();
    if let Some(reason) = &label_reason {
        let shown: Vec<String> = labels
            .iter()
            .zip(keys)
            .filter(|(_, k)| !matches!(k, Key::Label(_)) || declared_type == Some("dict"))
            .take(6)
            .map(|(l, _)| format!("`{l}`"))
            .collect();
        cx.note(
            type_pos,
            path.to_string(),
            NoteKind::Labels,
            format!("{reason}; kept as `str` labels {}", shown.join(", ")),
        );
    }
    let pairs = unique_labels(cx, path, state_pairs, labels, rule_outs);
    ActionDoc {
        name: name.to_string(),
        kind: "str".to_string(),
        unit: None,
        states: StatesDoc::Named(pairs),
    }
}

/// Maps one outcomes entry; `None` when the action has no states at all.
#[allow(clippy::too_many_arguments)]
pub(super) fn map_action(
    cx: &mut Ctx,
    outcomes_name: &str,
    index: usize,
    name: &str,
    key: &Value,
    entry: &Value,
    (truths, truth_index): (&[String], &HashMap<String, usize>),
) -> Result<Option<ActionDoc>, ImportError> {
    let src_path = format!("{outcomes_name}[{}]", key.repr());
    let path = format!("actions[{index}] `{name}`");
    let (states, state_pairs, declared) = outcome_fields(cx, &src_path, name, entry)?;

    if state_pairs.is_empty() {
        cx.note(
            states.pos,
            path,
            NoteKind::ActionWithoutStates,
            "the action has no states; dropped",
        );
        return Ok(None);
    }

    // Rule-outs of each state, in order.
    let mut rule_outs: Vec<Vec<String>> = Vec::with_capacity(state_pairs.len());
    for (skey, rules) in state_pairs {
        rule_outs.push(state_rule_outs(
            cx,
            (&src_path, &path),
            skey,
            rules,
            (truths, truth_index),
        )?);
    }

    let keys: Vec<Key> = state_pairs.iter().map(|(k, _)| classify(k)).collect();
    let declared_type = declared.as_ref().map(|(t, _)| t.as_str());
    let type_pos = declared.as_ref().map_or(entry.pos, |(_, p)| *p);
    let all_ranges = keys.iter().all(|k| matches!(k, Key::Range { .. }));
    let any_range = keys.iter().any(|k| matches!(k, Key::Range { .. }));

    match declared_type {
        Some("str" | "float" | "int" | "dict") => {}
        other => {
            let inferred = if all_ranges { "float" } else { "str" };
            cx.note(
                type_pos,
                path.clone(),
                NoteKind::UnknownType,
                match other {
                    Some(t) => format!("unknown type `{t}`; the keys make it `{inferred}`"),
                    None => format!("no `type`; the keys make it `{inferred}`"),
                },
            );
        }
    }
    let numeric_wanted = all_ranges && !matches!(declared_type, Some("str" | "dict"));

    let (ranges, label_reason) = decide_states(
        cx,
        &path,
        state_pairs,
        &keys,
        (declared_type, type_pos),
        numeric_wanted,
        any_range,
    );

    let action = match ranges {
        Some((spans, kind)) => ActionDoc {
            name: name.to_string(),
            kind: kind.to_string(),
            unit: None,
            states: StatesDoc::Ranges(
                spans
                    .into_iter()
                    .zip(rule_outs)
                    .map(|((lo, hi), rules_out)| RangeStateDoc {
                        range: [lo, hi],
                        rules_out,
                    })
                    .collect(),
            ),
        },
        None => labelled_action(
            cx,
            (name, &path),
            state_pairs,
            &keys,
            rule_outs,
            (declared_type, type_pos, label_reason.as_deref()),
        ),
    };

    // A truth ruled out by every state of the action, or an action with a
    // single state, is kept exactly as KUMO has it: the validator warns,
    // and synthesis never makes such a truth valid together with the
    // action (no observation of it would be consistent).
    Ok(Some(action))
}

/// Notes inverted and overlapping ranges, kept exactly as KUMO has them
/// (DESIGN.md: numeric actions stay numeric): KUMO reads a value as the
/// first state whose `lo <= value <= hi`, so an inverted range holds no
/// value and overlapping ranges resolve by state order. The validator
/// warns about both; synthesis only emits values that lie in exactly one
/// range.
fn note_range_problems(
    cx: &mut Ctx,
    path: &str,
    state_pairs: &[(Value, Value)],
    keys: &[Key],
    spans: &[(f64, f64)],
    inverted: Vec<(usize, String)>,
) {
    for (i, text) in inverted {
        let inner = text.trim_start_matches('[').trim_end_matches(']');
        let (a, b) = inner.split_once(", ").unwrap_or((inner, inner));
        cx.note(
            state_pairs[i].0.pos,
            path,
            NoteKind::InvertedRange,
            format!(
                "range ({a}, {b}) is inverted; kept as in KUMO, where no value lies in it (the state is never observed)"
            ),
        );
    }
    if let Some((a, b)) = overlapping(spans) {
        cx.note(
            state_pairs[b].0.pos,
            path,
            NoteKind::OverlappingRanges,
            format!(
                "ranges {} and {} overlap; kept as in KUMO, where a value belongs to the first range in state order that contains it",
                key_text(&keys[a]),
                key_text(&keys[b])
            ),
        );
    }
}

/// The kind of a numeric action's ranges: `int` when declared so and every
/// bound is a whole number written as one, else `float` (noted when `int`
/// was declared).
fn range_kind(
    cx: &mut Ctx,
    path: &str,
    keys: &[Key],
    spans: &[(f64, f64)],
    (declared_type, type_pos): (Option<&str>, crate::import::Pos),
) -> &'static str {
    let integral = spans
        .iter()
        .all(|(lo, hi)| is_integral(*lo) && is_integral(*hi))
        && keys.iter().all(|k| match k {
            Key::Range { text, .. } => !text.contains(['.', 'e']),
            _ => true,
        });
    if declared_type == Some("int") {
        if integral {
            "int"
        } else {
            cx.note(
                type_pos,
                path,
                NoteKind::FloatRanges,
                "type `int` has ranges with fractional bounds; written as `float`",
            );
            "float"
        }
    } else {
        "float"
    }
}

/// Whether an action's states become ranges (with the kind, `float` or
/// `int`) or `str` labels (with the reason to note): KUMO's numeric keys
/// stay numeric with their bounds exactly as written (inverted and
/// overlapping ranges are noted, read as KUMO reads them); scalar keys,
/// `dict` types, range keys of a `str` action and infinite bounds become
/// labels.
#[allow(clippy::type_complexity)]
fn decide_states(
    cx: &mut Ctx,
    path: &str,
    state_pairs: &[(Value, Value)],
    keys: &[Key],
    (declared_type, type_pos): (Option<&str>, crate::import::Pos),
    numeric_wanted: bool,
    any_range: bool,
) -> (Option<(Vec<(f64, f64)>, &'static str)>, Option<String>) {
    let mut ranges: Option<(Vec<(f64, f64)>, &'static str)> = None;
    let mut label_reason: Option<String> = None;
    if numeric_wanted {
        let mut spans = Vec::with_capacity(keys.len());
        let mut inverted = Vec::new();
        let mut finite = true;
        for (i, k) in keys.iter().enumerate() {
            if let Key::Range { lo, hi, text } = k {
                finite &= lo.is_finite() && hi.is_finite();
                if lo > hi {
                    inverted.push((i, text.clone()));
                }
                spans.push((*lo, *hi));
            }
        }
        if !finite {
            label_reason =
                Some("a range bound is infinite, which a numeric state cannot hold".into());
        } else {
            note_range_problems(cx, path, state_pairs, keys, &spans, inverted);
            let kind = range_kind(cx, path, keys, &spans, (declared_type, type_pos));
            ranges = Some((spans, kind));
        }
    } else if declared_type == Some("dict") {
        label_reason = Some("type `dict` is written as `str`".into());
    } else if any_range || keys.iter().any(|k| matches!(k, Key::Scalar(_))) {
        let shown: Vec<String> = keys
            .iter()
            .filter(|k| !matches!(k, Key::Label(_)))
            .take(6)
            .map(key_text)
            .collect();
        label_reason = Some(format!(
            "type `{}` with key{} {}{}",
            declared_type.unwrap_or("str"),
            if shown.len() == 1 { "" } else { "s" },
            shown.join(", "),
            if keys.iter().filter(|k| !matches!(k, Key::Label(_))).count() > 6 {
                ", ..."
            } else {
                ""
            }
        ));
    }
    (ranges, label_reason)
}

/// The rule-outs of one state, in order: repeated names kept once and
/// unknown truths dropped, each noted (with a close match when there is
/// one); anything but a collection of names is an error.
fn state_rule_outs(
    cx: &mut Ctx,
    (src_path, path): (&str, &str),
    skey: &Value,
    rules: &Value,
    (truths, truth_index): (&[String], &HashMap<String, usize>),
) -> Result<Vec<String>, ImportError> {
    let state_path = format!("{path} state `{}`", skey.repr());
    let Some(items) = rules.elements() else {
        return Err(cx.error(
            rules.pos,
            &format!("{src_path}['states'][{}]", skey.repr()),
            format!(
                "the rule-outs of state `{}` must be a set or list of truths, not a `{}`",
                skey.repr(),
                rules.type_name()
            ),
            "write `{'Truth A', 'Truth B'}`, or `set()` for none",
        ));
    };
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut unknown: Vec<String> = Vec::new();
    let mut repeated: Vec<String> = Vec::new();
    for t in items {
        let Some(s) = t.as_str() else {
            return Err(cx.error(
                t.pos,
                &format!("{src_path}['states'][{}]", skey.repr()),
                format!("rule-outs must be truth names, found `{}`", t.repr()),
                "quote the truth's name",
            ));
        };
        if !seen.insert(s) {
            repeated.push(format!("`{s}`"));
            continue;
        }
        if truth_index.contains_key(s) {
            out.push(s.to_string());
        } else {
            unknown.push(format!("`{s}`"));
        }
    }
    if !repeated.is_empty() {
        cx.note(
            rules.pos,
            state_path.clone(),
            NoteKind::DuplicateRuleOut,
            format!("rule-outs repeat {}; kept once", repeated.join(", ")),
        );
    }
    if !unknown.is_empty() {
        let mut msg = format!(
            "rule-out{} {} name{} no truth of the truths list; dropped (KUMO never samples them)",
            if unknown.len() == 1 { "" } else { "s" },
            unknown.join(", "),
            if unknown.len() == 1 { "s" } else { "" },
        );
        let close: Vec<String> = unknown
            .iter()
            .filter_map(|u| {
                let bare = u.trim_matches('`').trim().to_lowercase();
                truths
                    .iter()
                    .find(|t| t.trim().to_lowercase() == bare)
                    .map(|t| format!("`{t}`"))
            })
            .collect();
        if !close.is_empty() {
            msg.push_str(&format!("; did you mean {}?", close.join(", ")));
        }
        cx.note(rules.pos, state_path, NoteKind::UnknownTruth, msg);
    }
    Ok(out)
}

pub(super) fn key_text(k: &Key) -> String {
    match k {
        Key::Label(s) => format!("`{s}`"),
        Key::Scalar(s) => s.clone(),
        Key::Range { text, .. } => text.replace('[', "(").replace(']', ")"),
    }
}

pub(super) fn label_of(k: &Key) -> String {
    match k {
        Key::Label(s) | Key::Scalar(s) => s.clone(),
        Key::Range { text, .. } => text.clone(),
    }
}

/// Makes labels non-empty and unique, noting each change.
pub(super) fn unique_labels(
    cx: &mut Ctx,
    path: &str,
    state_pairs: &[(Value, Value)],
    labels: Vec<String>,
    rule_outs: Vec<Vec<String>>,
) -> Vec<(String, Vec<String>)> {
    let mut used: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(labels.len());
    for (i, (mut label, rules)) in labels.into_iter().zip(rule_outs).enumerate() {
        let pos = state_pairs[i].0.pos;
        if label.trim().is_empty() {
            let new = "(empty)".to_string();
            cx.note(
                pos,
                path,
                NoteKind::EmptyLabel,
                format!(
                    "state {} has an empty label; renamed `{new}`",
                    state_pairs[i].0.repr()
                ),
            );
            label = new;
        }
        if used.contains(&label) {
            let mut n = 2;
            let mut new = format!("{label} ({n})");
            while used.contains(&new) {
                n += 1;
                new = format!("{label} ({n})");
            }
            cx.note(
                pos,
                path,
                NoteKind::DuplicateLabel,
                format!(
                    "state {} reads as the label `{label}` of an earlier state; renamed `{new}`",
                    state_pairs[i].0.repr()
                ),
            );
            label = new;
        }
        used.insert(label.clone());
        out.push((label, rules));
    }
    out
}

/// The first pair of ranges whose interiors overlap (or that are equal, or
/// where a point lies strictly inside another range).
pub(super) fn overlapping(spans: &[(f64, f64)]) -> Option<(usize, usize)> {
    let mut sorted: Vec<usize> = (0..spans.len()).collect();
    sorted.sort_by(|&a, &b| {
        spans[a]
            .0
            .total_cmp(&spans[b].0)
            .then(spans[a].1.total_cmp(&spans[b].1))
    });
    // After sorting by start, it suffices to compare each range with the
    // one reaching furthest so far.
    let mut reach: Option<usize> = None;
    for &i in &sorted {
        if let Some(r) = reach {
            let (lo, hi) = spans[i];
            let (rlo, rhi) = spans[r];
            let clash = lo < rhi || (lo == rlo && hi == rhi);
            if clash {
                return Some((r.min(i), r.max(i)));
            }
            if hi > rhi {
                reach = Some(i);
            }
        } else {
            reach = Some(i);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlaps() {
        assert_eq!(overlapping(&[(0.0, 1.0), (1.0, 2.0)]), None);
        assert_eq!(overlapping(&[(0.0, 1.0), (0.5, 2.0)]), Some((0, 1)));
        assert_eq!(
            overlapping(&[(0.0, 5.0), (1.0, 2.0), (6.0, 7.0)]),
            Some((0, 1))
        );
        assert_eq!(overlapping(&[(1.0, 1.0), (1.0, 2.0)]), None);
        assert_eq!(overlapping(&[(1.0, 1.0), (1.0, 1.0)]), Some((0, 1)));
        assert_eq!(overlapping(&[(0.0, 2.0), (1.0, 1.0)]), Some((0, 1)));
        assert_eq!(overlapping(&[(5.0, 6.0), (0.0, 10.0)]), Some((0, 1)));
        assert_eq!(overlapping(&[(2.0, 3.0), (0.0, 1.0), (1.0, 2.0)]), None);
    }
}
