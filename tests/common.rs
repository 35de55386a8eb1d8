//! Helpers shared by the integration tests.

use std::path::PathBuf;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/kumo-reference`, or `None` (with a note) when it is absent.
#[allow(dead_code)]
pub fn kumo_reference() -> Option<PathBuf> {
    let dir = root().join("../shared/kumo-reference");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipping: {} is absent", dir.display());
        None
    }
}

/// The built `kumo-gen` binary as an assert_cmd command.
pub fn kumo_gen() -> assert_cmd::Command {
    assert_cmd::Command::new(env!("CARGO_BIN_EXE_kumo-gen"))
}
