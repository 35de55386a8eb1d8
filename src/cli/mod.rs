//! The command-line layer: turns flags into checked configurations, calls
//! the library, and maps results to exit codes (0 ok, 1 bad input or
//! infeasible request, 2 usage, I/O or internal error).

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    0
}
