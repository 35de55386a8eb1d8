//! A conservative checker for KUMO's own knowledge books, which an LLM
//! wrote from the rule-out table (`knowledge_book/<setting>/seed=<i>.txt`).
//!
//! Free prose cannot be checked exactly, so this is a heuristic, tuned to
//! give a book the benefit of the doubt: a failure it reports is a fact the
//! book really does not state (a lower bound on KUMO's book errors).
//!
//! Text is compared case-insensitively, with `_`, `*`, `` ` ``, `"` read as
//! spaces. A *sentence* is a line, or a part of a line ending in `!`, `?`
//! or `. ` (not after a word of three letters or fewer, as in `Dr. `). A fact (action a, state s, ruled-out truth t) counts as
//! **stated** when some sentence
//! - names t (its full name, the name without a parenthesised part, or
//!   that part, e.g. `GERD`) in a clause (split at `; `) that holds an
//!   exclusion cue (`rule out`, `rules out`, `ruled out`, `ruling out`,
//!   `rule-out`, `exclu…`, `eliminat…`), or the cue is in the parent line,
//!   and
//! - mentions s in the sentence or its parent line (a named state by its
//!   label, `_` read as a space; a range by both of its bounds as numbers),
//!   and
//! - mentions a in the sentence, its parent line, or its *section* (the
//!   nearest markdown heading above and every line under it up to the next
//!   heading: books organised per truth name the test in the section).
//!
//! A rule-out is **invented** when a clause with an exclusion cue and no
//! negation (`not`, `no`, `none`, `n't`, …) names an instance truth t, the
//! sentence pins down one action a (exactly one instance action named in
//! the sentence or its parent line, else in the section heading) and
//! exactly one state s of a (in the sentence or parent line, truth names
//! masked first), and s does not rule t out. Anything less certain is not
//! judged. A book fails on a missing fact or an invented rule-out.
//!
//! Besides these it lists *confirmation* sentences (a truth named
//! with `confirm`, `indicat`, `suggest`, `consistent with` or `points to`
//! and no exclusion cue in one clause) for the reader; they do not fail a book.

use super::task::TaskView;
use crate::domain::StateLabel;

const EXCLUSION: &[&str] = &[
    "rule out",
    "rules out",
    "ruled out",
    "ruling out",
    "rule-out",
    "exclu",
    "eliminat",
];
const CONFIRMATION: &[&str] = &[
    "confirm",
    "indicat",
    "suggest",
    "consistent with",
    "points to",
];

/// The outcome of checking one KUMO book.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KumoBookCheck {
    /// (action, state, ruled-out truth) facts the instance has.
    pub facts: usize,
    /// Facts the book does not state: (action, state, truth).
    pub missing: Vec<(String, String, String)>,
    /// Rule-outs the book states that are not facts: (1-based line,
    /// action, state, truth).
    pub invented: Vec<(usize, String, String, String)>,
    /// Sentences that present an outcome as confirming a truth:
    /// (1-based line, sentence).
    pub confirmations: Vec<(usize, String)>,
}

impl KumoBookCheck {
    pub fn is_ok(&self) -> bool {
        self.missing.is_empty() && self.invented.is_empty()
    }
}

fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '_' | '*' | '`' | '"' => out.push(' '),
            c => out.extend(c.to_lowercase()),
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `name` occurs in `text` at word boundaries.
fn mentions(text: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    text.match_indices(name).any(|(i, m)| {
        !word(text[..i].chars().next_back()) && !word(text[i + m.len()..].chars().next())
    })
}

/// A name, the name without a parenthesised part, and that part.
fn aliases(name: &str) -> Vec<String> {
    let full = normalize(name);
    let mut out = vec![full.clone()];
    if let (Some(open), Some(close)) = (full.find('('), full.rfind(')'))
        && open < close
    {
        let short = format!("{}{}", &full[..open], &full[close + 1..]);
        let short = short.trim().to_string();
        let inner = full[open + 1..close].trim().to_string();
        for alias in [short, inner] {
            if alias.len() >= 2 && !out.contains(&alias) {
                out.push(alias);
            }
        }
    }
    out
}

/// The unsigned numbers written in `text`.
fn numbers(text: &str) -> Vec<f64> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_digit()
                    || (bytes[i] == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
                    || (bytes[i] == b','
                        && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
                        && bytes.get(i + 2).is_some_and(u8::is_ascii_digit)
                        && bytes.get(i + 3).is_some_and(u8::is_ascii_digit)))
            {
                i += 1;
            }
            let digits: String = text[start..i].chars().filter(|&c| c != ',').collect();
            if let Ok(v) = digits.parse() {
                out.push(v);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Splits at `. `, except after a word of at most three letters
/// (`dr. crimson`, `mr.`, `vs.`, `e.g.`): splitting less only makes the
/// check more lenient.
fn split_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _) in text.match_indices(". ") {
        let word = text[start..i].rsplit(' ').next().unwrap_or("");
        if word.trim_start_matches('(').len() <= 3 {
            continue;
        }
        out.push(&text[start..=i]);
        start = i + 2;
    }
    out.push(&text[start..]);
    out
}

struct Sentence {
    line: usize,
    text: String,
    /// The parent line (nearest line above with less indentation, within
    /// the paragraph), normalized.
    parent: String,
    /// The markdown heading and the whole section under it, normalized.
    context: std::rc::Rc<str>,
    /// The markdown heading alone, normalized.
    heading: std::rc::Rc<str>,
}

/// The sentences of `text`, section by section (a section runs from a
/// markdown heading to the next one).
fn sentences(text: &str) -> Vec<Sentence> {
    let mut out = Vec::new();
    let mut section: Vec<(usize, &str)> = Vec::new();
    let mut heading = "";
    let lines: Vec<&str> = text.lines().collect();
    for (i, raw) in lines.iter().enumerate() {
        let is_heading = raw.trim_start().starts_with('#');
        if is_heading {
            section_sentences(heading, &section, &mut out);
            section.clear();
            heading = raw;
        } else {
            section.push((i + 1, raw));
        }
    }
    section_sentences(heading, &section, &mut out);
    out
}

fn section_sentences(heading: &str, section: &[(usize, &str)], out: &mut Vec<Sentence>) {
    let heading: std::rc::Rc<str> = normalize(heading).into();
    let mut context = heading.to_string();
    for (_, raw) in section {
        context.push_str(" | ");
        context.push_str(&normalize(raw));
    }
    let context: std::rc::Rc<str> = context.into();
    let mut paragraph_start = 0;
    for (k, (line, raw)) in section.iter().enumerate() {
        if raw.trim().is_empty() {
            paragraph_start = k + 1;
            continue;
        }
        let indent = raw.len() - raw.trim_start().len();
        let parent = section[paragraph_start..k]
            .iter()
            .rev()
            .find(|(_, l)| l.len() - l.trim_start().len() < indent)
            .map(|(_, l)| normalize(l))
            .unwrap_or_default();
        let norm = normalize(raw);
        for piece in norm.split_inclusive(['!', '?']).flat_map(split_sentences) {
            let piece = piece.trim();
            if !piece.is_empty() {
                out.push(Sentence {
                    line: *line,
                    text: piece.to_string(),
                    parent: parent.clone(),
                    context: context.clone(),
                    heading: heading.clone(),
                });
            }
        }
    }
}

/// Whether normalized `text` mentions a state: its label, or both bounds of
/// its range.
fn state_in(label: &StateLabel, text: &str) -> bool {
    match label {
        StateLabel::Named(label) => mentions(text, &normalize(label)),
        StateLabel::Range { lo, hi } => {
            let nums = numbers(text);
            let has = |x: f64| {
                nums.iter()
                    .any(|n| (n - x.abs()).abs() <= 1e-9 * (1.0 + n.abs()))
            };
            has(*lo) && has(*hi)
        }
    }
}

const NEGATION: &[&str] = &[
    " not ", "n't", "no ", "none", "neither", "cannot", "without",
];

/// Each instance truth with its aliases; an alias that is another
/// instance truth's own name (`LQR` beside `Linear Quadratic Regulator
/// (LQR)`) names that truth only.
fn truth_aliases(task: &TaskView) -> Vec<(usize, Vec<String>)> {
    let d = task.domain;
    task.truths
        .iter()
        .map(|&t| {
            let mut list = aliases(&d.truths[t]);
            let own = normalize(&d.truths[t]);
            list.retain(|a| {
                *a == own || !task.truths.iter().any(|&u| normalize(&d.truths[u]) == *a)
            });
            (t, list)
        })
        .collect()
}

/// The instance's rule-outs (action, state, truth) no sentence of the
/// book states, counting every rule-out in `facts`.
fn missing_facts(
    task: &TaskView,
    sentences: &[Sentence],
    truth_aliases: &[(usize, Vec<String>)],
    facts: &mut usize,
) -> Vec<(String, String, String)> {
    let d = task.domain;
    let names = |s: &str, list: &[String]| list.iter().any(|a| mentions(s, a));
    let cue = |s: &str| EXCLUSION.iter().any(|c| s.contains(c));
    let mut missing = Vec::new();
    for (pos, &a) in task.actions.iter().enumerate() {
        let action = &d.actions[a];
        let action_aliases = aliases(&action.name);
        for (si, state) in action.states.iter().enumerate() {
            let state_in = |s: &str| state_in(&state.label, s);
            for t in task.ruled_out(pos, si) {
                *facts += 1;
                let aliases = &truth_aliases
                    .iter()
                    .find(|(x, _)| *x == t)
                    .expect("instance truth")
                    .1;
                let stated = sentences.iter().any(|s| {
                    s.text
                        .split("; ")
                        .any(|clause| names(clause, aliases) && (cue(clause) || cue(&s.parent)))
                        && (state_in(&s.text) || state_in(&s.parent))
                        && (names(&s.text, &action_aliases)
                            || names(&s.parent, &action_aliases)
                            || names(&s.context, &action_aliases))
                });
                if !stated {
                    missing.push((
                        action.name.clone(),
                        state.label.to_string(),
                        d.truths[t].clone(),
                    ));
                }
            }
        }
    }
    missing
}

/// The instance truths an exclusion clause names once `action`'s name
/// and state labels are masked: longest names first, each masked once
/// seen, so `Expressionism` is not read inside `Structural Expressionism`
/// (action names are masked first: a truth may share one).
fn truths_named(
    clause: &str,
    action: &crate::domain::Action,
    action_names: &[String],
    by_length: &[(usize, &String)],
) -> Vec<usize> {
    let mut rest = clause.to_string();
    for alias in action_names {
        rest = rest.replace(alias.as_str(), " ");
    }
    for state in &action.states {
        if let StateLabel::Named(label) = &state.label {
            rest = rest.replace(normalize(label).as_str(), " ");
        }
    }
    let mut named_truths = Vec::new();
    for (t, alias) in by_length {
        if mentions(&rest, alias) {
            named_truths.push(*t);
            rest = rest.replace(alias.as_str(), " ");
        }
    }
    named_truths
}

/// Checks KUMO's book `text` against the instance (see the module docs).
pub fn check_kumo_book(text: &str, task: &TaskView) -> KumoBookCheck {
    let d = task.domain;
    let sentences = sentences(text);
    let truth_aliases = truth_aliases(task);
    let names = |s: &str, list: &[String]| list.iter().any(|a| mentions(s, a));
    let cue = |s: &str| EXCLUSION.iter().any(|c| s.contains(c));
    let mut check = KumoBookCheck::default();

    for s in &sentences {
        let confirms = |clause: &str| {
            CONFIRMATION.iter().any(|c| clause.contains(c))
                && !cue(clause)
                && truth_aliases.iter().any(|(_, a)| names(clause, a))
        };
        if s.text.split("; ").any(confirms) {
            check.confirmations.push((s.line, s.text.clone()));
        }
    }
    check.missing = missing_facts(task, &sentences, &truth_aliases, &mut check.facts);
    let mut by_length: Vec<(usize, &String)> = truth_aliases
        .iter()
        .flat_map(|(t, list)| list.iter().map(move |a| (*t, a)))
        .collect();
    by_length.sort_by_key(|(_, a)| std::cmp::Reverse(a.len()));
    let mut action_names: Vec<String> = task
        .actions
        .iter()
        .flat_map(|&a| aliases(&d.actions[a].name))
        .collect();
    action_names.sort_by_key(|a| std::cmp::Reverse(a.len()));
    // Invented rule-outs: an exclusion clause without negation naming an
    // instance truth, where the sentence pins down one action (named in the
    // sentence or its parent line, else in the heading) and exactly one of
    // its states (truth names masked first), and the rule is not a fact.
    for s in &sentences {
        let local = format!("{} | {}", s.text, s.parent);
        let named = |text: &str| -> Vec<usize> {
            (0..task.actions.len())
                .filter(|&p| names(text, &aliases(&d.actions[task.actions[p]].name)))
                .collect()
        };
        let mut acts = named(&local);
        if acts.is_empty() {
            acts = named(&s.heading);
        }
        let [pos] = acts[..] else { continue };
        let action = &d.actions[task.actions[pos]];
        let mut masked = local.clone();
        for (_, list) in &truth_aliases {
            for alias in list {
                masked = masked.replace(alias.as_str(), " ");
            }
        }
        let states_in = |text: &str| -> Vec<usize> {
            (0..action.states.len())
                .filter(|&si| state_in(&action.states[si].label, text))
                .collect()
        };
        // The same single state with and without truth names: a state
        // label that is also a truth name (`Fantasy`) leaves it ambiguous.
        let (states, unmasked) = (states_in(&masked), states_in(&local));
        let (&[si], true) = (&states[..], states == unmasked) else {
            continue;
        };
        for clause in s.text.split("; ") {
            if !cue(clause) || NEGATION.iter().any(|n| clause.contains(n)) {
                continue;
            }
            let mut named_truths = truths_named(clause, action, &action_names, &by_length);
            named_truths.dedup();
            for t in named_truths {
                if !action.states[si].rules_out.contains(t) {
                    check.invented.push((
                        s.line,
                        action.name.clone(),
                        action.states[si].label.to_string(),
                        d.truths[t].clone(),
                    ));
                }
            }
        }
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(normalize("**Normal** `x_y`"), "normal x y");
        assert_eq!(
            aliases("Gastroesophageal Reflux Disease (GERD)"),
            vec![
                "gastroesophageal reflux disease (gerd)",
                "gastroesophageal reflux disease",
                "gerd"
            ]
        );
        assert_eq!(
            numbers("0.0-5.6 and 1,000 B12"),
            vec![0.0, 5.6, 1000.0, 12.0]
        );
        assert!(mentions("a normal result", "normal"));
        assert_eq!(
            split_sentences("seen: rules out dr. crimson. next sentence. ok"),
            vec!["seen: rules out dr. crimson.", "next sentence.", "ok"]
        );
        assert!(!mentions("abnormal", "normal"));
    }
}
