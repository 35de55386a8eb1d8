//! The rules for names a player reads and types: truths, actions and the
//! states of one action (DESIGN.md "Domain config"), and the domain's
//! vocabulary (title, goal, nouns, units).
//!
//! In: a [`DomainDoc`]. Out: [`NameProblem`]s with the document path of
//! each offending name; `compile` turns them into located diagnostics.
//!
//! A task is unwinnable when the player cannot name its answer or cannot
//! tell two names apart, and a book is broken when a name splits its lines.
//! So a name must not be empty, must not start or end with whitespace (an
//! answer is stripped before it is compared), must hold no control
//! character or line separator, no bidirectional formatting character
//! (U+202A..U+202E, U+2066..U+2069, U+200E, U+200F, U+061C: they reorder
//! how text is displayed, so the name a player sees is not the one to
//! type), no answer tag (`<ANSWER>`, `</ANSWER>`, any case: the answer is
//! cut at the tags) and no `${` (KUMO's answer parser keeps only what
//! follows it). Two truths, two actions or two states of one action must
//! differ after Unicode canonical caseless matching (NFD, full case
//! folding, then NFC; Unicode D145): `Flu` and `flu`, or `é` written
//! precomposed and decomposed, are one name to a reader. Vocabulary text is
//! only read, so it only must hold no control, separator or bidi
//! character.
//!
//! Empty names and exact duplicates are reported by `compile` itself; this
//! module skips them so each problem is reported once.

use std::collections::HashMap;

use caseless::Caseless;
use unicode_normalization::UnicodeNormalization;

use super::document::{DomainDoc, StatesDoc};

/// One bad name: where it is, what is wrong, how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameProblem {
    pub path: String,
    pub message: String,
    pub help: String,
    /// A warning, not an error: names that differ only in letter case in
    /// a domain with `case_sensitive_names: true`.
    pub warning: bool,
}

/// Characters that reorder displayed text: bidi embeddings, overrides,
/// isolates and marks.
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
    )
}

/// Control characters and the Unicode line and paragraph separators: each
/// breaks a line or prints as nothing.
fn is_line_breaking(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{85}')
}

/// `name` as diagnostics print it: control, separator and bidi characters
/// as `\u{..}`, so a message never reorders or breaks the terminal line.
pub fn shown(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if is_line_breaking(c) || is_bidi_control(c) {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The key two names share when a reader cannot tell them apart: Unicode
/// canonical caseless matching (D145), `NFD(fold(NFD(x)))`, recomposed.
pub fn lookalike_key(name: &str) -> String {
    name.nfd().default_case_fold().nfc().collect()
}

/// The first character-level problem of text that is only read (a title,
/// a goal, a noun, a unit): (message, help).
fn text_problem(text: &str) -> Option<(String, &'static str)> {
    if let Some(c) = text.chars().find(|&c| is_line_breaking(c)) {
        let only_trailing = !text.trim_end_matches('\n').chars().any(is_line_breaking);
        let help = if only_trailing {
            "write it on one line; a YAML block scalar (`|` or `>`) keeps its final line break unless written `|-` or `>-`"
        } else {
            "remove it: text of the domain is printed on one line"
        };
        return Some((
            format!("contains the {} U+{:04X}", char_kind(c), c as u32),
            help,
        ));
    }
    if let Some(c) = text.chars().find(|&c| is_bidi_control(c)) {
        return Some((
            format!(
                "contains the bidirectional formatting character U+{:04X}",
                c as u32
            ),
            "remove it: it reorders how the text is displayed",
        ));
    }
    None
}

fn char_kind(c: char) -> &'static str {
    if c.is_control() {
        "control character"
    } else {
        "line separator"
    }
}

/// The first problem of a name a player must read and type, if any:
/// (message, help). Empty names are `compile`'s to report.
fn name_problem(name: &str) -> Option<(String, &'static str)> {
    if name.trim().is_empty() {
        return None;
    }
    if name.trim() != name {
        return Some((
            "starts or ends with whitespace".into(),
            "remove the whitespace: answers are compared after stripping it, so this name could never be matched",
        ));
    }
    if let Some(c) = name.chars().find(|&c| is_line_breaking(c)) {
        return Some((
            format!("contains the {} U+{:04X}", char_kind(c), c as u32),
            "remove it: a name is printed and answered on one line",
        ));
    }
    if let Some(c) = name.chars().find(|&c| is_bidi_control(c)) {
        return Some((
            format!(
                "contains the bidirectional formatting character U+{:04X}",
                c as u32
            ),
            "remove it: it reorders how the name is displayed, so the name a player sees is not the name to type",
        ));
    }
    let lower = name.to_ascii_lowercase();
    if let Some(tag) = ["<answer>", "</answer>"]
        .into_iter()
        .find(|t| lower.contains(t))
    {
        return Some((
            format!("contains the answer tag `{}`", tag.to_ascii_uppercase()),
            "rename it: a reply is cut at the answer tags, so this name could never be answered",
        ));
    }
    if name.contains("${") {
        return Some((
            "contains `${`".into(),
            "rename it: KUMO's answer parser keeps only what follows `${`, so this name could never be answered",
        ));
    }
    None
}

/// Names of one kind, checked one by one and against each other.
struct Group<'a> {
    what: &'static str,
    /// `case_sensitive_names`: names that differ only in case are a
    /// warning (names that only encode the same characters differently
    /// stay an error: they look identical).
    case_sensitive: bool,
    /// Look-alike key -> (first name, its path).
    seen: HashMap<String, (&'a str, String)>,
}

impl<'a> Group<'a> {
    fn new(what: &'static str, case_sensitive: bool) -> Self {
        Group {
            what,
            case_sensitive,
            seen: HashMap::new(),
        }
    }

    fn check(&mut self, name: &'a str, path: String, out: &mut Vec<NameProblem>) {
        if let Some((message, help)) = name_problem(name) {
            out.push(NameProblem {
                message: format!("{} `{}` {message}", self.what, shown(name)),
                help: help.into(),
                path,
                warning: false,
            });
            return;
        }
        if name.trim().is_empty() {
            return;
        }
        match self.seen.get(&lookalike_key(name)) {
            // An exact duplicate: `compile` reports it.
            Some((first, _)) if *first == name => {}
            Some((first, first_path)) => {
                let same_text = name.nfc().eq(first.nfc());
                let warning = self.case_sensitive && !same_text;
                let help = if same_text {
                    "rename one of them: they are the same text encoded two ways, so a reader cannot tell them apart"
                } else if warning {
                    "rename one of them if you can: answers are compared exactly, so a player must type the exact case"
                } else {
                    "rename one of them: a reader cannot tell them apart (a domain whose names must keep both spellings, as KUMO's data does, may declare `case_sensitive_names: true`)"
                };
                out.push(NameProblem {
                    message: format!(
                        "{} `{}` looks the same as {} `{}` (at `{first_path}`): they differ only in {}",
                        self.what,
                        shown(name),
                        self.what,
                        shown(first),
                        if same_text {
                            "how their characters are encoded"
                        } else {
                            "letter case (or how their characters are encoded)"
                        }
                    ),
                    help: help.into(),
                    path,
                    warning,
                })
            }
            None => {
                self.seen.insert(lookalike_key(name), (name, path));
            }
        }
    }
}

/// Pairs of names of one kind in `doc` (truths, actions, states of one
/// action) that differ only in letter case — not in encoding, not at all —
/// as (path of the later name, the two names). What the importer declares
/// with `case_sensitive_names: true` when KUMO's data has them.
pub fn case_only_lookalikes(doc: &DomainDoc) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut group = |names: Vec<(&str, String)>| {
        let mut seen: HashMap<String, &str> = HashMap::new();
        for (name, path) in names {
            match seen.get(&lookalike_key(name)) {
                Some(first) if !first.nfc().eq(name.nfc()) => {
                    out.push((path, first.to_string(), name.to_string()));
                }
                Some(_) => {}
                None => {
                    seen.insert(lookalike_key(name), name);
                }
            }
        }
    };
    group(
        doc.truths
            .iter()
            .enumerate()
            .map(|(i, t)| (t.as_str(), format!("truths[{i}]")))
            .collect(),
    );
    group(
        doc.actions
            .iter()
            .enumerate()
            .map(|(a, x)| (x.name.as_str(), format!("actions[{a}]")))
            .collect(),
    );
    for (a, action) in doc.actions.iter().enumerate() {
        if let StatesDoc::Named(pairs) = &action.states {
            group(
                pairs
                    .iter()
                    .map(|(label, _)| (label.as_str(), format!("actions[{a}].states")))
                    .collect(),
            );
        }
    }
    out
}

/// Every name problem of `doc`, in document order.
pub fn check(doc: &DomainDoc) -> Vec<NameProblem> {
    let mut out = Vec::new();
    let vocabulary = [
        ("title", &doc.title),
        ("truth_noun", &doc.truth_noun),
        ("truth_plural", &doc.truth_plural),
        ("action_noun", &doc.action_noun),
        ("action_plural", &doc.action_plural),
        ("goal", &doc.goal),
    ];
    for (key, text) in vocabulary {
        if let Some((message, help)) = text.as_deref().and_then(text_problem) {
            out.push(NameProblem {
                path: key.into(),
                message: format!("`{key}` {message}"),
                help: help.into(),
                warning: false,
            });
        }
    }
    let mut truths = Group::new("truth", doc.case_sensitive_names);
    for (i, truth) in doc.truths.iter().enumerate() {
        truths.check(truth, format!("truths[{i}]"), &mut out);
    }
    let mut actions = Group::new("action", doc.case_sensitive_names);
    for (a, action) in doc.actions.iter().enumerate() {
        let path = format!("actions[{a}]");
        actions.check(&action.name, format!("{path}.name"), &mut out);
        if let Some((message, help)) = action.unit.as_deref().and_then(text_problem) {
            out.push(NameProblem {
                path: format!("{path}.unit"),
                message: format!("the unit of action `{}` {message}", shown(&action.name)),
                help: help.into(),
                warning: false,
            });
        }
        if let StatesDoc::Named(pairs) = &action.states {
            let mut states = Group::new("state", doc.case_sensitive_names);
            for (label, _) in pairs {
                states.check(label, format!("{path}.states.{label}"), &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookalikes_share_a_key() {
        let same = |a: &str, b: &str| lookalike_key(a) == lookalike_key(b);
        assert!(same("Flu", "flu"));
        assert!(same("FLU", "flu"));
        assert!(same("caf\u{e9}", "cafe\u{301}")); // precomposed vs combining
        assert!(same("Stra\u{df}e", "STRASSE")); // full folding: ß -> ss
        assert!(same("\u{3a3}\u{39f}\u{3a3}", "\u{3c3}\u{3bf}\u{3c2}")); // final sigma
        assert!(same("\u{b5}g", "\u{3bc}g")); // micro sign vs mu
        assert!(same("\u{212b}", "\u{c5}")); // angstrom sign vs Å (NFC)
        assert!(!same("Flu", "Flue"));
        assert!(!same("Lamp 1", "Lamp1"));
    }

    #[test]
    fn name_problems() {
        let problem = |name: &str| name_problem(name).map(|(m, _)| m);
        assert_eq!(problem("Lamp"), None);
        assert_eq!(problem("COVID-19 PCR Test"), None);
        assert_eq!(problem(""), None, "empty names are compile's to report");
        assert_eq!(problem(" Lamp").unwrap(), "starts or ends with whitespace");
        assert_eq!(
            problem("Lamp\u{a0}").unwrap(),
            "starts or ends with whitespace"
        );
        assert!(problem("La\tmp").unwrap().contains("U+0009"));
        assert!(problem("La\u{2028}mp").unwrap().contains("line separator"));
        for c in [
            '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{61c}',
        ] {
            let name = format!("La{c}mp");
            assert!(
                problem(&name).unwrap().contains("bidirectional"),
                "{name:?}"
            );
        }
        assert!(problem("x <Answer> y").unwrap().contains("`<ANSWER>`"));
        assert!(problem("a</answer>").unwrap().contains("`</ANSWER>`"));
        assert!(problem("${x}").unwrap().contains("`${`"));
        assert_eq!(problem("a $ {x} answer"), None);
    }

    #[test]
    fn shown_escapes_invisible_characters() {
        assert_eq!(shown("a\u{202e}b\nc"), "a\\u{202E}b\\u{000A}c");
        assert_eq!(shown("Café"), "Café");
    }
}
