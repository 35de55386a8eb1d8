//! [`stderr_line!`](crate::stderr_line): the one way kumo-gen writes a
//! message line to stderr. Only the command line writes there; the
//! library reports through [`crate::progress::Progress`] events.
//!
//! `eprintln!` panics when stderr is closed or a pipe whose reader has gone
//! (`kumo-gen ... 2>&1 | head -1`), which would end a run half way with exit
//! 101 after its dataset file but before its books. A message nobody can
//! read is not worth a run: this macro writes the line and ignores a failure.

/// Writes one line to stderr like `eprintln!`, ignoring write failures
/// (a closed or broken stderr never stops a run).
#[macro_export]
macro_rules! stderr_line {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr().lock(), $($arg)*);
    }};
}
