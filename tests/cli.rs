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

/// A test run that exits with an unexpected code fails with everything
/// needed to see why: the command line, the exit status, the working
/// directory, the files under the directories it names, and both streams.
#[test]
fn a_test_run_with_an_unexpected_exit_code_reports_command_cwd_files_and_streams() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    std::fs::write(dir.path().join("out/left.txt"), "12345").unwrap();
    let failed = std::panic::catch_unwind(|| {
        TestCommand::new()
            .current_dir(dir.path())
            .args(["validate", "no-such-domain", "out"])
            .ok()
    })
    .expect_err("exit 1 is not the expected 0");
    let report = failed.downcast_ref::<String>().unwrap();
    for part in [
        "expected exit code 0",
        "command: kumo-gen validate no-such-domain out",
        "exit:    exit status: 1",
        &format!("cwd:     {}", dir.path().display()),
        "left.txt (5 B)",
        "stdout:",
        "unknown domain `no-such-domain`",
    ] {
        assert!(report.contains(part), "{part:?} missing from:\n{report}");
    }
    // What a test expects of the streams fails the same way.
    let ran = TestCommand::new()
        .args(["validate", "no-such-domain"])
        .run();
    let failed = std::panic::catch_unwind(|| {
        ran.stderr_contains("something else");
    })
    .expect_err("the text is not there");
    let report = failed.downcast_ref::<String>().unwrap();
    assert!(report.contains("expected stderr to contain \"something else\""));
    assert!(
        report.contains("unknown domain `no-such-domain`"),
        "{report}"
    );
}
