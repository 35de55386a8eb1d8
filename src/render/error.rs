//! Why rendering fails: an instance that does not fit its domain
//! ([`TaskError`]; [`LineMismatch`] for an instance line's names), and
//! templates that do not load or render ([`TemplateError`]).

use std::path::PathBuf;

/// A problem loading or rendering templates.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("cannot read templates from `{dir}`: {source}")]
    Io {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "unknown template `{file}` in `{dir}`\nhelp: a templates directory may hold {expected}; rename or remove the file"
    )]
    Unknown {
        dir: PathBuf,
        file: String,
        expected: String,
    },
    #[error("the shipped templates lack `{0}.j2` (a build problem)")]
    Missing(String),
    #[error("template `{name}.j2` from {origin}: {detail}")]
    Template {
        name: String,
        origin: String,
        detail: String,
    },
}

/// A problem reading an instance, or rendering its book or prompt.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("{actions} actions but {observed} observed states and {values} values")]
    Lengths {
        actions: usize,
        observed: usize,
        values: usize,
    },
    #[error("truth index {0} is outside the domain")]
    TruthOutside(usize),
    #[error("valid truth index {0} is not a truth of the instance")]
    ValidNotATruth(usize),
    #[error("action index {0} is outside the domain")]
    ActionOutside(usize),
    #[error("action `{action}` (position {position}) has no state {state}")]
    NoState {
        action: String,
        position: usize,
        state: usize,
    },
    #[error("not an instance line: {0}")]
    NotALine(#[source] serde_json::Error),
    /// The line names what its domain does not have.
    #[error(transparent)]
    Mismatch(#[from] LineMismatch),
    /// A number in no range of its action: a book cannot show it.
    #[error("the observation of action `{action}` lies in no range of its states")]
    NoRange { action: String },
    /// The book of an instance cannot be rendered from its domain.
    #[error("cannot render the knowledge book of seed {seed} from domain `{domain}`: {source}")]
    Book {
        seed: u64,
        domain: String,
        #[source]
        source: Box<TaskError>,
    },
    /// A template fails on the instance.
    #[error(transparent)]
    Template(#[from] TemplateError),
}

/// An instance line that does not fit its domain (an unknown or repeated
/// name, a missing observation, ...): the message names the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineMismatch {
    /// A name in `field` (`truths`, `actions`, `valid_truth`) the domain
    /// does not have.
    #[error(
        "unknown {} `{name}` in `{field}`; the domain `{domain}` does not have it",
        if *field == "actions" { "action" } else { "truth" }
    )]
    UnknownName {
        field: &'static str,
        name: String,
        domain: String,
    },
    #[error("`{field}[{index}]` repeats an earlier entry; list each once")]
    Repeated { field: &'static str, index: usize },
    #[error("`valid_truth` holds a non-string")]
    ValidNotString,
    #[error("`valid_truth` is missing")]
    ValidMissing,
    #[error("valid truth `{truth}` is not in `truths`")]
    ValidNotInTruths { truth: String },
    #[error("`observations` has nothing for action `{action}`")]
    NoObservation { action: String },
    /// `observed`: the observation as JSON.
    #[error("observation {observed} of action `{action}` matches none of its states")]
    NoState { action: String, observed: String },
    #[error("golden action `{name}` is not in `actions`")]
    GoldenNotInActions { name: String },
    /// An observed action of the instance that its domain does not have
    /// (the domain is the wrong one).
    #[error("action `{name}` of instance seed {seed} is not in domain `{domain}`")]
    ActionNotInDomain {
        name: String,
        seed: u64,
        domain: String,
    },
}
