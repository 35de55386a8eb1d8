//! The book checker: proves that a rendered knowledge book states every
//! rule-out fact of its instance and claims nothing false. It checks what
//! the book *claims*, in the forms the canonical sentences have; it does
//! not search prose for truth names.
//!
//! From the domain and the instance alone it re-derives every fact
//! (action, state, ruled-out truth) and renders, with [`super::vocab`],
//! the canonical sentence of every (action, state) — which names exactly
//! the instance truths that state rules out, or says it rules out nothing
//! — the index sentence of every truth and the sentence listing the
//! truths. Lines are compared whole (trimmed; a leading `- `/`* ` bullet
//! may be dropped).
//!
//! A line is a *claim* when it has one of these forms:
//! - a rule: it begins like a rule sentence of a domain action,
//!   `ACTION: observing ` or `ACTION: a value `;
//! - an index entry: it begins `TRUTH is ruled out by` for a domain truth;
//! - the truth list: it begins `The candidate PLURAL are:`;
//! - an item of a *claim list*: a list (lines with a `- `/`* ` bullet,
//!   blank lines between them allowed) that holds a canonical sentence is
//!   the structured part of the book, so every item of it is a claim.
//!
//! The checks:
//! 1. every canonical sentence is a line of the book, so every fact is
//!    stated, as an exclusion;
//! 2. every claim is a canonical sentence of the instance. A false twin (an
//!    (action, state) that rules something out said to rule out nothing, a
//!    truth that something rules out said to be ruled out by nothing) is
//!    reported as [`BookProblem::False`]; any other claim that is not
//!    canonical — a wrong rule-out or range, a confirmation, an invented
//!    action, state or truth, a falsified index entry — as
//!    [`BookProblem::Unverified`].
//!
//! Every other line is prose (headings, the goal, the note on a numeric
//! action's unit): it states no fact the checker could verify, and truth
//! names in it are not claims. A truth called `A`, `Index` or `rules out`,
//! or a goal, title, unit, noun or action name that contains a truth's
//! name, therefore never fails a correct book. Domain validation keeps the
//! forms unambiguous enough for this: names carry no line breaks or other
//! control characters, no surrounding whitespace.

use std::collections::HashSet;
use std::fmt;

use super::task::TaskView;
use super::vocab;

/// What a line in claim form claims to be (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// A rule of the domain action `action`.
    Rule { action: String },
    /// The index entry of the domain truth `truth`.
    Index { truth: String },
    /// The list of candidate truths.
    TruthList,
    /// An item of a list that holds canonical sentences.
    ListItem,
}

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
    /// KUMO's guarantee (every wrong candidate is ruled out by the actual
    /// outcome of some action) holds but is not a line.
    MissingGuarantee { expected: String },
    /// A line is the false twin of a canonical sentence.
    False { line: usize, text: String },
    /// A rule sentence whose list of truths parses two ways (a truth
    /// named `nothing`, or one that splits into other truths' names, not
    /// delimited): the reader cannot tell what it rules out.
    Ambiguous { text: String },
    /// A claim (a line in claim form) that is not a canonical sentence of
    /// the instance.
    Unverified {
        line: usize,
        text: String,
        claim: Claim,
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
            BookProblem::Ambiguous { text } => write!(
                f,
                "the rule sentence `{text}` can be read as two different lists of truths; quote the truth names (the renderer does so for such domains)"
            ),
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
            BookProblem::MissingGuarantee { expected } => write!(
                f,
                "the guarantee that every wrong candidate is ruled out is missing (expected the line `{expected}`)"
            ),
            BookProblem::False { line, text } => write!(f, "line {line} is false: `{text}`"),
            BookProblem::Unverified { line, text, claim } => {
                write!(f, "line {line} ")?;
                match claim {
                    Claim::Rule { action } => {
                        write!(f, "states a rule of `{action}` that the instance lacks")?
                    }
                    Claim::Index { truth } => {
                        write!(f, "is an index entry of `{truth}` that the instance lacks")?
                    }
                    Claim::TruthList => write!(f, "lists candidates other than the instance's")?,
                    Claim::ListItem => write!(
                        f,
                        "is in a list of rules but is none of the instance's sentences"
                    )?,
                }
                write!(f, ": `{text}`")
            }
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

/// A trimmed line without its list bullet, if it has one.
fn unbullet(line: &str) -> Option<&str> {
    line.strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .map(str::trim_start)
}

/// The claim form of `line` (trimmed, bullet dropped), if it has one.
fn claim_form(line: &str, task: &TaskView) -> Option<Claim> {
    let d = task.domain;
    for marker in [": observing ", ": a value "] {
        for (at, _) in line.match_indices(marker) {
            if let Some(a) = d.action_index(&line[..at]) {
                return Some(Claim::Rule {
                    action: d.actions[a].name.clone(),
                });
            }
        }
    }
    for (at, _) in line.match_indices(" is ruled out by") {
        if let Some(t) = d.truth_index(&line[..at]) {
            return Some(Claim::Index {
                truth: d.truths[t].clone(),
            });
        }
    }
    line.strip_prefix("The candidate ")
        .and_then(|rest| rest.strip_prefix(d.truth_plural.as_str()))
        .is_some_and(|rest| rest.starts_with(" are:"))
        .then_some(Claim::TruthList)
}

/// In how many ways (0, 1, or 2 meaning "two or more") `list` — what a
/// rule sentence says after `rules out ` — reads as `nothing` or as a list
/// `A`, `A and B`, `A, B and C` of `names`, each written in double quotes
/// when `quoted` (the domain quotes its truth names), else bare.
pub fn rule_list_parses(list: &str, names: &[&str], quoted: bool) -> usize {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum After {
        Start,
        Comma,
        And,
    }
    fn ways(
        list: &str,
        at: usize,
        after: After,
        names: &[&str],
        quoted: bool,
        memo: &mut std::collections::HashMap<(usize, u8), usize>,
    ) -> usize {
        let key = (at, after as u8);
        if let Some(&n) = memo.get(&key) {
            return n;
        }
        let rest = &list[at..];
        let mut total = 0;
        for name in names {
            let len = if quoted {
                (rest.starts_with('"')
                    && rest[1..].starts_with(name)
                    && rest[1 + name.len()..].starts_with('"'))
                .then_some(name.len() + 2)
            } else {
                rest.starts_with(name).then_some(name.len())
            };
            if let Some(len) = len {
                let next = at + len;
                let tail = &list[next..];
                if tail.is_empty() {
                    total += usize::from(after != After::Comma);
                } else if after != After::And {
                    if tail.starts_with(", ") {
                        total += ways(list, next + 2, After::Comma, names, quoted, memo);
                    }
                    if tail.starts_with(" and ") {
                        total += ways(list, next + 5, After::And, names, quoted, memo);
                    }
                }
                total = total.min(2);
            }
        }
        memo.insert(key, total);
        total
    }
    let nothing = usize::from(list == "nothing");
    let mut memo = std::collections::HashMap::new();
    (nothing + ways(list, 0, After::Start, names, quoted, &mut memo)).min(2)
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

/// Each rule sentence of the instance (an action's state and the truths
/// it rules out) must be in the book, unambiguous; each goes to
/// `canonical`, and its false twin (a state that rules out nothing said
/// to) to `false_twins`.
fn check_rules(
    task: &TaskView,
    present: &HashSet<&str, Fnv>,
    check: &mut BookCheck,
    canonical: &mut Vec<String>,
    false_twins: &mut Vec<String>,
) {
    let d = task.domain;
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
            let head = vocab::rule_sentence_head(task, pos, s);
            let list = expected
                .strip_prefix(head.as_str())
                .and_then(|l| l.strip_suffix('.'));
            let names: Vec<&str> = task.truths.iter().map(|&t| d.truths[t].as_str()).collect();
            if present.contains(expected.as_str())
                && list.is_some_and(|l| rule_list_parses(l, &names, d.quote_truths) > 1)
            {
                check.problems.push(BookProblem::Ambiguous {
                    text: expected.clone(),
                });
            }
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
}

/// The claim lists: runs of list items (blank lines between them allowed)
/// that hold a canonical sentence; `(first, last)` line indices.
fn claim_lists(lines: &[&str], is_canonical: &dyn Fn(&str) -> bool) -> Vec<(usize, usize)> {
    let mut claim_lists: Vec<(usize, usize)> = Vec::new();
    let mut run: Option<(usize, usize, bool)> = None; // (first, last, holds a canonical sentence)
    for (i, &line) in lines.iter().enumerate() {
        if line.is_empty() {
            continue;
        }
        if unbullet(line).is_some() {
            let holds = is_canonical(line);
            run = Some(match run {
                Some((first, _, any)) => (first, i, any || holds),
                None => (i, i, holds),
            });
        } else if let Some((first, last, true)) = run.take() {
            claim_lists.push((first, last));
        }
    }
    if let Some((first, last, true)) = run {
        claim_lists.push((first, last));
    }
    claim_lists
}

/// Checks `text` against the instance (see the module docs).
pub fn check_book(text: &str, task: &TaskView) -> BookCheck {
    let d = task.domain;
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    // Each line as written and without its bullet.
    let present: HashSet<&str, Fnv> = lines
        .iter()
        .flat_map(|&line| [Some(line), unbullet(line)])
        .flatten()
        .collect();
    let mut check = BookCheck::default();
    let mut canonical: Vec<String> = Vec::new();
    let mut false_twins: Vec<String> = Vec::new();

    check_rules(task, &present, &mut check, &mut canonical, &mut false_twins);
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
    // The guarantee is a claim about the observations: canonical where it
    // holds, false where some wrong candidate survives every outcome.
    let guarantee = vocab::guarantee_sentence(task);
    if task.every_wrong_truth_ruled_out() {
        if !present.contains(guarantee.as_str()) {
            check.problems.push(BookProblem::MissingGuarantee {
                expected: guarantee.clone(),
            });
        }
        canonical.push(guarantee);
    } else {
        false_twins.push(guarantee);
    }

    let canonical: HashSet<&str, Fnv> = canonical.iter().map(String::as_str).collect();
    let false_twins: HashSet<&str, Fnv> = false_twins.iter().map(String::as_str).collect();
    let is_canonical = |line: &str| {
        canonical.contains(line) || unbullet(line).is_some_and(|l| canonical.contains(l))
    };

    let claim_lists = claim_lists(&lines, &is_canonical);
    let in_claim_list = |i: usize| {
        let k = claim_lists.partition_point(|&(first, _)| first <= i);
        k > 0 && i <= claim_lists[k - 1].1
    };

    for (i, &line) in lines.iter().enumerate() {
        if line.is_empty() || is_canonical(line) {
            continue;
        }
        let bare = unbullet(line).unwrap_or(line);
        if false_twins.contains(bare) || false_twins.contains(line) {
            check.problems.push(BookProblem::False {
                line: i + 1,
                text: line.to_string(),
            });
            continue;
        }
        let claim = claim_form(bare, task).or_else(|| {
            let item = unbullet(line).is_some() && in_claim_list(i);
            item.then_some(Claim::ListItem)
        });
        if let Some(claim) = claim {
            check.problems.push(BookProblem::Unverified {
                line: i + 1,
                text: line.to_string(),
                claim,
            });
        }
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_list_that_reads_two_ways_is_counted_so() {
        let names = ["Flu", "Cold", "Flu and Cold", "nothing"];
        assert_eq!(rule_list_parses("Flu and Cold", &names, false), 2);
        assert_eq!(rule_list_parses("nothing", &names, false), 2);
        assert_eq!(rule_list_parses("Flu, Cold and nothing", &names, false), 1);
        assert_eq!(rule_list_parses("Flu, Cold", &names, false), 0);
        assert_eq!(rule_list_parses("Flu and Cold", &["Flu", "Cold"], false), 1);
        assert_eq!(rule_list_parses("\"Flu and Cold\"", &names, true), 1);
        assert_eq!(rule_list_parses("\"Flu\" and \"Cold\"", &names, true), 1);
        assert_eq!(rule_list_parses("nothing", &names, true), 1);
        assert_eq!(rule_list_parses("\"nothing\"", &names, true), 1);
    }

    #[test]
    fn bullets() {
        assert_eq!(unbullet("- Volts: a value"), Some("Volts: a value"));
        assert_eq!(unbullet("*   x"), Some("x"));
        assert_eq!(unbullet("-x"), None);
        assert_eq!(unbullet("---"), None);
    }
}
