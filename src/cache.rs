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
//! Nothing in the directory is trusted ([`seal`]): a file is read by the
//! rule of user files (a regular file, at most [`MAX_ENTRY_BYTES`], never
//! blocking on a FIFO) and used only when it carries this user's seal
//! over its name and content, which a copied, renamed or forged file does
//! not. A file that fails is noted ([`take_notes`]: the command line
//! prints the notes) and computed again, then replaced: the output is
//! the same either way.
//!
//! The cache is an optimisation: a directory that cannot be created,
//! read or written is skipped (the value is computed in memory), as is
//! the whole cache when there is no key. Nothing else of the crate's
//! output depends on it.

pub mod seal;

use std::path::{Path, PathBuf};

use std::sync::Mutex;

use crate::files::{AtomicFile, FileLock};

/// The largest cache file read: a line index takes 12 bytes per line
/// whose first draw was a duplicate, a reference sample about 5 kB.
pub const MAX_ENTRY_BYTES: u64 = 256 << 20;

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
    kind: String,
    name: String,
}

impl Entry {
    /// The entry `name` of `kind` (`lines`, `references`), or `None` when
    /// the cache is off or has no key ([`seal::key`]).
    pub fn new(kind: &str, name: &str) -> Option<Entry> {
        seal::key().ok()?;
        Some(Entry {
            path: dir()?.join(kind).join(name),
            kind: kind.to_string(),
            name: name.to_string(),
        })
    }

    /// The entry at an explicit path `<kind>/<name>` (tests).
    pub fn at(path: &Path) -> Entry {
        let part = |p: Option<&std::ffi::OsStr>| {
            p.map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        Entry {
            path: path.to_path_buf(),
            kind: part(path.parent().and_then(Path::file_name)),
            name: part(path.file_name()),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's content when it is there, readable by the rule of user
    /// files and sealed by this user for this entry; `None` otherwise (a
    /// file that is there but fails is noted).
    pub fn read(&self) -> Option<Vec<u8>> {
        let bytes =
            match crate::files::read::read_at_most(&self.path, MAX_ENTRY_BYTES, "a cache file") {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
                Err(e) => {
                    self.note(&e.to_string());
                    return None;
                }
            };
        let key = seal::key().ok()?;
        match seal::open(&key, &self.kind, &self.name, &bytes) {
            Ok(content) => Some(content.to_vec()),
            Err(broken) => {
                self.note(&broken.to_string());
                None
            }
        }
    }

    fn note(&self, why: &str) {
        note(format!(
            "the cache file `{}` was not used: {why}; its value is computed again and the file replaced",
            self.path.display()
        ));
    }

    /// Replaces the file with `bytes`, sealed, atomically (whatever was at
    /// the path, a FIFO or a link included, is replaced, never written
    /// through); `false` when the directory or the file cannot be written
    /// (the cache is skipped).
    pub fn write(&self, bytes: &[u8]) -> bool {
        let (Some(parent), Ok(key)) = (self.path.parent(), seal::key()) else {
            return false;
        };
        if std::fs::create_dir_all(parent).is_err() {
            return false;
        }
        let sealed = seal::seal(&key, &self.kind, &self.name, bytes);
        let Ok(mut file) = AtomicFile::create(&self.path) else {
            return false;
        };
        file.write_all(&sealed).is_ok() && file.commit().is_ok()
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

/// What the cache has to say, once per message, until taken.
static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn note(message: String) {
    let mut notes = NOTES.lock().unwrap_or_else(|e| e.into_inner());
    if !notes.contains(&message) {
        notes.push(message);
    }
}

/// The notes of cache files not used since the last call (the library
/// prints nothing; the command line prints these).
pub fn take_notes() -> Vec<String> {
    std::mem::take(&mut *NOTES.lock().unwrap_or_else(|e| e.into_inner()))
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

    /// A file written without the seal (a forged one), another entry's
    /// file copied to this name, a FIFO: not used, noted.
    #[cfg(unix)]
    #[test]
    fn unsealed_copied_and_fifo_files_are_noted_and_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let entry = Entry::at(&dir.path().join("lines").join("abc"));
        std::fs::create_dir_all(dir.path().join("lines")).unwrap();
        std::fs::write(entry.path(), b"forged").unwrap();
        assert_eq!(entry.read(), None);
        let other = Entry::at(&dir.path().join("lines").join("other"));
        assert!(other.write(b"bytes"));
        std::fs::copy(other.path(), entry.path()).unwrap();
        assert_eq!(entry.read(), None);
        std::fs::remove_file(entry.path()).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(entry.path())
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(entry.read(), None);
        // The FIFO is replaced, never written into.
        assert!(entry.locked(|| entry.write(b"mine")));
        assert_eq!(entry.read().as_deref(), Some(&b"mine"[..]));
        let notes = take_notes();
        let ours: Vec<&String> = notes.iter().filter(|n| n.contains("abc")).collect();
        assert_eq!(ours.len(), 3, "{notes:?}");
        assert!(ours[0].contains("no seal"), "{}", ours[0]);
        assert!(ours[1].contains("does not match"), "{}", ours[1]);
        assert!(ours[2].contains("FIFO"), "{}", ours[2]);
    }
}
