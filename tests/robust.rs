//! Long and concurrent runs: progress on disk as it is made, kill -9 and
//! resume to identical bytes, locked outputs, damage detection, derived
//! files rebuilt only when stale, and no leftovers of killed runs.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::kumo_gen;

const HARD: &[&str] = &["--domain", "medical", "--truths", "24", "--actions", "30"];
const SETTING: &str = "truth_num=24+action_num=30+valid_truth_num=1.jsonl";

fn lines(path: &Path) -> usize {
    std::fs::read(path)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0)
}

fn run(out: &Path, n: &str, extra: &[&str]) -> std::process::Output {
    kumo_gen()
        .args(HARD)
        .args(["-n", n, "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn finished_lines_are_on_disk_before_the_run_ends_and_kill_9_resumes_identically() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, killed) = (dir.path().join("whole"), dir.path().join("killed"));
    assert!(run(&whole, "60", &["--threads", "2"]).status.success());

    let mut child = Command::new(env!("CARGO_BIN_EXE_kumo-gen"))
        .args(HARD)
        .args(["-n", "60", "--threads", "2", "--out"])
        .arg(&killed)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let file = killed.join("medical").join(SETTING);
    let started = Instant::now();
    // Lines appear while the run goes on, long before its 60 are done.
    while lines(&file) < 3 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no line on disk after 120 s"
        );
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before it could be killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let kept = lines(&file);
    assert!(kept >= 3, "what was finished before the kill is kept");

    let resumed = run(&killed, "60", &["--threads", "1"]);
    assert!(resumed.status.success(), "{resumed:?}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        std::fs::read(whole.join("medical").join(SETTING)).unwrap(),
        "resumed after {kept} lines, the file equals an uninterrupted run"
    );
}

#[test]
fn concurrent_runs_of_other_settings_keep_every_manifest_entry() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let children: Vec<_> = (4..10)
        .map(|t| {
            Command::new(env!("CARGO_BIN_EXE_kumo-gen"))
                .args(["--domain", "medical", "--actions", "8", "-n", "300"])
                .args(["--truths", &t.to_string(), "--out"])
                .arg(out)
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(out.join("medical/manifest.json")).unwrap()).unwrap();
    let datasets = manifest["datasets"].as_object().unwrap();
    assert_eq!(datasets.len(), 6, "{datasets:#?}");
    for (setting, entry) in datasets {
        assert_eq!(entry["status"], "complete", "{setting}");
        assert!(entry["digest"].is_string(), "{setting}");
    }
}

#[test]
fn a_second_run_on_the_same_file_is_refused_while_the_first_writes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let mut first = Command::new(env!("CARGO_BIN_EXE_kumo-gen"))
        .args(HARD)
        .args(["-n", "400", "--out"])
        .arg(out)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let file = out.join("medical").join(SETTING);
    let started = Instant::now();
    while lines(&file) == 0 && first.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < Duration::from_secs(120));
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = run(out, "400", &[]);
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(second.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("is being written by another kumo-gen run"),
        "{stderr}"
    );
}

#[test]
fn damage_to_a_finished_dataset_is_detected_and_derived_files_are_rebuilt_only_when_stale() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let generate = |extra: &[&str]| {
        kumo_gen()
            .args([
                "--domain",
                "medical",
                "--truths",
                "6",
                "--actions",
                "8",
                "-n",
                "50",
            ])
            .arg("--out")
            .arg(out)
            .args(extra)
            .output()
            .unwrap()
    };
    assert!(generate(&[]).status.success());
    let domain = out.join("medical");
    let dataset = domain.join("truth_num=6+action_num=8+valid_truth_num=1.jsonl");
    let sft = domain.join("sft/truth_num=6+action_num=8+valid_truth_num=1.jsonl");
    let modified = std::fs::metadata(&sft).unwrap().modified().unwrap();

    // A stale temp tree of a killed run is cleaned by the next rebuild.
    let stale =
        domain.join("knowledge_book/.truth_num=6+action_num=8+valid_truth_num=1.tmp-999999");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("seed=0.txt"), "leftover").unwrap();

    // Up to date: nothing is rewritten.
    let again = generate(&[]);
    assert!(again.status.success());
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("up to date"), "{stderr}");
    assert_eq!(
        std::fs::metadata(&sft).unwrap().modified().unwrap(),
        modified
    );

    // Other rendering options make the derived files stale: rebuilt, and
    // the leftovers are gone.
    assert!(generate(&["--sft-rationale"]).status.success());
    assert!(!stale.exists(), "stale temp files are removed");
    assert_ne!(
        std::fs::metadata(&sft).unwrap().modified().unwrap(),
        modified
    );

    // Garbage appended to the finished file is damage, not "up to date".
    let mut bytes = std::fs::read(&dataset).unwrap();
    bytes.extend_from_slice(b"{\"truths\": []}\n");
    std::fs::write(&dataset, &bytes).unwrap();
    let damaged = generate(&[]);
    assert_eq!(damaged.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&damaged.stderr);
    assert!(
        stderr.contains("content changed after it was finished"),
        "{stderr}"
    );
    assert!(generate(&["--force"]).status.success());
}
