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

//!
//! Files: this one (the types, the driver [`extract`] and the metadata),
//! [`variables`] (finding the truths, actions and outcomes variables),
//! [`action`] (one outcomes entry -> one [`ActionDoc`]) and [`names`]
//! (nouns, titles and default names from variable and file names).

mod action;
mod names;
mod variables;

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::eval::{Binding, Module, Value, ValueKind};
use super::{ImportError, Pos};
use crate::domain::{ActionDoc, DomainDoc, StatesDoc, plural};

use action::map_action;
pub use names::{default_name, singular};
use names::{title_case, words_of};
use variables::{find_actions, find_outcomes, find_truths, string_elements};

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
    /// Names of one kind differ only in letter case; kept, and the domain
    /// declares `case_sensitive_names: true`.
    CaseOnlyNames,
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

impl Imported {
    /// The line `kumo-gen import` prints for the domain imported from
    /// `file`: its sizes, the variables used and how many notes.
    pub fn summary(&self, file: &str) -> String {
        let (truths, actions, outcomes) = &self.variables;
        format!(
            "imported `{}` from `{file}`: {} truths (`{truths}`), {} actions (`{}`, `{outcomes}`), {} note{}",
            self.doc.name,
            self.doc.truths.len(),
            self.doc.actions.len(),
            actions.as_deref().unwrap_or("keys of the outcomes"),
            self.notes.len(),
            if self.notes.len() == 1 { "" } else { "s" },
        )
    }
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

/// Builds the document from an evaluated module: the outcomes variable,
/// then the truths, then the actions in list order, then the notes on
/// what no state rules out and on names that differ only in case.
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
    note_duplicates(&mut cx, module);

    let outcomes = find_outcomes(&cx, module, options)?;
    let outcome_pairs = outcome_entries(&cx, &outcomes)?;
    let outcome_of = outcome_index(&cx, &outcomes.name, outcome_pairs)?;
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

    let truths = listed_truths(&mut cx, truths_binding)?;
    let order = match actions_binding {
        Some(binding) => {
            listed_action_order(&mut cx, binding, &outcomes.name, outcome_pairs, &outcome_of)?
        }
        None => outcome_key_order(&mut cx, &outcomes, outcome_pairs),
    };
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
            (&truths.names, &truths.index),
        )? {
            actions.push(action);
        }
    }
    note_never_ruled_out(&mut cx, &truths, &actions);

    let mut doc = metadata(
        file,
        options,
        &truths_binding.name,
        actions_binding.map(|b| b.name.as_str()),
        truths.names,
        actions,
    );
    declare_case_only_names(&mut cx, &mut doc, &truths.pos, truths_binding.pos);
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

/// A note for each key a dict display repeats and each element a set
/// display repeats (Python keeps one).
fn note_duplicates(cx: &mut Ctx, module: &Module) {
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
}

/// The (action name, entry) pairs of the outcomes variable, which must be
/// a dict.
fn outcome_entries<'m>(
    cx: &Ctx,
    outcomes: &variables::Found<'m>,
) -> Result<&'m [(Value, Value)], ImportError> {
    let ValueKind::Dict(outcome_pairs) = &outcomes.value.kind else {
        return Err(cx.error(
            outcomes.value.pos,
            &outcomes.name,
            format!("`{}` must be a dict of actions, not a `{}`", outcomes.name, outcomes.value.type_name()),
            "point `--outcomes-var` at the dict mapping action names to `{'type': ..., 'states': ...}`",
        ));
    };
    Ok(outcome_pairs)
}

/// Each action name of the outcomes to its entry's index; every key must
/// be a string.
fn outcome_index<'m>(
    cx: &Ctx,
    outcomes_name: &str,
    outcome_pairs: &'m [(Value, Value)],
) -> Result<HashMap<&'m str, usize>, ImportError> {
    let mut outcome_of: HashMap<&str, usize> = HashMap::new();
    for (i, (k, _)) in outcome_pairs.iter().enumerate() {
        let Some(name) = k.as_str() else {
            return Err(cx.error(
                k.pos,
                outcomes_name,
                format!("action names must be strings, found `{}`", k.repr()),
                format!("make every key of `{outcomes_name}` an action name"),
            ));
        };
        outcome_of.insert(name, i);
    }
    Ok(outcome_of)
}

/// The truths kept, in list order: each name once, no empty name.
struct ListedTruths {
    names: Vec<String>,
    index: HashMap<String, usize>,
    /// Where each kept truth is listed.
    pos: Vec<Pos>,
}

/// The truths of the truths variable, with a note for each dropped one.
fn listed_truths(cx: &mut Ctx, binding: &Binding) -> Result<ListedTruths, ImportError> {
    let truth_values = string_elements(cx, binding, "truths")?;
    let mut truths = ListedTruths {
        names: Vec::new(),
        index: HashMap::new(),
        pos: Vec::new(),
    };
    for (i, (name, pos)) in truth_values.iter().enumerate() {
        let path = format!("{}[{i}]", binding.name);
        if name.trim().is_empty() {
            cx.note(
                *pos,
                path,
                NoteKind::EmptyTruth,
                "an empty truth name was dropped",
            );
            continue;
        }
        if let Some(&first) = truths.index.get(name.as_str()) {
            cx.note(
                *pos,
                path,
                NoteKind::DuplicateTruth,
                format!(
                    "truth `{name}` is listed again (first at line {}); kept once",
                    truths.pos[first].line
                ),
            );
            continue;
        }
        truths.index.insert(name.clone(), truths.names.len());
        truths.names.push(name.clone());
        truths.pos.push(*pos);
    }
    Ok(truths)
}

/// The outcomes entries in the order of the action list, then those with
/// outcomes the list lacks; each listed name once, names without outcomes
/// dropped (each noted).
fn listed_action_order(
    cx: &mut Ctx,
    binding: &Binding,
    outcomes_name: &str,
    outcome_pairs: &[(Value, Value)],
    outcome_of: &HashMap<&str, usize>,
) -> Result<Vec<(usize, Pos)>, ImportError> {
    let mut order: Vec<(usize, Pos)> = Vec::new();
    let mut listed: HashSet<usize> = HashSet::new();
    let names = string_elements(cx, binding, "actions")?;
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
                format!("action `{name}` has no entry in `{outcomes_name}`, so it has no states; dropped"),
            ),
        }
    }
    for (k, (key, _)) in outcome_pairs.iter().enumerate() {
        if !listed.contains(&k) {
            cx.note(
                key.pos,
                format!("{outcomes_name}[{}]", key.repr()),
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
    Ok(order)
}

/// Without an action list: the outcomes entries in their own order (noted).
fn outcome_key_order(
    cx: &mut Ctx,
    outcomes: &variables::Found<'_>,
    outcome_pairs: &[(Value, Value)],
) -> Vec<(usize, Pos)> {
    cx.note(
        outcomes.value.pos,
        outcomes.name.clone(),
        NoteKind::NoActionList,
        format!(
            "no list of action names found; the keys of `{}` are the actions",
            outcomes.name
        ),
    );
    outcome_pairs
        .iter()
        .enumerate()
        .map(|(k, (key, _))| (k, key.pos))
        .collect()
}

/// A note for each truth no state of `actions` rules out (kept).
fn note_never_ruled_out(cx: &mut Ctx, truths: &ListedTruths, actions: &[ActionDoc]) {
    let mut ruled: HashSet<&str> = HashSet::new();
    for a in actions {
        match &a.states {
            StatesDoc::Named(pairs) => pairs
                .iter()
                .for_each(|(_, r)| ruled.extend(r.iter().map(String::as_str))),
            StatesDoc::Ranges(ranges) => ranges
                .iter()
                .for_each(|s| ruled.extend(s.rules_out.iter().map(String::as_str))),
        }
    }
    for (i, t) in truths.names.iter().enumerate() {
        if !ruled.contains(t.as_str()) {
            cx.note(
                truths.pos[i],
                format!("truths[{i}] `{t}`"),
                NoteKind::NeverRuledOut,
                "no state rules this truth out; kept (it can only be told apart by elimination)",
            );
        }
    }
}

/// KUMO compares answers exactly, and its data has names of one kind that
/// differ only in case: kept, declared (`case_sensitive_names`), each one
/// noted at the truth's place (else at the truths variable, `fallback`).
fn declare_case_only_names(cx: &mut Ctx, doc: &mut DomainDoc, truth_pos: &[Pos], fallback: Pos) {
    for (path, first, later) in crate::domain::case_only_lookalikes(doc) {
        doc.case_sensitive_names = true;
        let pos = match path
            .strip_prefix("truths[")
            .and_then(|r| r.strip_suffix(']'))
        {
            Some(i) => i
                .parse::<usize>()
                .ok()
                .and_then(|i| truth_pos.get(i).copied()),
            None => None,
        }
        .unwrap_or(fallback);
        cx.note(
            pos,
            path,
            NoteKind::CaseOnlyNames,
            format!(
                "`{first}` and `{later}` differ only in letter case; both kept, and the domain declares `case_sensitive_names: true`"
            ),
        );
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
        case_sensitive_names: false,
        truths,
        actions,
    }
}
