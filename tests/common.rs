//! Helpers shared by the integration tests.

use std::path::PathBuf;

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
