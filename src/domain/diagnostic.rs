//! Diagnostics about user input: file, line, column, the path inside the
//! document, what is wrong and how to fix it.
//!
//! Loading collects every problem it finds and returns them together
//! ([`LoadError::Invalid`]); rendering shows the offending source line with
//! a caret when the text is at hand.

use std::fmt;

/// Whether a diagnostic fails the load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// What kind of problem a diagnostic reports, for programs and tests that
/// match on it rather than on the wording.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The file itself: too large, not UTF-8, empty, binary.
    File,
    /// YAML syntax, or the loader's budgets (aliases, nesting).
    Syntax,
    /// A value of the wrong shape (a list where a mapping belongs, ...).
    Shape,
    /// A key the format does not have.
    UnknownKey,
    /// A required key is missing.
    MissingKey,
    /// An action `type` other than `str`, `float`, `int`.
    UnknownType,
    /// A name a player cannot read or type (empty, whitespace, control or
    /// bidi characters, answer tags, look-alikes, too long).
    Name,
    /// A truth, action or state given twice.
    Duplicate,
    /// A rule-out naming no truth of the domain.
    UnknownTruth,
    /// Too few truths, actions or states.
    Structure,
    /// A range that is not finite, inverted, too wide, or overlaps another.
    Range,
    /// Which truths can be told apart: a truth nothing rules out, or one
    /// every state of an action rules out.
    Coverage,
    /// Problems found outside domain files (the importer's input).
    Import,
}

/// One located problem in an input file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub kind: Kind,
    /// The file as the user named it (or `<embedded>/name.yaml`).
    pub file: String,
    /// 1-based line and column, when the parser gave them.
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// Path inside the document, e.g. `actions[3].states.negative`.
    pub path: String,
    /// What is wrong (lowercase, names in backticks).
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    /// The source line, for a snippet with a caret.
    pub snippet: Option<String>,
}

impl Diagnostic {
    pub fn error(
        kind: Kind,
        file: &str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Error,
            kind,
            file: file.to_string(),
            line: None,
            column: None,
            path: path.into(),
            message: message.into(),
            help: None,
            snippet: None,
        }
    }

    pub fn warning(
        kind: Kind,
        file: &str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(kind, file, path, message)
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Attaches a 1-based position (0 means unknown) and, when given, the
    /// text of that line for the snippet.
    pub fn at(mut self, line: u32, column: u32, line_text: Option<&str>) -> Self {
        if line > 0 {
            self.line = Some(line);
            self.column = (column > 0).then_some(column);
            self.snippet = line_text.map(|l| l.chars().take(200).collect());
        }
        self
    }

    /// Like [`Diagnostic::at`], taking the line's text from the whole source.
    pub fn at_in(self, line: u32, column: u32, source: &str) -> Self {
        let text = (line as usize)
            .checked_sub(1)
            .and_then(|i| source.lines().nth(i));
        self.at(line, column, text)
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{kind}: {}", cap_quotes(&self.message))?;
        write!(f, "\n  --> {}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if !self.path.is_empty() {
            write!(f, " at `{}`", self.path)?;
        }
        if let (Some(line), Some(snippet)) = (self.line, &self.snippet) {
            let gutter = line.to_string().len();
            write!(f, "\n{:gutter$} |\n{line} | {snippet}", "")?;
            if let Some(column) = self.column {
                let pad = (column as usize).saturating_sub(1).min(200);
                write!(f, "\n{:gutter$} | {:pad$}^", "", "")?;
            }
        }
        if let Some(help) = &self.help {
            write!(f, "\n  = help: {help}")?;
        }
        Ok(())
    }
}

/// Most characters an error message quotes from the input: a longer
/// quote (a 100 000-digit number, a pasted paragraph as a name) is cut
/// there and ends in `…`.
pub const MAX_QUOTE_CHARS: usize = 80;

/// `text` cut to [`MAX_QUOTE_CHARS`] characters (`…` marks a cut).
pub fn cap(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(MAX_QUOTE_CHARS) {
        None => text.into(),
        Some((end, _)) => format!("{}…", &text[..end]).into(),
    }
}

/// `message` with every `` `quoted` `` part cut by [`cap`].
pub fn cap_quotes(message: &str) -> String {
    message
        .split('`')
        .enumerate()
        .map(|(i, part)| if i % 2 == 1 { cap(part) } else { part.into() })
        .collect::<Vec<_>>()
        .join("`")
}

/// Why a domain could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read `{file}`: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// A KUMO Python data file given where a domain goes.
    #[error(
        "`{file}` is a Python file, not a domain file\n  = help: convert KUMO's data files with `kumo-gen import {file} -o NAME.yaml`, then give NAME.yaml"
    )]
    KumoPython { file: String },
    /// No shipped or user domain has this name.
    #[error("unknown domain `{}`\n  = help: {help}", cap(name))]
    UnknownDomain { name: String, help: String },
    /// The file parsed but has problems (all of them, errors and warnings).
    #[error("{}", render_all(.0))]
    Invalid(Vec<Diagnostic>),
}

impl LoadError {
    /// The diagnostics carried, if any.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            LoadError::Invalid(d) => d,
            _ => &[],
        }
    }
}

fn render_all(diagnostics: &[Diagnostic]) -> String {
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let mut out = String::new();
    for d in diagnostics {
        out.push_str(&d.to_string());
        out.push_str("\n\n");
    }
    out.push_str(&format!(
        "{errors} error{} found",
        if errors == 1 { "" } else { "s" }
    ));
    out
}

/// A user's domain's warnings shown by a command that loads it (all of
/// them: `kumo-gen validate`).
const MAX_WARNINGS_SHOWN: usize = 20;

/// The lines a command that loads `domain` prints for its validation
/// `warnings`, each a message of its own. A shipped domain's warnings are
/// KUMO's published data, kept as KUMO has it: one line says how many and
/// where to read them (`kumo-gen validate NAME`), instead of repeating them
/// on every run; a user's file gets them (up to 20, then a note).
pub fn warning_lines(domain: &str, warnings: &[Diagnostic]) -> Vec<String> {
    let shipped = warnings.iter().all(|w| w.file.starts_with("<shipped>"));
    if shipped && !warnings.is_empty() {
        return vec![format!(
            "note: the shipped domain `{domain}` has {} validation warning{} (KUMO's published data, kept as is); `kumo-gen validate {domain}` lists them",
            warnings.len(),
            if warnings.len() == 1 { "" } else { "s" },
        )];
    }
    let mut lines: Vec<String> = warnings
        .iter()
        .take(MAX_WARNINGS_SHOWN)
        .map(|w| format!("{w}\n"))
        .collect();
    if let Some(more) = warnings
        .len()
        .checked_sub(MAX_WARNINGS_SHOWN)
        .filter(|&k| k > 0)
    {
        lines.push(format!(
            "note: {more} more validation warning{} of `{domain}` not shown; `kumo-gen validate {}` lists them all",
            if more == 1 { "" } else { "s" },
            warnings[0].file
        ));
    }
    lines
}

/// The line `kumo-gen validate` prints for a domain that loads: its name
/// and sizes, and how many warnings (`expected`: shipped warnings summed
/// into one note instead of shown).
pub fn validated_line(domain: &super::Domain, warnings: usize, expected: bool) -> String {
    format!(
        "ok    {:<24} {} truths, {} actions{}\n",
        domain.name,
        domain.truths.len(),
        domain.actions.len(),
        match (warnings, expected) {
            (0, _) => String::new(),
            (1, false) => ", 1 warning".into(),
            (n, false) => format!(", {n} warnings"),
            (1, true) => ", 1 expected warning".into(),
            (n, true) => format!(", {n} expected warnings"),
        }
    )
}

/// The note `kumo-gen validate` prints for the `expected` warnings of
/// `domains` shipped domains it summed instead of showing.
pub fn expected_warnings_note(expected: usize, domains: usize) -> String {
    format!(
        "note: {expected} expected warning{} in {domains} shipped domain{}: KUMO's published data, kept as is so that labels equal KUMO's (overlapping or empty ranges, truths no state rules out, names that differ only in case, and the like); `kumo-gen validate --list-warnings` lists them, `kumo-gen validate NAME` one domain's",
        if expected == 1 { "" } else { "s" },
        if domains == 1 { "" } else { "s" },
    )
}
