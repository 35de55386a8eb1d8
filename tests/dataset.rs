//! Reading datasets (`kumo_gen::dataset`): every reader (eval, play,
//! check-books, score, stats, merge) picks a dataset directory's domain by
//! one rule (`--domain`, else the manifest's, else the directory's name),
//! and a `--domain` that does not load is said, never passed over.

use std::path::Path;

use crate::common::{TINY_SETTING, generate_tiny, kumo_gen, root};

/// The tiny fixture's 3x3 dataset, generated into `out/tiny/` and moved to
/// `out/NAME/` (a directory name that is no domain): only its manifest
/// names the domain.
fn tiny_dataset_named(out: &Path, name: &str) {
    let status = generate_tiny(out, 4, &[]).status().unwrap();
    assert!(status.success());
    std::fs::rename(out.join("tiny"), out.join(name)).unwrap();
}

#[test]
fn eval_plays_a_directory_named_by_domain_with_the_domain_its_manifest_records() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    tiny_dataset_named(&data, "mine");
    kumo_gen()
        .args(["eval", "--player", "guess", "--trials", "1", "--data"])
        .arg(&data)
        .args(["--domain", "mine", "--out"])
        .arg(tmp.path().join("results"))
        .assert()
        .success();
    let played = tmp
        .path()
        .join("results/guess/VanillaAgent/mine")
        .join(TINY_SETTING)
        .join("eval_times=1.jsonl");
    let text = std::fs::read_to_string(&played).unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");
}

#[test]
fn an_eval_domain_that_names_no_directory_and_does_not_load_is_said() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    tiny_dataset_named(&data, "mine");
    let out = kumo_gen()
        .args(["eval", "--player", "guess", "--data"])
        .arg(&data)
        .args(["--domain", "no-such-domain", "--out"])
        .arg(tmp.path().join("results"))
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("unknown domain `no-such-domain`"),
        "{stderr}"
    );
    assert!(!tmp.path().join("results").exists());
}

#[test]
fn check_books_reads_the_domain_the_manifest_records() {
    let tmp = tempfile::tempdir().unwrap();
    tiny_dataset_named(tmp.path(), "mine");
    let out = kumo_gen()
        .arg("check-books")
        .arg(tmp.path().join("mine"))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        stdout.contains("4 books checked (exact checker): 4 passed, 0 failed"),
        "{stdout}"
    );
}

#[test]
fn stats_says_why_its_domain_does_not_load() {
    let tmp = tempfile::tempdir().unwrap();
    let instances = root().join("tests/fixtures/eval");
    kumo_gen()
        .args(["eval", "--player", "guess", "--trials", "1", "--data"])
        .arg(&instances)
        .arg("--domain")
        .arg(root().join("tests/fixtures/ok/tiny.yaml"))
        .arg("--out")
        .arg(tmp.path())
        .assert()
        .success();
    let out = kumo_gen()
        .arg("stats")
        .arg(tmp.path())
        .arg("--instances")
        .arg(&instances)
        .args(["--domain", "no-such-domain"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("unknown domain `no-such-domain`"),
        "{stderr}"
    );
}

/// A results file that is not text is the user's input (exit 1, as
/// docs/exit-codes.md says), not a failure of the machine (2).
#[test]
fn a_result_file_that_is_not_text_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("eval_times=1.jsonl");
    std::fs::write(&file, [0xff, 0xfe, b'\n']).unwrap();
    for command in ["score", "stats"] {
        let out = kumo_gen()
            .arg(command)
            .arg(&file)
            .arg("--instances")
            .arg(root().join("tests/fixtures/eval"))
            .assert()
            .code(1);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(
            stderr.starts_with("error: cannot read `") && stderr.contains("eval_times=1.jsonl"),
            "{command}: {stderr}"
        );
    }
}
