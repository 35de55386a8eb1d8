//! The files of an `--exclude` or `overlap` path and their keys, read in
//! parallel batches (order kept) so millions of lines stream through.
//!
//! A file is read whatever its name. A directory contributes every
//! `*.jsonl` under it, sorted, except `shards/` (first draws, not the
//! dataset), `knowledge_book/`, `sft/` directories and `*-sft.jsonl` /
//! `*.steps.jsonl` files: SFT records give only the context key, so they
//! are read when named explicitly, never picked up with a dataset.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{LineKeys, ReadError, recorded, recorded_keys, relative};
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
        message: e.to_string(),
    }
}

/// The instance files of `path` (see the module doc).
pub fn dataset_files(path: &Path) -> Result<Vec<SourceFile>, ReadError> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
    if !meta.is_dir() {
        return Ok(vec![SourceFile {
            path: path.to_path_buf(),
        }]);
    }
    let mut files = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| io_error(&dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| io_error(&dir, e))?;
            let p = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if p.is_dir() {
                if !matches!(name.as_str(), "shards" | "knowledge_book" | "sft") {
                    stack.push(p);
                }
            } else if name.ends_with(".jsonl")
                && !name.ends_with("-sft.jsonl")
                && !name.ends_with(".steps.jsonl")
            {
                files.push(SourceFile { path: p });
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    if files.is_empty() {
        return Err(ReadError {
            path: path.to_path_buf(),
            line: None,
            message: "a directory without instance files (*.jsonl)".into(),
        });
    }
    Ok(files)
}

/// The digest of a path: its file's digest, or for a directory FNV-1a 64
/// of the lines `<relative path> <digest>` of its files.
pub(super) fn digest_of(path: &Path, files: &[SourceFile]) -> Result<String, ReadError> {
    let file_digest = |p: &Path| {
        crate::files::digest::file_digest(p).map_err(|e| ReadError {
            path: p.to_path_buf(),
            line: None,
            // The text the writers' digest error has always given.
            message: format!("cannot write `{}`: {e}", p.display()),
        })
    };
    if !path.is_dir() {
        return file_digest(path);
    }
    let mut listing = String::new();
    for file in files {
        listing.push_str(&relative(path, &file.path));
        listing.push(' ');
        listing.push_str(&file_digest(&file.path)?);
        listing.push('\n');
    }
    Ok(crate::domain::fnv1a_hex(listing.as_bytes()))
}

/// Lines parsed in parallel at a time.
const BATCH: usize = 16_384;

/// Calls `each(line_number, keys)` for every non-blank line of `path`, in
/// order (1-based line numbers). A line that is no instance is an error
/// naming the line.
pub fn read_keys(
    path: &Path,
    domain: Option<&Domain>,
    mut each: impl FnMut(u64, LineKeys),
) -> Result<(), ReadError> {
    if path.extension().is_some_and(|e| e == "parquet") {
        return Err(ReadError {
            path: path.to_path_buf(),
            line: None,
            message: "Parquet is not read here".into(),
        });
    }
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut batch: Vec<(u64, Vec<u8>)> = Vec::with_capacity(BATCH);
    let mut number = 0u64;
    let mut flush = |batch: &mut Vec<(u64, Vec<u8>)>| -> Result<(), ReadError> {
        let keys: Vec<Result<LineKeys, ReadError>> = batch
            .par_iter()
            .with_min_len(256)
            .map(|(n, line)| {
                recorded::parse_line(line)
                    .map(|r| recorded_keys(&r, domain))
                    .map_err(|message| ReadError {
                        path: path.to_path_buf(),
                        line: Some(*n),
                        message,
                    })
            })
            .collect();
        for ((n, _), keys) in batch.iter().zip(keys) {
            each(*n, keys?);
        }
        batch.clear();
        Ok(())
    };
    loop {
        let mut line = Vec::new();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| io_error(path, e))?;
        if read == 0 {
            break;
        }
        number += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        batch.push((number, line));
        if batch.len() == BATCH {
            flush(&mut batch)?;
        }
    }
    flush(&mut batch)
}
