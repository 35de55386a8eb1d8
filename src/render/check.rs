//! The book checker: proves that a rendered knowledge book states every
//! rule-out fact of its instance and no false one, without parsing prose.
//!
//! From the domain and the instance alone it re-derives every fact
//! (action, state, ruled-out truth) and renders, with [`super::vocab`],
//! the canonical sentence of every (action, state) — which names exactly
//! the instance truths that state rules out, or says it rules out nothing
//! — the index sentence of every truth and the sentence listing the
//! truths. Then, comparing whole lines (trimmed, a leading `- `/`* `
//! bullet dropped):
//!
//! 1. every canonical sentence must be a line of the book, so every fact is
//!    stated, as an exclusion;
//! 2. no line may be the false twin of a canonical sentence (an
//!    (action, state) that rules something out said to rule out nothing, a
//!    truth that something rules out said to be ruled out by nothing);
//! 3. every other line must name no instance truth (action names are
//!    masked first, as `COVID-19 PCR Test` names the truth `COVID-19`), so
//!    a confirmation, an invented rule-out or a rewording of a rule cannot
//!    hide in the prose around the canonical sentences.
//!
//! Truth names are matched case-sensitively at word boundaries.

use std::collections::HashSet;

use std::fmt;

use super::task::TaskView;
use super::vocab;

/// One way a book fails its instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BookProblem {
    /// The canonical sentence of an (action, state) is not a line: its
    /// facts (`truths`, maybe none) are not stated.
    MissingRule {
        action: String,
        state: String,
        truths: Vec<String>,
        expected: String,
    },
    /// The index sentence of a truth is not a line.
    MissingIndex { truth: String, expected: String },
    /// The sentence listing the truths is not a line.
    MissingTruthList { expected: String },
    /// A line is the false twin of a canonical sentence.
    False { line: usize, text: String },
    /// A line that is not a canonical sentence names a truth.
    Unverified {
        line: usize,
        text: String,
        truth: String,
    },
}

impl fmt::Display for BookProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BookProblem::MissingRule {
                action,
                state,
                truths,
                expected,
            } => {
                if truths.is_empty() {
                    write!(
                        f,
                        "`{action}` state `{state}` is not said to rule out nothing"
                    )?;
                } else {
                    write!(
                        f,
                        "`{action}` state `{state}`: the rule-out of {} is not stated",
                        truths
                            .iter()
                            .map(|t| format!("`{t}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )?;
                }
                write!(f, " (expected the line `{expected}`)")
            }
            BookProblem::MissingIndex { truth, expected } => write!(
                f,
                "the index entry of `{truth}` is missing (expected the line `{expected}`)"
            ),
            BookProblem::MissingTruthList { expected } => {
                write!(
                    f,
                    "the list of truths is missing (expected the line `{expected}`)"
                )
            }
            BookProblem::False { line, text } => write!(f, "line {line} is false: `{text}`"),
            BookProblem::Unverified { line, text, truth } => write!(
                f,
                "line {line} names `{truth}` but is not a canonical rule-out sentence: `{text}`"
            ),
        }
    }
}

/// The outcome of checking one book.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BookCheck {
    /// (action, state, ruled-out truth) facts the instance has.
    pub facts: usize,
    /// States of instance actions that rule out no instance truth.
    pub empty_states: usize,
    pub problems: Vec<BookProblem>,
}

impl BookCheck {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// A line as compared: trimmed, without a leading list bullet.
fn normalize(line: &str) -> &str {
    let line = line.trim();
    line.strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .unwrap_or(line)
        .trim_start()
}

/// Offsets where `name` occurs in `text` with no letter, digit or `_` on
/// either side.
fn word_matches<'t>(text: &'t str, name: &'t str) -> impl Iterator<Item = usize> + 't {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(name)
        .filter(move |(i, m)| {
            !word(text[..*i].chars().next_back()) && !word(text[i + m.len()..].chars().next())
        })
        .map(|(i, _)| i)
}

/// A fast multiplicative hash for the line sets, eight bytes a step: the
/// keys are short and a slow path on collisions is harmless here.
#[derive(Default, Clone, Copy)]
struct Fnv;

struct FnvHasher(u64);

impl std::hash::BuildHasher for Fnv {
    type Hasher = FnvHasher;
    fn build_hasher(&self) -> FnvHasher {
        FnvHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0 ^ u64::from_le_bytes(word))
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .rotate_left(29);
        }
    }
}

/// Checks `text` against the instance (see the module docs).
pub fn check_book(text: &str, task: &TaskView) -> BookCheck {
    let d = task.domain;
    let lines: Vec<&str> = text.lines().map(normalize).collect();
    let present: HashSet<&str, Fnv> = lines.iter().copied().collect();
    let mut check = BookCheck::default();
    let mut canonical: Vec<String> = Vec::new();
    let mut false_twins: Vec<String> = Vec::new();

    for (pos, &a) in task.actions.iter().enumerate() {
        let action = &d.actions[a];
        for s in 0..action.states.len() {
            let truths: Vec<String> = task
                .ruled_out(pos, s)
                .map(|t| d.truths[t].clone())
                .collect();
            if truths.is_empty() {
                check.empty_states += 1;
            } else {
                check.facts += truths.len();
                false_twins.push(vocab::nothing_sentence(task, pos, s));
            }
            let expected = vocab::rule_sentence(task, pos, s);
            if !present.contains(expected.as_str()) {
                check.problems.push(BookProblem::MissingRule {
                    action: action.name.clone(),
                    state: action.states[s].label.to_string(),
                    truths,
                    expected: expected.clone(),
                });
            }
            canonical.push(expected);
        }
    }
    for &t in task.truths {
        let expected = vocab::index_sentence(task, t);
        if !present.contains(expected.as_str()) {
            check.problems.push(BookProblem::MissingIndex {
                truth: d.truths[t].clone(),
                expected: expected.clone(),
            });
        }
        let twin = vocab::index_nothing_sentence(task, t);
        if twin != expected {
            false_twins.push(twin);
        }
        canonical.push(expected);
    }
    let list = vocab::truths_sentence(task);
    if !present.contains(list.as_str()) {
        check.problems.push(BookProblem::MissingTruthList {
            expected: list.clone(),
        });
    }
    canonical.push(list);

    let canonical: HashSet<&str, Fnv> = canonical.iter().map(String::as_str).collect();
    let false_twins: HashSet<&str, Fnv> = false_twins.iter().map(String::as_str).collect();
    // The other lines, joined, so each name is searched for once per book.
    let mut rest = String::new();
    let mut starts: Vec<(usize, usize)> = Vec::new(); // (offset in `rest`, line index)
    for (i, &line) in lines.iter().enumerate() {
        if line.is_empty() || canonical.contains(line) {
            continue;
        }
        if false_twins.contains(line) {
            check.problems.push(BookProblem::False {
                line: i + 1,
                text: line.to_string(),
            });
            continue;
        }
        starts.push((rest.len(), i));
        rest.push_str(line);
        rest.push('\n');
    }
    // A truth named inside an action name (`COVID-19 PCR Test`) does not
    // count: each hit is checked against the action names on its line.
    let action_names: Vec<&str> = task
        .actions
        .iter()
        .map(|&a| d.actions[a].name.as_str())
        .collect();
    let mut flagged: Vec<(usize, usize)> = Vec::new(); // (line index, truth)
    for &t in task.truths {
        let name = d.truths[t].as_str();
        for at in word_matches(&rest, name) {
            let k = starts.partition_point(|&(offset, _)| offset <= at) - 1;
            let (start, line) = starts[k];
            let text = &rest[start..start + lines[line].len()];
            let (from, to) = (at - start, at - start + name.len());
            let inside_action = action_names.iter().any(|a| {
                text.match_indices(a)
                    .any(|(i, m)| i <= from && to <= i + m.len())
            });
            if !inside_action && !flagged.iter().any(|&(l, _)| l == line) {
                flagged.push((line, t));
            }
        }
    }
    flagged.sort_unstable();
    for (line, t) in flagged {
        check.problems.push(BookProblem::Unverified {
            line: line + 1,
            text: lines[line].to_string(),
            truth: d.truths[t].clone(),
        });
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_boundaries() {
        let names = |text, name| word_matches(text, name).next().is_some();
        assert!(names("rules out Lamp.", "Lamp"));
        assert!(!names("Lamps are fine", "Lamp"));
        assert!(!names("a Lamp_2", "Lamp"));
        assert!(names("COVID-19, and", "COVID-19"));
        assert!(!names("lamp", "Lamp"));
        assert_eq!(
            word_matches("Lamp x Lamp", "Lamp").collect::<Vec<_>>(),
            vec![0, 7]
        );
        assert_eq!(normalize("  - Volts: a value"), "Volts: a value");
        assert_eq!(normalize("* x"), "x");
    }
}
