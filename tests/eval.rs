//! `kumo-gen eval` against a real chat-completions server on loopback,
//! started here, playing scripted policies: golden, garbage, flaky (429 and
//! 500 before each success), hanging. Results, scores and resume.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{kumo_gen, root};
use kumo_gen::domain::Domain;
use kumo_gen::render::{OwnedTask, RenderOptions, Renderer, Templates, check_book};

const SETTING: &str = "truth_num=4+action_num=3+valid_truth_num=1";

/// What the server answers: HTTP status and body, or hang.
pub(crate) enum Answer {
    Reply(u16, String),
    Hang,
}

pub(crate) type Policy = dyn Fn(&Value, usize) -> Answer + Send + Sync;

pub(crate) struct Server {
    pub(crate) base: String,
    pub(crate) requests: Arc<Mutex<Vec<(String, Value)>>>,
}

/// Starts a chat-completions server on 127.0.0.1; `policy` sees each
/// request body and the request's number (from 0).
pub(crate) fn serve(policy: Arc<Policy>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let requests: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (policy, seen, count) = (policy.clone(), seen.clone(), count.clone());
            std::thread::spawn(move || handle(stream, &*policy, &seen, &count));
        }
    });
    Server { base, requests }
}

fn handle(
    stream: TcpStream,
    policy: &Policy,
    seen: &Mutex<Vec<(String, Value)>>,
    count: &AtomicUsize,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let body: Value = serde_json::from_slice(&body).unwrap();
    let n = count.fetch_add(1, Ordering::SeqCst);
    seen.lock().unwrap().push((head, body.clone()));
    match policy(&body, n) {
        Answer::Hang => std::thread::sleep(Duration::from_secs(5)),
        Answer::Reply(status, text) => {
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    }
}

pub(crate) fn completion(text: &str) -> Answer {
    Answer::Reply(
        200,
        json!({"id": "x", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 100}})
        .to_string(),
    )
}

fn dataset() -> PathBuf {
    root().join("tests/fixtures/eval")
}

fn instances() -> Vec<Value> {
    std::fs::read_to_string(dataset().join("tiny").join(format!("{SETTING}.jsonl")))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Follows the golden trajectory of the instance named in the book.
fn golden(body: &Value) -> Answer {
    let messages = body["messages"].as_array().unwrap();
    let system = messages[0]["content"].as_str().unwrap();
    let all = instances();
    let inst = all
        .iter()
        .enumerate()
        .find(|(i, _)| system.contains(&format!("Knowledge book for instance {i} ")))
        .map(|(_, v)| v)
        .expect("the book names the instance");
    let step = messages.iter().filter(|m| m["role"] == "assistant").count();
    let golden = inst["optimal"]["golden_trajectory"].as_array().unwrap();
    let answer = golden
        .get(step)
        .and_then(Value::as_str)
        .unwrap_or_else(|| inst["valid_truth"].as_str().unwrap());
    completion(&format!("Let me think.\n\n<ANSWER> {answer} </ANSWER>"))
}

fn eval_cmd(base: &str, out: &Path, extra: &[&str]) -> assert_cmd::Command {
    let mut cmd = kumo_gen();
    cmd.args([
        "eval",
        "--api-base",
        base,
        "--model",
        "org/scripted",
        "--data",
    ])
    .arg(dataset())
    .arg("--domain")
    .arg(root().join("tests/fixtures/ok/tiny.yaml"))
    .arg("--out")
    .arg(out)
    .args(["--trials", "2", "--backoff-ms", "1"])
    .args(extra)
    .env_remove("OPENAI_API_KEY")
    .env("KUMO_API_KEY", "sk-test-secret");
    cmd
}

fn result_file(out: &Path) -> PathBuf {
    out.join(kumo_gen::eval::path_component("org/scripted"))
        .join("VanillaAgent/tiny")
        .join(SETTING)
        .join("eval_times=2.jsonl")
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn score(out: &Path) -> Value {
    let output = kumo_gen()
        .arg("score")
        .arg(out)
        .arg("--instances")
        .arg(dataset())
        .arg("--domain")
        .arg(root().join("tests/fixtures/ok/tiny.yaml"))
        .arg("--json")
        .output()
        .unwrap();
    assert!(output.status.success());
    serde_json::from_slice::<Value>(&output.stdout).unwrap()[0].clone()
}

#[test]
fn golden_player_wins_with_the_golden_count_and_resume_skips() {
    let server = serve(Arc::new(|body: &Value, _| golden(body)));
    let tmp = tempfile::tempdir().unwrap();
    let output = eval_cmd(&server.base, tmp.path(), &["--concurrency", "2"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("3 played, 0 already done"), "{stdout}");
    assert!(stdout.contains("success rate 1.000"), "{stdout}");
    assert!(!stdout.contains("sk-test-secret") && !stderr.contains("sk-test-secret"));

    let file = result_file(tmp.path());
    let mut got = lines(&file);
    got.sort_by_key(|l| l["seed"].as_u64());
    assert_eq!(got.len(), 3);
    for (line, inst) in got.iter().zip(instances()) {
        let golden = inst["optimal"]["golden_trajectory"].as_array().unwrap();
        for t in line["trajectories"].as_array().unwrap() {
            assert_eq!(t["successful"], true);
            assert_eq!(t["parse_error"], false);
            let actions = t["actions"].as_array().unwrap();
            assert_eq!(
                actions.len(),
                golden.len() + 2,
                "KUMO counts the prediction twice"
            );
            assert_eq!(&actions[..golden.len()], golden.as_slice());
            assert_eq!(
                actions.last().unwrap()["predicted_truth"],
                inst["valid_truth"]
            );
            assert_eq!(t["consumed_tokens"], 100 * (golden.len() as u64 + 1));
            assert_eq!(t["observations"][0], Value::Null);
            assert_eq!(t["observations"][1]["action"], golden[0]);
        }
        assert_eq!(line["average_correct"], 1.0);
        assert_eq!(line["model"], "org/scripted");
    }
    assert!(
        !std::fs::read_to_string(&file)
            .unwrap()
            .contains("sk-test-secret")
    );

    // The protocol, request by request.
    let requests = server.requests.lock().unwrap().clone();
    let (head, first) = requests
        .iter()
        .find(|(_, b)| b["messages"].as_array().unwrap().len() == 2)
        .unwrap();
    assert!(head.contains("Bearer sk-test-secret"), "{head}");
    assert_eq!(first["model"], "org/scripted");
    assert!(first.get("temperature").is_none());
    assert_eq!(first["messages"][0]["role"], "system");
    let inst = first["messages"][1]["content"].as_str().unwrap();
    assert!(inst.starts_with(
        "At this round, You need to select an `action_name` from the list: ['Continuity check', 'Voltage', 'Clicks'] or predict a `truth_name` from the list: ['Fuse', 'Relay', 'Switch', 'Lamp']. \nReason and end"
    ));
    let second = requests
        .iter()
        .map(|(_, b)| b)
        .find(|b| b["messages"].as_array().unwrap().len() == 4)
        .unwrap();
    assert_eq!(second["messages"][1]["content"], "Begin the game.");
    let obs = second["messages"][3]["content"].as_str().unwrap();
    assert!(
        obs.starts_with(
            "Observation from previous action: {'action': 'Continuity check', 'observation': '"
        ),
        "{obs}"
    );
    assert!(obs.contains("\n\nAt this round"));

    // Scores: all won, actions = golden + 2.
    let row = score(tmp.path());
    assert_eq!(row["success_rate"], 1.0);
    assert_eq!(row["success_from"], "checked");
    assert_eq!(row["parse_error_rate"], 0.0);
    assert_eq!(
        row["mean_actions"].as_f64().unwrap(),
        (4.0 + 5.0 + 5.0) / 3.0
    );

    // Resume: nothing to do, nothing written twice.
    let before = std::fs::read(&file).unwrap();
    let output = eval_cmd(&server.base, tmp.path(), &[]).output().unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("0 played, 3 already done"));
    assert_eq!(std::fs::read(&file).unwrap(), before);

    // A crash mid-line: the half line is cut off and that instance replayed.
    let text = String::from_utf8(before).unwrap();
    let keep: Vec<&str> = text.lines().collect();
    let half = &keep[2][..keep[2].len() / 2];
    std::fs::write(&file, format!("{}\n{}\n{half}", keep[0], keep[1])).unwrap();
    let output = eval_cmd(&server.base, tmp.path(), &[]).output().unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("1 played, 2 already done"));
    let after = lines(&file);
    assert_eq!(after.len(), 3);
    let mut seeds: Vec<u64> = after.iter().map(|l| l["seed"].as_u64().unwrap()).collect();
    seeds.sort();
    assert_eq!(seeds, [0, 1, 2]);
}

#[test]
fn garbage_replies_are_parse_errors() {
    let server = serve(Arc::new(|_: &Value, n| {
        if n % 2 == 0 {
            completion("I am not sure what to do here.")
        } else {
            completion("")
        }
    }));
    let tmp = tempfile::tempdir().unwrap();
    let output = eval_cmd(&server.base, tmp.path(), &[]).output().unwrap();
    assert!(output.status.success());
    for line in lines(&result_file(tmp.path())) {
        for t in line["trajectories"].as_array().unwrap() {
            assert_eq!(t["parse_error"], true);
            assert_eq!(t["successful"], false);
            assert_eq!(t["actions"], json!([null]));
        }
    }
    let row = score(tmp.path());
    assert_eq!(row["parse_error_rate"], 1.0);
    assert_eq!(row["success_rate"], 0.0);
    assert_eq!(row["mean_actions"], 1.0);
}

#[test]
fn retries_429_and_500_then_plays_on() {
    let server = serve(Arc::new(|body: &Value, n| match n % 3 {
        0 => Answer::Reply(429, r#"{"error": "slow down"}"#.into()),
        1 => Answer::Reply(500, "oops".into()),
        _ => golden(body),
    }));
    let tmp = tempfile::tempdir().unwrap();
    let output = eval_cmd(
        &server.base,
        tmp.path(),
        &["--concurrency", "1", "--retries", "3"],
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    // 3 instances x 2 trials x (golden + 1) replies, each after 2 retries.
    let replies = 2 * ((2 + 1) + (3 + 1) + (3 + 1));
    assert!(
        stdout.contains(&format!("requests retried: {}", 2 * replies)),
        "{stdout}"
    );
    let row = score(tmp.path());
    assert_eq!(row["success_rate"], 1.0);
    assert_eq!(row["parse_error_rate"], 0.0);
}

#[test]
fn hanging_server_times_out_writes_nothing_and_resume_finishes() {
    let server = serve(Arc::new(|_: &Value, _| Answer::Hang));
    let tmp = tempfile::tempdir().unwrap();
    let output = eval_cmd(
        &server.base,
        tmp.path(),
        &["--timeout", "0.2", "--retries", "1", "--concurrency", "3"],
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stdout.contains("0 played, 0 already done (skipped), 3 unfinished"),
        "{stdout}"
    );
    assert!(stderr.contains("timed out"), "{stderr}");
    assert!(stdout.contains("requests retried: 3"), "{stdout}");
    let file = result_file(tmp.path());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "");

    // The first request hangs, the rest succeed: the run survives it.
    let server = serve(Arc::new(
        |body: &Value, n| {
            if n == 0 { Answer::Hang } else { golden(body) }
        },
    ));
    let output = eval_cmd(
        &server.base,
        tmp.path(),
        &["--timeout", "0.5", "--retries", "2"],
    )
    .output()
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(lines(&file).len(), 3);
    assert_eq!(score(tmp.path())["success_rate"], 1.0);
}

#[test]
fn missing_books_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data/tiny");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::copy(
        dataset().join("tiny").join(format!("{SETTING}.jsonl")),
        data.join(format!("{SETTING}.jsonl")),
    )
    .unwrap();
    let cmd = |extra: &[&str]| {
        let mut c = kumo_gen();
        c.args([
            "eval",
            "--api-base",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--data",
        ])
        .arg(tmp.path().join("data"))
        .arg("--domain")
        .arg(root().join("tests/fixtures/ok/tiny.yaml"))
        .arg("--out")
        .arg(tmp.path().join("results"))
        .args(extra);
        c
    };
    cmd(&["--require-books"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("3 knowledge book(s) missing"))
        .stderr(predicates::str::contains("seed=0.txt"));

    // By default the missing books are rendered from the domain, as the
    // generator renders them, and the model sees them in the platform prompt.
    let server = serve(Arc::new(|_: &Value, _| {
        completion("<ANSWER> Lamp </ANSWER>")
    }));
    let mut c = kumo_gen();
    c.args([
        "eval",
        "--api-base",
        &server.base,
        "--model",
        "m",
        "--trials",
        "1",
        "--data",
    ])
    .arg(tmp.path().join("data"))
    .arg("--domain")
    .arg(root().join("tests/fixtures/ok/tiny.yaml"))
    .arg("--out")
    .arg(tmp.path().join("results"))
    .assert()
    .success()
    .stderr(predicates::str::contains("3 knowledge book(s) missing"))
    .stderr(predicates::str::contains("rendered from the domain"));
    let requests = server.requests.lock().unwrap();
    let mut systems: Vec<&str> = requests
        .iter()
        .map(|(_, b)| b["messages"][0]["content"].as_str().unwrap())
        .collect();
    systems.sort();
    systems.dedup();
    let mut expected: Vec<String> = instances()
        .iter()
        .map(|line| {
            let (book, prompt) = rendered_book_and_prompt(line);
            assert!(prompt.contains(book.trim_end()));
            prompt
        })
        .collect();
    // (The tiny instances share truths and actions, so their books agree.)
    expected.sort();
    expected.dedup();
    assert_eq!(systems, expected);
    let row = {
        let output = kumo_gen()
            .arg("score")
            .arg(tmp.path().join("results"))
            .arg("--instances")
            .arg(tmp.path().join("data"))
            .arg("--domain")
            .arg(root().join("tests/fixtures/ok/tiny.yaml"))
            .arg("--json")
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&output.stdout).unwrap()[0].clone()
    };
    // `Lamp` is right on seed 0 only.
    assert_eq!(row["success_rate"].as_f64().unwrap(), 1.0 / 3.0);
    assert_eq!(row["mean_actions"], 2.0);
}

/// The shipped templates' knowledge book of an instance line of the tiny
/// fixture domain (checked by the book checker) and the platform prompt
/// with it.
pub(crate) fn rendered_book_and_prompt(line: &Value) -> (String, String) {
    let path = root().join("tests/fixtures/ok/tiny.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let (domain, _) = Domain::from_yaml("tiny.yaml", &text).unwrap();
    let templates = Templates::shipped().unwrap();
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let task = OwnedTask::from_json(&domain, line).unwrap();
    let view = task.view(&domain);
    let book = renderer.book(&view).unwrap();
    assert!(check_book(&book, &view).is_ok());
    let prompt = renderer.prompt(&view, Some(&book), "prose").unwrap();
    (book, prompt)
}

/// `--templates-dir` overrides the platform prompt of eval.
#[test]
fn templates_dir_overrides_the_platform_prompt() {
    let tmp = tempfile::tempdir().unwrap();
    let templates = tmp.path().join("templates");
    std::fs::create_dir_all(&templates).unwrap();
    let shipped = std::fs::read_to_string(root().join("templates/prompt.j2")).unwrap();
    std::fs::write(
        templates.join("prompt.j2"),
        format!("House rules for {{{{ truth_plural }}}}.\n{shipped}"),
    )
    .unwrap();
    let server = serve(Arc::new(|_: &Value, _| {
        completion("<ANSWER> Lamp </ANSWER>")
    }));
    let out = tmp.path().join("results");
    eval_cmd(&server.base, &out, &["--templates-dir"])
        .arg(&templates)
        .assert()
        .success();
    let requests = server.requests.lock().unwrap();
    // 3 instances x 2 trials, one reply each (a prediction).
    assert_eq!(requests.len(), 6);
    for (_, body) in requests.iter() {
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(system.starts_with("House rules for faults."), "{system}");
        assert!(system.contains("Knowledge book for instance "), "{system}");
    }
    drop(requests);

    // A misspelt override is refused up front.
    std::fs::write(templates.join("promt.j2"), "x").unwrap();
    eval_cmd(&server.base, &out, &["--templates-dir"])
        .arg(&templates)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("unknown template `promt.j2`"));
}

/// A generated dataset under a directory no domain is named after: the
/// domain comes from its manifest.json, for eval and for score.
#[test]
fn generated_dataset_domain_from_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    kumo_gen()
        .args(["generate", "--domain", "medical", "-n", "3", "--out"])
        .arg(tmp.path().join("gen"))
        .assert()
        .success();
    std::fs::create_dir_all(tmp.path().join("data")).unwrap();
    std::fs::rename(
        tmp.path().join("gen/medical"),
        tmp.path().join("data/my-medical"),
    )
    .unwrap();
    let server = serve(Arc::new(|_: &Value, _| {
        completion("<ANSWER> nothing </ANSWER>")
    }));
    kumo_gen()
        .args([
            "eval",
            "--api-base",
            &server.base,
            "--model",
            "m",
            "--trials",
            "1",
            "--data",
        ])
        .arg(tmp.path().join("data"))
        .arg("--out")
        .arg(tmp.path().join("results"))
        .assert()
        .success()
        .stdout(predicates::str::contains("3 played"));
    // The system prompt is the platform prompt with the dataset's book: the
    // system message of the instance's SFT record, byte for byte.
    let sft = std::fs::read_to_string(
        tmp.path()
            .join("data/my-medical/sft/truth_num=4+action_num=6+valid_truth_num=1.jsonl"),
    )
    .unwrap();
    let mut expected: Vec<String> = sft
        .lines()
        .map(|l| {
            let record: Value = serde_json::from_str(l).unwrap();
            assert_eq!(record["messages"][0]["role"], "system");
            record["messages"][0]["content"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    expected.sort();
    let mut systems: Vec<String> = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|(_, b)| b["messages"][0]["content"].as_str().unwrap().to_string())
        .collect();
    systems.sort();
    systems.dedup();
    assert_eq!(systems, expected);
    let output = kumo_gen()
        .arg("score")
        .arg(tmp.path().join("results"))
        .arg("--instances")
        .arg(tmp.path().join("data"))
        .arg("--json")
        .output()
        .unwrap();
    let rows: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(rows[0]["domain"], "my-medical");
    assert_eq!(rows[0]["success_from"], "checked");
    assert_eq!(rows[0]["parse_error_rate"], 1.0);
}

/// One task format for training and evaluation (issue 11.4): on generated
/// datasets of three shipped domains (string, float and int observations),
/// a player replying with the SFT record's assistant turns receives from
/// `kumo-gen eval` exactly the SFT messages: every request equals the
/// step record of its round, and its last user message is the chat
/// record's user turn of that round, byte for byte.
#[test]
fn sft_records_are_the_messages_eval_sends() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut records: Vec<(Value, Vec<Value>)> = Vec::new();
    for (domain, truths, actions) in [("medical", 5, 6), ("cloud", 4, 6), ("fish", 5, 14)] {
        kumo_gen()
            .args(["generate", "--domain", domain, "-n", "6", "--steps"])
            .args([
                "--truths",
                &truths.to_string(),
                "--actions",
                &actions.to_string(),
            ])
            .arg("--out")
            .arg(&data)
            .assert()
            .success();
        let setting = format!("truth_num={truths}+action_num={actions}+valid_truth_num=1");
        let sft = data.join(domain).join("sft");
        let chats = lines(&sft.join(format!("{setting}.jsonl")));
        let steps = lines(&sft.join(format!("{setting}.steps.jsonl")));
        assert_eq!(chats.len(), 6, "{domain}");
        let mut steps = steps.into_iter().peekable();
        for chat in chats {
            let turns = chat["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "assistant")
                .count();
            let mine: Vec<Value> = (0..turns).map(|_| steps.next().unwrap()).collect();
            records.push((chat, mine));
        }
        assert!(steps.next().is_none());
    }
    // Observations of all three kinds were shown: 'label', 1.25 and 7.
    let mut kinds = std::collections::BTreeSet::new();
    for (chat, _) in &records {
        for m in chat["messages"].as_array().unwrap() {
            let text = m["content"].as_str().unwrap();
            let Some(rest) = text.split("'observation': ").nth(1) else {
                continue;
            };
            let value = rest.split('}').next().unwrap();
            kinds.insert(if value.starts_with(['\'', '"']) {
                "str"
            } else if value.contains('.') {
                "float"
            } else {
                "int"
            });
        }
    }
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    let table = Arc::new(records);
    let replies = table.clone();
    let server = serve(Arc::new(move |body: &Value, _| {
        let messages = body["messages"].as_array().unwrap();
        let (chat, _) = replies
            .iter()
            .find(|(chat, _)| chat["messages"][0]["content"] == messages[0]["content"])
            .expect("the system prompt is an SFT record's system message");
        let round = messages.iter().filter(|m| m["role"] == "assistant").count();
        let reply = chat["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .nth(round)
            .expect("no request after the final answer");
        completion(reply["content"].as_str().unwrap())
    }));
    kumo_gen()
        .args(["eval", "--api-base", &server.base, "--model", "m"])
        .args(["--trials", "1", "--backoff-ms", "1", "--data"])
        .arg(&data)
        .arg("--out")
        .arg(tmp.path().join("results"))
        .assert()
        .success()
        .stdout(predicates::str::contains("18 played"));
    let requests = server.requests.lock().unwrap();
    let total_steps: usize = table.iter().map(|(_, steps)| steps.len()).sum();
    assert_eq!(requests.len(), total_steps, "one request per SFT step");
    for (_, body) in requests.iter() {
        let messages = body["messages"].as_array().unwrap();
        let (chat, steps) = table
            .iter()
            .find(|(chat, _)| chat["messages"][0]["content"] == messages[0]["content"])
            .unwrap();
        let round = messages.iter().filter(|m| m["role"] == "assistant").count();
        // The whole request is the step record's prompt.
        assert_eq!(&steps[round]["prompt"], &body["messages"], "round {round}");
        // Its user text is the chat record's user turn of that round.
        let user = &chat["messages"][2 * round + 1];
        assert_eq!(user["role"], "user");
        let last = messages.last().unwrap();
        assert_eq!(last["role"], "user");
        assert_eq!(user["content"], last["content"], "round {round}");
        assert_eq!(chat["messages"][0]["content"], messages[0]["content"]);
    }
}

/// `score --curve-svg` on a family domain: a player that replays the SFT
/// (golden) turns has the optimal reduction curve, point for point.
#[test]
fn a_golden_players_reduction_curve_is_the_optimal_one() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    kumo_gen()
        .args([
            "generate",
            "--domain",
            "rules3",
            "--truths",
            "6",
            "--actions",
            "8",
            "-n",
            "5",
        ])
        .arg("--out")
        .arg(&data)
        .assert()
        .success();
    let chats = lines(&data.join("rules3/sft/truth_num=6+action_num=8+valid_truth_num=1.jsonl"));
    let server = serve(Arc::new(move |body: &Value, _| {
        let messages = body["messages"].as_array().unwrap();
        let chat = chats
            .iter()
            .find(|c| c["messages"][0]["content"] == messages[0]["content"])
            .unwrap();
        let round = messages.iter().filter(|m| m["role"] == "assistant").count();
        let reply = chat["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .nth(round)
            .unwrap();
        completion(reply["content"].as_str().unwrap())
    }));
    let results = tmp.path().join("results");
    kumo_gen()
        .args([
            "eval",
            "--api-base",
            &server.base,
            "--model",
            "m",
            "--trials",
            "2",
            "--data",
        ])
        .arg(&data)
        .arg("--out")
        .arg(&results)
        .assert()
        .success();
    let svg = tmp.path().join("curve.svg");
    kumo_gen()
        .arg("score")
        .arg(&results)
        .arg("--instances")
        .arg(&data)
        .arg("--curve-svg")
        .arg(&svg)
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    let points: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split("points=\"").nth(1))
        .map(|p| p.trim_end_matches("\"/>"))
        .collect();
    assert_eq!(points.len(), 2, "{text}");
    assert_eq!(points[0], points[1], "player and optimal differ:\n{text}");
    assert!(text.contains("10 trials"), "{text}");
    // Without instances there is nothing to draw: exit 1 with a fix.
    kumo_gen()
        .arg("score")
        .arg(&results)
        .arg("--curve-svg")
        .arg(&svg)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("--instances"));
}
