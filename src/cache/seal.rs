//! The seal of a cache file: what makes a file of the cache directory
//! trusted only when this user's kumo-gen wrote it (docs/performance.md
//! "The cache directory", docs/safety.md "The cache").
//!
//! Every file is written as its content followed by a 24-byte trailer:
//! `KGSEAL01`, the id of the key that sealed it (8 bytes), and a keyed
//! SipHash-2-4 of its kind, its name (the hash of everything the content
//! was made from) and its content (8 bytes). The 128-bit key is drawn
//! from the OS once per user and kept outside the cache directory, in
//! `$XDG_STATE_HOME/kumo-gen/cache-key` (else
//! `~/.local/state/kumo-gen/cache-key`), a regular file of the user's
//! own, readable by nobody else. A copied, shared, renamed, forged or
//! damaged file fails [`open`] (a forger who recomputes a plain checksum
//! does not have the key), and the caller computes the value instead.
//! Without a key (no such folder can be made, or the key file is not
//! private) the cache is not used.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The trailer's tag.
const MAGIC: &[u8; 8] = b"KGSEAL01";
/// Bytes of the trailer: tag, key id, MAC.
pub const TRAILER: usize = 24;

/// A user's cache key.
#[derive(Clone, Copy)]
pub struct Key {
    k0: u64,
    k1: u64,
}

impl Key {
    /// The id recorded in a trailer: a MAC of nothing under the key, so
    /// the key itself is never written anywhere but its file.
    fn id(&self) -> u64 {
        self.mac(&[b"kumo-gen/cache-key-id"])
    }

    /// Keyed SipHash-2-4 of `parts`, each preceded by its length.
    fn mac(&self, parts: &[&[u8]]) -> u64 {
        use std::hash::Hasher;
        // std's SipHasher is SipHash-2-4 with a 128-bit key: deprecated
        // for hash tables (which want a faster hash), exact for a MAC.
        #[allow(deprecated)]
        let mut hasher = std::hash::SipHasher::new_with_keys(self.k0, self.k1);
        for part in parts {
            hasher.write(&(part.len() as u64).to_le_bytes());
            hasher.write(part);
        }
        hasher.finish()
    }
}

/// `content` sealed under `key` as the entry `kind/name`.
pub fn seal(key: &Key, kind: &str, name: &str, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + TRAILER);
    out.extend_from_slice(content);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&key.id().to_le_bytes());
    let mac = key.mac(&[kind.as_bytes(), name.as_bytes(), content]);
    out.extend_from_slice(&mac.to_le_bytes());
    out
}

/// Why a sealed file is not trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    /// No trailer: an older kumo-gen or another program wrote it.
    Unsealed,
    /// Sealed by another key: another user's or machine's file.
    OtherKey,
    /// The seal does not match the content or the name: changed or
    /// renamed after it was written.
    Mismatch,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Broken::Unsealed => "it carries no seal (an older kumo-gen or another program wrote it)",
            Broken::OtherKey => {
                "it was sealed by another key (copied from another user's or machine's cache)"
            }
            Broken::Mismatch => {
                "its seal does not match its content (changed, renamed or forged after it was written)"
            }
        })
    }
}

/// The content of `bytes` if they are `kind/name` sealed under `key`.
pub fn open<'a>(key: &Key, kind: &str, name: &str, bytes: &'a [u8]) -> Result<&'a [u8], Broken> {
    let Some(at) = bytes.len().checked_sub(TRAILER) else {
        return Err(Broken::Unsealed);
    };
    let (content, trailer) = bytes.split_at(at);
    if &trailer[..8] != MAGIC {
        return Err(Broken::Unsealed);
    }
    let word = |range: std::ops::Range<usize>| {
        u64::from_le_bytes(trailer[range].try_into().expect("8 bytes"))
    };
    if word(8..16) != key.id() {
        return Err(Broken::OtherKey);
    }
    if word(16..24) != key.mac(&[kind.as_bytes(), name.as_bytes(), content]) {
        return Err(Broken::Mismatch);
    }
    Ok(content)
}

/// This user's key, made on first use; `Err` says why there is none
/// (once per process).
pub fn key() -> Result<Key, &'static str> {
    static KEY: OnceLock<Result<Key, String>> = OnceLock::new();
    let found = KEY.get_or_init(|| {
        let path = key_path().ok_or_else(|| {
            "no folder for the cache key ($XDG_STATE_HOME and $HOME are unset)".to_string()
        })?;
        load_or_create(&path)
    });
    found.as_ref().copied().map_err(String::as_str)
}

/// `$XDG_STATE_HOME/kumo-gen/cache-key`, else
/// `$HOME/.local/state/kumo-gen/cache-key`.
pub fn key_path() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    let state = match var("XDG_STATE_HOME") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(var("HOME")?).join(".local").join("state"),
    };
    Some(state.join("kumo-gen").join("cache-key"))
}

/// The key in `path`, made (atomically, private) when there is none.
fn load_or_create(path: &Path) -> Result<Key, String> {
    for _ in 0..2 {
        match std::fs::symlink_metadata(path) {
            Ok(meta) => return read_key(path, &meta),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => create_key(path)?,
            Err(e) => return Err(format!("the cache key `{}`: {e}", path.display())),
        }
    }
    Err(format!("the cache key `{}` cannot be made", path.display()))
}

/// A key file that is a regular file of this user's, private, of 32 hex
/// digits.
fn read_key(path: &Path, meta: &std::fs::Metadata) -> Result<Key, String> {
    let bad = |why: &str| format!("the cache key `{}` {why}", path.display());
    if !meta.file_type().is_file() {
        return Err(bad("is not a regular file"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Some(me) = own_uid(path.parent().unwrap_or(Path::new("."))) else {
            return Err(bad("cannot be checked (whose process is this?)"));
        };
        if meta.uid() != me {
            return Err(bad("belongs to another user"));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(bad(
                "is readable or writable by others (it must be mode 0600)",
            ));
        }
    }
    let bytes = crate::files::read::read_at_most(path, 64, "a cache key")
        .map_err(|e| bad(&format!("cannot be read: {e}")))?;
    let text = std::str::from_utf8(&bytes).unwrap_or_default().trim();
    let word = |range: std::ops::Range<usize>| {
        text.get(range)
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
    };
    match (text.len(), word(0..16), word(16..32)) {
        (32, Some(k0), Some(k1)) => Ok(Key { k0, k1 }),
        _ => Err(bad("is not 32 hex digits")),
    }
}

/// The user id this process makes files as: the owner of `/proc/self`,
/// else of a file made in `dir` for the purpose (the crate has no
/// `unsafe` for `geteuid`).
#[cfg(unix)]
fn own_uid(dir: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    if let Ok(meta) = std::fs::metadata("/proc/self") {
        return Some(meta.uid());
    }
    let probe = dir.join(format!(".uid-probe-{}", std::process::id()));
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .and_then(|file| file.metadata());
    let _ = std::fs::remove_file(&probe);
    made.ok().map(|meta| meta.uid())
}

/// Writes a new key to a private temp file and links it at `path` (a
/// process that loses the race reads the winner's).
fn create_key(path: &Path) -> Result<(), String> {
    let failed = |e: std::io::Error| format!("the cache key `{}`: {e}", path.display());
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(failed)?;
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| failed(std::io::Error::other(e.to_string())))?;
    let k0 = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    let k1 = u64::from_le_bytes(bytes[8..].try_into().expect("8 bytes"));
    let tmp = dir.join(format!(".cache-key.tmp-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options.open(&tmp).and_then(|mut file| {
        file.write_all(format!("{k0:016x}{k1:016x}\n").as_bytes())?;
        file.sync_all()
    });
    let linked = written.and_then(|()| match std::fs::hard_link(&tmp, path) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    });
    let _ = std::fs::remove_file(&tmp);
    linked.map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_file_opens_under_its_key_name_and_content_only() {
        let key = Key { k0: 1, k1: 2 };
        let sealed = seal(&key, "lines", "ab.idx", b"content");
        assert_eq!(open(&key, "lines", "ab.idx", &sealed), Ok(&b"content"[..]));
        assert_eq!(
            open(&key, "lines", "cd.idx", &sealed),
            Err(Broken::Mismatch),
            "renamed"
        );
        let mut forged = sealed.clone();
        forged[0] = b'C';
        assert_eq!(
            open(&key, "lines", "ab.idx", &forged),
            Err(Broken::Mismatch)
        );
        let other = Key { k0: 1, k1: 3 };
        assert_eq!(
            open(&other, "lines", "ab.idx", &sealed),
            Err(Broken::OtherKey)
        );
        assert_eq!(
            open(&key, "lines", "ab.idx", b"content"),
            Err(Broken::Unsealed)
        );
        assert_eq!(open(&key, "lines", "ab.idx", b""), Err(Broken::Unsealed));
    }

    #[cfg(unix)]
    #[test]
    fn a_key_is_made_private_once_and_refused_when_others_can_read_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/kumo-gen/cache-key");
        let made = load_or_create(&path).unwrap();
        let again = load_or_create(&path).unwrap();
        assert_eq!((made.k0, made.k1), (again.k0, again.k1));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = load_or_create(&path).err().unwrap();
        assert!(e.contains("mode 0600"), "{e}");
    }
}
