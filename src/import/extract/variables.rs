//! Finding the variables of a KUMO data file: the outcomes variable (a
//! dict of dicts with `states`), the action list (the list of strings
//! naming most of its keys) and the truth list (the list of strings most
//! named by its rule-outs), or the ones the options name.

use std::collections::HashSet;

use super::{Ctx, ImportOptions};
use crate::import::eval::{Module, Value, ValueKind};
use crate::import::{ImportError, Pos};

pub(super) struct Found<'m> {
    pub(super) name: String,
    pub(super) value: &'m Value,
}

pub(super) fn binding_named<'m>(
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

pub(super) fn is_outcomes_shape(v: &Value) -> bool {
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

pub(super) fn find_outcomes<'m>(
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
pub(super) fn no_outcomes(cx: &Ctx, module: &Module) -> ImportError {
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

pub(super) fn is_string_collection(v: &Value) -> bool {
    // One string suffices: a stray non-string element is then reported
    // at its position rather than hiding the variable.
    v.elements()
        .is_some_and(|items| items.iter().any(|x| x.as_str().is_some()))
}

pub(super) fn find_actions<'m>(
    cx: &Ctx,
    module: &'m Module,
    options: &ImportOptions,
    outcomes_name: &str,
    outcome_names: &[&str],
) -> Result<Option<&'m crate::import::eval::Binding>, ImportError> {
    if let Some(name) = &options.actions_var {
        binding_named(cx, module, name, "--actions-var")?;
        return Ok(module.get(name));
    }
    let keys: HashSet<&str> = outcome_names.iter().copied().collect();
    let mut best: Option<(&crate::import::eval::Binding, usize)> = None;
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

pub(super) fn find_truths<'m>(
    cx: &Ctx,
    module: &'m Module,
    options: &ImportOptions,
    outcomes_name: &str,
    actions_name: Option<&str>,
    outcome_pairs: &[(Value, Value)],
) -> Result<&'m crate::import::eval::Binding, ImportError> {
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
    let mut best: Option<(&crate::import::eval::Binding, usize)> = None;
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
pub(super) fn string_elements(
    cx: &Ctx,
    b: &crate::import::eval::Binding,
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
