//! The command line as a whole: the main job without a subcommand, help,
//! and exit codes.

use crate::common::{TestCommand, kumo_gen, root};

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

const EVAL_SETTING: &str = "truth_num=4+action_num=3+valid_truth_num=1.jsonl";

/// The eval fixture's instance file with `bytes` in place of its text,
/// under `dir/tiny/` (a dataset directory `eval` reads), and as a file.
fn instance_file_with(
    dir: &std::path::Path,
    edit: impl Fn(Vec<u8>) -> Vec<u8>,
) -> std::path::PathBuf {
    let text = std::fs::read(root().join("tests/fixtures/eval/tiny").join(EVAL_SETTING)).unwrap();
    std::fs::create_dir_all(dir.join("tiny")).unwrap();
    let path = dir.join("tiny").join(EVAL_SETTING);
    std::fs::write(&path, edit(text)).unwrap();
    path
}

/// `label` and `eval` on `path` (in its dataset directory): exit codes and stderr.
fn label_and_eval(path: &std::path::Path) -> Vec<(Option<i32>, String)> {
    let data = path.parent().unwrap().parent().unwrap();
    let label = kumo_gen()
        .current_dir(root())
        .args([
            "label",
            "--domain",
            "tests/fixtures/ok/tiny.yaml",
            "--instances",
        ])
        .arg(path)
        .arg("-o")
        .arg(data.join("labelled.jsonl"))
        .output()
        .unwrap();
    let eval = kumo_gen()
        .current_dir(root())
        .args([
            "eval",
            "--player",
            "guess",
            "--domain",
            "tests/fixtures/ok/tiny.yaml",
            "--data",
        ])
        .arg(data)
        .arg("--out")
        .arg(data.join("results"))
        .output()
        .unwrap();
    [label, eval]
        .into_iter()
        .map(|o| {
            (
                o.status.code(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            )
        })
        .collect()
}

#[test]
fn a_jsonl_file_with_a_byte_order_mark_is_named_as_such_not_a_json_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = instance_file_with(dir.path(), |text| [&b"\xEF\xBB\xBF"[..], &text].concat());
    for (code, said) in label_and_eval(&path) {
        assert_eq!(code, Some(1), "{said}");
        assert!(said.contains("starts with a byte-order mark"), "{said}");
        assert!(said.contains("without BOM"), "{said}");
        assert!(!said.contains("expected value"), "{said}");
    }
}

#[test]
fn a_jsonl_line_that_is_not_utf8_is_named_by_its_line_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = instance_file_with(dir.path(), |mut text| {
        text.extend_from_slice(b"{\"seed\": 9, \"x\": \"\xff\"}\n");
        text
    });
    let lines = std::fs::read(&path)
        .unwrap()
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    for (code, said) in label_and_eval(&path) {
        assert_eq!(code, Some(1), "{said}");
        assert!(said.contains("not UTF-8"), "{said}");
        assert!(
            said.contains(&format!("line {lines} ")) || said.contains(&format!(":{lines}:")),
            "line {lines}: {said}"
        );
    }
}

#[test]
fn an_error_quotes_at_most_80_characters_of_a_huge_literal() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = std::fs::read_to_string(root().join("tests/fixtures/ok/tiny.yaml")).unwrap();
    let digits = "9".repeat(100_000);
    let huge = tiny.replacen("[0, 2]", &format!("[0, {digits}]"), 1);
    assert_ne!(huge, tiny);
    let path = dir.path().join("huge.yaml");
    std::fs::write(&path, huge).unwrap();
    let output = kumo_gen().arg("validate").arg(&path).output().unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{said}");
    let message = said.lines().next().unwrap();
    assert!(message.contains(&format!("`{}…", "9".repeat(80))), "{said}");
    assert!(!message.contains(&"9".repeat(81)), "{said}");
    assert!(said.len() < 2_000, "{} bytes of stderr", said.len());
}

#[test]
fn a_domain_over_the_yaml_node_limit_is_told_the_limit_and_the_flag_to_raise_it() {
    let over = kumo_gen()
        .current_dir(root())
        .args([
            "validate",
            "tests/fixtures/ok/tiny.yaml",
            "--domain-max-nodes",
            "20",
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&over.stderr);
    assert_eq!(over.status.code(), Some(1), "{said}");
    assert!(said.contains("more than 20 YAML nodes"), "{said}");
    assert!(said.contains("--domain-max-nodes"), "{said}");
    assert!(!said.contains("budget breached"), "{said}");
    kumo_gen()
        .current_dir(root())
        .args([
            "validate",
            "tests/fixtures/ok/tiny.yaml",
            "--domain-max-nodes",
            "1000",
        ])
        .assert()
        .code(0);
}

#[test]
fn a_mistyped_domain_name_is_answered_with_did_you_mean() {
    let output = kumo_gen()
        .args(["--domain", "medcal", "-n", "1"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains("did you mean `medical`"), "{said}");
    // A `--domains-dir` name is offered too.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("tests/fixtures/ok/tiny.yaml"),
        dir.path().join("gizmos.yaml"),
    )
    .unwrap();
    let output = kumo_gen()
        .arg("--domains-dir")
        .arg(dir.path())
        .args(["--domain", "gizmo", "-n", "1"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("did you mean `gizmos`"), "{said}");
}
