//! File digests: FNV-1a 64 of a file's bytes, as 16 lowercase hex digits
//! (the digest a finished dataset's manifest entry records, and an
//! `--exclude` set's in the manifest). Plain hashing, read in 1 MiB chunks, without knowing what the
//! file is: the writers (`pipeline::write`) record digests with it and the readers
//! of excluded sets (`contamination`) fingerprint them with it, so both
//! stand on this module rather than on each other. In-memory bytes hash
//! with [`crate::fnv::fnv1a`], the same function (written once there).

use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::fnv::{FNV1A_OFFSET, fnv1a_extend};

/// FNV-1a 64 of a file's bytes, as hex.
pub fn file_digest(path: &Path) -> std::io::Result<String> {
    Ok(format!("{:016x}", fnv1a_file(path, FNV1A_OFFSET)?))
}

/// FNV-1a 64 of a file's bytes, continuing from `hash`.
pub fn fnv1a_file(path: &Path, mut hash: u64) -> std::io::Result<u64> {
    // A user's file (an `--exclude` set) or ours: regular files only.
    let file = crate::files::read::open(path)?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        hash = fnv1a_extend(hash, buf);
        let n = buf.len();
        reader.consume(n);
    }
    Ok(hash)
}
