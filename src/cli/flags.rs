//! What several commands' flags share: the error of a value clap's own
//! parsers cannot check, `--threads` and its worker pool.

use std::io;

/// A command-line value clap's own parsers cannot check: the message says
/// what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadValue(pub String);

impl std::fmt::Display for BadValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadValue {}

/// Most worker threads `--threads` accepts.
pub const MAX_THREADS: usize = 1024;

/// `--threads N`: 0 (one per core) to [`MAX_THREADS`].
pub fn parse_threads(text: &str) -> Result<usize, BadValue> {
    let n: usize = text
        .trim()
        .parse()
        .map_err(|_| BadValue(format!("`{text}` is not a number of threads")))?;
    if n > MAX_THREADS {
        return Err(BadValue(format!(
            "{n} threads is more than {MAX_THREADS}; use 0 for one per core"
        )));
    }
    Ok(n)
}

/// Builds the rayon pool of `--threads`.
pub fn pool(threads: usize) -> io::Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(io::Error::other)
}

/// Refuses an output directory flag (`--out`, `--out-dir`) that names a
/// file, or a path below a file, before anything is written: the
/// message says which flag and what it takes (exit 2, usage).
pub fn check_out_dir(path: &std::path::Path, flag: &str) -> Result<(), crate::error::Error> {
    let file = path
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .find(|a| a.exists())
        .filter(|a| !a.is_dir());
    let Some(file) = file else { return Ok(()) };
    let message = if file == path {
        format!("`{flag} {}` is a file, not a directory", path.display())
    } else {
        format!(
            "`{flag} {}` is below `{}`, which is a file, not a directory",
            path.display(),
            file.display()
        )
    };
    Err(crate::error::Error::Usage {
        message,
        help: Some(format!(
            "`{flag}` names a directory (created if missing) that the files go into; give a directory, e.g. `{flag} generated`"
        )),
    })
}
