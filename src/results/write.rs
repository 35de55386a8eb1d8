//! Where results go and how a results file is written: the file of a
//! model, agent, domain and setting below a results root
//! ([`result_path`], the model's folder name by [`path_component`]), and
//! opening one for appending ([`open_results`]: locked, a partial last line
//! cut off, the seeds already written returned so a run resumes).

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::files::FileError;

/// Why a results file cannot be opened, resumed or written.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// Another run holds the file's lock.
    #[error(
        "{} is being written by another kumo-gen run; wait for it to finish (a re-run then resumes) or choose another --out",
        path.display()
    )]
    Busy { path: PathBuf },
    /// A line of the file is not a result line.
    #[error("{}:{line}: not a result line; move the file away to start over", path.display())]
    NotResults { path: PathBuf, line: usize },
    /// A folder on the way cannot be made below the results root, or the
    /// file is a symbolic link.
    #[error(transparent)]
    Refused(FileError),
    /// The file is a FIFO, a device or another file that is not regular
    /// (refused by `files::read`'s rule).
    #[error("`{}`: {source}", path.display())]
    NotAFile { path: PathBuf, source: io::Error },
    /// A result line longer than the line cap `score` and `report` read
    /// (not written: the run stops).
    #[error(
        "`{}`: the result line of seed {seed} is {bytes} bytes, longer than {limit} bytes, the line limit of the readers of results; it was not written",
        path.display()
    )]
    LineTooLong {
        path: PathBuf,
        seed: u64,
        bytes: u64,
        limit: u64,
    },
    /// Reading or writing the file failed.
    #[error("cannot write `{}`: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

impl ResultsError {
    /// Whether the user's request is the cause (another run on the same
    /// file, a file that is not results), not the disk.
    pub fn is_input(&self) -> bool {
        match self {
            ResultsError::Busy { .. }
            | ResultsError::NotResults { .. }
            | ResultsError::NotAFile { .. }
            | ResultsError::LineTooLong { .. } => true,
            ResultsError::Refused(e) => e.is_input(),
            ResultsError::Io { .. } => false,
        }
    }

    /// How to fix it, when there is advice.
    pub fn help(&self) -> Option<String> {
        match self {
            ResultsError::LineTooLong { .. } => Some(format!(
                "lower `--trials` or `--max-steps` (a line holds every trial of its instance), or set {} to a larger byte count for every reader",
                crate::files::read::LINE_VAR
            )),
            ResultsError::Refused(e) => e.help(),
            _ => None,
        }
    }
}

/// A model or player name as one directory name inside `--out`, one
/// folder per name (two names never share a results file):
/// - a name of `[A-Za-z0-9._-]` only, not starting with `.`, of at most
///   [`READABLE_LEN`] characters, is the folder name as it is;
/// - any other name is made readable (`/` becomes `--`, other characters
///   become `_`, a leading `.` gets a `_` before it, at most
///   [`READABLE_LEN`] characters kept) and gets `~` and the FNV-1a 64 of
///   the whole name as a suffix: `orgA/llama-8b` ->
///   `orgA--llama-8b~<16 hex>`, never `orgA--llama-8b` (a name of its
///   own). `~` appears in no name of the first kind, so the two kinds
///   never meet, and `..`, `.` and hidden names never leave or hide in
///   `--out`.
pub fn path_component(name: &str) -> String {
    let readable = readable_component(name);
    if readable == name && name.len() <= READABLE_LEN {
        return readable;
    }
    let cut: String = readable.chars().take(READABLE_LEN).collect();
    format!("{cut}~{}", crate::fnv::fnv1a_hex(name.as_bytes()))
}

/// How many characters of a changed name its folder keeps (the whole
/// folder name stays far below the usual 255-byte limit).
pub const READABLE_LEN: usize = 150;

/// The folder name earlier kumo-gen versions used for `name` (lossy: the
/// readable part of [`path_component`] without its suffix).
fn readable_component(name: &str) -> String {
    let mut out: String = name
        .replace('/', "--")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with('.') {
        out.insert(0, '_');
    }
    out
}

/// A results folder of `model` named by the older, lossy mapping, when it
/// exists and the current folder does not: its results are not read (that
/// folder name may belong to another model), and the caller says so.
pub fn legacy_results_dir(out: &Path, model: &str) -> Option<PathBuf> {
    let legacy = out.join(readable_component(model));
    let current = out.join(path_component(model));
    (legacy != current && legacy.is_dir() && !current.exists()).then_some(legacy)
}

/// Why `model`'s results folder cannot be used in `out`, if it cannot:
/// its folder name is one kumo-gen keeps for its own folders
/// ([`crate::dataset::reserved`]), or `out` already holds a folder whose
/// name differs from it only in letter case (`Model`, `model`: one
/// folder on a case-insensitive file system, so one model's results
/// would be resumed as the other's).
pub fn results_folder_problem(out: &Path, model: &str) -> Option<String> {
    let folder = path_component(model);
    if let Some(why) = crate::dataset::reserved::reserved(&folder) {
        return Some(format!("the results folder of `{model}`: {why}"));
    }
    let key = crate::dataset::reserved::folded(&folder);
    let entries = std::fs::read_dir(out).ok()?;
    let other = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|name| *name != folder && crate::dataset::reserved::folded(name) == key)?;
    Some(format!(
        "{}; `{}` holds results under `{other}`",
        crate::dataset::reserved::case_duplicate_message("the results folder", &other, &folder),
        out.display()
    ))
}

/// The result file of a suite: `<out>/<model>/<agent>/<domain>/<setting>/eval_times=K.jsonl`,
/// the model as [`path_component`] writes it.
pub fn result_path(
    out: &Path,
    model: &str,
    agent: &str,
    domain_dir: &str,
    setting: &str,
    trials: usize,
) -> PathBuf {
    out.join(path_component(model))
        .join(agent)
        .join(domain_dir)
        .join(setting)
        .join(format!("eval_times={trials}.jsonl"))
}

/// Opens a result file for appending after cutting off a trailing partial
/// line; returns the seeds already written. The file stays locked while
/// the returned handle is open: a second run on the same results file
/// fails at once instead of writing every instance twice.
///
/// The folders between `root` (the results root, `--out`) and the file
/// are created, and a symbolic link among them or at the file is refused:
/// writing through it could change files outside `root`.
pub fn open_results(root: &Path, path: &Path) -> Result<(File, BTreeSet<u64>), ResultsError> {
    if let Some(dir) = path.parent() {
        crate::files::create_dir_below(root, dir).map_err(ResultsError::Refused)?;
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(ResultsError::Refused(crate::files::symlink_refused(path)));
    }
    // A FIFO or device there would block or never end the read below.
    if path.exists() {
        crate::files::read::open(path).map_err(|source| ResultsError::NotAFile {
            path: path.to_path_buf(),
            source,
        })?;
    }
    let io = |source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(ResultsError::Busy {
                path: path.to_path_buf(),
            });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
    }
    // Read a line at a time under the line cap: only the seeds are kept.
    let size = file.metadata().map_err(io)?.len();
    let mut lines =
        crate::files::read::Lines::new(std::io::BufReader::with_capacity(1 << 20, &file));
    let mut line = Vec::new();
    let (mut whole, mut end) = (0u64, 0u64);
    let mut seeds = BTreeSet::new();
    loop {
        let more = lines.next_line(&mut line).map_err(|source| {
            if crate::files::read::is_refusal(&source) {
                ResultsError::NotAFile {
                    path: path.to_path_buf(),
                    source,
                }
            } else {
                io(source)
            }
        })?;
        if !more {
            break;
        }
        end += line.len() as u64;
        if line.last() != Some(&b'\n') {
            break; // a partial last line, cut off below
        }
        whole = end;
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        let seed = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("seed").and_then(Value::as_u64));
        match seed {
            Some(s) => {
                seeds.insert(s);
            }
            None => {
                return Err(ResultsError::NotResults {
                    path: path.to_path_buf(),
                    line: lines.number() as usize,
                });
            }
        }
    }
    drop(lines);
    if whole < size {
        file.set_len(whole).map_err(io)?;
        file.sync_data().map_err(io)?;
    }
    file.seek(SeekFrom::End(0)).map_err(io)?;
    Ok((file, seeds))
}
