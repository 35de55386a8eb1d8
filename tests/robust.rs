//! Long and concurrent runs: progress on disk as it is made, kill -9 and
//! resume to identical bytes, locked outputs, damage detection, derived
//! files rebuilt only when stale, and no leftovers of killed runs.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Ran, TestCommand};

const HARD: &[&str] = &["--domain", "medical", "--truths", "24", "--actions", "30"];
const SETTING: &str = "truth_num=24+action_num=30+valid_truth_num=1.jsonl";

fn lines(path: &Path) -> usize {
    std::fs::read(path)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0)
}

fn run(out: &Path, n: &str, extra: &[&str]) -> Ran {
    TestCommand::new()
        .args(HARD)
        .args(["-n", n, "--out"])
        .arg(out)
        .args(extra)
        .run()
}

#[test]
fn finished_lines_are_on_disk_before_the_run_ends_and_kill_9_resumes_identically() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, killed) = (dir.path().join("whole"), dir.path().join("killed"));
    assert!(run(&whole, "60", &["--threads", "2"]).status.success());

    let mut child = TestCommand::new()
        .args(HARD)
        .args(["-n", "60", "--threads", "2", "--out"])
        .arg(&killed)
        .stderr(Stdio::null())
        .spawn();
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
            TestCommand::new()
                .args(["--domain", "medical", "--actions", "8", "-n", "300"])
                .args(["--truths", &t.to_string(), "--out"])
                .arg(out)
                .stderr(Stdio::null())
                .spawn()
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
    let mut first = TestCommand::new()
        .args(HARD)
        .args(["-n", "400", "--out"])
        .arg(out)
        .stderr(Stdio::null())
        .spawn();
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
        TestCommand::new()
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
            .run()
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

// ---- eval against a misbehaving server ----

/// A chat-completions server on loopback that answers every request with
/// `status`, `headers` and `body` after `delay`; counts requests.
fn misbehave(
    status: u16,
    headers: &'static str,
    body: String,
    delay: Duration,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (body, seen) = (body.clone(), seen.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap();
                    }
                }
                let mut request = vec![0; length];
                let _ = reader.read_exact(&mut request);
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                std::thread::sleep(delay);
                let mut stream = stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (base, count)
}

fn eval(base: &str, out: &Path, model: &str, extra: &[&str]) -> TestCommand {
    let root = crate::common::root();
    let mut cmd = TestCommand::new();
    cmd.args(["eval", "--api-base", base, "--model", model, "--data"])
        .arg(root.join("tests/fixtures/eval"))
        .arg("--domain")
        .arg(root.join("tests/fixtures/ok/tiny.yaml"))
        .arg("--out")
        .arg(out)
        .args(["--trials", "1", "--backoff-ms", "1"])
        .args(extra)
        .env_remove("OPENAI_API_KEY")
        .env_remove("KUMO_API_KEY");
    cmd
}

fn said(text: &str) -> String {
    serde_json::json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": text}}],
        "usage": {"total_tokens": 10}})
    .to_string()
}

const RESULTS: &str =
    "VanillaAgent/tiny/truth_num=4+action_num=3+valid_truth_num=1/eval_times=1.jsonl";

#[test]
fn a_200_that_is_not_a_completion_is_the_servers_fault_not_a_parse_error() {
    for body in [
        "<html><body>502 Bad Gateway</body></html>".to_string(),
        r#"{"choices": [{"finish_rea"#.to_string(),
        r#"{"object": "error", "message": "overloaded"}"#.to_string(),
        r#"{"choices": [{"finish_reason": "stop", "message": {"content": 42}}]}"#.to_string(),
        r#"{"choices": [{"finish_reason": "stop", "message": {"content": ["Flu"]}}]}"#.to_string(),
    ] {
        let (base, count) = misbehave(200, "", body.clone(), Duration::ZERO);
        let dir = tempfile::tempdir().unwrap();
        let output = eval(&base, dir.path(), "m", &["--retries", "1"]).run();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{body}: {stdout}{stderr}");
        assert!(stdout.contains("3 unfinished"), "{body}: {stdout}");
        assert!(stderr.contains("retry 1/1"), "waits are logged: {stderr}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("m").join(RESULTS)).unwrap(),
            "",
            "{body}: nothing is recorded as the model's"
        );
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 6, "{body}");
    }
}

#[test]
fn an_unreachable_server_is_named_at_once() {
    // A port nobody listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let output = eval(&format!("http://127.0.0.1:{port}/v1"), dir.path(), "m", &[]).expect_code(2);
    assert!(started.elapsed() < Duration::from_secs(10));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot reach the server"), "{stderr}");
}

#[test]
fn bad_api_bases_and_temperatures_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (base, extra, needle) in [
        ("localhost:8001/v1", &[][..], "does not start with"),
        ("http://h:99999/v1", &[][..], "bad port"),
        (
            "http://127.0.0.1:9/v1",
            &["--temperature", "NaN"][..],
            "--temperature",
        ),
    ] {
        // Refused as the flags are read, like every flag value that is
        // wrong whatever the input.
        let output = eval(base, dir.path(), "m", extra).run();
        assert_eq!(output.status.code(), Some(2), "{base} {extra:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(needle), "{stderr}");
    }
}

#[test]
fn results_paths_keep_organisations_apart_and_stay_inside_out() {
    let (base, _) = misbehave(200, "", said("no idea"), Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    let models = [
        "orgA/llama-8b",
        "orgB/llama-8b",
        "orgA--llama-8b",
        "../../evil",
        "/",
        ".",
        "modèle",
        "modèla",
        &"m".repeat(300),
    ];
    for model in models {
        let output = eval(&base, &out, model, &[]).run();
        assert!(output.status.success(), "{model}: {output:?}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains(" 0 already done"),
            "{model}: every model plays its own instances: {stdout}"
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), models.len(), "one folder per model: {names:?}");
    for (prefix, model) in [
        ("orgA--llama-8b~", "orgA/llama-8b"),
        ("_..--..--evil~", "../../evil"),
        ("mod_le~", "modèle"),
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(prefix)),
            "{model} keeps a readable folder name: {names:?}"
        );
    }
    assert!(names.contains(&"orgA--llama-8b".to_string()));
    assert!(names.iter().all(|n| !n.starts_with('.') && n.len() < 200));
    let outside: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(outside.len(), 1, "nothing written outside --out");

    // Two runs appended to one file: score counts each seed once, warning.
    let file = out.join("orgA--llama-8b").join(RESULTS);
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}{text}")).unwrap();
    let output = TestCommand::new()
        .arg("score")
        .arg(out.join("orgA--llama-8b"))
        .arg("--json")
        .ok();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("was already scored").count(), 3, "{stderr}");
    let rows: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(rows[0]["instances"], 3, "{rows}");
}

#[test]
fn a_second_eval_on_the_same_results_file_is_refused() {
    let (base, _) = misbehave(200, "", said("no idea"), Duration::from_millis(700));
    let dir = tempfile::tempdir().unwrap();
    let mut first = eval(&base, dir.path(), "m", &["--concurrency", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let file = dir.path().join("m").join(RESULTS);
    let started = Instant::now();
    while !file.exists() {
        assert!(started.elapsed() < Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = eval(&base, dir.path(), "m", &[]).run();
    first.wait().unwrap();
    assert_eq!(
        second.status.code(),
        Some(1),
        "a lock conflict exits 1, as in generate"
    );
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("being written by another kumo-gen run"),
        "{stderr}"
    );
    assert_eq!(lines(&file), 3, "every instance once");
}

#[test]
fn derived_files_are_lean_by_default_and_follow_the_options() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let run = |extra: &[&str]| {
        TestCommand::new()
            .args([
                "--domain",
                "medical",
                "--truths",
                "6",
                "--actions",
                "8",
                "-n",
                "30",
            ])
            .arg("--out")
            .arg(out)
            .args(extra)
            .ok();
    };
    let domain = out.join("medical");
    let setting = "truth_num=6+action_num=8+valid_truth_num=1";
    let books = domain.join("knowledge_book").join(setting);
    let sft = domain.join("sft").join(format!("{setting}.jsonl"));
    let steps = domain.join("sft").join(format!("{setting}.steps.jsonl"));

    run(&[]);
    assert!(books.is_dir() && sft.is_file());
    assert!(!steps.exists(), "the per-step file is opt-in");

    run(&["--steps"]);
    assert!(steps.is_file());

    // Not asking for a file again never deletes it while it matches.
    run(&["--books", "none", "--no-sft"]);
    assert!(books.is_dir() && sft.is_file() && steps.is_file());

    run(&[]);
    assert_eq!(std::fs::read_dir(&books).unwrap().count(), 30);
    assert!(sft.is_file() && steps.is_file());
}
