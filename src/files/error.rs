//! What can go wrong writing (or reading) a file by the rules of
//! [`crate::files`]: another run holds it, it is not what it must be, or
//! the disk failed. The writers above (`pipeline::write::OutputError`)
//! take these in through `From`, kind for kind.

use std::path::{Path, PathBuf};

/// Why a file could not be locked, read or written safely.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Another run holds the file's lock (exit 1).
    #[error("`{}` is being written by another kumo-gen run", path.display())]
    Busy { path: PathBuf },
    /// An existing file is not what it must be (exit 1).
    #[error("`{}` is damaged: {message}", path.display())]
    Corrupt { path: PathBuf, message: String },
    /// Writing failed (exit 2), or a file the user named is refused by
    /// [`crate::files::read`]'s rule (exit 1).
    #[error("cannot write `{}`: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file there cannot be read: missing, not permitted, not a regular
    /// file (exit 1: the user's files).
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl FileError {
    pub fn io(path: &Path, source: std::io::Error) -> FileError {
        FileError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub fn read(path: &Path, source: std::io::Error) -> FileError {
        FileError::Read {
            path: path.to_path_buf(),
            source,
        }
    }

    /// How to fix it, when there is advice.
    pub fn help(&self) -> Option<String> {
        match self {
            FileError::Busy { .. } => Some(
                "wait for that run to finish (re-running the same command then resumes or finds it up to date), or choose another `--out`".into(),
            ),
            FileError::Corrupt { .. } => {
                Some("pass `--force` to start over, or choose another `--out`".into())
            }
            FileError::Io { .. } | FileError::Read { .. } => None,
        }
    }

    /// Whether this is the user's request or file (exit 1) rather than
    /// the disk (exit 2).
    pub fn is_input(&self) -> bool {
        match self {
            FileError::Io { source, .. } => crate::files::read::is_refusal(source),
            FileError::Busy { .. } | FileError::Corrupt { .. } | FileError::Read { .. } => true,
        }
    }
}
