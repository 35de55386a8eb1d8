//! File primitives of the writers: whole lines only, atomic replacement.
//!
//! A JSONL file is only ever appended to in whole chunks of whole lines;
//! an interrupted write can leave at most one partial line at the end,
//! which [`open_for_append`] cuts off before anything else is written.
//! Small files (manifests, merged datasets) are written to a temp file in
//! the same directory and renamed over the target.

use super::OutputError;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Writes `bytes` to `path` through `path.tmp` and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| OutputError::io(path, e))
}

/// `dir/.name.tmp` beside `path`.
pub fn temp_path(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp"))
}

/// Opens `path` for appending after cutting any partial last line; returns
/// the file and the number of complete lines in it. `truncate` empties it.
pub fn open_for_append(path: &Path, truncate: bool) -> Result<(File, u64), OutputError> {
    let io = |e| OutputError::io(path, e);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    if truncate {
        file.set_len(0).map_err(io)?;
        return Ok((file, 0));
    }
    let mut lines = 0u64;
    let mut complete = 0u64;
    let mut offset = 0u64;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let read = file.read(&mut buf).map_err(io)?;
        if read == 0 {
            break;
        }
        for (i, &b) in buf[..read].iter().enumerate() {
            if b == b'\n' {
                lines += 1;
                complete = offset + i as u64 + 1;
            }
        }
        offset += read as u64;
    }
    if complete != offset {
        file.set_len(complete).map_err(io)?;
    }
    file.seek(SeekFrom::End(0)).map_err(io)?;
    Ok((file, lines))
}

/// Lines handed to [`for_each_batch`] callbacks at a time.
const BATCH: usize = 8192;

/// Calls `each(first_index, lines)` on batches of the first `count` lines
/// of `path` (without their newlines), in order; lets the caller parse a
/// batch in parallel.
pub fn for_each_batch(
    path: &Path,
    count: u64,
    mut each: impl FnMut(u64, &[Vec<u8>]) -> Result<(), OutputError>,
) -> Result<(), OutputError> {
    let file = File::open(path).map_err(|e| OutputError::io(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut batch: Vec<Vec<u8>> = Vec::with_capacity(BATCH);
    let mut start = 0u64;
    for index in 0..count {
        let mut line = Vec::new();
        reader
            .read_until(b'\n', &mut line)
            .map_err(|e| OutputError::io(path, e))?;
        if line.last() != Some(&b'\n') {
            return Err(OutputError::Corrupt {
                path: path.to_path_buf(),
                message: format!("line {} is missing", index + 1),
            });
        }
        line.pop();
        batch.push(line);
        if batch.len() == BATCH || index + 1 == count {
            each(start, &batch)?;
            start = index + 1;
            batch.clear();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_last_line_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, b"{\"a\":1}\n{\"b\":2}\n{\"c\"").unwrap();
        let (mut file, lines) = open_for_append(&path, false).unwrap();
        assert_eq!(lines, 2);
        file.write_all(b"{\"d\":4}\n").unwrap();
        drop(file);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"{\"a\":1}\n{\"b\":2}\n{\"d\":4}\n"
        );
        let mut seen = Vec::new();
        for_each_batch(&path, 3, |start, lines| {
            seen.push((start, lines.to_vec()));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].1[2], b"{\"d\":4}".to_vec());
        assert!(for_each_batch(&path, 4, |_, _| Ok(())).is_err());
        let (_, lines) = open_for_append(&path, true).unwrap();
        assert_eq!(lines, 0);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    }

    #[test]
    fn atomic_writes_leave_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        write_atomic(&path, b"{}\n").unwrap();
        write_atomic(&path, b"{\"x\":1}\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"x\":1}\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
