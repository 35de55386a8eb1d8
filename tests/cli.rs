//! The command line as a whole: the main job without a subcommand, help,
//! and exit codes.

use crate::common::TestCommand;

/// `kumo-gen --domain D ...` is the main job: it runs `generate`.
#[test]
fn main_job_needs_no_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    TestCommand::new()
        .args(["--domain", "tests/fixtures/ok/clinic.yaml"])
        .args(["--truths", "3", "--actions", "3", "-n", "5", "--out"])
        .arg(dir.path())
        .ok();
    let lines = std::fs::read_to_string(
        dir.path()
            .join("clinic/truth_num=3+action_num=3+valid_truth_num=1.jsonl"),
    )
    .unwrap();
    assert_eq!(lines.lines().count(), 5);
    let books = dir
        .path()
        .join("clinic/knowledge_book/truth_num=3+action_num=3+valid_truth_num=1");
    assert_eq!(std::fs::read_dir(books).unwrap().count(), 5);
}

/// The global `--domains-dir` may come before the generation flags.
#[test]
fn domains_dir_before_the_main_job() {
    let dir = tempfile::tempdir().unwrap();
    TestCommand::new()
        .args(["--domains-dir", "tests/fixtures/ok", "--domain", "clinic"])
        .args([
            "--truths",
            "3",
            "--actions",
            "3",
            "-n",
            "2",
            "--no-labels",
            "--out",
        ])
        .arg(dir.path())
        .ok();
    TestCommand::new()
        .args(["--domains-dir", "tests/fixtures/ok", "validate", "clinic"])
        .ok();
}

#[test]
fn no_arguments_prints_help_and_exits_2() {
    TestCommand::new()
        .expect_code(2)
        .stderr_contains("Main job: kumo-gen --domain medical");
    TestCommand::new().arg("--help").ok();
    TestCommand::new().arg("--version").ok();
    TestCommand::new().arg("--no-such-flag").expect_code(2);
}
