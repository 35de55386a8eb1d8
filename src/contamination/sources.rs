//! The files of an `--exclude` or `overlap` path and their keys, read in
//! parallel batches (order kept) so millions of lines stream through.
//!
//! A file is read whatever its name. A directory contributes every
//! `*.jsonl` under it, sorted, except `shards/` (first draws, not the
//! dataset), `knowledge_book/`, `sft/` directories and `*-sft.jsonl` /
//! `*.steps.jsonl` files: SFT records give only the context key, so they
//! are read when named explicitly, never picked up with a dataset.
//!
//! Files are opened, read and walked by [`crate::files::read`]' rule:
//! regular files only, lines of at most its cap, each directory entered
//! once; a file's digest is taken in the same pass as its keys.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{LineKeys, ReadError, ReadProblem, recorded, recorded_keys, relative};
use crate::domain::Domain;

/// One file of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    pub path: PathBuf,
}

fn io_error(path: &Path, e: std::io::Error) -> ReadError {
    ReadError {
        path: path.to_path_buf(),
        line: None,
        problem: ReadProblem::Io(e),
    }
}

/// The instance files of `path` (see the module doc).
pub fn dataset_files(path: &Path) -> Result<Vec<SourceFile>, ReadError> {
    let visible = |name: &str| !name.starts_with('.');
    let files = crate::files::read::walk(
        path,
        |name| visible(name) && !matches!(name, "shards" | "knowledge_book" | "sft"),
        |name| {
            visible(name)
                && name.ends_with(".jsonl")
                && !name.ends_with("-sft.jsonl")
                && !name.ends_with(".steps.jsonl")
        },
    )
    .map_err(|e| io_error(path, e))?;
    if files.is_empty() {
        return Err(ReadError {
            path: path.to_path_buf(),
            line: None,
            problem: ReadProblem::NoInstanceFiles,
        });
    }
    Ok(files.into_iter().map(|path| SourceFile { path }).collect())
}

/// The digest of a path from its files' digests (as [`read_keys`]
/// returns them, in the order of `files`): its one file's digest, or for
/// a directory FNV-1a 64 of the lines `<relative path> <digest>` of its
/// files.
pub(super) fn digest_of(path: &Path, files: &[(SourceFile, String)]) -> String {
    if !path.is_dir()
        && let [(_, digest)] = files
    {
        return digest.clone();
    }
    let mut listing = String::new();
    for (file, digest) in files {
        listing.push_str(&relative(path, &file.path));
        listing.push(' ');
        listing.push_str(digest);
        listing.push('\n');
    }
    crate::fnv::fnv1a_hex(listing.as_bytes())
}

/// The keys of the first non-blank line of `path` (`None`: no such
/// line), to tell the kind of records a file holds
/// before reading it.
pub(super) fn first_keys(
    path: &Path,
    domain: Option<&Domain>,
) -> Result<Option<LineKeys>, ReadError> {
    // Read by the one rule for users' files (regular files only, the
    // line cap).
    let mut reader = crate::files::read::lines(path).map_err(|e| io_error(path, e))?;
    let mut number = 0u64;
    let mut line = Vec::new();
    loop {
        let more = reader.next_line(&mut line).map_err(|e| io_error(path, e))?;
        if !more {
            return Ok(None);
        }
        number += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        return recorded::parse_line(&line)
            .map(|r| Some(recorded_keys(&r, domain)))
            .map_err(|e| ReadError {
                path: path.to_path_buf(),
                line: Some(number),
                problem: e.into(),
            });
    }
}

/// Lines parsed in parallel at a time.
const BATCH: usize = 16_384;

/// Calls `each(line_number, keys)` for every non-blank line of `path`, in
/// order (1-based line numbers), and returns the digest of the bytes read
/// (one pass: the keys and the digest are of the same bytes). A line that
/// is no instance is an error naming the line.
pub fn read_keys(
    path: &Path,
    domain: Option<&Domain>,
    mut each: impl FnMut(u64, LineKeys),
) -> Result<String, ReadError> {
    if path.extension().is_some_and(|e| e == "parquet") {
        return Err(ReadError {
            path: path.to_path_buf(),
            line: None,
            problem: ReadProblem::Parquet,
        });
    }
    let mut reader = crate::files::read::lines(path).map_err(|e| io_error(path, e))?;
    let mut batch: Vec<(u64, Vec<u8>)> = Vec::with_capacity(BATCH);
    let mut flush = |batch: &mut Vec<(u64, Vec<u8>)>| -> Result<(), ReadError> {
        let keys: Vec<Result<LineKeys, ReadError>> = batch
            .par_iter()
            .with_min_len(256)
            .map(|(n, line)| {
                recorded::parse_line(line)
                    .map(|r| recorded_keys(&r, domain))
                    .map_err(|e| ReadError {
                        path: path.to_path_buf(),
                        line: Some(*n),
                        problem: e.into(),
                    })
            })
            .collect();
        for ((n, _), keys) in batch.iter().zip(keys) {
            each(*n, keys?);
        }
        batch.clear();
        Ok(())
    };
    let mut line = Vec::new();
    while reader.next_line(&mut line).map_err(|e| io_error(path, e))? {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        batch.push((reader.number(), std::mem::take(&mut line)));
        if batch.len() == BATCH {
            flush(&mut batch)?;
        }
    }
    flush(&mut batch)?;
    Ok(reader.digest())
}
