//! The stamp of a setting's derived files (`.<setting>.derived.json`
//! beside the dataset): which dataset bytes and renderer they were derived
//! from, and the digest of every derived file (or book directory) written.
//!
//! [`plan`] compares the stamp with the files on disk and the options of
//! this run:
//! - a file asked for is current only when the stamp names this dataset
//!   and renderer and its digest still matches (a truncated or edited SFT
//!   file, an edited or deleted book, is stale and rebuilt);
//! - a file not asked for is kept while it is current (a run without
//!   `--hf` or `--steps`, or with `--no-sft`, never deletes what an earlier
//!   run wrote); one that no longer matches the dataset would be silently
//!   wrong, so it is removed and [`Plan::removed`] says which and why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::DerivedError;
use crate::files::{digest, dir_digest};

/// One derived file or directory of a setting.
pub struct Artifact {
    /// The stamp's key (`books`, `sft`, `steps`, `hf`, `hf_sft`).
    pub kind: &'static str,
    pub path: PathBuf,
    /// Asked for by this run's options.
    pub wanted: bool,
    /// How to ask for it (`pass `--hf``), named when it is removed.
    pub flag: &'static str,
    /// Why it must not exist even while it matches the dataset (`--sft-parts`
    /// leaves this part out: a test part's SFT file could leak into
    /// training), or `None`.
    pub refused: Option<&'static str>,
}

/// What the derived files were made from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Source {
    pub dataset: String,
    pub renderer: String,
    pub hf_format: String,
}

/// The stamp file's content.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stamp {
    pub source: Source,
    /// Kind -> digest of the file (or of the book directory's files).
    pub files: BTreeMap<String, String>,
}

/// What this run does with the derived files.
pub struct Plan {
    /// Some file asked for is missing or stale: render and write them all.
    pub rebuild: bool,
    /// Current files (kind -> digest): kept, and recorded again.
    pub current: BTreeMap<String, String>,
    /// Files not asked for that were stale (or refused) and removed:
    /// `path: why; help`.
    pub removed: Vec<String>,
    /// Of those, HF files: the card must be rewritten.
    pub removed_hf: bool,
}

/// Reads the stamp at `path`; a missing or unreadable stamp records nothing.
pub fn read(path: &Path) -> Stamp {
    crate::files::read::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Writes the stamp atomically.
pub fn write(path: &Path, stamp: &Stamp) -> Result<(), DerivedError> {
    let text = serde_json::to_string(stamp).map_err(|e| DerivedError::Internal {
        message: format!("cannot encode the stamp `{}`: {e}", path.display()),
    })?;
    Ok(crate::files::write_atomic(path, text.as_bytes())?)
}

/// The digest of a derived file or directory on disk, `None` when absent.
pub fn on_disk(path: &Path) -> Result<Option<String>, DerivedError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(DerivedError::io(path, e)),
        // A link is never a derived file: stale, so replaced.
        Ok(m) if m.file_type().is_symlink() => Ok(Some(String::new())),
        Ok(m) if m.is_dir() => Ok(Some(dir_digest(path)?)),
        Ok(_) => Ok(Some(digest(path)?)),
    }
}

/// Decides what is current, what is rebuilt and what is removed (and
/// removes it), given the stamp on disk and this run's `source`.
pub fn plan(old: &Stamp, source: &Source, artifacts: &[Artifact]) -> Result<Plan, DerivedError> {
    let same_source = old.source == *source;
    let mut plan = Plan {
        rebuild: false,
        current: BTreeMap::new(),
        removed: Vec::new(),
        removed_hf: false,
    };
    for artifact in artifacts {
        let Some(found) = on_disk(&artifact.path)? else {
            plan.rebuild |= artifact.wanted;
            continue;
        };
        if let Some(why) = artifact.refused {
            remove_path(&artifact.path)?;
            plan.removed_hf |= artifact.kind.starts_with("hf");
            plan.removed
                .push(format!("`{}`: {why}", artifact.path.display()));
            continue;
        }
        let recorded = old.files.get(artifact.kind).filter(|_| same_source);
        if recorded == Some(&found) {
            plan.current.insert(artifact.kind.to_string(), found);
            continue;
        }
        if artifact.wanted {
            plan.rebuild = true;
            continue;
        }
        let why = if !same_source {
            "it was derived from an earlier version of the dataset or with other rendering options"
        } else if recorded.is_some() {
            "it was changed after it was written"
        } else {
            "the stamp does not record it as derived from this dataset"
        };
        remove_path(&artifact.path)?;
        plan.removed_hf |= artifact.kind.starts_with("hf");
        plan.removed.push(format!(
            "`{}`: {why}; {} to rebuild it",
            artifact.path.display(),
            artifact.flag
        ));
    }
    Ok(plan)
}

/// Removes a file, a directory tree or a symbolic link (never its target).
pub fn remove_path(path: &Path) -> Result<(), DerivedError> {
    let removed = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    removed.map_err(|e| DerivedError::io(path, e))
}
