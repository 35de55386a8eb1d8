//! The canonical sentences of a knowledge book: the one place that phrases
//! a rule-out fact.
//!
//! Every (action, state) of an instance has exactly one *rule sentence*
//! that names the action, the state and every instance truth the state
//! rules out, as an exclusion (`Voltage: a value from 0 to 5 V rules out
//! Switch.`), or says that it rules out nothing. Every instance truth has
//! one *index sentence* naming every outcome that rules it out. The book
//! templates print these sentences (each on its own line); the checker
//! ([`super::check_book`]) builds them again from the domain and the
//! instance and looks them up, so it never parses prose (it also rejects
//! any other line in their forms).
//!
//! When a truth name would make a rule sentence read two ways (a truth
//! called `nothing`, or `Flu and Cold` beside `Flu` and `Cold`), every
//! truth name in the domain's rule sentences is put in double quotes
//! (`Domain::quote_truths`); other domains' books are unchanged.
//!
//! Wording uses the domain's vocabulary (truth plural) and the units of
//! numeric actions. Numbers print in shortest round-trip form.

use std::fmt::Write as _;

use super::task::{TaskView, format_number};
use crate::domain::{Action, StateLabel};

/// Joins names as English prose: `A`, `A and B`, `A, B and C`.
pub fn join_names<'n>(names: impl IntoIterator<Item = &'n str>, out: &mut String) {
    let names: Vec<&str> = names.into_iter().collect();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push_str(if i + 1 == names.len() { " and " } else { ", " });
        }
        out.push_str(name);
    }
}

/// How a state is named inside sentences: `` `closed` `` for a named
/// state, `from 0 to 5 V` for a range.
pub fn state_words(action: &Action, state: usize, out: &mut String) {
    match &action.states[state].label {
        StateLabel::Named(name) => {
            out.push('`');
            out.push_str(name);
            out.push('`');
        }
        StateLabel::Range { lo, hi } => {
            let _ = write!(out, "from {} to {}", format_number(*lo), format_number(*hi));
            if let Some(unit) = &action.unit {
                out.push(' ');
                out.push_str(unit);
            }
        }
    }
}

/// The start of a rule sentence, up to `rules out`.
fn rule_head(action: &Action, state: usize, out: &mut String) {
    out.push_str(&action.name);
    out.push_str(": ");
    match action.states[state].label {
        StateLabel::Named(_) => out.push_str("observing "),
        StateLabel::Range { .. } => out.push_str("a value "),
    }
    state_words(action, state, out);
    out.push_str(" rules out ");
}

/// The rule sentence of state `state` of instance action `pos`: what it
/// rules out among the instance's truths.
pub fn rule_sentence(task: &TaskView, pos: usize, state: usize) -> String {
    let action = &task.domain.actions[task.actions[pos]];
    let mut out = String::with_capacity(96);
    rule_head(action, state, &mut out);
    let names: Vec<&str> = task
        .ruled_out(pos, state)
        .map(|t| task.domain.truths[t].as_str())
        .collect();
    if names.is_empty() {
        out.push_str("nothing.");
    } else if task.domain.quote_truths {
        let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
        join_names(quoted.iter().map(String::as_str), &mut out);
        out.push('.');
    } else {
        join_names(names, &mut out);
        out.push('.');
    }
    out
}

/// The start of the rule sentence of state `state` of instance action
/// `pos`, up to and including `rules out `: what follows is the list.
pub fn rule_sentence_head(task: &TaskView, pos: usize, state: usize) -> String {
    let mut out = String::with_capacity(64);
    rule_head(&task.domain.actions[task.actions[pos]], state, &mut out);
    out
}

/// The false twin of an exclusion rule sentence: the same (action, state)
/// said to rule out nothing. A book must never contain it when the state
/// rules something out.
pub fn nothing_sentence(task: &TaskView, pos: usize, state: usize) -> String {
    let action = &task.domain.actions[task.actions[pos]];
    let mut out = String::with_capacity(64);
    rule_head(action, state, &mut out);
    out.push_str("nothing.");
    out
}

/// An outcome as a short cause: `` Continuity check `closed` ``,
/// `Voltage from 5 to 12 V`.
pub fn cause_words(task: &TaskView, pos: usize, state: usize, out: &mut String) {
    let action = &task.domain.actions[task.actions[pos]];
    out.push_str(&action.name);
    out.push(' ');
    state_words(action, state, out);
}

/// The index sentence of instance truth `truth` (a domain index): every
/// outcome of the instance's actions that rules it out, actions in
/// instance order, states in domain order.
pub fn index_sentence(task: &TaskView, truth: usize) -> String {
    let mut out = String::with_capacity(96);
    out.push_str(&task.domain.truths[truth]);
    let mut first = true;
    for (pos, &a) in task.actions.iter().enumerate() {
        for (s, state) in task.domain.actions[a].states.iter().enumerate() {
            if state.rules_out.contains(truth) {
                out.push_str(if first { " is ruled out by: " } else { "; " });
                first = false;
                cause_words(task, pos, s, &mut out);
            }
        }
    }
    if first {
        out.push_str(" is ruled out by no outcome in this book.");
    } else {
        out.push('.');
    }
    out
}

/// The false twin of an index sentence: the truth said to be ruled out by
/// nothing.
pub fn index_nothing_sentence(task: &TaskView, truth: usize) -> String {
    format!(
        "{} is ruled out by no outcome in this book.",
        task.domain.truths[truth]
    )
}

/// The sentence listing the instance's candidate truths.
pub fn truths_sentence(task: &TaskView) -> String {
    let mut out = String::with_capacity(128);
    out.push_str("The candidate ");
    out.push_str(&task.domain.truth_plural);
    out.push_str(" are: ");
    join_names(
        task.truths.iter().map(|&t| task.domain.truths[t].as_str()),
        &mut out,
    );
    out.push('.');
    out
}

/// KUMO's guarantee, the rule the golden player answers by: every
/// candidate except the valid one(s) is ruled out by the actual outcome of
/// at least one available action (DESIGN.md "The game"). So once no
/// remaining action can rule out a candidate still consistent with what
/// was observed, every such candidate left is valid and the player answers,
/// even when several are still consistent with the outcomes seen so far.
pub fn guarantee_sentence(task: &TaskView) -> String {
    let d = task.domain;
    let valid = if task.valid.len() > 1 { "ones" } else { "one" };
    format!(
        "Every candidate {} except the true {valid} is ruled out by the actual outcome of at least one of the available {}.",
        d.truth_noun, d.action_plural
    )
}

/// Upper-cases the first letter (`diseases` -> `Diseases`), leaving the
/// rest alone (unlike jinja's `capitalize`).
pub fn ucfirst(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_like_english() {
        let join = |v: &[&str]| {
            let mut s = String::new();
            join_names(v.iter().copied(), &mut s);
            s
        };
        assert_eq!(join(&[]), "");
        assert_eq!(join(&["A"]), "A");
        assert_eq!(join(&["A", "B"]), "A and B");
        assert_eq!(join(&["A", "B", "C"]), "A, B and C");
        assert_eq!(ucfirst("diagnostic tests"), "Diagnostic tests");
        assert_eq!(ucfirst("éclair"), "Éclair");
    }
}
