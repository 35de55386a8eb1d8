//! Side tool: import of KUMO's Python domain data files into the domain
//! document format (DESIGN.md "KUMO import").
//!
//! In: the text of a Python data file and [`ImportOptions`]. Out: an
//! [`Imported`] domain document plus one [`Note`] per change the import had
//! to make, or an [`ImportError`] with file, line and column.
//!
//! Stages, one file each: [`lexer`] (tokens with positions), [`parser`]
//! (the literal-and-comprehension subset of Python), [`eval`] (Python's
//! values without executing code) and [`extract`] (finding the truths,
//! actions and outcomes variables and mapping them onto
//! [`DomainDoc`](crate::domain::DomainDoc)). No file-system access: the
//! CLI reads and writes files.
//!
//! Invariants: source order is kept everywhere (sets included); every
//! state and every rule-out of the Python file is kept unless it cannot be
//! represented, and each change is reported as a note; any input, however
//! malformed or large, gives a value or an error, never a panic or a hang.

pub mod ast;
pub mod eval;
pub mod extract;
pub mod lexer;
pub mod parser;

use std::fmt;

use crate::domain::Diagnostic;

pub use eval::{Module, Value, ValueKind};
pub use extract::{ImportOptions, Imported, Note, NoteKind};

/// A 1-based line and column (in characters) in the Python file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A problem at a place in the Python source, from any stage of the
/// importer (the lexer, the parser or the evaluator): where, what, and how
/// to fix it. [`ImportError`] adds the file and renders it.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceError {
    pub pos: Pos,
    pub message: String,
    pub help: Option<String>,
}

impl SourceError {
    pub(crate) fn new(pos: Pos, message: impl Into<String>) -> Self {
        SourceError {
            pos,
            message: message.into(),
            help: None,
        }
    }

    pub(crate) fn with_help(pos: Pos, message: impl Into<String>, help: impl Into<String>) -> Self {
        SourceError::new(pos, message).help(help)
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// Why a Python file could not be imported: the file, the position, what
/// is wrong and how to fix it, rendered with the offending line.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{diagnostic}")]
pub struct ImportError {
    pub diagnostic: Box<Diagnostic>,
}

impl ImportError {
    pub(crate) fn new(
        file: &str,
        source: &str,
        pos: Option<Pos>,
        path: &str,
        message: impl Into<String>,
        help: Option<String>,
    ) -> Self {
        let mut d = Diagnostic::error(crate::domain::Kind::Import, file, path, message);
        if let Some(help) = help {
            d = d.with_help(help);
        }
        if let Some(pos) = pos {
            d = d.at_in(pos.line, pos.column, source);
        }
        ImportError {
            diagnostic: Box::new(d),
        }
    }

    /// The file as the caller named it.
    pub fn file(&self) -> &str {
        &self.diagnostic.file
    }

    /// 1-based line, when known.
    pub fn line(&self) -> Option<u32> {
        self.diagnostic.line
    }

    /// 1-based column, when known.
    pub fn column(&self) -> Option<u32> {
        self.diagnostic.column
    }

    /// What is wrong, without position or help.
    pub fn message(&self) -> &str {
        &self.diagnostic.message
    }
}

/// Reads and evaluates a Python data file without executing anything:
/// the top-level names with their values, as Python would bind them
/// (except that sets keep source order).
pub fn evaluate_python(file: &str, source: &str) -> Result<Module, ImportError> {
    let located =
        |e: SourceError| ImportError::new(file, source, Some(e.pos), "", e.message, e.help);
    let tokens = lexer::tokenize(source).map_err(located)?;
    let stmts = parser::parse(&tokens).map_err(located)?;
    eval::evaluate(&stmts).map_err(located)
}

/// Imports a KUMO Python domain file (`file` is the name used in messages
/// and, without `options.name`, for the domain name).
pub fn import_python(
    file: &str,
    source: &str,
    options: &ImportOptions,
) -> Result<Imported, ImportError> {
    let module = evaluate_python(file, source)?;
    extract::extract(file, source, &module, options)
}

/// The text of a Python data file from its bytes: UTF-8, else a located
/// diagnostic at the first byte that is not (`file` names it).
pub fn decode_source(file: &str, bytes: Vec<u8>) -> Result<String, Box<Diagnostic>> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let good = &bytes[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
        let start = good.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        let column = String::from_utf8_lossy(&good[start..]).chars().count() as u32 + 1;
        Diagnostic::error(
            crate::domain::Kind::File,
            file,
            "",
            "the file is not UTF-8 text (is it binary?)",
        )
        .with_help("KUMO data files are Python source in UTF-8; check the path")
        .at(line, column, None)
        .into()
    })
}
