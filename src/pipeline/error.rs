//! The pipeline's own error: why a job (`generate`, `merge`, `label`, a
//! `--seed random` run) stopped, by kind. Each kind is the error of the
//! room it comes from, taken in through `From`; the crate's
//! [`crate::error::Error`], above the pipeline beside the command line,
//! takes each in kind for kind (the same message, help and exit code).

use crate::contamination::capacity::CapacityError;
use crate::dataset::DatasetError;
use crate::domain::LoadError;
use crate::files::FileError;
use crate::render::{TaskError, TemplateError};
use crate::synth::SynthError;

use super::seed_error::SeedError;
use super::write::OutputError;

/// Why a job stopped.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A domain that does not resolve or load.
    #[error(transparent)]
    Domain(#[from] LoadError),
    /// A dataset directory or input file that cannot be read as one.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// The writers: the user's request (an output in the way, another run
    /// writing it), or the disk.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A file written or read by `files`' rules.
    #[error(transparent)]
    File(#[from] FileError),
    /// `-n` is more than the setting can give (checked before writing).
    #[error("{0}; nothing was written")]
    Capacity(#[from] CapacityError),
    /// A private seed file that cannot be begun, read or proven.
    #[error(transparent)]
    Seed(#[from] SeedError),
    /// An infeasible setting.
    #[error(transparent)]
    Synth(#[from] SynthError),
    /// A template set that does not load or render.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// An instance whose book or prompt cannot be rendered.
    #[error(transparent)]
    Task(#[from] TaskError),
    /// The user's input or request: a value the job refuses, a malformed
    /// line.
    #[error("{message}")]
    Input {
        message: String,
        help: Option<String>,
    },
    /// Options that do not go together (a usage error clap cannot see).
    #[error("{message}")]
    Usage {
        message: String,
        help: Option<String>,
    },
    /// Reading or writing failed outside the cases above.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl JobError {
    /// The user's input or request, with no help line.
    pub fn input(message: impl Into<String>) -> JobError {
        JobError::Input {
            message: message.into(),
            help: None,
        }
    }

    /// The user's input or request, and how to fix it.
    pub fn input_with_help(message: impl Into<String>, help: impl Into<String>) -> JobError {
        JobError::Input {
            message: message.into(),
            help: Some(help.into()),
        }
    }
}
