//! The cross-process cache: files a process computes once and later
//! processes (of this or another user with the same directory) read
//! instead of computing again. Two things live there, each a pure
//! function of its name, so a file is either right or absent:
//! a setting's line index (`lines/`, [`crate::synth::index`]) and a
//! setting's difficulty reference sample (`references/`,
//! [`crate::difficulty::Reference`]).
//!
//! Where: `$KUMO_GEN_CACHE` when set (`off` or the empty string turns the
//! cache off), else `$XDG_CACHE_HOME/kumo-gen`, else `$HOME/.cache/kumo-gen`.
//! Each file's name is a 64-bit hash of everything its content depends
//! on (the generator version, the domain's name and file hash, the
//! setting, a fingerprint of the synthesis itself), and its first bytes
//! repeat that identity, so a changed domain or generator never reads a
//! stale file. Files are written atomically (temp file + rename) under a
//! lock beside them, so concurrent processes compute a file once and
//! readers never see a partial one.
//!
//! The cache is an optimisation: a directory that cannot be created,
//! read or written is skipped (the value is computed in memory), and a
//! file that does not parse is recomputed and replaced. Nothing else of
//! the crate's output depends on it.

use std::path::{Path, PathBuf};

use crate::files::{FileLock, write_atomic};

/// The environment variable naming the cache directory.
pub const CACHE_ENV: &str = "KUMO_GEN_CACHE";

/// The cache directory, or `None` when the cache is off or no directory
/// can be named.
pub fn dir() -> Option<PathBuf> {
    if let Some(value) = std::env::var_os(CACHE_ENV) {
        if value.is_empty() || value == "off" {
            return None;
        }
        return Some(PathBuf::from(value));
    }
    if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(xdg).join("kumo-gen"));
    }
    let home = std::env::var_os("HOME").filter(|v| !v.is_empty())?;
    Some(PathBuf::from(home).join(".cache").join("kumo-gen"))
}

/// One cached file: `<dir>/<kind>/<name>`.
#[derive(Clone, Debug)]
pub struct Entry {
    path: PathBuf,
}

impl Entry {
    /// The entry `name` of `kind` (`lines`, `references`), or `None` when
    /// the cache is off.
    pub fn new(kind: &str, name: &str) -> Option<Entry> {
        Some(Entry {
            path: dir()?.join(kind).join(name),
        })
    }

    /// The entry at an explicit path (tests).
    pub fn at(path: &Path) -> Entry {
        Entry {
            path: path.to_path_buf(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's bytes, or `None` when it is missing or unreadable.
    pub fn read(&self) -> Option<Vec<u8>> {
        std::fs::read(&self.path).ok()
    }

    /// Replaces the file with `bytes` atomically; `false` when the
    /// directory or the file cannot be written (the cache is skipped).
    pub fn write(&self, bytes: &[u8]) -> bool {
        let Some(parent) = self.path.parent() else {
            return false;
        };
        std::fs::create_dir_all(parent).is_ok() && write_atomic(&self.path, bytes).is_ok()
    }

    /// Holds the entry's lock (waiting for another process that computes
    /// it) while `compute` runs; without a lockable directory `compute`
    /// runs unlocked.
    pub fn locked<T>(&self, compute: impl FnOnce() -> T) -> T {
        let lock = self
            .path
            .parent()
            .filter(|parent| std::fs::create_dir_all(parent).is_ok())
            .and_then(|_| FileLock::wait(&self.path).ok());
        let value = compute();
        drop(lock);
        value
    }
}

/// FNV-1a 64 of `parts`, each followed by a zero byte: the name of an
/// entry that depends on exactly those parts.
pub fn identity(parts: &[&[u8]]) -> u64 {
    let mut hash = crate::fnv::FNV1A_OFFSET;
    for part in parts {
        hash = crate::fnv::fnv1a_extend(hash, part);
        hash = crate::fnv::fnv1a_extend(hash, &[0]);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_round_trips_and_a_missing_one_reads_none() {
        let dir = tempfile::tempdir().unwrap();
        let entry = Entry::at(&dir.path().join("lines").join("abc"));
        assert_eq!(entry.read(), None);
        assert!(entry.locked(|| entry.write(b"bytes")));
        assert_eq!(entry.read().as_deref(), Some(&b"bytes"[..]));
        assert_ne!(identity(&[b"a", b"bc"]), identity(&[b"ab", b"c"]));
    }
}
