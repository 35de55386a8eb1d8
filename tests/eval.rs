//! What the `eval_*` test modules share: a real chat-completions server on
//! loopback, started by the test and answering by a scripted policy
//! (golden, garbage, flaky, hanging), the tiny eval fixture dataset, the
//! `kumo-gen eval` and `score` commands on it, and the book and prompt
//! eval must send. The tests are split by concern: `eval_protocol` (what
//! is played, counted and sent), `eval_retries` (429/500, hangs and
//! timeouts) and `eval_inputs` (books, templates, finding the domain).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{TestCommand, json_lines, root};
use kumo_gen::domain::Domain;
use kumo_gen::render::{RenderOptions, Renderer, Templates, check_book};

pub(crate) const SETTING: &str = "truth_num=4+action_num=3+valid_truth_num=1";

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

pub(crate) fn handle(
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

pub(crate) fn dataset() -> PathBuf {
    root().join("tests/fixtures/eval")
}

pub(crate) fn instances() -> Vec<Value> {
    json_lines(&dataset().join("tiny").join(format!("{SETTING}.jsonl")))
}

/// Follows the golden trajectory of the instance named in the book.
pub(crate) fn golden(body: &Value) -> Answer {
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

/// `kumo-gen eval` of model `m` at `base` on the datasets under `data`
/// (trials, domain and results folder left to the caller).
pub(crate) fn eval_on(base: &str, data: &Path) -> TestCommand {
    let mut cmd = TestCommand::new();
    cmd.args(["eval", "--api-base", base, "--model", "m", "--data"])
        .arg(data);
    cmd
}

/// The reply an SFT-replaying model gives to an eval request: the
/// assistant turn of this round (assistant turns so far) of the chat
/// record among `chats` whose system message opens the request.
pub(crate) fn sft_reply<'a>(mut chats: impl Iterator<Item = &'a Value>, body: &Value) -> Answer {
    let messages = body["messages"].as_array().unwrap();
    let chat = chats
        .find(|chat| chat["messages"][0]["content"] == messages[0]["content"])
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
}

pub(crate) fn eval_cmd(base: &str, out: &Path, extra: &[&str]) -> TestCommand {
    let mut cmd = TestCommand::new();
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

pub(crate) fn result_file(out: &Path) -> PathBuf {
    out.join(kumo_gen::results::path_component("org/scripted"))
        .join("VanillaAgent/tiny")
        .join(SETTING)
        .join("eval_times=2.jsonl")
}

pub(crate) fn score(out: &Path) -> Value {
    let output = TestCommand::new()
        .arg("score")
        .arg(out)
        .arg("--instances")
        .arg(dataset())
        .arg("--domain")
        .arg(root().join("tests/fixtures/ok/tiny.yaml"))
        .arg("--json")
        .ok();
    serde_json::from_slice::<Value>(&output.stdout).unwrap()[0].clone()
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
    let task = kumo_gen::game::task_from_json(&domain, line).unwrap();
    let view = task.view(&domain);
    let book = renderer.book(&view).unwrap();
    assert!(check_book(&book, &view).is_ok());
    let prompt = renderer.prompt(&view, Some(&book), "prose").unwrap();
    (book, prompt)
}
