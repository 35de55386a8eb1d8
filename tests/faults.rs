//! Fault injection from the outside: closed stderr and stdout, kills,
//! a full disk, symbolic links inside `--out`. Each test checks that
//! nothing is lost, nothing is written outside `--out`, no temp file
//! survives the next run and the exit code is the documented one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::root;

const TINY: &str = "tests/fixtures/ok/tiny.yaml";
const SETTING: &str = "truth_num=3+action_num=3+valid_truth_num=1";

fn kumo_gen_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kumo-gen"));
    command.current_dir(root());
    command
}

/// `kumo-gen generate` of the tiny fixture into `out` (`-n n`), with `extra`.
fn generate(out: &Path, n: u64, extra: &[&str]) -> Command {
    let mut command = kumo_gen_command();
    command
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

/// A pipe whose reading end is already closed: every write fails (EPIPE).
fn broken_pipe() -> std::io::PipeWriter {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer
}

/// Every path under `dir` (relative), sorted.
fn all_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            out.push(path.strip_prefix(base).unwrap().to_path_buf());
            if path.is_dir() && !path.is_symlink() {
                walk(base, &path, out);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files);
    files.sort();
    files
}

/// Temp files of the writers (`.NAME.tmp...`) anywhere under `dir`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    all_files(dir)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(".tmp"))
        })
        .collect()
}

#[test]
fn a_closed_stderr_and_stdout_do_not_stop_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let status = generate(&out, 5, &[])
        .stdout(broken_pipe())
        .stderr(broken_pipe())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let domain = out.join("tiny");
    assert!(domain.join(format!("{SETTING}.jsonl")).is_file());
    assert!(domain.join(format!("sft/{SETTING}.jsonl")).is_file());
    assert_eq!(
        std::fs::read_dir(domain.join(format!("knowledge_book/{SETTING}")))
            .unwrap()
            .count(),
        5
    );
    // An error with stderr closed still ends with its documented code.
    let status = kumo_gen_command()
        .args(["generate", "--domain", "no-such-domain", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(broken_pipe())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    let status = kumo_gen_command()
        .args(["check-books", "--domain", TINY])
        .arg(&domain)
        .stdout(broken_pipe())
        .stderr(broken_pipe())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(temp_files(&out).is_empty());
}

#[test]
fn symbolic_links_inside_out_are_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let victim = outside.join("victim.txt");
    std::fs::write(&victim, "keep me\n").unwrap();
    assert!(generate(&out, 3, &[]).status().unwrap().success());
    let domain = out.join("tiny");

    // A dataset file that is a link: `--force` replaces the link itself.
    let dataset = domain.join(format!("{SETTING}.jsonl"));
    std::fs::remove_file(&dataset).unwrap();
    std::os::unix::fs::symlink(&victim, &dataset).unwrap();
    let forced = generate(&out, 3, &["--force"]).output().unwrap();
    assert!(forced.status.success(), "{forced:?}");
    assert!(!dataset.is_symlink());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");

    // A derived directory that is a link is refused (exit 2, named).
    let sft = domain.join("sft");
    std::fs::remove_dir_all(&sft).unwrap();
    std::os::unix::fs::symlink(&outside, &sft).unwrap();
    let refused = generate(&out, 3, &["--force"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("symbolic link") && said.contains("sft"),
        "{said}"
    );
    assert_eq!(all_files(&outside), vec![PathBuf::from("victim.txt")]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
}

#[test]
fn requests_beyond_the_documented_bounds_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let huge = generate(&out, 1_000_000_000_000, &[]).output().unwrap();
    assert_eq!(huge.status.code(), Some(2));
    let said = String::from_utf8_lossy(&huge.stderr);
    assert!(said.contains("100000000"), "{said}");
    assert!(!out.exists(), "nothing written");
    let trials = kumo_gen_command()
        .args(["eval", "--model", "m", "--trials", "4294967296", "--data"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(trials.status.code(), Some(2));
    let said = String::from_utf8_lossy(&trials.stderr);
    assert!(said.contains("10000"), "{said}");
}
