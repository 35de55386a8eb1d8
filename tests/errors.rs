//! Every command's error path: each subcommand given a bad input prints
//! exactly one `error:` head (located diagnostics carry their own, nothing
//! is headed twice, nothing goes unheaded) and exits with the README's
//! code for the user's input (1), or for usage (2).

use crate::common::{TestCommand, root};

const SETTING: &str = "truth_num=4+action_num=3+valid_truth_num=1.jsonl";

/// A folder with an invalid domain file `bad.yaml` and a dataset
/// `data/tiny/` (the eval fixture's instances).
fn inputs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.yaml"), "name: [broken\n").unwrap();
    let tiny = dir.path().join("data/tiny");
    std::fs::create_dir_all(&tiny).unwrap();
    std::fs::copy(
        root().join("tests/fixtures/eval/tiny").join(SETTING),
        tiny.join(SETTING),
    )
    .unwrap();
    dir
}

#[test]
fn every_command_heads_its_error_once_with_the_input_exit_code() {
    let dir = inputs();
    let instances = format!("data/tiny/{SETTING}");
    let cases: &[&[&str]] = &[
        &["validate", "bad.yaml"],
        &["--domains-dir", ".", "domains"],
        &["score", "missing.jsonl"],
        &["stats", "--instances", "data/tiny", "missing.jsonl"],
        &[
            "eval", "--data", "data", "--domain", "bad.yaml", "--player", "guess", "--out", "res",
        ],
        &["play", "--domain", "bad.yaml"],
        &["play", "--domain", "no-such-domain"],
        &["play", "--instances", &instances, "--domain", "bad.yaml"],
        &["generate", "--domain", "bad.yaml", "-n", "1", "--out", "o"],
        &[
            "generate",
            "--domain",
            "no-such-domain",
            "-n",
            "1",
            "--out",
            "o",
        ],
        &[
            "generate",
            "--domain",
            "missing.yaml",
            "-n",
            "1",
            "--out",
            "o",
        ],
        &["--domain", "bad.yaml", "-n", "1", "--out", "o"],
        &[
            "curriculum",
            "--levels",
            "2",
            "--domain",
            "bad.yaml",
            "--out",
            "o",
        ],
        &["merge", "--out", "missing"],
        &["graph", "--domain", "bad.yaml"],
        &["split", "--domain", "bad.yaml", "--out-dir", "o"],
        &["family", "rules3"],
        &["check-books", "data/tiny", "--domain", "bad.yaml"],
        &["import", "missing.py"],
        &["label", "--domain", "bad.yaml", "--instances", &instances],
        &[
            "propose",
            "--api-base",
            "http://127.0.0.1:9",
            "--model",
            "m",
            "--out",
            "o",
            "--topics",
            "missing.txt",
        ],
        &["overlap", "missing-a", "missing-b"],
        &["verify", "--seed-file", "missing.seed"],
        &["moves", "missing.jsonl", "--instances", "data/tiny"],
        &[
            "moves",
            "missing.jsonl",
            "--instances",
            "data/tiny",
            "--domain",
            "bad.yaml",
        ],
        &["pairs", "--data", "missing"],
        &["pairs", "--data", "data/tiny", "--domain", "bad.yaml"],
        &["report", "missing.jsonl", "-o", "rep"],
        &[
            "report",
            "missing.jsonl",
            "-o",
            "rep",
            "--domain",
            "bad.yaml",
        ],
        &["serve", "--data", "missing", "--out", "res"],
        &[
            "serve",
            "--data",
            "data/tiny",
            "--domain",
            "bad.yaml",
            "--out",
            "res",
        ],
    ];
    for args in cases {
        one_head(&dir, args, 1);
    }
}

/// Usage errors (a value that names nothing) are headed once too, and
/// exit 2.
#[test]
fn usage_errors_head_once_with_the_usage_exit_code() {
    let dir = inputs();
    let cases: &[&[&str]] = &[
        &["completions", "no-such-shell"],
        &["man", "no-such-command"],
        &["no-such-command"],
    ];
    for args in cases {
        one_head(&dir, args, 2);
    }
}

/// Runs `args` in `dir`, expecting `code` and exactly one `error:` head at
/// the start of stderr (located diagnostics carry their own).
fn one_head(dir: &tempfile::TempDir, args: &[&str], code: i32) {
    let ran = TestCommand::new()
        .current_dir(dir.path())
        .args(args)
        .expect_code(code);
    let stderr = ran.stderr_text();
    let heads = stderr.lines().filter(|l| l.starts_with("error:")).count();
    if !stderr.starts_with("error: ") || heads != 1 || stderr.contains("error: error:") {
        ran.fail("expected one `error:` head, at the start of stderr");
    }
}
