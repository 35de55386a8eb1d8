//! The crate's one error: what stopped a command, by kind. Each kind knows
//! whether it is the user's input or request (exit 1: a domain, dataset,
//! results or other input file the user named, a flag value the command
//! refuses, an output another run is writing, an infeasible request) or
//! not (exit 2: usage, a failure writing output, a failing service, an
//! internal error), as docs/exit-codes.md says.
//! [`crate::cli`] alone prints an `Error` and turns it into the exit code;
//! the library's modules keep their own error types, wrapped here.

use std::io;

use crate::contamination::ReadError as RecordedError;
use crate::dataset::DatasetError;
use crate::domain::LoadError;
use crate::eval::client::EndpointError;
use crate::eval::players::UnplayableFile;
use crate::family::FamilyError;
use crate::files::FileError;
use crate::graph::split::SplitError;
use crate::pipeline::JobError;
use crate::pipeline::secret::SeedError;
use crate::pipeline::write::OutputError;
use crate::propose::ExampleError;
use crate::propose::batch::{NameError, TopicsError};
use crate::propose::prompts::PromptError;
use crate::render::{LineMismatch, TaskError, TemplateError};
use crate::results::ResultsError;
use crate::results::ScoreFileError;
use crate::stats::ObserveError;
use crate::synth::SynthError;

/// Exit code of the user's input or an infeasible request.
pub const EXIT_INPUT: i32 = 1;
/// Exit code of usage, output, service and internal errors.
pub const EXIT_OTHER: i32 = 2;

/// What stopped a command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A domain that does not resolve or load (its message is complete:
    /// located diagnostics, or the unknown name with help).
    #[error(transparent)]
    Domain(#[from] LoadError),
    /// A dataset directory or input file that cannot be read as one.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// A result or oracle file that cannot be read as one.
    #[error(transparent)]
    ScoreFile(#[from] ScoreFileError),
    /// A recorded dataset (`--exclude`, `overlap`) that cannot be read.
    #[error(transparent)]
    Recorded(#[from] RecordedError),
    /// The writers: the user's request (an output in the way, another
    /// run writing it), or the disk.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A file written or read by `files`' rules: another run holding it,
    /// a damaged file, the disk.
    #[error(transparent)]
    File(#[from] FileError),
    /// A results file (`eval`, `play --record`): another run writing it,
    /// a file that is not results (the user's), or the disk.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// `-n` is more than the setting can give (checked before writing).
    #[error("{0}; nothing was written")]
    Capacity(#[from] crate::contamination::capacity::CapacityError),
    /// The server cannot listen or stopped badly; its kind decides the exit
    /// code.
    #[error(transparent)]
    Serve(#[from] crate::serve::ServeError),
    /// A private seed file that cannot be read or does not prove its
    /// dataset (`verify`), or no random seed to draw.
    #[error(transparent)]
    Seed(#[from] SeedError),
    /// `propose`: a domain name it cannot give (`--name`, `-o`).
    #[error(transparent)]
    DomainName(#[from] NameError),
    /// `propose`: a topics file (`--topics`) it cannot propose from.
    #[error(transparent)]
    Topics(#[from] TopicsError),
    /// `propose`: an `--example` domain that cannot be the example.
    #[error(transparent)]
    Example(#[from] ExampleError),
    /// `propose`: prompt templates (`--templates-dir`) that do not load.
    #[error(transparent)]
    Prompts(#[from] PromptError),
    /// `family`: a bad family name or parameter.
    #[error(transparent)]
    Family(#[from] FamilyError),
    /// `split`: a domain that cannot be split (or, a bug, a half that does
    /// not validate).
    #[error(transparent)]
    Split(#[from] SplitError),
    /// `stats`: result lines that cannot be paired with their instances.
    #[error(transparent)]
    Observe(#[from] ObserveError),
    /// `eval --player`: an instance file the offline player cannot play.
    #[error(transparent)]
    Unplayable(#[from] UnplayableFile),
    /// An infeasible setting.
    #[error(transparent)]
    Synth(#[from] SynthError),
    /// A template set (`--templates-dir`) that does not load or render.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// An instance that does not fit its domain, or whose book or prompt
    /// cannot be rendered from it.
    #[error(transparent)]
    Task(#[from] TaskError),
    /// An instance line that names what its domain does not have.
    #[error(transparent)]
    Mismatch(#[from] LineMismatch),
    /// The user's file, with located diagnostics already in their printed
    /// form (`file:line:column`, the line, help): printed as it stands.
    #[error("{0}")]
    Located(String),
    /// Anything else of the user's: a flag value or combination the
    /// command refuses, an input that does not fit.
    #[error("{message}")]
    Input {
        message: String,
        help: Option<String>,
    },
    /// A usage error clap cannot see (flags that do not go together, a
    /// value that names nothing).
    #[error("{message}")]
    Usage {
        message: String,
        help: Option<String>,
    },
    /// A service the command needs failed (the model's API after its
    /// retries): running the same command again resumes.
    #[error("{message}")]
    Service { message: String },
    /// The model's API cannot be used (`--api-base` malformed, its server
    /// unreachable): running the same command later may work.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// A bug: something kumo-gen made does not hold what it must.
    #[error("internal: {0}")]
    Internal(String),
    /// Reading or writing failed outside the cases above (stdout included:
    /// a closed pipe ends quietly).
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// A pipeline job's error, kind for kind: the same message, help and exit
/// code as the room's error it wraps.
impl From<JobError> for Error {
    fn from(e: JobError) -> Error {
        match e {
            JobError::Domain(e) => Error::Domain(e),
            JobError::Dataset(e) => Error::Dataset(e),
            JobError::Output(e) => Error::Output(e),
            JobError::File(e) => Error::File(e),
            JobError::Capacity(e) => Error::Capacity(e),
            JobError::Seed(e) => Error::Seed(e),
            JobError::Synth(e) => Error::Synth(e),
            JobError::Template(e) => Error::Template(e),
            JobError::Task(e) => Error::Task(e),
            JobError::Input { message, help } => Error::Input { message, help },
            JobError::Usage { message, help } => Error::Usage { message, help },
            JobError::Io(e) => Error::Io(e),
        }
    }
}

impl Error {
    /// The user's input or request, with no help line.
    pub fn input(message: impl Into<String>) -> Error {
        Error::Input {
            message: message.into(),
            help: None,
        }
    }

    /// The user's input or request, and how to fix it.
    pub fn input_with_help(message: impl Into<String>, help: impl Into<String>) -> Error {
        Error::Input {
            message: message.into(),
            help: Some(help.into()),
        }
    }

    /// Whether this is the user's input or an infeasible request (exit 1).
    pub fn is_input(&self) -> bool {
        match self {
            Error::Domain(_)
            | Error::Dataset(_)
            | Error::ScoreFile(_)
            | Error::Recorded(_)
            | Error::Synth(_)
            | Error::DomainName(_)
            | Error::Topics(_)
            | Error::Example(_)
            | Error::Prompts(_)
            | Error::Family(_)
            | Error::Observe(_)
            | Error::Unplayable(_)
            | Error::Template(_)
            | Error::Task(_)
            | Error::Mismatch(_)
            | Error::Located(_)
            | Error::Capacity(_)
            | Error::Input { .. } => true,
            Error::Output(e) => e.is_input(),
            Error::File(e) => e.is_input(),
            Error::Seed(e) => e.is_input(),
            Error::Results(e) => e.is_input(),
            Error::Serve(e) => e.is_input(),
            Error::Split(e) => matches!(e, SplitError::Infeasible { .. }),
            // A file the user named that is not read by the rule of
            // `files::read` (a FIFO, a device, a line over the cap).
            Error::Io(e) => crate::files::read::is_refusal(e),
            Error::Usage { .. }
            | Error::Service { .. }
            | Error::Endpoint(_)
            | Error::Internal(_) => false,
        }
    }

    /// Whether stdout was closed under the command (`kumo-gen ... | head`):
    /// not a failure.
    pub fn is_closed_pipe(&self) -> bool {
        matches!(self, Error::Io(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }

    /// The process exit code.
    pub fn exit_code(&self) -> i32 {
        if self.is_closed_pipe() {
            0
        } else if self.is_input() {
            EXIT_INPUT
        } else {
            EXIT_OTHER
        }
    }

    /// How to fix it, when known.
    pub fn help(&self) -> Option<String> {
        match self {
            Error::Output(e) => e.help(),
            Error::File(e) => e.help(),
            Error::Results(e) => e.help(),
            Error::Synth(e) => Some(e.help.clone()),
            Error::Family(e) => Some(e.help.clone()),
            Error::Recorded(e) => Some(e.help().to_string()),
            Error::Seed(e) => e.help(),
            Error::Serve(e) => e.help(),
            Error::Capacity(_) => {
                Some("lower `-n`, raise `--truths`/`--actions`, or exclude less".into())
            }
            Error::Input { help, .. } | Error::Usage { help, .. } => help.clone(),
            _ => None,
        }
    }

    /// Whether the message carries its own heads: a domain file's located
    /// diagnostics (`error: ...` / `warning: ...` each, wherever the
    /// domain was named: `--domain`, a dataset's manifest) or an
    /// already-located message.
    fn has_own_heads(&self) -> bool {
        let load = match self {
            Error::Located(_) => return true,
            Error::Domain(e) => e,
            Error::Dataset(
                DatasetError::DomainSpec { source, .. }
                | DatasetError::ManifestDomain { source, .. },
            ) => source,
            _ => return false,
        };
        matches!(load, LoadError::Invalid(_))
    }

    /// The message as printed on stderr, the one rule for its head:
    /// `error: MESSAGE` and its help line, except that a message with its
    /// own heads (located diagnostics) stands as it is, so each problem is
    /// headed exactly once.
    pub fn report(&self) -> String {
        let head = if self.has_own_heads() {
            self.to_string()
        } else {
            format!("error: {self}")
        };
        match self.help() {
            Some(help) => format!("{head}\n  = help: {help}"),
            None => head,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_picks_the_readme_exit_code() {
        let code = |e: Error| e.exit_code();
        assert_eq!(code(Error::input("a flag value")), EXIT_INPUT);
        assert_eq!(code(Error::Located("file:1:1: x".into())), EXIT_INPUT);
        let not_found = DatasetError::NotFound {
            path: "results".into(),
        };
        assert_eq!(code(not_found.into()), EXIT_INPUT);
        let usage = Error::Usage {
            message: "x".into(),
            help: None,
        };
        assert_eq!(code(usage), EXIT_OTHER);
        assert_eq!(
            code(Error::Service {
                message: "x".into()
            }),
            EXIT_OTHER
        );
        let disk = OutputError::Io {
            path: "out".into(),
            source: io::Error::other("disk full"),
        };
        assert_eq!(code(disk.into()), EXIT_OTHER);
        let busy = OutputError::Busy { path: "out".into() };
        assert_eq!(code(busy.into()), EXIT_INPUT);
        let pipe = io::Error::new(io::ErrorKind::BrokenPipe, "closed");
        assert_eq!(code(pipe.into()), 0);
    }

    #[test]
    fn reports_put_help_under_the_message() {
        let e = Error::input_with_help("nothing to do", "pass -o FILE");
        assert_eq!(e.report(), "error: nothing to do\n  = help: pass -o FILE");
    }
}
