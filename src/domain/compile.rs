//! Loading a domain file: the passes in order, and pass 3, validating a
//! [`DomainDoc`] and compiling it into a [`Domain`].
//!
//! Three passes, each collecting every problem before the next runs:
//! 1. text -> spanned tree ([`super::node::Node`]): UTF-8, size and YAML syntax, with
//!    serde-saphyr's budgets against alias bombs and deep nesting;
//! 2. tree -> [`DomainDoc`] plus a table of positions by document path:
//!    every shape problem (`type` missing, states of the wrong shape, ...)
//!    ([`super::read`]; positions and diagnostics in [`super::context`]);
//! 3. [`DomainDoc`] -> [`Domain`]: the rules of DESIGN.md "Domain config"
//!    (unknown or duplicate names, no states, ranges that are not finite;
//!    warnings, as KUMO's published data has them, for overlapping or
//!    inverted ranges, single-state actions and truths ruled out by every
//!    state of an action), positions looked up by path.
//!
//! Documents built in memory (import, split) go through pass 3 only.

use std::collections::HashMap;

use super::context::{Context, Positions};
use super::diagnostic::{Diagnostic, Kind, LoadError};
use super::document::{ActionDoc, DomainDoc};
use super::node::SNode;
use super::read::{parse_kind, read_document};
use super::states::compile_states;
use super::{Action, ActionKind, Domain, State, TruthSet};
use crate::fnv::fnv1a_hex;

/// Longest domain name (it becomes a directory name).
pub const MAX_NAME_LEN: usize = 64;

/// Largest domain file accepted, in bytes.
pub const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;

/// Loads a domain from the bytes of a file.
pub fn load_bytes(file: &str, bytes: &[u8]) -> Result<(Domain, Vec<Diagnostic>), LoadError> {
    let invalid = |message: String, help: &str| {
        LoadError::Invalid(vec![
            Diagnostic::error(Kind::File, file, "", message).with_help(help),
        ])
    };
    if bytes.len() > MAX_FILE_BYTES {
        return Err(invalid(
            format!(
                "the file is {} bytes; domain files are limited to {MAX_FILE_BYTES} bytes",
                bytes.len()
            ),
            "split the domain or check that this is the right file",
        ));
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let good = &bytes[..e.valid_up_to()];
            let line = good.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
            let column = (good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1))
                as u32
                + 1;
            return Err(LoadError::Invalid(vec![
                Diagnostic::error(
                    Kind::File,
                    file,
                    "",
                    "the file is not UTF-8 text (is it binary?)",
                )
                .with_help("domain files are YAML text in UTF-8; check the path")
                .at(line, column, None),
            ]));
        }
    };
    load_str(file, text)
}

/// Loads a domain from YAML text.
pub fn load_str(file: &str, text: &str) -> Result<(Domain, Vec<Diagnostic>), LoadError> {
    let mut cx = Context {
        file,
        lines: text.lines().collect(),
        positions: Positions::default(),
        diagnostics: Vec::new(),
    };
    if text.contains('\0') {
        cx.error(
            Kind::File,
            "",
            "the file contains NUL bytes (is it binary?)",
            "domain files are YAML text; check the path",
        );
        return Err(LoadError::Invalid(cx.diagnostics));
    }
    if text.trim().is_empty() {
        cx.error(
            Kind::File,
            "",
            "the file is empty",
            "a domain needs at least `name`, `truths` and `actions`; see domains/medical.yaml",
        );
        return Err(LoadError::Invalid(cx.diagnostics));
    }
    // YAML 1.2 booleans only: a truth or state called `yes`, `no`, `on`
    // or `y` stays a name.
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = super::yaml_budget::yaml_node_budget();
    let options = serde_saphyr::options! { strict_booleans: true, budget: Some(budget) };
    let root: SNode = match serde_saphyr::from_str_with_options(text, options) {
        Ok(root) => root,
        Err(e) => {
            if let Some(d) = super::yaml_budget::budget_breached(file, &e) {
                return Err(LoadError::Invalid(vec![d]));
            }
            let message = yaml_message(&e);
            let help = if message.contains("duplicate mapping key") {
                "a key (a state label, a field) may appear once in a mapping; rename or merge the two entries"
            } else if message.contains("budget") {
                "the document expands too far (aliases or node count over the loader's budget); write the domain out plainly"
            } else if message.contains("recursion") {
                "the document nests too deeply; a domain needs only a few levels"
            } else if message.contains("non-finite") {
                "use finite numbers (no `.nan` or `.inf`)"
            } else {
                "fix the YAML syntax at this position"
            };
            let mut d =
                Diagnostic::error(Kind::Syntax, file, "", format!("invalid YAML: {message}"))
                    .with_help(help);
            if let Some(loc) = e.location() {
                d = d.at_in(loc.line() as u32, loc.column() as u32, text);
            }
            return Err(LoadError::Invalid(vec![d]));
        }
    };
    let doc = read_document(&mut cx, &root);
    let Some(doc) = doc.filter(|_| !cx.has_errors()) else {
        return Err(LoadError::Invalid(cx.diagnostics));
    };
    let domain = compile_checked(&mut cx, doc, text.as_bytes());
    let diagnostics = cx.finish()?;
    Ok((
        domain.expect("no errors means a compiled domain"),
        diagnostics,
    ))
}

/// Validates and compiles an in-memory document (from the importer or a
/// split). `file` names it in diagnostics.
pub fn compile(file: &str, doc: &DomainDoc) -> Result<(Domain, Vec<Diagnostic>), LoadError> {
    let mut cx = Context {
        file,
        lines: Vec::new(),
        positions: Positions::default(),
        diagnostics: Vec::new(),
    };
    let yaml = doc.to_yaml();
    let domain = compile_checked(&mut cx, doc.clone(), yaml.as_bytes());
    let diagnostics = cx.finish()?;
    Ok((
        domain.expect("no errors means a compiled domain"),
        diagnostics,
    ))
}

/// The parser's message without its own snippet (we render ours).
fn yaml_message(e: &serde_saphyr::Error) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("").trim();
    // serde-saphyr prefixes "error: line L column C: "; we show the position ourselves.
    let message = first.strip_prefix("error: ").unwrap_or(first);
    let message = match message.split_once(": ") {
        Some((position, rest)) if position.starts_with("line ") => rest,
        _ => message,
    };
    // Advice about the parser's own options is not for domain authors.
    let message = message
        .split_once(", set DuplicateKeyPolicy")
        .map_or(message, |(head, _)| head);
    message.chars().take(300).collect()
}

/// Pass 3: every rule of DESIGN.md "Domain config" checked on `doc`, each
/// problem a diagnostic in `cx`; the compiled domain when none is an
/// error.
fn compile_checked(cx: &mut Context, doc: DomainDoc, source_bytes: &[u8]) -> Option<Domain> {
    check_name(cx, &doc.name);
    // Names a player reads and types (see `names`): printable, tag-free,
    // told apart by a reader.
    for p in super::names::check(&doc) {
        if p.warning {
            cx.warning(Kind::Name, p.path, p.message, &p.help);
        } else {
            cx.error(Kind::Name, p.path, p.message, &p.help);
        }
    }
    let truth_index = check_truths(cx, &doc);
    if doc.actions.is_empty() {
        cx.error(
            Kind::Structure,
            "actions",
            "a domain needs at least one action",
            "add actions under `actions:`",
        );
    }

    let mut action_index: HashMap<&str, usize> = HashMap::new();
    let mut actions = Vec::with_capacity(doc.actions.len());
    let mut ruled_out_anywhere = TruthSet::with_capacity(doc.truths.len());
    for (a, action) in doc.actions.iter().enumerate() {
        let path = format!("actions[{a}]");
        check_action_name(cx, &path, a, action, &mut action_index);
        let Some(kind) = parse_kind(&action.kind) else {
            cx.error(
                Kind::UnknownType,
                format!("{path}.type"),
                format!("unknown action type `{}`", action.kind),
                "use `str`, `float` or `int`",
            );
            continue;
        };
        let states = compile_states(cx, &path, action, kind, &doc.truths, &truth_index);
        let action = compiled_action(cx, &path, action, kind, states, &doc.truths);
        ruled_out_anywhere.union_with(&action.related);
        actions.push(action);
    }
    warn_unruled_truths(cx, &doc.truths, &ruled_out_anywhere);
    if cx.has_errors() {
        return None;
    }
    Some(domain_of(doc, actions, source_bytes))
}

/// The domain name: non-empty, plain (it becomes a directory name) and at
/// most [`MAX_NAME_LEN`] long.
fn check_name(cx: &mut Context, name: &str) {
    if name.trim().is_empty() {
        cx.error(
            Kind::Name,
            "name",
            "the domain name is empty",
            "give the domain a name such as `medical`",
        );
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        cx.error(
            Kind::Name,
            "name",
            format!("the domain name `{name}` is not a plain name"),
            "use letters, digits, `-` and `_` only (it becomes a directory name)",
        );
    } else if name.len() > MAX_NAME_LEN {
        cx.error(
            Kind::Name,
            "name",
            format!(
                "the domain name is {} characters long; at most {MAX_NAME_LEN}",
                name.len()
            ),
            "use a shorter name (it becomes a directory name)",
        );
    }
}

/// Truths: non-empty, unique, at least 2. Each truth's index by name.
fn check_truths<'d>(cx: &mut Context, doc: &'d DomainDoc) -> HashMap<&'d str, usize> {
    let mut truth_index: HashMap<&str, usize> = HashMap::new();
    for (i, truth) in doc.truths.iter().enumerate() {
        let path = format!("truths[{i}]");
        if truth.trim().is_empty() {
            cx.error(
                Kind::Name,
                path,
                "a truth has an empty name",
                "give it a name or remove it",
            );
        } else if let Some(&first) = truth_index.get(truth.as_str()) {
            cx.error(
                Kind::Duplicate,
                path,
                format!("duplicate truth `{truth}` (first at `truths[{first}]`)"),
                "remove the repeated entry",
            );
        } else {
            truth_index.insert(truth, i);
        }
    }
    if doc.truths.len() < 2 {
        cx.error(
            Kind::Structure,
            "truths",
            format!(
                "a domain needs at least 2 truths, found {}",
                doc.truths.len()
            ),
            "list the candidate truths under `truths:`",
        );
    }
    truth_index
}

/// Action `a` (at `path`) has a name, not one an earlier action has.
fn check_action_name<'d>(
    cx: &mut Context,
    path: &str,
    a: usize,
    action: &'d ActionDoc,
    action_index: &mut HashMap<&'d str, usize>,
) {
    if action.name.trim().is_empty() {
        cx.error(
            Kind::Name,
            format!("{path}.name"),
            "an action has an empty name",
            "give it a name",
        );
    } else if let Some(&first) = action_index.get(action.name.as_str()) {
        cx.error(
            Kind::Duplicate,
            format!("{path}.name"),
            format!(
                "duplicate action `{}` (first at `actions[{first}]`)",
                action.name
            ),
            "rename or remove one of them",
        );
    } else {
        action_index.insert(&action.name, a);
    }
}

/// The action compiled from its states, with the warnings its states
/// call for: none or a single state, truths every state rules out.
fn compiled_action(
    cx: &mut Context,
    path: &str,
    action: &ActionDoc,
    kind: ActionKind,
    states: Vec<State>,
    truths: &[String],
) -> Action {
    if states.is_empty() {
        cx.error(
            Kind::Structure,
            format!("{path}.states"),
            format!("action `{}` has no states", action.name),
            "list the outcomes of this action under `states:`",
        );
    } else if states.len() == 1 {
        // KUMO's published data has one (wildlife); its labels must
        // equal KUMO's, so the state is kept as written.
        cx.warning(
            Kind::Structure,
            format!("{path}.states"),
            format!(
                "action `{}` has a single state, which tells no truth apart",
                action.name
            ),
            "add the other outcomes of this action",
        );
    }
    let mut related = TruthSet::with_capacity(truths.len());
    for state in &states {
        related.union_with(&state.rules_out);
    }
    warn_always_ruled_out(cx, path, action, &states, &related, truths);
    Action {
        name: action.name.clone(),
        kind,
        unit: action.unit.clone(),
        states,
        related,
    }
}

/// A truth ruled out by every state can never be valid together with
/// this action: synthesis never pairs them (KUMO's data has such truths,
/// and KUMO's search counts every state as written). One warning per
/// action naming them.
fn warn_always_ruled_out(
    cx: &mut Context,
    path: &str,
    action: &ActionDoc,
    states: &[State],
    related: &TruthSet,
    truths: &[String],
) {
    let always: Vec<&str> = related
        .iter()
        .filter(|&t| states.iter().all(|s| s.rules_out.contains(t)))
        .map(|t| truths[t].as_str())
        .collect();
    if always.is_empty() {
        return;
    }
    let shown: Vec<String> = always.iter().take(5).map(|t| format!("`{t}`")).collect();
    let more = match always.len() {
        0..=5 => String::new(),
        k => format!(" and {} more", k - 5),
    };
    cx.warning(
        Kind::Coverage,
        format!("{path}.states"),
        format!(
            "every state of action `{}` rules out {}{more}, so an instance where {} valid never contains this action",
            action.name,
            shown.join(", "),
            if always.len() == 1 { "it is" } else { "one of them is" },
        ),
        "if some outcome is consistent with it, add that state or remove the truth from one state's rule-outs",
    );
}

/// A warning for each named truth no state rules out, or one for them all
/// beyond [`MAX_TRUTH_WARNINGS`].
fn warn_unruled_truths(cx: &mut Context, truths: &[String], ruled_out_anywhere: &TruthSet) {
    let unruled: Vec<usize> = (0..truths.len())
        .filter(|&i| !ruled_out_anywhere.contains(i) && !truths[i].trim().is_empty())
        .collect();
    let help = "it can only be found by elimination of all others; add a state that rules it out";
    if unruled.len() <= MAX_TRUTH_WARNINGS {
        for &i in &unruled {
            cx.warning(
                Kind::Coverage,
                format!("truths[{i}]"),
                format!("no state rules out truth `{}`", truths[i]),
                help,
            );
        }
    } else {
        // One warning, not one per truth: a large domain whose states rule
        // nothing out would print hundreds of thousands of lines.
        let shown: Vec<String> = unruled
            .iter()
            .take(5)
            .map(|&i| format!("`{}`", truths[i]))
            .collect();
        cx.warning(
            Kind::Coverage,
            format!("truths[{}]", unruled[0]),
            format!(
                "no state rules out {} of the {} truths: {} and {} more",
                unruled.len(),
                truths.len(),
                shown.join(", "),
                unruled.len() - shown.len()
            ),
            help,
        );
    }
}

/// The compiled domain of a document without errors: the nouns and the
/// goal filled in where the document leaves them out.
fn domain_of(doc: DomainDoc, actions: Vec<Action>, source_bytes: &[u8]) -> Domain {
    let truth_noun = doc.truth_noun.clone().unwrap_or_else(|| "truth".into());
    let action_noun = doc.action_noun.clone().unwrap_or_else(|| "action".into());
    Domain {
        name: doc.name.clone(),
        title: doc.title.clone().unwrap_or_else(|| doc.name.clone()),
        truth_plural: doc
            .truth_plural
            .clone()
            .unwrap_or_else(|| plural(&truth_noun)),
        action_plural: doc
            .action_plural
            .clone()
            .unwrap_or_else(|| plural(&action_noun)),
        goal: doc
            .goal
            .clone()
            .unwrap_or_else(|| format!("identify the {truth_noun}")),
        truth_noun,
        action_noun,
        quote_truths: super::names::truths_ambiguous_in_sentences(&doc.truths),
        truths: doc.truths.clone(),
        actions,
        source_hash: fnv1a_hex(source_bytes),
        document: doc,
    }
}

/// Truths no state rules out warned about one by one; more are one
/// warning.
const MAX_TRUTH_WARNINGS: usize = 10;

/// The one English plural of domain nouns, for validation, import and
/// rendering alike (`disease` -> `diseases`, `species` stays, `family` ->
/// `families`, `diagnosis` -> `diagnoses`); the last word of a phrase.
pub fn plural(noun: &str) -> String {
    let lower = noun.to_ascii_lowercase();
    let last_word = lower.rsplit(' ').next().unwrap_or("");
    if last_word.ends_with("species") || last_word.ends_with("series") {
        return noun.to_string();
    }
    if last_word.ends_with("sis") {
        return format!("{}es", &noun[..noun.len() - 2]);
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|e| last_word.ends_with(e))
    {
        return format!("{noun}es");
    }
    if let Some(stem) = noun.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    format!("{noun}s")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::StateLabel;

    const OK: &str = "name: tiny
truths: [A, B, C]
actions:
  - name: Test
    type: str
    states:
      pos: [A]
      neg: [B, C]
  - name: Level
    type: float
    unit: mg
    states:
      - range: [0, 1]
        rules_out: [A]
      - range: [1, 2]
        rules_out: []
";

    #[test]
    fn loads_a_small_domain_in_file_order() {
        let (domain, warnings) = load_str("tiny.yaml", OK).unwrap();
        assert_eq!(domain.truths, ["A", "B", "C"]);
        assert_eq!(
            domain.actions[0].states[1]
                .rules_out
                .iter()
                .collect::<Vec<_>>(),
            [1, 2]
        );
        assert_eq!(domain.actions[1].state_containing(1.5), Some(1));
        assert_eq!(domain.actions[1].state_containing(1.0), Some(0));
        assert_eq!(domain.truth_plural, "truths");
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    fn errors(text: &str) -> Vec<Diagnostic> {
        match load_str("bad.yaml", text) {
            Err(LoadError::Invalid(d)) => d.into_iter().filter(|d| d.is_error()).collect(),
            other => panic!("expected diagnostics, got {other:?}"),
        }
    }

    macro_rules! bad {
        ($($name:ident: $text:expr => $path:expr, $line:expr, $needle:expr;)*) => {$(
            #[test]
            fn $name() {
                let found = errors(&$text);
                assert!(
                    found.iter().any(|d| d.path == $path && d.line == $line && d.message.contains($needle)),
                    "no error at `{}` line {:?} containing {:?} in:\n{}",
                    $path, $line, $needle,
                    found.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")
                );
            }
        )*};
    }

    bad! {
        unknown_truth: OK.replace("neg: [B, C]", "neg: [B, D]") => "actions[0].states.neg[1]", Some(8), "unknown truth `D`";
        missing_type: OK.replace("    type: str\n", "") => "actions[0]", Some(4), "no `type`";
        long_name: OK.replace("name: tiny", &format!("name: {}", "x".repeat(300))) => "name", Some(1), "at most 64";
        wide_float_range: OK.replace("[1, 2]", "[-1.0e308, 1.0e308]") => "actions[1].states[1].range", Some(15), "too wide";
        huge_int_range: OK.replace("type: float", "type: int").replace("[1, 2]", "[1, 1.0e17]") => "actions[1].states[1].range", Some(15), "beyond 2^53";
        no_states: OK.replace("      pos: [A]\n      neg: [B, C]", "      {}") => "actions[0].states", Some(7), "no states";
        infinite_range: OK.replace("[1, 2]", "[1, .inf]") => "", Some(15), "non-finite";
        duplicate_truth: OK.replace("[A, B, C]", "[A, B, A]") => "truths[2]", Some(2), "duplicate truth";
        bad_type: OK.replace("type: str", "type: text") => "actions[0].type", Some(5), "unknown action type";
        wrong_shape: OK.replace("      pos: [A]\n      neg: [B, C]", "      - [A]") => "actions[0].states", Some(7), "must be a mapping";
        unknown_key: OK.replace("name: tiny", "name: tiny\nnmae: x") => "nmae", Some(2), "unknown key";
        yaml_syntax: "name: [unclosed\n" => "", Some(1), "unclosed bracket";
    }

    #[test]
    fn reports_all_problems_at_once() {
        let text = OK
            .replace("neg: [B, C]", "neg: [B, D]")
            .replace("[A, B, C]", "[A, B, C, C]");
        assert_eq!(errors(&text).len(), 2);
    }

    /// Kept with a located warning, as KUMO's published data has them.
    macro_rules! warns {
        ($($name:ident: $text:expr => $path:expr, $line:expr, $needle:expr;)*) => {$(
            #[test]
            fn $name() {
                let (_, found) = load_str("warn.yaml", &$text).unwrap();
                assert!(
                    found.iter().any(|d| !d.is_error() && d.path == $path && d.line == $line && d.message.contains($needle)),
                    "no warning at `{}` line {:?} containing {:?} in:\n{}",
                    $path, $line, $needle,
                    found.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")
                );
            }
        )*};
    }

    warns! {
        inverted_range: OK.replace("[1, 2]", "[3, 2]") => "actions[1].states[1].range", Some(15), "lo > hi";
        overlapping_ranges: OK.replace("[1, 2]", "[0.5, 2]") => "actions[1].states[1].range", Some(15), "overlaps";
        ruled_out_everywhere: OK.replace("pos: [A]", "pos: [B]") => "actions[0].states", Some(7), "every state of action `Test` rules out `B`";
        one_state: OK.replace("      neg: [B, C]\n", "") => "actions[0].states", Some(7), "single state";
    }

    #[test]
    fn overlapping_ranges_read_first_match_and_inverted_ranges_hold_nothing() {
        let text = OK.replace("[0, 1]", "[0, 1.5]").replace("[1, 2]", "[3, 2]");
        let (domain, _) = load_str("w.yaml", &text).unwrap();
        assert_eq!(domain.actions[1].state_containing(2.5), None);
        assert_eq!(domain.actions[1].state_containing(1.2), Some(0));
        let text = OK.replace("[1, 2]", "[0.5, 2]");
        let (domain, _) = load_str("w.yaml", &text).unwrap();
        assert_eq!(domain.actions[1].state_containing(0.7), Some(0));
        assert_eq!(domain.actions[1].state_containing(1.7), Some(1));
    }

    #[test]
    fn warns_about_truths_nothing_rules_out() {
        let text = OK.replace("[A, B, C]", "[A, B, C, D]");
        let (_, warnings) = load_str("w.yaml", &text).unwrap();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].message.contains("`D`"));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for text in [
            "",
            "   \n",
            "\0\u{1}\u{2}",
            "[",
            "{a: *x}",
            "- - - -",
            "name: x",
        ] {
            assert!(load_str("g.yaml", text).is_err(), "{text:?}");
        }
        assert!(load_bytes("g.bin", &[0xff, 0xfe, 0x00, 0x80]).is_err());
    }

    #[test]
    fn yaml_1_1_boolean_words_stay_names() {
        let text = OK
            .replace("pos: [A]", "yes: [A]")
            .replace("[A, B, C]", "[A, B, C, on]");
        let text = text.replace("neg: [B, C]", "neg: [B, C, on]");
        let (domain, _) = load_str("b.yaml", &text).unwrap();
        assert_eq!(domain.truths[3], "on");
        assert_eq!(
            domain.actions[0].states[0].label,
            StateLabel::Named("yes".into())
        );
        let doc = domain.document.clone();
        let (again, _) = load_str("again.yaml", &doc.to_yaml()).unwrap();
        assert_eq!(again.truths, domain.truths);
    }

    #[test]
    fn plurals() {
        assert_eq!(plural("disease"), "diseases");
        assert_eq!(plural("species"), "species");
        assert_eq!(plural("family"), "families");
        assert_eq!(plural("diagnostic test"), "diagnostic tests");
        assert_eq!(plural("match"), "matches");
        assert_eq!(plural("diagnosis"), "diagnoses");
        assert_eq!(plural("plant species"), "plant species");
        assert_eq!(plural("day"), "days");
    }
}
