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

/// A bad `--split` value is a usage error (exit 2) that says what is wrong
/// with the value and how to write it.
#[test]
fn a_bad_split_value_says_what_is_wrong() {
    let dir = inputs();
    let cases: &[(&str, &str)] = &[
        (
            "train",
            "`train` is not NAME=FRACTION (e.g. `train=0.9,test=0.1`)",
        ),
        ("train=0.5,test=0.4", "the fractions sum to 0.9, not 1"),
        ("train=1", "a split needs at least two parts"),
        ("train=0.5,train=0.5", "part `train` is named twice"),
        ("a/b=0.5,c=0.5", "part name `a/b`: use letters, digits"),
        (
            "train=x,test=0.5",
            "`train=x`: the fraction must be a number in (0, 1]",
        ),
    ];
    for (value, message) in cases {
        let args = [
            "generate", "--domain", "medical", "-n", "2", "--split", value, "--out", "o",
        ];
        one_head(&dir, &args, 2);
        TestCommand::new()
            .current_dir(dir.path())
            .args(args)
            .expect_code(2)
            .stderr_contains(message);
    }
    assert!(!dir.path().join("o").exists(), "nothing is written");
}

/// A seed file of an earlier `--seed random` run that cannot be read is an
/// error naming the file and the fix (a new seed would overwrite it), and
/// the file is kept as it was; `--force` replaces it.
#[test]
fn a_broken_seed_file_is_an_error_not_a_new_seed() {
    let dir = inputs();
    let args = [
        "generate",
        "--domain",
        "medical",
        "--truths",
        "4",
        "--actions",
        "6",
        "-n",
        "3",
        "--seed",
        "random",
        "--out",
        "o",
    ];
    TestCommand::new()
        .current_dir(dir.path())
        .args(args)
        .expect_code(0);
    let seed_file = dir
        .path()
        .join("o/SECRET-seeds/medical/truth_num=4+action_num=6+valid_truth_num=1.json");
    assert!(seed_file.is_file(), "{} is written", seed_file.display());
    // Damaged after the run stopped (a half-written copy, an editor).
    std::fs::write(&seed_file, "{\"seed\": ").unwrap();
    one_head(&dir, &args, 1);
    TestCommand::new()
        .current_dir(dir.path())
        .args(args)
        .expect_code(1)
        .stderr_contains(
            "truth_num=4+action_num=6+valid_truth_num=1.json` is not a kumo-gen seed file",
        )
        .stderr_contains("restore the seed file from a copy")
        .stderr_contains("--force");
    assert_eq!(std::fs::read_to_string(&seed_file).unwrap(), "{\"seed\": ");
    TestCommand::new()
        .current_dir(dir.path())
        .args([&args[..], &["--force"]].concat())
        .expect_code(0);
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&seed_file).unwrap()).unwrap();
    assert!(record["seed"].is_u64());
}
