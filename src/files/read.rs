//! The one rule for reading a file a user named (datasets, results,
//! `--exclude` sets, topics, instances, domains, KUMO imports, templates):
//! every reader of user files opens, reads and walks through here.
//!
//! - Regular files only. A FIFO, a device (a link to `/dev/zero`), a
//!   socket or a directory where a file is read is refused by name with
//!   [`Refusal::NotRegular`] before it is opened, and the opened handle is
//!   checked again (opened non-blocking, so a FIFO swapped in between
//!   never blocks).
//! - A line-length cap and a total-size sanity bound ([`Limits`]): a line
//!   is at most 16 MiB, a file read whole into memory at most 4 GiB, a file
//!   streamed line by line at most 256 GiB. Reads are bounded as they go
//!   (a file that grows while it is read, or lies about its size, stops at
//!   the bound), and the refusal says how to raise the bound:
//!   `KUMO_GEN_MAX_LINE_BYTES`, `KUMO_GEN_MAX_FILE_BYTES` (bytes).
//! - Directory walks ([`walk`]) follow links to directories but enter each
//!   directory once (by device and inode), so a link back up the tree
//!   (`D/sub/up -> ..`, `D/self -> ../D`) is never entered twice and a
//!   walk always ends.
//! - One pass for what is digested and what is read: [`Lines`] hands out
//!   lines and the FNV-1a 64 digest of exactly the bytes it read, so a
//!   file appended to mid-read never gets an old digest with new lines.
//!
//! Refusals are `io::Error`s carrying a [`Refusal`] (callers already name
//! the file); [`is_refusal`] tells them apart so they exit 1 (the user's
//! input), not 2. docs/safety.md states these rules for users.

use std::collections::HashSet;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The bounds of one read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of one line, its newline not counted.
    pub line: u64,
    /// Bytes of a file read whole into memory.
    pub whole: u64,
    /// Bytes of a file streamed line by line.
    pub streamed: u64,
}

/// The default line cap: 16 MiB (an instance line of the largest shipped
/// setting is a few KiB, an SFT record with its book some tens of KiB).
pub const MAX_LINE_BYTES: u64 = 16 << 20;
/// The default bound of a file read whole into memory: 4 GiB.
pub const MAX_WHOLE_FILE_BYTES: u64 = 4 << 30;
/// The default bound of a file streamed line by line: 256 GiB.
pub const MAX_STREAMED_FILE_BYTES: u64 = 256 << 30;

/// The environment variable that sets the line cap (bytes).
pub const LINE_VAR: &str = "KUMO_GEN_MAX_LINE_BYTES";
/// The environment variable that sets the file bound (bytes), for files
/// read whole and streamed alike.
pub const FILE_VAR: &str = "KUMO_GEN_MAX_FILE_BYTES";

impl Default for Limits {
    fn default() -> Self {
        Limits {
            line: MAX_LINE_BYTES,
            whole: MAX_WHOLE_FILE_BYTES,
            streamed: MAX_STREAMED_FILE_BYTES,
        }
    }
}

impl Limits {
    /// The defaults, with [`LINE_VAR`] and [`FILE_VAR`] applied when they
    /// hold a positive byte count (read once per process).
    pub fn current() -> Limits {
        static LIMITS: OnceLock<Limits> = OnceLock::new();
        *LIMITS.get_or_init(|| {
            let var = |name: &str| {
                std::env::var(name)
                    .ok()
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .filter(|&v| v > 0)
            };
            let mut limits = Limits::default();
            if let Some(line) = var(LINE_VAR) {
                limits.line = line;
            }
            if let Some(file) = var(FILE_VAR) {
                limits.whole = file;
                limits.streamed = file;
            }
            limits
        })
    }
}

/// Why a user's file is not read: carried inside an `io::Error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error(
        "it is {what}, not a regular file; kumo-gen reads only regular files (copy the data into one and name that)"
    )]
    NotRegular { what: &'static str },
    #[error(
        "line {line} is longer than {limit} bytes, the line limit; a line of a dataset is a few KiB (set {LINE_VAR} to a larger byte count if this one is meant)"
    )]
    LongLine { line: u64, limit: u64 },
    #[error("it is larger than {limit} bytes, the limit for {what}{}", match .raise {
        Some(var) => format!("; split it, or set {var} to a larger byte count if it is meant"),
        None => "; no such file is that large: is it the right file?".to_string(),
    })]
    TooLarge {
        limit: u64,
        what: &'static str,
        /// The variable that raises the limit, if one does.
        raise: Option<&'static str>,
    },
}

impl Refusal {
    fn into_io(self) -> io::Error {
        let kind = match self {
            Refusal::NotRegular { .. } => io::ErrorKind::InvalidInput,
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, self)
    }
}

/// Whether `e` is a [`Refusal`] (the user's input), not a failing disk.
pub fn is_refusal(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Refusal>())
}

/// What a file that is not regular is, in words.
fn kind_of(meta: &Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a file")
}

fn check_regular(meta: &Metadata) -> io::Result<()> {
    match kind_of(meta) {
        None => Ok(()),
        Some(what) => Err(Refusal::NotRegular { what }.into_io()),
    }
}

/// Whether `path` is a regular file or a link to one (never opens it).
pub fn is_regular(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// Opens a user's file for reading: a regular file (or a link to one),
/// else a [`Refusal::NotRegular`]. Never blocks on a FIFO.
pub fn open(path: &Path) -> io::Result<File> {
    check_regular(&std::fs::metadata(path)?)?;
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    check_regular(&file.metadata()?)?;
    Ok(file)
}

/// A user's file read whole into memory, at most [`Limits::whole`] bytes.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    read_with(path, Limits::current())
}

fn read_with(path: &Path, limits: Limits) -> io::Result<Vec<u8>> {
    read_bounded(path, limits.whole, "a file read whole", Some(FILE_VAR))
}

/// A user's file of a kind with its own size bound (a domain file, a
/// Python domain file), read whole: at most `limit` bytes, `what` naming
/// the kind in the refusal (`"a domain file"`).
pub fn read_at_most(path: &Path, limit: u64, what: &'static str) -> io::Result<Vec<u8>> {
    read_bounded(path, limit, what, None)
}

/// The bound of a template file (`--templates-dir`): 16 MiB (the shipped
/// ones are a few KiB).
pub const MAX_TEMPLATE_BYTES: u64 = 16 << 20;

/// [`read_at_most`] as UTF-8 text.
pub fn read_text_at_most(path: &Path, limit: u64, what: &'static str) -> io::Result<String> {
    String::from_utf8(read_at_most(path, limit, what)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// A user's file read whole that goes into one line or one prompt (a
/// knowledge book): at most [`Limits::line`] bytes, raised by the same
/// [`LINE_VAR`]; `what` names the kind in the refusal.
pub fn read_as_line(path: &Path, what: &'static str) -> io::Result<Vec<u8>> {
    read_bounded(path, Limits::current().line, what, Some(LINE_VAR))
}

/// Reads `path` whole unless it holds more than `limit` bytes (by its
/// size, or by what it gives: a file may grow while it is read).
fn read_bounded(
    path: &Path,
    limit: u64,
    what: &'static str,
    raise: Option<&'static str>,
) -> io::Result<Vec<u8>> {
    let too_large = || Refusal::TooLarge { limit, what, raise }.into_io();
    let file = open(path)?;
    let size = file.metadata()?.len();
    if size > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// A user's file of lines (JSONL, topics) read whole: at most
/// [`Limits::whole`] bytes, with no line over [`Limits::line`]. Both are
/// checked as the file is read: a long line is refused once the cap is
/// passed, never read to its end.
pub fn read_lines(path: &Path) -> io::Result<Vec<u8>> {
    read_lines_with(path, Limits::current())
}

fn read_lines_with(path: &Path, limits: Limits) -> io::Result<Vec<u8>> {
    let file = open(path)?;
    let size = file.metadata()?.len();
    let too_large = || {
        Refusal::TooLarge {
            limit: limits.whole,
            what: "a file read whole",
            raise: Some(FILE_VAR),
        }
        .into_io()
    };
    if size > limits.whole {
        return Err(too_large());
    }
    let mut lines = Lines::with_limits(
        BufReader::with_capacity(1 << 20, file),
        Limits {
            streamed: limits.whole,
            ..limits
        },
    );
    // Grown as read: a file's size may lie (it may grow while it is read).
    let mut bytes = Vec::with_capacity(size.min(limits.line) as usize);
    let mut line = Vec::new();
    loop {
        match lines.next_line(&mut line) {
            Ok(true) => bytes.extend_from_slice(&line),
            Ok(false) => return Ok(bytes),
            Err(e) if is_too_large(&e) => return Err(too_large()),
            Err(e) => return Err(e),
        }
    }
}

fn is_too_large(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<Refusal>())
        .is_some_and(|r| matches!(r, Refusal::TooLarge { .. }))
}

/// A user's text file read whole: [`read`], as UTF-8.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read(path)?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// A user's file (or stdin) read line by line under the line cap and the
/// streamed-file bound, with the digest of every byte read.
pub struct Lines<R> {
    inner: R,
    limits: Limits,
    number: u64,
    bytes: u64,
    digest: u64,
}

/// The lines of a user's file.
pub fn lines(path: &Path) -> io::Result<Lines<BufReader<File>>> {
    Ok(Lines::new(BufReader::with_capacity(1 << 20, open(path)?)))
}

impl<R: BufRead> Lines<R> {
    /// Lines of any reader (stdin) under the current [`Limits`].
    pub fn new(inner: R) -> Self {
        Self::with_limits(inner, Limits::current())
    }

    pub fn with_limits(inner: R, limits: Limits) -> Self {
        Lines {
            inner,
            limits,
            number: 0,
            bytes: 0,
            digest: crate::fnv::FNV1A_OFFSET,
        }
    }

    /// Reads the next line into `line` (its newline kept, if any);
    /// `false` at the end. A line over the cap, or a file past the bound,
    /// is a [`Refusal`].
    pub fn next_line(&mut self, line: &mut Vec<u8>) -> io::Result<bool> {
        line.clear();
        let read = (&mut self.inner)
            .take(self.limits.line + 1)
            .read_until(b'\n', line)?;
        if read == 0 {
            return Ok(false);
        }
        self.number += 1;
        if read as u64 > self.limits.line && line.last() != Some(&b'\n') {
            return Err(Refusal::LongLine {
                line: self.number,
                limit: self.limits.line,
            }
            .into_io());
        }
        self.bytes += read as u64;
        if self.bytes > self.limits.streamed {
            return Err(Refusal::TooLarge {
                limit: self.limits.streamed,
                what: "a file read line by line",
                raise: Some(FILE_VAR),
            }
            .into_io());
        }
        self.digest = crate::fnv::fnv1a_extend(self.digest, line);
        Ok(true)
    }

    /// The 1-based number of the line last read.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// FNV-1a 64 of every byte read so far, as the 16 hex digits
    /// [`crate::files::digest::file_digest`] gives for the whole file.
    pub fn digest(&self) -> String {
        format!("{:016x}", self.digest)
    }
}

impl<R: BufRead> Iterator for Lines<R> {
    type Item = io::Result<String>;

    /// Lines as text without their line ending (like `BufRead::lines`).
    fn next(&mut self) -> Option<Self::Item> {
        let mut line = Vec::new();
        match self.next_line(&mut line) {
            Ok(false) => None,
            Ok(true) => {
                if line.last() == Some(&b'\n') {
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                }
                Some(
                    String::from_utf8(line)
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
                )
            }
            Err(e) => Some(Err(e)),
        }
    }
}

/// The files under `root` that `keep(name)` keeps, walked depth first with
/// each directory's entries sorted by name (so the list is in path
/// order), entering a subdirectory only when `enter(name)`. Links are
/// followed, but each directory is entered once: a link to a directory
/// already walked (a cycle, or the same folder twice) is skipped. A
/// `root` that is a file is returned as it is. An entry whose target is
/// missing or not regular is still returned when kept, so reading it
/// names it.
pub fn walk(
    root: &Path,
    enter: impl Fn(&str) -> bool,
    keep: impl Fn(&str) -> bool,
) -> io::Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(root)?;
    if !meta.is_dir() {
        return Ok(vec![root.to_path_buf()]);
    }
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    walk_dir(root, &meta, &enter, &keep, &mut seen, &mut out)?;
    Ok(out)
}

/// A directory's identity: device and inode (on other systems a link to a
/// directory is not followed, so the path is enough).
#[cfg(unix)]
fn identity(_path: &Path, meta: &Metadata) -> (u64, u64, PathBuf) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino(), PathBuf::new())
}

#[cfg(not(unix))]
fn identity(path: &Path, _meta: &Metadata) -> (u64, u64, PathBuf) {
    (0, 0, path.to_path_buf())
}

fn walk_dir(
    dir: &Path,
    meta: &Metadata,
    enter: &impl Fn(&str) -> bool,
    keep: &impl Fn(&str) -> bool,
    seen: &mut HashSet<(u64, u64, PathBuf)>,
    out: &mut Vec<PathBuf>,
) -> io::Result<()> {
    if !seen.insert(identity(dir, meta)) {
        return Ok(());
    }
    let mut entries: Vec<(String, PathBuf)> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| (e.file_name().to_string_lossy().into_owned(), e.path())))
        .collect::<io::Result<_>>()?;
    entries.sort_by(|a, b| a.1.cmp(&b.1));
    for (name, path) in entries {
        let target = std::fs::metadata(&path);
        #[cfg(not(unix))]
        let target = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() && target.as_ref().is_ok_and(|t| t.is_dir()) => {
                continue;
            }
            _ => target,
        };
        match target {
            Ok(m) if m.is_dir() => {
                if enter(&name) {
                    walk_dir(&path, &m, enter, keep, seen, out)?;
                }
            }
            _ => {
                if keep(&name) {
                    out.push(path);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(line: u64, file: u64) -> Limits {
        Limits {
            line,
            whole: file,
            streamed: file,
        }
    }

    #[test]
    fn lines_digest_the_bytes_they_read() {
        let text = b"{\"a\":1}\n\n{\"b\":2}";
        let mut lines = Lines::with_limits(&text[..], Limits::default());
        let mut line = Vec::new();
        let mut got = Vec::new();
        while lines.next_line(&mut line).unwrap() {
            got.push(String::from_utf8(line.clone()).unwrap());
        }
        assert_eq!(got, ["{\"a\":1}\n", "\n", "{\"b\":2}"]);
        let whole = crate::fnv::fnv1a_extend(crate::fnv::FNV1A_OFFSET, text);
        assert_eq!(lines.digest(), format!("{whole:016x}"));
    }

    #[test]
    fn a_line_over_the_cap_is_refused_with_its_number() {
        let text = b"12345\n123456\n";
        let mut lines = Lines::with_limits(&text[..], small(5, 100));
        let mut line = Vec::new();
        assert!(lines.next_line(&mut line).unwrap());
        let e = lines.next_line(&mut line).unwrap_err();
        assert!(is_refusal(&e));
        assert_eq!(
            e.get_ref().unwrap().downcast_ref::<Refusal>(),
            Some(&Refusal::LongLine { line: 2, limit: 5 })
        );
    }

    #[test]
    fn a_stream_past_the_bound_is_refused() {
        let text = b"1234\n1234\n1234\n";
        let mut lines = Lines::with_limits(&text[..], small(10, 12));
        let mut line = Vec::new();
        assert!(lines.next_line(&mut line).unwrap());
        assert!(lines.next_line(&mut line).unwrap());
        let e = lines.next_line(&mut line).unwrap_err();
        assert!(e.to_string().contains("larger than 12 bytes"), "{e}");
    }

    #[test]
    fn lines_read_whole_are_capped_while_they_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lines.jsonl");
        std::fs::write(&path, b"12345\n1234567890\n").unwrap();
        assert_eq!(read_lines_with(&path, small(10, 100)).unwrap().len(), 17);
        let e = read_lines_with(&path, small(5, 100)).unwrap_err();
        assert_eq!(
            e.get_ref().unwrap().downcast_ref::<Refusal>(),
            Some(&Refusal::LongLine { line: 2, limit: 5 })
        );
        let e = read_lines_with(&path, small(10, 16)).unwrap_err();
        assert!(e.to_string().contains("a file read whole"), "{e}");
    }

    #[test]
    fn a_file_over_the_whole_bound_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_with(&path, small(100, 10)).unwrap().len(), 10);
        let e = read_with(&path, small(100, 9)).unwrap_err();
        assert!(is_refusal(&e), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn devices_directories_and_fifos_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let zero = dir.path().join("zero.jsonl");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = open(&zero).unwrap_err();
        assert!(e.to_string().contains("a character device"), "{e}");
        let e = read(dir.path()).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let fifo = dir.path().join("fifo.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let e = lines(&fifo).err().unwrap();
        assert!(e.to_string().contains("FIFO"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_walk_enters_each_directory_once() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("D");
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("a.jsonl"), "").unwrap();
        std::fs::write(d.join("sub/b.jsonl"), "").unwrap();
        std::os::unix::fs::symlink("..", d.join("sub/up")).unwrap();
        std::os::unix::fs::symlink("../D", d.join("self")).unwrap();
        let found = walk(&d, |_| true, |n| n.ends_with(".jsonl")).unwrap();
        assert_eq!(found, [d.join("a.jsonl"), d.join("sub/b.jsonl")]);
    }
}
