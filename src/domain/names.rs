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
//! follows it), no other default-ignorable character (zero-width space or
//! joiner, soft hyphen, variation selector: it prints as nothing, so a
//! correct answer typed without it would be judged wrong). Two truths, two
//! actions or two states of one action must differ after removing
//! default-ignorable characters and Unicode compatibility caseless matching
//! (NFKD, full case folding, NFKD, then NFKC; Unicode D146): `Flu` and
//! `flu`, `é` written precomposed and decomposed, or full-width `Ａpple`
//! and `Apple` are one name to a reader (with `case_sensitive_names: true`,
//! the documented exception for imported KUMO domains, names differing in
//! letter case only are a warning). Two names whose Unicode TR39
//! confusable skeletons are equal (Latin `Apple`, Cyrillic `Аpple`) are a
//! located warning. Vocabulary text is
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

/// Unicode's `Default_Ignorable_Code_Point` characters (DerivedCoreProperties):
/// zero-width space and joiners, the soft hyphen, variation selectors, tags
/// and the like print as nothing, so a name holding one cannot be read or
/// typed as it is.
pub fn is_default_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fff8}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
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
        if is_line_breaking(c) || is_bidi_control(c) || is_default_ignorable(c) {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The key two names share when a reader cannot tell them apart: default
/// ignorable characters removed, then Unicode compatibility caseless
/// matching (D146), `NFKD(fold(NFKD(x)))`, recomposed with NFKC: full-width
/// and other compatibility forms, letter case and invisible characters
/// make no difference.
pub fn lookalike_key(name: &str) -> String {
    let visible: String = name.chars().filter(|&c| !is_default_ignorable(c)).collect();
    visible.nfkd().default_case_fold().nfkd().nfkc().collect()
}

/// Unicode canonical caseless matching (D145), `NFD(fold(NFD(x)))`,
/// recomposed: two names with one key differ at most in letter case and
/// canonical encoding.
fn caseless_key(name: &str) -> String {
    name.nfd().default_case_fold().nfc().collect()
}

/// `name` without invisible characters, in NFKC: two names with one such
/// text differ only in how their characters are encoded.
fn plain_text(name: &str) -> String {
    let visible: String = name.chars().filter(|&c| !is_default_ignorable(c)).collect();
    visible.nfkc().collect()
}

/// The key of names a reader may well take for one another: the
/// look-alike key with combining marks (accents) removed and every run of
/// whitespace read as one space. `Red  lamp` and `Red lamp`, or `Rouge`
/// and `Rougé`, share it.
fn loose_key(name: &str) -> String {
    let mut out = String::new();
    let mut space = false;
    for c in lookalike_key(name).nfd() {
        if unicode_normalization::char::is_combining_mark(c) {
            continue;
        }
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

/// The Unicode TR39 confusable skeleton of a name's look-alike key: names
/// of one skeleton look alike across scripts (Latin `a`, Cyrillic `а`).
fn confusable_skeleton(name: &str) -> String {
    unicode_security::skeleton(&lookalike_key(name)).collect()
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
    if let Some(c) = name.chars().find(|&c| is_default_ignorable(c)) {
        return Some((
            format!(
                "contains the invisible character U+{:04X} (a default-ignorable code point)",
                c as u32
            ),
            "remove it: it prints as nothing, so a player cannot see or type it and a correct answer would be judged wrong",
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
    /// Confusable skeleton -> (first name, its path).
    skeletons: HashMap<String, (&'a str, String)>,
    /// Loose key (whitespace runs, accents ignored) -> (first name, its path).
    loose: HashMap<String, (&'a str, String)>,
}

impl<'a> Group<'a> {
    fn new(what: &'static str, case_sensitive: bool) -> Self {
        Group {
            what,
            case_sensitive,
            seen: HashMap::new(),
            skeletons: HashMap::new(),
            loose: HashMap::new(),
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
                let same_text = plain_text(name) == plain_text(first);
                let case_only = !same_text && caseless_key(name) == caseless_key(first);
                let warning = self.case_sensitive && case_only;
                let help = if same_text {
                    "rename one of them: they are the same text encoded two ways (compatibility forms such as full-width letters, or invisible characters), so a reader cannot tell them apart"
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
                        } else if case_only {
                            "letter case"
                        } else {
                            "letter case and how their characters are encoded"
                        }
                    ),
                    help: help.into(),
                    path,
                    warning,
                })
            }
            None => {
                self.check_encoding(name, &path, out);
                if !self.check_loose(name, &path, out) {
                    self.check_skeleton(name, &path, out);
                }
                self.seen.insert(lookalike_key(name), (name, path));
            }
        }
    }

    /// A located warning when `name` is not in Unicode NFC (an accent
    /// written as a separate combining character): a player who types
    /// the accented letter gives other characters, and answers are
    /// compared exactly.
    fn check_encoding(&self, name: &str, path: &str, out: &mut Vec<NameProblem>) {
        if unicode_normalization::is_nfc(name) {
            return;
        }
        out.push(NameProblem {
            message: format!(
                "{} `{}` is not in Unicode NFC: a combining mark (an accent) is written as a separate character",
                self.what,
                shown(name)
            ),
            help: "write it precomposed (NFC): a player who types the accented letter is judged wrong, as answers are compared exactly".into(),
            path: path.to_string(),
            warning: true,
        });
    }

    /// A located warning when `name` equals an earlier name of its group
    /// but for runs of whitespace or accents (`Red  lamp`, `Red lamp`).
    /// Whether it warned.
    fn check_loose(&mut self, name: &'a str, path: &str, out: &mut Vec<NameProblem>) -> bool {
        let key = loose_key(name);
        match self.loose.get(&key) {
            Some((first, first_path)) => {
                out.push(NameProblem {
                message: format!(
                    "{} `{}` is almost {} `{}` (at `{first_path}`): they differ only in runs of whitespace or in accents",
                    self.what,
                    shown(name),
                    self.what,
                    shown(first)
                ),
                help: "rename one of them so a reader can tell them apart: a player who types one space for two, or drops an accent, names the other".into(),
                path: path.to_string(),
                warning: true,
            });
                true
            }
            None => {
                self.loose.insert(key, (name, path.to_string()));
                false
            }
        }
    }

    /// A located warning when `name` has the confusable skeleton of an
    /// earlier name of its group (letters of other scripts that look alike).
    fn check_skeleton(&mut self, name: &'a str, path: &str, out: &mut Vec<NameProblem>) {
        let skeleton = confusable_skeleton(name);
        match self.skeletons.get(&skeleton) {
            Some((first, first_path)) => out.push(NameProblem {
                message: format!(
                    "{} `{}` looks like {} `{}` (at `{first_path}`): their characters are confusable (equal Unicode TR39 skeletons: Latin `a` and Cyrillic `а`, `’` and `'`)",
                    self.what,
                    shown(name),
                    self.what,
                    shown(first)
                ),
                help: "rename one of them so a reader can tell them apart, or write both in one script".into(),
                path: path.to_string(),
                warning: true,
            }),
            None => {
                self.skeletons.insert(skeleton, (name, path.to_string()));
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
            match seen.get(&caseless_key(name)) {
                Some(first) if !first.nfc().eq(name.nfc()) => {
                    out.push((path, first.to_string(), name.to_string()));
                }
                Some(_) => {}
                None => {
                    seen.insert(caseless_key(name), name);
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
    out.extend(ambiguous_in_sentences(&doc.truths));
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

/// Whether some truth name makes rule sentences that list names as prose
/// ambiguous (see `ambiguous_in_sentences`): such a domain's books put
/// every truth name of a rule sentence in double quotes.
pub fn truths_ambiguous_in_sentences(truths: &[String]) -> bool {
    !ambiguous_in_sentences(truths).is_empty()
}

/// Truths that make a book's rule sentences ambiguous, a located warning ("rules out
/// nothing", "rules out A, B and C"): a truth named `nothing`, or one whose
/// name splits at `, ` / ` and ` into names of other truths only.
fn ambiguous_in_sentences(truths: &[String]) -> Vec<NameProblem> {
    let keys: std::collections::HashSet<String> = truths.iter().map(|t| lookalike_key(t)).collect();
    let mut out = Vec::new();
    for (i, truth) in truths.iter().enumerate() {
        let message = if lookalike_key(truth) == "nothing" {
            format!(
                "truth `{}` reads as the word a book uses for no truth (\"rules out nothing\")",
                shown(truth)
            )
        } else {
            let parts: Vec<&str> = truth
                .split(", ")
                .flat_map(|p| p.split(" and "))
                .map(str::trim)
                .collect();
            let splits = parts.len() > 1 && parts.iter().all(|p| keys.contains(&lookalike_key(p)));
            if !splits {
                continue;
            }
            format!(
                "truth `{}` reads as a list of other truths ({}) in a book's rule sentences",
                shown(truth),
                parts
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        out.push(NameProblem {
            path: format!("truths[{i}]"),
            message,
            help: "rename it so no sentence of the knowledge book can be read two ways".into(),
            // A warning: KUMO's published `stellar` domain has such a name.
            warning: true,
        });
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
        assert!(same("\u{ff21}pple", "Apple")); // full-width A
        assert!(same("Ap\u{200b}ple", "Apple")); // zero-width space
        assert!(same("Ap\u{ad}ple", "apple")); // soft hyphen
        assert!(same("Ap\u{200d}ple", "Apple")); // zero-width joiner
        assert!(!same("\u{410}pple", "Apple")); // Cyrillic A: a warning, below
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
    fn invisible_characters_are_errors_and_confusable_scripts_warnings() {
        let problem = |name: &str| name_problem(name).map(|(m, _)| m);
        for c in [
            '\u{200b}', '\u{200c}', '\u{200d}', '\u{ad}', '\u{2060}', '\u{feff}',
        ] {
            let name = format!("Ap{c}ple");
            assert!(problem(&name).unwrap().contains("invisible"), "{name:?}");
        }
        assert_eq!(
            confusable_skeleton("\u{410}pple"),
            confusable_skeleton("Apple")
        );
        assert_eq!(
            confusable_skeleton("\u{391}lpha"),
            confusable_skeleton("Alpha")
        );
        assert_ne!(confusable_skeleton("Apple"), confusable_skeleton("Apply"));
        let mut group = Group::new("truth", false);
        let mut out = Vec::new();
        group.check("Apple", "truths[0]".into(), &mut out);
        group.check("\u{410}pple", "truths[1]".into(), &mut out);
        group.check("\u{ff21}pple", "truths[2]".into(), &mut out);
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out[0].warning && out[0].path == "truths[1]", "{out:?}");
        assert!(out[0].message.contains("TR39"), "{out:?}");
        assert!(!out[1].warning && out[1].path == "truths[2]", "{out:?}");
        // The case exception of imported domains covers letter case only.
        let mut group = Group::new("truth", true);
        let mut out = Vec::new();
        group.check("Apple", "truths[0]".into(), &mut out);
        group.check("apple", "truths[1]".into(), &mut out);
        group.check("\u{ff41}pple", "truths[2]".into(), &mut out);
        assert!(out[0].warning && !out[1].warning, "{out:?}");
    }

    #[test]
    fn names_that_differ_in_whitespace_runs_or_accents_are_warned_about() {
        let mut group = Group::new("truth", false);
        let mut out = Vec::new();
        group.check("Red lamp", "truths[0]".into(), &mut out);
        group.check("Red  lamp", "truths[1]".into(), &mut out);
        group.check("Rouge", "truths[2]".into(), &mut out);
        group.check("Roug\u{e9}", "truths[3]".into(), &mut out);
        group.check("Blue lamp", "truths[4]".into(), &mut out);
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out.iter().all(|p| p.warning), "{out:?}");
        assert_eq!(
            (out[0].path.as_str(), out[1].path.as_str()),
            ("truths[1]", "truths[3]")
        );
        assert!(
            out[0].message.contains("runs of whitespace or in accents"),
            "{out:?}"
        );
        // An accent written as a combining character, alone.
        let mut group = Group::new("truth", false);
        let mut out = Vec::new();
        group.check("Cafe\u{301}", "truths[0]".into(), &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(
            out[0].warning && out[0].message.contains("not in Unicode NFC"),
            "{out:?}"
        );
    }

    #[test]
    fn truths_that_make_rule_sentences_ambiguous_are_errors() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let found = ambiguous_in_sentences(&names(&["Flu", "Cold", "Flu and Cold", "Nothing"]));
        let paths: Vec<&str> = found.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["truths[2]", "truths[3]"], "{found:?}");
        assert!(ambiguous_in_sentences(&names(&["Salt and Pepper", "Flu, acute"])).is_empty());
    }

    #[test]
    fn shown_escapes_invisible_characters() {
        assert_eq!(shown("a\u{202e}b\nc"), "a\\u{202E}b\\u{000A}c");
        assert_eq!(shown("a\u{200b}b"), "a\\u{200B}b");
        assert_eq!(shown("Café"), "Café");
    }
}
