//! How we write safely: whole lines only, atomic replacement, locks,
//! directories made below a root, and file digests ([`digest`]); and how
//! we read a file the user names ([`read`]: regular files only, bounded
//! lines and sizes, walks that end), and where a command may write
//! ([`target`]: never over, or inside, what it reads).
//!
//! A JSONL file is only ever appended to in whole chunks of whole lines;
//! an interrupted write can leave at most one partial line at the end,
//! which [`open_for_append`] cuts off before anything else is written.
//! Every other file (manifests, merged datasets, derived files, the HF
//! export, seed files) goes through the one atomic writer, [`AtomicFile`]
//! ([`write_atomic`] for a whole buffer): a temp file in the same
//! directory, renamed over the target; [`replace_dir`] swaps a directory
//! in whole. No other module renames files.
//!
//! Concurrent runs: every dataset or shard file is owned by one run at a
//! time through an advisory lock on a lock file ([`FileLock::exclusive`];
//! a second run exits with a clear message). The lock of `P/D/NAME` is
//! `P/.locks/D/NAME.lock` ([`lock_path`]): beside the folder `D`, never in
//! it, so a folder meant for publishing (a dataset's domain folder,
//! `hf/`) holds no lock file;
//! and every read-modify-write of a manifest holds the manifest's lock
//! ([`FileLock::wait`]), so runs of different settings into one `--out`
//! never lose each other's entries. The locks are released by the OS when
//! a process dies, so a killed run never blocks the next one.

pub mod digest;
mod error;
pub mod read;
pub mod target;

pub use error::FileError;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// An advisory lock on [`lock_path`] for a file, held until dropped
/// (clones share it).
#[derive(Clone, Debug)]
pub struct FileLock {
    _file: Option<std::sync::Arc<File>>,
}

impl FileLock {
    /// Opens (creates) the lock file. Where it cannot be opened for
    /// writing (a read-only file system, directory or lock file) it is
    /// opened read-only (a shared-or-exclusive `flock` needs no write
    /// access), or `None` when it does not exist: nobody can write there,
    /// so there is nothing to guard, and a finished dataset can still be
    /// checked or re-run with nothing to do. A run that does have to write
    /// fails at its first write, naming the file.
    fn open(path: &Path) -> Result<Option<File>, FileError> {
        let mut lock = lock_path(path);
        // Neither the lock folders nor the lock may be links: nothing is
        // written through one.
        let folders: Vec<&Path> = lock.ancestors().skip(1).take(2).collect();
        for link in std::iter::once(lock.as_path()).chain(folders) {
            if std::fs::symlink_metadata(link).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(symlink_refused(link));
            }
        }
        // A FIFO there would block the open below.
        if std::fs::symlink_metadata(&lock).is_ok_and(|m| !m.is_file()) {
            return Err(FileError::io(
                &lock,
                std::io::Error::other(
                    "the lock file is not a regular file; remove it (kumo-gen makes it again)",
                ),
            ));
        }
        if let Some(dir) = lock.parent() {
            match std::fs::create_dir_all(dir) {
                Ok(()) => {}
                // A folder that cannot hold the lock folder (read-only):
                // the lock sits beside the file, where an older kumo-gen
                // put it, so a run that can write the file still locks it.
                Err(e) if read_only(&e) => lock = sidecar_lock_path(path),
                Err(e) => return Err(FileError::io(dir, e)),
            }
        }
        if std::fs::symlink_metadata(&lock).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(symlink_refused(&lock));
        }
        let mut options = OpenOptions::new();
        options.create(true).truncate(false).write(true);
        #[cfg(unix)]
        {
            // Never blocks, even on a FIFO swapped in since the look.
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NONBLOCK);
        }
        let opened = options.open(&lock);
        match opened {
            Ok(file) => Ok(Some(file)),
            Err(e) if read_only(&e) => match File::open(&lock) {
                Ok(file) => Ok(Some(file)),
                Err(_) => Ok(None),
            },
            Err(e) => Err(FileError::io(&lock, e)),
        }
    }

    /// Takes the lock of `path` or fails at once when another process
    /// holds it: a dataset being written by another run.
    pub fn exclusive(path: &Path) -> Result<FileLock, FileError> {
        let Some(file) = Self::open(path)? else {
            return Ok(FileLock { _file: None });
        };
        match file.try_lock() {
            Ok(()) => Ok(FileLock {
                _file: Some(std::sync::Arc::new(file)),
            }),
            Err(std::fs::TryLockError::WouldBlock) => Err(FileError::Busy {
                path: path.to_path_buf(),
            }),
            Err(std::fs::TryLockError::Error(e)) => Err(FileError::io(&lock_path(path), e)),
        }
    }

    /// Takes the lock of `path`, waiting while another process holds it
    /// (manifest updates take milliseconds).
    pub fn wait(path: &Path) -> Result<FileLock, FileError> {
        let Some(file) = Self::open(path)? else {
            return Ok(FileLock { _file: None });
        };
        file.lock()
            .map_err(|e| FileError::io(&lock_path(path), e))?;
        Ok(FileLock {
            _file: Some(std::sync::Arc::new(file)),
        })
    }
}

/// Whether an error says the place cannot be written.
fn read_only(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ReadOnlyFilesystem | std::io::ErrorKind::PermissionDenied
    )
}

/// The name of the folder of lock files (see the module doc).
pub const LOCKS: &str = ".locks";

/// The lock file of `path` = `P/D/NAME`: `P/.locks/D/NAME.lock`, beside
/// the folder `D` (a file with no folder above its own: `D/.locks/NAME.lock`).
pub fn lock_path(path: &Path) -> std::path::PathBuf {
    let name = format!(
        "{}.lock",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    let dir = path.parent().unwrap_or(Path::new(""));
    match (dir.parent(), dir.file_name()) {
        (Some(parent), Some(folder)) => parent.join(LOCKS).join(folder).join(name),
        _ => dir.join(LOCKS).join(name),
    }
}

/// `dir/.NAME.lock` beside `path`: where the lock goes when the folder
/// above cannot hold [`LOCKS`].
fn sidecar_lock_path(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.lock"))
}

/// FNV-1a 64 of a file's bytes, as hex: the content digest a finished
/// dataset's manifest entry records ([`crate::files::digest::file_digest`]).
pub fn digest(path: &Path) -> Result<String, FileError> {
    crate::files::digest::file_digest(path).map_err(|e| FileError::read(path, e))
}

/// The digest of a directory's regular files: FNV-1a 64 over every file's
/// name and bytes, in name order (what a derived book directory's stamp
/// records).
pub fn dir_digest(dir: &Path) -> Result<String, FileError> {
    let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(dir)
        .map_err(|e| FileError::io(dir, e))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()
        .map_err(|e| FileError::io(dir, e))?;
    names.sort();
    let mut hash = crate::fnv::FNV1A_OFFSET;
    for name in names {
        hash = crate::fnv::fnv1a_extend(hash, name.as_encoded_bytes());
        hash = crate::fnv::fnv1a_extend(hash, b"\0");
        let path = dir.join(name);
        hash =
            crate::files::digest::fnv1a_file(&path, hash).map_err(|e| FileError::io(&path, e))?;
    }
    Ok(format!("{hash:016x}"))
}

/// Creates `dir` and its missing parents below `base` (which must exist
/// or is created as given), refusing any directory below `base` that is a
/// symbolic link: writing through it would put files outside `--out`.
pub fn create_dir_below(base: &Path, dir: &Path) -> Result<(), FileError> {
    let Ok(below) = dir.strip_prefix(base) else {
        return std::fs::create_dir_all(dir).map_err(|e| FileError::io(dir, e));
    };
    std::fs::create_dir_all(base).map_err(|e| FileError::io(base, e))?;
    let mut path = base.to_path_buf();
    for part in below.components() {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => return Err(symlink_refused(&path)),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match std::fs::create_dir(&path) {
                    Ok(()) => {}
                    // Another run sharing `--out` made it between the look and
                    // the create: a directory is as good as ours, a link is not.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        match std::fs::symlink_metadata(&path) {
                            Ok(m) if m.file_type().is_symlink() => {
                                return Err(symlink_refused(&path));
                            }
                            Ok(m) if m.is_dir() => {}
                            _ => return Err(FileError::io(&path, e)),
                        }
                    }
                    Err(e) => return Err(FileError::io(&path, e)),
                }
            }
            Err(e) => return Err(FileError::io(&path, e)),
        }
    }
    Ok(())
}

/// The error for a symbolic link where kumo-gen writes.
pub fn symlink_refused(path: &Path) -> FileError {
    FileError::io(
        path,
        std::io::Error::other(
            "it is a symbolic link, and kumo-gen never writes through one (that could change files outside `--out`); remove the link or choose another `--out`",
        ),
    )
}

/// Writes `bytes` to `path` atomically (see [`write_atomic_with`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    write_atomic_with(
        path,
        |w| w.write_all(bytes).map_err(|e| FileError::io(path, e)),
        FileError::io,
    )
}

/// [`AtomicFile`] in one call: `write` fills the temp file, which is
/// synced and renamed over `path` only if `write` succeeded, and removed
/// otherwise, so readers never see a partial file. A `path` that exists
/// and is not a regular file (`/dev/null`, a pipe) is written directly,
/// never replaced. `io` turns the writer's own I/O failures (naming the
/// file they happened on) into `E`.
pub fn write_atomic_with<T, E>(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<T, E>,
    io: impl Fn(&Path, std::io::Error) -> E,
) -> Result<T, E> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| io(path, e))?;
        let mut w = std::io::BufWriter::new(file);
        let value = write(&mut w)?;
        w.flush().map_err(|e| io(path, e))?;
        return Ok(value);
    }
    let named = |e: AtomicError| io(&e.path, e.source);
    let mut file = AtomicFile::create(path).map_err(named)?;
    let value = write(file.writer())?;
    file.commit().map_err(named)?;
    Ok(value)
}

/// An I/O failure of an [`AtomicFile`], naming the file it happened on.
#[derive(Debug)]
pub struct AtomicError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

impl From<AtomicError> for FileError {
    fn from(e: AtomicError) -> FileError {
        FileError::io(&e.path, e.source)
    }
}

/// The one atomic writer of the crate: a file written to
/// `dir/.NAME.tmp-PID` beside its `path` (created anew, never through a
/// link left at that name) and renamed over `path` by [`commit`], so
/// readers never see a partial file. Dropped uncommitted (an error, a
/// panic), the temp file is removed; one a killed run left is removed by
/// the next writer of the same name.
///
/// [`commit`]: AtomicFile::commit
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    writer: Option<std::io::BufWriter<File>>,
}

impl AtomicFile {
    /// Starts the file that will replace `path`.
    pub fn create(path: &Path) -> Result<AtomicFile, AtomicError> {
        Self::open(path, OpenOptions::new())
    }

    /// As [`AtomicFile::create`], readable by its owner only (mode 0600 on
    /// Unix) from the moment the temp file exists.
    pub fn create_private(path: &Path) -> Result<AtomicFile, AtomicError> {
        let mut options = OpenOptions::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        Self::open(path, options)
    }

    fn open(path: &Path, mut options: OpenOptions) -> Result<AtomicFile, AtomicError> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        let dir = dir.unwrap_or(Path::new("."));
        remove_orphaned_temps(dir, &name);
        let tmp = dir.join(temp_name(&name));
        if std::fs::symlink_metadata(&tmp).is_ok_and(|m| m.is_dir()) {
            let _ = std::fs::remove_dir_all(&tmp);
        } else {
            let _ = std::fs::remove_file(&tmp);
        }
        let file = options
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|source| AtomicError {
                path: tmp.clone(),
                source,
            })?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            writer: Some(std::io::BufWriter::with_capacity(1 << 16, file)),
        })
    }

    /// The file it will replace.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temp file being written.
    pub fn tmp(&self) -> &Path {
        &self.tmp
    }

    fn failed(&self, source: std::io::Error) -> AtomicError {
        AtomicError {
            path: self.tmp.clone(),
            source,
        }
    }

    /// The buffered writer of the temp file.
    pub fn writer(&mut self) -> &mut std::io::BufWriter<File> {
        self.writer
            .as_mut()
            .expect("an AtomicFile writes until it is committed")
    }

    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), AtomicError> {
        let written = self.writer().write_all(bytes);
        written.map_err(|e| self.failed(e))
    }

    /// `text` and a newline.
    pub fn line(&mut self, text: &str) -> Result<(), AtomicError> {
        self.write_all(text.as_bytes())?;
        self.write_all(b"\n")
    }

    /// Flushes and syncs the temp file, which may then be read (or
    /// rewritten in place) at [`AtomicFile::tmp`] before the commit.
    pub fn sync(&mut self) -> Result<(), AtomicError> {
        let synced = self.writer().flush().and_then(|()| {
            let file = self.writer().get_ref();
            file.sync_all()
        });
        synced.map_err(|e| self.failed(e))
    }

    /// Syncs the temp file and renames it over `path`.
    pub fn commit(mut self) -> Result<(), AtomicError> {
        self.sync()?;
        self.rename()
    }

    /// Renames the temp file over `path` without syncing it: for files any
    /// re-run rebuilds whole from a synced source (books, SFT, the HF
    /// export), where syncing hundreds of MB would dominate.
    pub fn commit_unsynced(mut self) -> Result<(), AtomicError> {
        let flushed = self.writer().flush();
        flushed.map_err(|e| self.failed(e))?;
        self.rename()
    }

    fn rename(&mut self) -> Result<(), AtomicError> {
        self.writer = None;
        std::fs::rename(&self.tmp, &self.path).map_err(|source| AtomicError {
            path: self.path.clone(),
            source,
        })?;
        self.tmp = PathBuf::new();
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            self.writer = None;
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Puts the directory `staged` (filled beside it) in place of `dir`,
/// replacing what was there: the knowledge-book directory is swapped in
/// whole.
pub fn replace_dir(staged: &Path, dir: &Path) -> Result<(), FileError> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(dir),
        Ok(_) => std::fs::remove_file(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
    .map_err(|e| FileError::io(dir, e))?;
    std::fs::rename(staged, dir).map_err(|e| FileError::io(dir, e))
}

/// The name of this process's temp file or directory for `name`:
/// `.NAME.tmp-PID`, hidden, beside it (the atomic writer's, and the
/// staged knowledge-book directory's).
fn temp_name(name: &str) -> String {
    format!(".{name}.tmp-{}", std::process::id())
}

/// This process's temp path for `path` (`dir/.NAME.tmp-PID`, beside it).
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(temp_name(&name))
}

/// Removes `dir/.NAME.tmp-PID` files left by killed runs: those whose
/// process no longer exists (known from `/proc`; where there is no
/// `/proc`, nothing is removed, as a live writer's file cannot be told
/// from an orphan).
fn remove_orphaned_temps(dir: &Path, name: &str) {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let prefix = format!(".{name}.tmp-");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .filter(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if !proc.join(pid).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A writer whose errors name the file they are about (`cannot write
/// `PATH`: No space left on device`), for writers that only see a
/// `dyn Write`.
pub struct NamingWriter<'a> {
    inner: &'a mut dyn Write,
    path: &'a Path,
}

impl<'a> NamingWriter<'a> {
    pub fn new(inner: &'a mut dyn Write, path: &'a Path) -> Self {
        NamingWriter { inner, path }
    }

    fn named(&self, e: std::io::Error) -> std::io::Error {
        std::io::Error::new(
            e.kind(),
            format!("cannot write `{}`: {e}", self.path.display()),
        )
    }
}

impl Write for NamingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().map_err(|e| self.named(e))
    }
}

/// Opens `path` for appending after cutting any partial last line; returns
/// the file and the number of complete lines in it. `truncate` empties it.
///
/// A symbolic link at `path` is never written through: with `truncate`
/// the link itself is replaced by a new file, else it is refused.
pub fn open_for_append(path: &Path, truncate: bool) -> Result<(File, u64), FileError> {
    let io = |e| FileError::io(path, e);
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        if !truncate {
            return Err(symlink_refused(path));
        }
        std::fs::remove_file(path).map_err(io)?;
    }
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
pub fn for_each_batch<E: From<FileError>>(
    path: &Path,
    count: u64,
    mut each: impl FnMut(u64, &[Vec<u8>]) -> Result<(), E>,
) -> Result<(), E> {
    let file = read::open(path).map_err(|e| FileError::read(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut batch: Vec<Vec<u8>> = Vec::with_capacity(BATCH);
    let mut start = 0u64;
    for index in 0..count {
        let mut line = Vec::new();
        reader
            .read_until(b'\n', &mut line)
            .map_err(|e| FileError::read(path, e))?;
        if line.last() != Some(&b'\n') {
            return Err(FileError::Corrupt {
                path: path.to_path_buf(),
                message: format!("line {} is missing", index + 1),
            }
            .into());
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

/// Starts the derived file `path` through the atomic writer, creating its
/// directories below `out` (never through a symbolic link). Committed
/// unsynced: these files are rebuilt whole from the (synced) dataset file
/// by any re-run, and syncing the step records (hundreds of MB at n = 5000
/// hard) would dominate.
pub(crate) fn stage_below(out: &Path, path: &Path) -> Result<AtomicFile, FileError> {
    if let Some(dir) = path.parent() {
        create_dir_below(out, dir)?;
    }
    Ok(AtomicFile::create(path)?)
}

/// Writes `bytes` to `path` through the atomic writer, creating its
/// directories below `out`.
pub(crate) fn write_below(out: &Path, path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    let mut staged = stage_below(out, path)?;
    staged.write_all(bytes)?;
    Ok(staged.commit_unsynced()?)
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
            Ok::<(), FileError>(())
        })
        .unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].1[2], b"{\"d\":4}".to_vec());
        assert!(for_each_batch(&path, 4, |_, _| Ok::<(), FileError>(())).is_err());
        let (_, lines) = open_for_append(&path, true).unwrap();
        assert_eq!(lines, 0);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    }

    #[test]
    fn a_held_lock_refuses_a_second_owner_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("medical");
        std::fs::create_dir(&folder).unwrap();
        let path = folder.join("d.jsonl");
        // The lock sits beside the folder, never in it.
        assert_eq!(
            lock_path(&path),
            dir.path().join(".locks/medical/d.jsonl.lock")
        );
        assert_eq!(
            lock_path(Path::new("d.jsonl")),
            Path::new(".locks/d.jsonl.lock")
        );
        let held = FileLock::exclusive(&path).unwrap();
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
        assert!(matches!(
            FileLock::exclusive(&path),
            Err(FileError::Busy { .. })
        ));
        drop(held);
        assert!(FileLock::exclusive(&path).is_ok());
        assert_eq!(
            digest(&lock_path(&path)).unwrap(),
            crate::fnv::fnv1a_hex(b"")
        );
    }

    #[test]
    fn atomic_writes_remove_temp_files_of_dead_processes_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labelled.jsonl");
        // PID 0 never names a user process; our own is alive.
        let orphan = dir.path().join(".labelled.jsonl.tmp-0");
        let parent = dir.path().join(format!(
            ".labelled.jsonl.tmp-{}",
            std::os::unix::process::parent_id()
        ));
        let other = dir.path().join(".other.jsonl.tmp-0");
        for p in [&orphan, &parent, &other] {
            std::fs::write(p, "partial").unwrap();
        }
        write_atomic(&path, b"done\n").unwrap();
        assert!(!orphan.exists(), "a dead run's temp file is removed");
        assert!(parent.exists(), "a live process's temp file is kept");
        assert!(other.exists(), "another file's temp file is not ours");
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
