//! Mapping an evaluated KUMO data file onto the domain document.
//!
//! In: the evaluated [`Module`] and [`ImportOptions`]. Out: a
//! [`DomainDoc`] and one [`Note`] per change. The truths, actions and
//! outcomes variables are taken from the options or found by shape: the
//! outcomes variable is a dict of dicts with `states`, the actions
//! variable the list of strings naming most of its keys, the truths
//! variable the list of strings most named by its rule-outs.
//!
//! The mapping (DESIGN.md "KUMO import"), each deviation noted:
//! - `(lo, hi)` keys become ranges (`float`; `int` when the file says
//!   `int`), bounds exactly as written: an inverted range holds no value
//!   and overlapping ranges resolve by state order, both as in KUMO's
//!   `lo <= value <= hi` reading (noted; the validator warns); ranges that
//!   are not finite are kept as `str` labels showing the range;
//! - scalar keys (`int` actions like 1, 2, 3), `dict` actions and `str`
//!   actions with range keys become `str` labels;
//! - duplicate truths and actions keep their first occurrence; listed
//!   actions without outcomes are dropped (they have no states); actions
//!   with outcomes but missing from the list are appended;
//! - rule-outs naming unknown truths are dropped (KUMO never samples
//!   them); a truth ruled out by every state of an action and an action
//!   with a single state are kept as they are (the validator warns; no
//!   state is ever added, so the search equals KUMO's);
//! - truths no state rules out are kept (the validator warns).

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::eval::{Module, Value, ValueKind, py_float_repr};
use super::{ImportError, Pos};
use crate::domain::{ActionDoc, DomainDoc, RangeStateDoc, StatesDoc, plural};

/// Metadata and variable names the Python file does not carry.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Domain name; default: the file stem without `_data`, e.g. `medical`.
    pub name: Option<String>,
    pub title: Option<String>,
    pub truth_noun: Option<String>,
    pub truth_plural: Option<String>,
    pub action_noun: Option<String>,
    pub action_plural: Option<String>,
    pub goal: Option<String>,
    /// Names of the variables holding truths, actions and outcomes;
    /// found by shape when absent.
    pub truths_var: Option<String>,
    pub actions_var: Option<String>,
    pub outcomes_var: Option<String>,
}

/// An imported domain with the notes on what the import changed.
#[derive(Clone, Debug)]
pub struct Imported {
    pub doc: DomainDoc,
    pub notes: Vec<Note>,
    /// The variables used, as (truths, actions, outcomes); `actions` is
    /// `None` when the outcomes' keys served as the action list.
    pub variables: (String, Option<String>, String),
}

/// What kind of change a note reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// A dict display repeats a key (Python keeps the last value).
    DuplicateKey,
    /// A set display repeats an element (Python keeps one).
    DuplicateElement,
    DuplicateTruth,
    EmptyTruth,
    DuplicateAction,
    /// A listed action without outcomes was dropped.
    ActionWithoutOutcomes,
    /// An action with outcomes but not in the action list was appended.
    UnlistedAction,
    /// No action list was found; the outcomes' keys are the actions.
    NoActionList,
    ActionWithoutStates,
    /// The action's `type` was missing or unknown.
    UnknownType,
    /// A range with lo > hi, kept as KUMO has it (it holds no value).
    InvertedRange,
    /// Ranges of one action overlap; kept, first match in state order.
    OverlappingRanges,
    /// Keys were written as `str` labels (scalar keys, `dict` type,
    /// ranges in a `str` action, overlapping or infinite ranges).
    Labels,
    /// Ranges of an `int` action with fractional bounds became `float`.
    FloatRanges,
    DuplicateLabel,
    EmptyLabel,
    DuplicateRuleOut,
    /// Rule-outs naming truths not in the truths list were dropped.
    UnknownTruth,
    /// A truth no state rules out (kept; the validator warns).
    NeverRuledOut,
}

/// One change the import made, located in the Python file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub pos: Pos,
    /// Where in the output, e.g. ``actions[3] `Sky Mapping` ``.
    pub path: String,
    pub message: String,
    pub kind: NoteKind,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.pos)?;
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}

struct Ctx<'a> {
    file: &'a str,
    source: &'a str,
    notes: Vec<Note>,
}

impl Ctx<'_> {
    fn note(
        &mut self,
        pos: Pos,
        path: impl Into<String>,
        kind: NoteKind,
        message: impl Into<String>,
    ) {
        self.notes.push(Note {
            pos,
            path: path.into(),
            message: message.into(),
            kind,
        });
    }

    fn error(
        &self,
        pos: Pos,
        path: &str,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> ImportError {
        ImportError::new(
            self.file,
            self.source,
            Some(pos),
            path,
            message,
            Some(help.into()),
        )
    }
}

/// Builds the document from an evaluated module.
pub fn extract(
    file: &str,
    source: &str,
    module: &Module,
    options: &ImportOptions,
) -> Result<Imported, ImportError> {
    let mut cx = Ctx {
        file,
        source,
        notes: Vec::new(),
    };
    for d in &module.duplicates {
        if d.dict_key {
            cx.note(
                d.repeat,
                "",
                NoteKind::DuplicateKey,
                format!(
                    "dict key `{}` repeats the key at line {}; as in Python, this later value replaces the earlier one",
                    d.repr, d.first.line
                ),
            );
        } else {
            cx.note(
                d.repeat,
                "",
                NoteKind::DuplicateElement,
                format!(
                    "set element `{}` repeats the one at line {}; kept once",
                    d.repr, d.first.line
                ),
            );
        }
    }

    let outcomes = find_outcomes(&cx, module, options)?;
    let ValueKind::Dict(outcome_pairs) = &outcomes.value.kind else {
        return Err(cx.error(
            outcomes.value.pos,
            &outcomes.name,
            format!("`{}` must be a dict of actions, not a `{}`", outcomes.name, outcomes.value.type_name()),
            "point `--outcomes-var` at the dict mapping action names to `{'type': ..., 'states': ...}`",
        ));
    };
    let mut outcome_of: HashMap<&str, usize> = HashMap::new();
    for (i, (k, _)) in outcome_pairs.iter().enumerate() {
        let Some(name) = k.as_str() else {
            return Err(cx.error(
                k.pos,
                &outcomes.name,
                format!("action names must be strings, found `{}`", k.repr()),
                format!("make every key of `{}` an action name", outcomes.name),
            ));
        };
        outcome_of.insert(name, i);
    }
    let outcome_names: Vec<&str> = outcome_pairs
        .iter()
        .filter_map(|(k, _)| k.as_str())
        .collect();

    let actions_binding = find_actions(&cx, module, options, &outcomes.name, &outcome_names)?;
    let truths_binding = find_truths(
        &cx,
        module,
        options,
        &outcomes.name,
        actions_binding.map(|b| b.name.as_str()),
        outcome_pairs,
    )?;

    // Truths.
    let truth_values = string_elements(&cx, truths_binding, "truths")?;
    let mut truths: Vec<String> = Vec::new();
    let mut truth_index: HashMap<String, usize> = HashMap::new();
    let mut truth_pos: Vec<Pos> = Vec::new();
    for (i, (name, pos)) in truth_values.iter().enumerate() {
        let path = format!("{}[{i}]", truths_binding.name);
        if name.trim().is_empty() {
            cx.note(
                *pos,
                path,
                NoteKind::EmptyTruth,
                "an empty truth name was dropped",
            );
            continue;
        }
        if let Some(&first) = truth_index.get(name.as_str()) {
            cx.note(
                *pos,
                path,
                NoteKind::DuplicateTruth,
                format!(
                    "truth `{name}` is listed again (first at line {}); kept once",
                    truth_pos[first].line
                ),
            );
            continue;
        }
        truth_index.insert(name.clone(), truths.len());
        truths.push(name.clone());
        truth_pos.push(*pos);
    }

    // The action list, then actions with outcomes the list lacks.
    let mut order: Vec<(usize, Pos)> = Vec::new();
    let mut listed: HashSet<usize> = HashSet::new();
    match actions_binding {
        Some(binding) => {
            let names = string_elements(&cx, binding, "actions")?;
            let mut seen: HashMap<&str, Pos> = HashMap::new();
            for (i, (name, pos)) in names.iter().enumerate() {
                let path = format!("{}[{i}]", binding.name);
                if let Some(first) = seen.get(name.as_str()) {
                    cx.note(
                        *pos,
                        path,
                        NoteKind::DuplicateAction,
                        format!(
                            "action `{name}` is listed again (first at line {}); kept once",
                            first.line
                        ),
                    );
                    continue;
                }
                seen.insert(name, *pos);
                match outcome_of.get(name.as_str()) {
                    Some(&k) => {
                        order.push((k, *pos));
                        listed.insert(k);
                    }
                    None => cx.note(
                        *pos,
                        path,
                        NoteKind::ActionWithoutOutcomes,
                        format!(
                            "action `{name}` has no entry in `{}`, so it has no states; dropped",
                            outcomes.name
                        ),
                    ),
                }
            }
            for (k, (key, _)) in outcome_pairs.iter().enumerate() {
                if !listed.contains(&k) {
                    cx.note(
                        key.pos,
                        format!("{}[{}]", outcomes.name, key.repr()),
                        NoteKind::UnlistedAction,
                        format!(
                            "action `{}` has outcomes but is not in `{}`; appended to the actions",
                            key.as_str().unwrap_or_default(),
                            binding.name
                        ),
                    );
                    order.push((k, key.pos));
                }
            }
        }
        None => {
            cx.note(
                outcomes.value.pos,
                outcomes.name.clone(),
                NoteKind::NoActionList,
                format!(
                    "no list of action names found; the keys of `{}` are the actions",
                    outcomes.name
                ),
            );
            order = outcome_pairs
                .iter()
                .enumerate()
                .map(|(k, (key, _))| (k, key.pos))
                .collect();
        }
    }

    let mut actions: Vec<ActionDoc> = Vec::new();
    for (k, _) in &order {
        let (key, entry) = &outcome_pairs[*k];
        let name = key.as_str().unwrap_or_default().to_string();
        let index = actions.len();
        if let Some(action) = map_action(
            &mut cx,
            &outcomes.name,
            index,
            &name,
            key,
            entry,
            (&truths, &truth_index),
        )? {
            actions.push(action);
        }
    }

    // Truths no state rules out.
    let mut ruled: HashSet<&str> = HashSet::new();
    for a in &actions {
        match &a.states {
            StatesDoc::Named(pairs) => pairs
                .iter()
                .for_each(|(_, r)| ruled.extend(r.iter().map(String::as_str))),
            StatesDoc::Ranges(ranges) => ranges
                .iter()
                .for_each(|s| ruled.extend(s.rules_out.iter().map(String::as_str))),
        }
    }
    let mut never = Vec::new();
    for (i, t) in truths.iter().enumerate() {
        if !ruled.contains(t.as_str()) {
            never.push((i, t.clone()));
        }
    }
    for (i, t) in never {
        cx.note(
            truth_pos[i],
            format!("truths[{i}] `{t}`"),
            NoteKind::NeverRuledOut,
            "no state rules this truth out; kept (it can only be told apart by elimination)",
        );
    }

    let doc = metadata(
        file,
        options,
        &truths_binding.name,
        actions_binding.map(|b| b.name.as_str()),
        truths,
        actions,
    );
    cx.notes.sort_by_key(|n| n.pos);
    Ok(Imported {
        doc,
        notes: cx.notes,
        variables: (
            truths_binding.name.clone(),
            actions_binding.map(|b| b.name.clone()),
            outcomes.name.clone(),
        ),
    })
}

struct Found<'m> {
    name: String,
    value: &'m Value,
}

fn binding_named<'m>(
    cx: &Ctx,
    module: &'m Module,
    name: &str,
    flag: &str,
) -> Result<&'m Value, ImportError> {
    match module.get(name) {
        Some(b) => Ok(&b.value),
        None => {
            let names: Vec<String> = module
                .bindings
                .iter()
                .map(|b| format!("`{}`", b.name))
                .collect();
            Err(ImportError::new(
                cx.file,
                cx.source,
                None,
                "",
                format!("`{flag} {name}`: the file assigns no variable `{name}`"),
                Some(if names.is_empty() {
                    "the file assigns no variables at all".to_string()
                } else {
                    format!("the file assigns {}", names.join(", "))
                }),
            ))
        }
    }
}

fn is_outcomes_shape(v: &Value) -> bool {
    match &v.kind {
        ValueKind::Dict(pairs) => {
            !pairs.is_empty()
                && pairs.iter().all(|(_, entry)| match &entry.kind {
                    ValueKind::Dict(fields) => {
                        fields.iter().any(|(k, _)| k.as_str() == Some("states"))
                    }
                    _ => false,
                })
        }
        _ => false,
    }
}

fn find_outcomes<'m>(
    cx: &Ctx,
    module: &'m Module,
    options: &ImportOptions,
) -> Result<Found<'m>, ImportError> {
    if let Some(name) = &options.outcomes_var {
        let value = binding_named(cx, module, name, "--outcomes-var")?;
        return Ok(Found {
            name: name.clone(),
            value,
        });
    }
    let candidates: Vec<_> = module
        .bindings
        .iter()
        .filter(|b| is_outcomes_shape(&b.value))
        .collect();
    let chosen = match candidates.as_slice() {
        [] => return Err(no_outcomes(cx, module)),
        [one] => *one,
        many => match many.iter().find(|b| b.name == "Outcomes") {
            Some(b) => *b,
            None => {
                let names: Vec<String> = many.iter().map(|b| format!("`{}`", b.name)).collect();
                return Err(cx.error(
                    many[1].pos,
                    "",
                    format!(
                        "several variables look like outcomes dicts: {}",
                        names.join(", ")
                    ),
                    "choose one with `--outcomes-var`",
                ));
            }
        },
    };
    Ok(Found {
        name: chosen.name.clone(),
        value: &chosen.value,
    })
}

/// The error when no variable has the outcomes shape: located at the
/// nearest miss (a dict of dicts whose entry lacks `states`, or a variable
/// called `Outcomes` of the wrong type) when there is one.
fn no_outcomes(cx: &Ctx, module: &Module) -> ImportError {
    const WANT: &str = "a dict mapping each action to `{'type': ..., 'states': {...}}`";
    let dict_of_dicts = |v: &Value| match &v.kind {
        ValueKind::Dict(pairs) => pairs
            .iter()
            .any(|(_, e)| matches!(e.kind, ValueKind::Dict(_))),
        _ => false,
    };
    let near = module
        .bindings
        .iter()
        .filter(|b| dict_of_dicts(&b.value))
        .min_by_key(|b| b.name != "Outcomes");
    if let Some(b) = near
        && let ValueKind::Dict(pairs) = &b.value.kind
        && let Some((key, entry)) = pairs.iter().find(|(_, e)| match &e.kind {
            ValueKind::Dict(fields) => !fields.iter().any(|(k, _)| k.as_str() == Some("states")),
            _ => true,
        })
    {
        let path = format!("{}[{}]", b.name, key.repr());
        let what = match &entry.kind {
            ValueKind::Dict(_) => "has no `states`".to_string(),
            _ => format!("is a `{}`, not a dict", entry.type_name()),
        };
        return cx.error(
            entry.pos,
            &path,
            format!("`{path}` {what}, so `{}` is not an outcomes dict", b.name),
            format!("give every action `{{'type': 'str', 'states': {{label: {{truths ruled out}}}}}}`; the outcomes are {WANT}"),
        );
    }
    if let Some(b) = module.get("Outcomes") {
        return cx.error(
            b.value.pos,
            "Outcomes",
            format!("`Outcomes` is a `{}`, not {WANT}", b.value.type_name()),
            "write the outcomes as a dict, or name the right variable with `--outcomes-var`",
        );
    }
    let names: Vec<String> = module
        .bindings
        .iter()
        .map(|b| format!("`{}` ({})", b.name, b.value.type_name()))
        .collect();
    ImportError::new(
        cx.file,
        cx.source,
        None,
        "",
        format!("found no outcomes dict ({WANT})"),
        Some(if names.is_empty() {
            "the file assigns no variables; is this a KUMO domain data file?".to_string()
        } else {
            format!(
                "the file assigns {}; name the outcomes with `--outcomes-var`",
                names.join(", ")
            )
        }),
    )
}

fn is_string_collection(v: &Value) -> bool {
    // One string suffices: a stray non-string element is then reported
    // at its position rather than hiding the variable.
    v.elements()
        .is_some_and(|items| items.iter().any(|x| x.as_str().is_some()))
}

fn find_actions<'m>(
    cx: &Ctx,
    module: &'m Module,
    options: &ImportOptions,
    outcomes_name: &str,
    outcome_names: &[&str],
) -> Result<Option<&'m super::eval::Binding>, ImportError> {
    if let Some(name) = &options.actions_var {
        binding_named(cx, module, name, "--actions-var")?;
        return Ok(module.get(name));
    }
    let keys: HashSet<&str> = outcome_names.iter().copied().collect();
    let mut best: Option<(&super::eval::Binding, usize)> = None;
    for b in &module.bindings {
        if b.name == outcomes_name || !is_string_collection(&b.value) {
            continue;
        }
        let score = b
            .value
            .elements()
            .unwrap_or_default()
            .iter()
            .filter(|x| x.as_str().is_some_and(|s| keys.contains(s)))
            .count();
        if score == 0 {
            continue;
        }
        let better = match best {
            None => true,
            Some((prev, s)) => {
                score > s || (score == s && b.name == "Actions" && prev.name != "Actions")
            }
        };
        if better {
            best = Some((b, score));
        }
    }
    Ok(best.map(|(b, _)| b))
}

fn find_truths<'m>(
    cx: &Ctx,
    module: &'m Module,
    options: &ImportOptions,
    outcomes_name: &str,
    actions_name: Option<&str>,
    outcome_pairs: &[(Value, Value)],
) -> Result<&'m super::eval::Binding, ImportError> {
    if let Some(name) = &options.truths_var {
        binding_named(cx, module, name, "--truths-var")?;
        return module
            .get(name)
            .ok_or_else(|| cx.error(Pos { line: 1, column: 1 }, "", "unreachable", ""));
    }
    // Every string named in a rule-out.
    let mut named: HashSet<&str> = HashSet::new();
    for (_, entry) in outcome_pairs {
        if let ValueKind::Dict(fields) = &entry.kind
            && let Some((_, states)) = fields.iter().find(|(k, _)| k.as_str() == Some("states"))
            && let ValueKind::Dict(states) = &states.kind
        {
            for (_, rules) in states {
                for t in rules.elements().unwrap_or_default() {
                    if let Some(s) = t.as_str() {
                        named.insert(s);
                    }
                }
            }
        }
    }
    let mut best: Option<(&super::eval::Binding, usize)> = None;
    for b in &module.bindings {
        if b.name == outcomes_name
            || Some(b.name.as_str()) == actions_name
            || !is_string_collection(&b.value)
        {
            continue;
        }
        let score = b
            .value
            .elements()
            .unwrap_or_default()
            .iter()
            .filter(|x| x.as_str().is_some_and(|s| named.contains(s)))
            .count();
        if score == 0 {
            continue;
        }
        let better = match best {
            None => true,
            Some((prev, s)) => {
                score > s || (score == s && b.name == "Truths" && prev.name != "Truths")
            }
        };
        if better {
            best = Some((b, score));
        }
    }
    // Without a rule-out naming a listed truth, fall back on the name.
    let fallback = || {
        module.bindings.iter().find(|b| {
            b.name.eq_ignore_ascii_case("truths")
                && b.name != outcomes_name
                && Some(b.name.as_str()) != actions_name
                && is_string_collection(&b.value)
        })
    };
    best.map(|(b, _)| b).or_else(fallback).ok_or_else(|| {
        ImportError::new(
            cx.file,
            cx.source,
            module.get(outcomes_name).map(|b| b.value.pos),
            outcomes_name,
            format!("found no truths list: no list or set of strings names a truth ruled out in `{outcomes_name}`"),
            Some("assign the truths as `Truths = [...]` before use, or name the variable with `--truths-var`".into()),
        )
    })
}

/// The strings of a list, set or tuple variable, with positions.
fn string_elements(
    cx: &Ctx,
    b: &super::eval::Binding,
    what: &str,
) -> Result<Vec<(String, Pos)>, ImportError> {
    let noun = if what == "truths" { "truth" } else { "action" };
    let Some(items) = b.value.elements() else {
        return Err(cx.error(
            b.value.pos,
            &b.name,
            format!(
                "`{}` must be a list or set of {noun} names, not a `{}`",
                b.name,
                b.value.type_name()
            ),
            format!(
                "point `--{}-var` at the list of {what}",
                if what == "truths" {
                    "truths"
                } else {
                    "actions"
                }
            ),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, v)| match v.as_str() {
            Some(s) => Ok((s.to_string(), v.pos)),
            None => Err(cx.error(
                v.pos,
                &format!("{}[{i}]", b.name),
                format!("{noun} names must be strings, found `{}`", v.repr()),
                "quote the name",
            )),
        })
        .collect()
}

/// A state key as read from the file.
enum Key {
    Label(String),
    /// An int, float, bool or None key.
    Scalar(String),
    Range {
        lo: f64,
        hi: f64,
        text: String,
    },
}

fn classify(key: &Value) -> Key {
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

fn number_text(v: &Value) -> String {
    match v.kind {
        ValueKind::Float(f) => py_float_repr(f),
        _ => v.repr(),
    }
}

fn is_integral(f: f64) -> bool {
    f.is_finite() && f.fract() == 0.0
}

/// Maps one outcomes entry; `None` when the action has no states at all.
#[allow(clippy::too_many_arguments)]
fn map_action(
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
    let ValueKind::Dict(fields) = &entry.kind else {
        return Err(cx.error(
            entry.pos,
            &src_path,
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
            &src_path,
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
        rule_outs.push(out);
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

    // Decide: ranges or labels.
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
            // Kept exactly as KUMO has them (DESIGN.md: numeric actions stay
            // numeric): KUMO reads a value as the first state whose
            // `lo <= value <= hi`, so an inverted range holds no value and
            // overlapping ranges resolve by state order. The validator
            // warns about both; synthesis only emits values that lie in
            // exactly one range.
            for (i, text) in inverted {
                let inner = text.trim_start_matches('[').trim_end_matches(']');
                let (a, b) = inner.split_once(", ").unwrap_or((inner, inner));
                cx.note(
                    state_pairs[i].0.pos,
                    path.clone(),
                    NoteKind::InvertedRange,
                    format!(
                        "range ({a}, {b}) is inverted; kept as in KUMO, where no value lies in it (the state is never observed)"
                    ),
                );
            }
            if let Some((a, b)) = overlapping(&spans) {
                cx.note(
                    state_pairs[b].0.pos,
                    path.clone(),
                    NoteKind::OverlappingRanges,
                    format!(
                        "ranges {} and {} overlap; kept as in KUMO, where a value belongs to the first range in state order that contains it",
                        key_text(&keys[a]),
                        key_text(&keys[b])
                    ),
                );
            }
            let integral = spans
                .iter()
                .all(|(lo, hi)| is_integral(*lo) && is_integral(*hi))
                && keys.iter().all(|k| match k {
                    Key::Range { text, .. } => !text.contains(['.', 'e']),
                    _ => true,
                });
            let kind = if declared_type == Some("int") {
                if integral {
                    "int"
                } else {
                    cx.note(
                        type_pos,
                        path.clone(),
                        NoteKind::FloatRanges,
                        "type `int` has ranges with fractional bounds; written as `float`",
                    );
                    "float"
                }
            } else {
                "float"
            };
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
        None => {
            let labels: Vec<String> = keys.iter().map(label_of).collect();
            if let Some(reason) = &label_reason {
                let shown: Vec<String> = labels
                    .iter()
                    .zip(&keys)
                    .filter(|(_, k)| !matches!(k, Key::Label(_)) || declared_type == Some("dict"))
                    .take(6)
                    .map(|(l, _)| format!("`{l}`"))
                    .collect();
                cx.note(
                    type_pos,
                    path.clone(),
                    NoteKind::Labels,
                    format!("{reason}; kept as `str` labels {}", shown.join(", ")),
                );
            }
            let pairs = unique_labels(cx, &path, state_pairs, labels, rule_outs);
            ActionDoc {
                name: name.to_string(),
                kind: "str".to_string(),
                unit: None,
                states: StatesDoc::Named(pairs),
            }
        }
    };

    // A truth ruled out by every state of the action, or an action with a
    // single state, is kept exactly as KUMO has it: the validator warns,
    // and synthesis never makes such a truth valid together with the
    // action (no observation of it would be consistent).
    Ok(Some(action))
}

fn key_text(k: &Key) -> String {
    match k {
        Key::Label(s) => format!("`{s}`"),
        Key::Scalar(s) => s.clone(),
        Key::Range { text, .. } => text.replace('[', "(").replace(']', ")"),
    }
}

fn label_of(k: &Key) -> String {
    match k {
        Key::Label(s) | Key::Scalar(s) => s.clone(),
        Key::Range { text, .. } => text.clone(),
    }
}

/// Makes labels non-empty and unique, noting each change.
fn unique_labels(
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
fn overlapping(spans: &[(f64, f64)]) -> Option<(usize, usize)> {
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

/// Title case of a slug: `medical-ind` -> `Medical Ind`.
fn title_case(s: &str) -> String {
    s.split(['-', '_', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `MedicalTests` -> `medical tests`.
fn words_of(var: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in var.chars() {
        if c == '_' {
            out.push(' ');
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            out.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        out.extend(c.to_lowercase());
    }
    out.trim().to_string()
}

/// English singular of a plural noun phrase (last word), best effort.
pub fn singular(plural: &str) -> String {
    let (head, last) = match plural.rsplit_once(' ') {
        Some((h, l)) => (format!("{h} "), l),
        None => (String::new(), plural),
    };
    let word = if let Some(stem) = last.strip_suffix("ies") {
        format!("{stem}y")
    } else if last.ends_with("sis") || last.ends_with("ss") || last.ends_with("us") {
        last.to_string()
    } else if let Some(stem) = last.strip_suffix("ses").filter(|s| s.ends_with('s')) {
        format!("{stem}s")
    } else if let Some(stem) = ["ches", "shes", "xes"].iter().find_map(|suf| {
        last.strip_suffix(suf)
            .map(|s| format!("{s}{}", &suf[..suf.len() - 2]))
    }) {
        stem
    } else if let Some(stem) = last.strip_suffix('s') {
        stem.to_string()
    } else {
        last.to_string()
    };
    format!("{head}{word}")
}

/// `medical_ind_data.py` -> `medical-ind`.
pub fn default_name(file: &str) -> String {
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    let stem = base.strip_suffix(".py").unwrap_or(base);
    let stem = stem.strip_suffix("_data").unwrap_or(stem);
    let mut slug = String::new();
    for c in stem.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-').to_string();
    if slug.is_empty() {
        "imported".into()
    } else {
        slug
    }
}

fn metadata(
    file: &str,
    options: &ImportOptions,
    truths_var: &str,
    actions_var: Option<&str>,
    truths: Vec<String>,
    actions: Vec<ActionDoc>,
) -> DomainDoc {
    let name = options.name.clone().unwrap_or_else(|| default_name(file));
    let noun_from = |var: Option<&str>, generic: &str| match var {
        Some(v) if !v.eq_ignore_ascii_case(&format!("{generic}s")) && !v.is_empty() => {
            singular(&words_of(v))
        }
        _ => generic.to_string(),
    };
    let truth_noun = options
        .truth_noun
        .clone()
        .unwrap_or_else(|| noun_from(Some(truths_var), "truth"));
    let action_noun = options
        .action_noun
        .clone()
        .unwrap_or_else(|| noun_from(actions_var, "action"));
    let truth_plural = options
        .truth_plural
        .clone()
        .unwrap_or_else(|| plural(&truth_noun));
    let action_plural = options
        .action_plural
        .clone()
        .unwrap_or_else(|| plural(&action_noun));
    let goal = options
        .goal
        .clone()
        .unwrap_or_else(|| format!("identify the {truth_noun}"));
    let title = options.title.clone().unwrap_or_else(|| title_case(&name));
    DomainDoc {
        name,
        title: Some(title),
        truth_noun: Some(truth_noun),
        truth_plural: Some(truth_plural),
        action_noun: Some(action_noun),
        action_plural: Some(action_plural),
        goal: Some(goal),
        truths,
        actions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nouns() {
        assert_eq!(singular(&words_of("Diseases")), "disease");
        assert_eq!(singular(&words_of("Abilities")), "ability");
        assert_eq!(singular(&words_of("Diagnosis")), "diagnosis");
        assert_eq!(singular(&words_of("MedicalTests")), "medical test");
        assert_eq!(singular("boxes"), "box");
        assert_eq!(plural("disease"), "diseases");
        assert_eq!(plural("ability"), "abilities");
        assert_eq!(plural("diagnosis"), "diagnoses");
        assert_eq!(plural("test"), "tests");
        assert_eq!(plural("day"), "days");
        assert_eq!(plural("match"), "matches");
        assert_eq!(default_name("../x/medical_ind_data.py"), "medical-ind");
        assert_eq!(default_name("Weird Name!.py"), "weird-name");
        assert_eq!(default_name("__.py"), "imported");
        assert_eq!(title_case("medical-ind"), "Medical Ind");
    }

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
