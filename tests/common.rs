//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/kumo-reference`, or `None` (with a note) when it is absent
/// on a developer machine. Under CI (`CI` set to anything but `false`/`0`)
/// a missing reference fails the test: a skipped conformance test is a test
/// that cannot fail.
#[allow(dead_code)]
pub fn kumo_reference() -> Option<PathBuf> {
    let dir = root().join("../shared/kumo-reference");
    if dir.is_dir() {
        return Some(dir);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"));
    assert!(
        !ci,
        "{} is missing; CI=true requires KUMO's reference data beside the repository \
         (clone the shared folder next to it, or unset CI to skip these tests locally)",
        dir.display()
    );
    eprintln!(
        "skipping: {} is absent (set CI=true to make this an error)",
        dir.display()
    );
    None
}

/// The built `kumo-gen` binary as an assert_cmd command.
pub fn kumo_gen() -> assert_cmd::Command {
    assert_cmd::Command::new(env!("CARGO_BIN_EXE_kumo-gen"))
}

/// The tiny fixture domain, and the setting [`generate_tiny`] writes.
pub const TINY: &str = "tests/fixtures/ok/tiny.yaml";
pub const TINY_SETTING: &str = "truth_num=3+action_num=3+valid_truth_num=1";

/// `kumo-gen generate` of the tiny fixture at 3x3 into `out` (`-n n`),
/// with `extra` flags, run from the repository root: a plain
/// `std::process::Command`, so callers can wire its standard streams.
pub fn generate_tiny(out: &Path, n: u64, extra: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_kumo-gen"));
    command
        .current_dir(root())
        .args([
            "generate",
            "--domain",
            TINY,
            "--truths",
            "3",
            "--actions",
            "3",
        ])
        .args(["-n", &n.to_string(), "--out"])
        .arg(out)
        .args(extra);
    command
}
