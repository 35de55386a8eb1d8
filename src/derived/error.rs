//! What can stop the derived files of a dataset: the file layer
//! ([`FileError`]: a damaged dataset, the disk), a user's template that
//! fails on an instance, or a bug. The writers above
//! (`pipeline::write::OutputError`) take these in through `From`, kind
//! for kind.

use std::path::Path;

use crate::files::{AtomicError, FileError};

/// Why the derived files of a dataset could not be written.
#[derive(Debug, thiserror::Error)]
pub enum DerivedError {
    /// The dataset file is damaged, or reading or writing failed.
    #[error(transparent)]
    File(#[from] FileError),
    /// A user's template (`--templates-dir`) fails on an instance: it
    /// does not render, or renders a book that fails its check (exit 1).
    #[error("{message}")]
    Template { message: String, help: String },
    /// A bug in kumo-gen, such as a book rendered by the shipped templates
    /// that fails its check; the data is not at fault (exit 2).
    #[error("internal error: {message}")]
    Internal { message: String },
}

impl DerivedError {
    /// Reading or writing `path` failed.
    pub fn io(path: &Path, source: std::io::Error) -> DerivedError {
        DerivedError::File(FileError::io(path, source))
    }

    /// The dataset file `path` is not what it must be.
    pub fn corrupt(path: &Path, message: impl Into<String>) -> DerivedError {
        DerivedError::File(FileError::Corrupt {
            path: path.to_path_buf(),
            message: message.into(),
        })
    }
}

impl From<AtomicError> for DerivedError {
    fn from(e: AtomicError) -> DerivedError {
        DerivedError::File(e.into())
    }
}
