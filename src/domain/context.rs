//! Where a domain's diagnostics point: the file, its lines and the
//! position of every document path, collected while reading (pass 2) and
//! looked up while compiling (pass 3), so both report located problems.

use std::collections::HashMap;

use super::diagnostic::{Diagnostic, Kind, LoadError};
use super::node::SNode;

/// Positions (line, column) by document path, e.g. `actions[3].states.negative`.
#[derive(Default)]
pub(super) struct Positions(pub(super) HashMap<String, (u32, u32)>);

impl Positions {
    pub(super) fn record(&mut self, path: &str, node: &SNode) {
        let loc = node.referenced;
        self.0
            .insert(path.to_string(), (loc.line() as u32, loc.column() as u32));
    }
}

/// Where diagnostics point: the file name, its text and positions if known.
pub(super) struct Context<'a> {
    pub(super) file: &'a str,
    /// The source's lines, for snippets (empty for in-memory documents).
    pub(super) lines: Vec<&'a str>,
    pub(super) positions: Positions,
    pub(super) diagnostics: Vec<Diagnostic>,
}

impl Context<'_> {
    pub(super) fn locate(&self, d: Diagnostic) -> Diagnostic {
        match self.positions.0.get(&d.path) {
            Some(&(line, column)) => {
                let text = (line as usize)
                    .checked_sub(1)
                    .and_then(|i| self.lines.get(i));
                d.at(line, column, text.copied())
            }
            None => d,
        }
    }

    pub(super) fn error(
        &mut self,
        kind: Kind,
        path: impl Into<String>,
        message: impl Into<String>,
        help: &str,
    ) {
        let d = Diagnostic::error(kind, self.file, path, message).with_help(help);
        let mut d = self.locate(d);
        // A path holds state labels: print their invisible characters.
        d.path = super::names::shown(&d.path);
        self.diagnostics.push(d);
    }

    pub(super) fn warning(
        &mut self,
        kind: Kind,
        path: impl Into<String>,
        message: impl Into<String>,
        help: &str,
    ) {
        let d = Diagnostic::warning(kind, self.file, path, message).with_help(help);
        let d = self.locate(d);
        self.diagnostics.push(d);
    }

    pub(super) fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    pub(super) fn finish(self) -> Result<Vec<Diagnostic>, LoadError> {
        if self.has_errors() {
            Err(LoadError::Invalid(self.diagnostics))
        } else {
            Ok(self.diagnostics)
        }
    }
}
