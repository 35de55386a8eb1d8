//! Pass 2 of loading a domain file: the spanned YAML tree -> a
//! [`DomainDoc`], with every shape problem (unknown keys, `type` missing,
//! states of the wrong shape, ...) reported at its position, and the
//! position of every document path recorded for pass 3 ([`super::compile`]).

use std::collections::HashMap;

use super::ActionKind;
use super::context::Context;
use super::diagnostic::Kind;
use super::document::{ActionDoc, DomainDoc, RangeStateDoc, StatesDoc};
use super::node::{Node, SNode};

/// Top-level keys of a domain file, in format order.
const TOP_KEYS: &[&str] = &[
    "name",
    "title",
    "truth_noun",
    "truth_plural",
    "action_noun",
    "action_plural",
    "goal",
    "case_sensitive_names",
    "truths",
    "actions",
];

// ---------------------------------------------------------------------------
// Pass 2: tree -> document.

/// The top-level keys of a domain file by name; a key that is not a plain
/// name or not one of [`TOP_KEYS`] is an error (and left out).
fn top_fields<'n>(
    cx: &mut Context,
    entries: &'n [(SNode, SNode)],
) -> HashMap<&'static str, &'n SNode> {
    let mut fields: HashMap<&'static str, &SNode> = HashMap::new();
    for (key, value) in entries {
        let Some(name) = key.value.scalar_text() else {
            cx.positions.record("<key>", key);
            cx.error(
                Kind::UnknownKey,
                "<key>",
                "a key must be a plain name",
                "use one of the known keys",
            );
            continue;
        };
        cx.positions.record(&name, value);
        match TOP_KEYS.iter().find(|k| **k == name) {
            Some(k) => {
                fields.insert(k, value);
            }
            None => {
                cx.positions.record(&name, key);
                cx.error(
                    Kind::UnknownKey,
                    name.clone(),
                    format!("unknown key `{name}`"),
                    &format!("known keys are {}", backticked(TOP_KEYS)),
                );
            }
        }
    }
    fields
}

/// `case_sensitive_names`: `true` or `false` (absent: `false`).
fn read_case_sensitive(cx: &mut Context, node: Option<&SNode>) -> bool {
    match node {
        None => false,
        Some(node) => match node.value.scalar_text().as_deref() {
            Some("true") => true,
            Some("false") => false,
            _ => {
                cx.error(
                    Kind::Shape,
                    "case_sensitive_names",
                    "`case_sensitive_names` must be `true` or `false`",
                    "write `case_sensitive_names: true` or remove the key",
                );
                false
            }
        },
    }
}

pub(super) fn read_document(cx: &mut Context, root: &SNode) -> Option<DomainDoc> {
    cx.positions.record("", root);
    if let Node::Null = root.value {
        cx.error(
            Kind::File,
            "",
            "the file is empty",
            "a domain needs at least `name`, `truths` and `actions`; see domains/medical.yaml",
        );
        return None;
    }
    let Node::Map(entries) = &root.value else {
        cx.error(
            Kind::Shape,
            "",
            format!(
                "a domain file must be a mapping with `name`, `truths` and `actions`, found {}",
                root.value.kind()
            ),
            "start the file with `name: my-domain`; see domains/medical.yaml",
        );
        return None;
    };
    let fields = top_fields(cx, entries);
    let text_field = |cx: &mut Context, key: &str, required: bool| -> Option<String> {
        match fields.get(key) {
            Some(node) => read_name(cx, key, node),
            None if required => {
                cx.error(
                    Kind::MissingKey,
                    "",
                    format!("missing key `{key}`"),
                    &format!("add `{key}:` at the top level"),
                );
                None
            }
            None => None,
        }
    };
    let name = text_field(cx, "name", true);
    let title = text_field(cx, "title", false);
    let truth_noun = text_field(cx, "truth_noun", false);
    let truth_plural = text_field(cx, "truth_plural", false);
    let action_noun = text_field(cx, "action_noun", false);
    let action_plural = text_field(cx, "action_plural", false);
    let goal = text_field(cx, "goal", false);
    let case_sensitive_names = read_case_sensitive(cx, fields.get("case_sensitive_names").copied());

    let truths = match fields.get("truths") {
        Some(node) => read_name_list(cx, "truths", node),
        None => {
            cx.error(
                Kind::MissingKey,
                "",
                "missing key `truths`",
                "add `truths: [A, B, ...]`",
            );
            None
        }
    };
    let actions = match fields.get("actions") {
        Some(node) => read_actions(cx, node),
        None => {
            cx.error(
                Kind::MissingKey,
                "",
                "missing key `actions`",
                "add `actions:` with a list of actions",
            );
            None
        }
    };
    Some(DomainDoc {
        name: name?,
        title,
        truth_noun,
        truth_plural,
        action_noun,
        action_plural,
        goal,
        case_sensitive_names,
        truths: truths?,
        actions: actions?,
    })
}

fn backticked(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A scalar read as a name.
fn read_name(cx: &mut Context, path: &str, node: &SNode) -> Option<String> {
    cx.positions.record(path, node);
    match node.value.scalar_text() {
        Some(text) => Some(text),
        None => {
            cx.error(
                Kind::Shape,
                path,
                format!("expected a name, found {}", node.value.kind()),
                "write a plain string here",
            );
            None
        }
    }
}

/// A list of names; `null` reads as the empty list.
fn read_name_list(cx: &mut Context, path: &str, node: &SNode) -> Option<Vec<String>> {
    cx.positions.record(path, node);
    match &node.value {
        Node::Null => Some(Vec::new()),
        Node::Seq(items) => {
            let mut names = Vec::with_capacity(items.len());
            let mut ok = true;
            for (i, item) in items.iter().enumerate() {
                match read_name(cx, &format!("{path}[{i}]"), item) {
                    Some(name) => names.push(name),
                    None => ok = false,
                }
            }
            ok.then_some(names)
        }
        other => {
            cx.error(
                Kind::Shape,
                path,
                format!("expected a list of names, found {}", other.kind()),
                "write a list such as `[A, B]` (or `[]` for none)",
            );
            None
        }
    }
}

fn read_actions(cx: &mut Context, node: &SNode) -> Option<Vec<ActionDoc>> {
    let Node::Seq(items) = &node.value else {
        cx.error(
            Kind::Shape,
            "actions",
            format!("expected a list of actions, found {}", node.value.kind()),
            "write `actions:` followed by `- name: ...` entries",
        );
        return None;
    };
    let mut actions = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        match read_action(cx, &format!("actions[{i}]"), item) {
            Some(action) => actions.push(action),
            None => ok = false,
        }
    }
    ok.then_some(actions)
}

const ACTION_KEYS: &[&str] = &["name", "type", "unit", "states"];

fn read_action(cx: &mut Context, path: &str, node: &SNode) -> Option<ActionDoc> {
    cx.positions.record(path, node);
    let Node::Map(entries) = &node.value else {
        cx.error(
            Kind::Shape,
            path,
            format!(
                "an action must be a mapping with `name`, `type` and `states`, found {}",
                node.value.kind()
            ),
            "write `- name: ...` with `type:` and `states:` below it",
        );
        return None;
    };
    let mut fields: HashMap<&str, &SNode> = HashMap::new();
    for (key, value) in entries {
        let key_text = key.value.scalar_text().unwrap_or_default();
        match ACTION_KEYS.iter().find(|k| **k == key_text) {
            Some(k) => {
                fields.insert(k, value);
            }
            None => {
                let key_path = format!("{path}.{key_text}");
                cx.positions.record(&key_path, key);
                cx.error(
                    Kind::UnknownKey,
                    key_path,
                    format!("unknown key `{key_text}` in an action"),
                    &format!("known keys are {}", backticked(ACTION_KEYS)),
                );
            }
        }
    }
    let name = match fields.get("name") {
        Some(n) => read_name(cx, &format!("{path}.name"), n),
        None => {
            cx.error(
                Kind::MissingKey,
                path,
                "the action has no `name`",
                "add `name: ...`",
            );
            None
        }
    };
    let unit = fields
        .get("unit")
        .and_then(|n| read_name(cx, &format!("{path}.unit"), n));
    let kind = match fields.get("type") {
        Some(n) => {
            let kind_path = format!("{path}.type");
            let kind = read_name(cx, &kind_path, n)?;
            if parse_kind(&kind).is_none() {
                cx.error(
                    Kind::UnknownType,
                    kind_path,
                    format!("unknown action type `{kind}`"),
                    "use `str` (named states), `float` or `int` (range states)",
                );
                return None;
            }
            kind
        }
        None => {
            cx.error(
                Kind::MissingKey,
                path,
                "the action has no `type`",
                "add `type: str` (named states), `type: float` or `type: int` (range states)",
            );
            return None;
        }
    };
    let states_path = format!("{path}.states");
    let states = match fields.get("states") {
        Some(n) => read_states(cx, &states_path, &kind, n),
        None => {
            cx.error(
                Kind::MissingKey,
                path,
                "the action has no `states`",
                "add `states:`",
            );
            None
        }
    };
    Some(ActionDoc {
        name: name?,
        kind,
        unit,
        states: states?,
    })
}

pub(super) fn parse_kind(kind: &str) -> Option<ActionKind> {
    match kind {
        "str" => Some(ActionKind::Str),
        "float" => Some(ActionKind::Float),
        "int" => Some(ActionKind::Int),
        _ => None,
    }
}

fn read_states(cx: &mut Context, path: &str, kind: &str, node: &SNode) -> Option<StatesDoc> {
    cx.positions.record(path, node);
    if kind == "str" {
        let Node::Map(entries) = &node.value else {
            cx.error(
 Kind::Shape,
                path,
                format!(
                    "states of a `str` action must be a mapping `label: [ruled-out truths]`, found {}",
                    node.value.kind()
                ),
                "write e.g. `positive: []` and `negative: [COVID-19]` on their own lines",
            );
            return None;
        };
        let mut pairs = Vec::with_capacity(entries.len());
        let mut ok = true;
        for (key, value) in entries {
            let Some(label) = key.value.scalar_text() else {
                cx.positions.record(path, key);
                cx.error(
                    Kind::Shape,
                    path,
                    "a state label must be a name",
                    "write a plain label",
                );
                ok = false;
                continue;
            };
            let state_path = format!("{path}.{label}");
            cx.positions.record(&state_path, key);
            match read_name_list(cx, &state_path, value) {
                Some(list) => pairs.push((label, list)),
                None => ok = false,
            }
        }
        return ok.then_some(StatesDoc::Named(pairs));
    }
    let Node::Seq(items) = &node.value else {
        cx.error(
 Kind::Shape,
            path,
            format!(
                "states of a `{kind}` action must be a list of `{{range: [lo, hi], rules_out: [...]}}`, found {}",
                node.value.kind()
            ),
            "write `- range: [0.0, 1.1]` with `rules_out: [...]` below it for each state",
        );
        return None;
    };
    let mut ranges = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        match read_range_state(cx, &format!("{path}[{i}]"), item) {
            Some(r) => ranges.push(r),
            None => ok = false,
        }
    }
    ok.then_some(StatesDoc::Ranges(ranges))
}

fn read_range_state(cx: &mut Context, path: &str, node: &SNode) -> Option<RangeStateDoc> {
    cx.positions.record(path, node);
    let help = "write `- range: [lo, hi]` and `rules_out: [...]`";
    let Node::Map(entries) = &node.value else {
        cx.error(
            Kind::Shape,
            path,
            format!(
                "a range state must be a mapping with `range` and `rules_out`, found {}",
                node.value.kind()
            ),
            help,
        );
        return None;
    };
    let mut range = None;
    let mut rules_out = None;
    let mut ok = true;
    for (key, value) in entries {
        let key_text = key.value.scalar_text().unwrap_or_default();
        let key_path = format!("{path}.{key_text}");
        cx.positions.record(&key_path, value);
        match key_text.as_str() {
            "range" => range = read_range(cx, &key_path, value),
            "rules_out" => rules_out = read_name_list(cx, &key_path, value),
            _ => {
                cx.positions.record(&key_path, key);
                cx.error(
                    Kind::UnknownKey,
                    key_path,
                    format!("unknown key `{key_text}` in a range state"),
                    "known keys are `range` and `rules_out`",
                );
                ok = false;
            }
        }
    }
    if !entries
        .iter()
        .any(|(k, _)| k.value.scalar_text().as_deref() == Some("range"))
    {
        cx.error(Kind::MissingKey, path, "the state has no `range`", help);
    }
    if !entries
        .iter()
        .any(|(k, _)| k.value.scalar_text().as_deref() == Some("rules_out"))
    {
        cx.error(
            Kind::MissingKey,
            path,
            "the state has no `rules_out`",
            "add `rules_out: []` if it rules out nothing",
        );
    }
    if !ok {
        return None;
    }
    Some(RangeStateDoc {
        range: range?,
        rules_out: rules_out?,
    })
}

fn read_range(cx: &mut Context, path: &str, node: &SNode) -> Option<[f64; 2]> {
    let help = "write the range as `[lo, hi]` with two numbers";
    match &node.value {
        Node::Seq(items) if items.len() == 2 => {
            let lo = items[0].value.as_f64();
            let hi = items[1].value.as_f64();
            match (lo, hi) {
                (Some(lo), Some(hi)) => Some([lo, hi]),
                _ => {
                    cx.error(Kind::Range, path, "range bounds must be numbers", help);
                    None
                }
            }
        }
        other => {
            cx.error(
                Kind::Shape,
                path,
                format!("expected `[lo, hi]`, found {}", describe_len(other)),
                help,
            );
            None
        }
    }
}

fn describe_len(node: &Node) -> String {
    match node {
        Node::Seq(items) => format!("a list of {} items", items.len()),
        other => other.kind().to_string(),
    }
}

// ---------------------------------------------------------------------------
// Pass 3: document -> domain.
