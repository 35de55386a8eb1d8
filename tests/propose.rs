//! `kumo-gen propose` against the loopback scripted chat server of the
//! eval tests: a model that repairs its mistakes round by round, one that
//! never does, a reply cut off for length, `--review`, and a resumable
//! batch.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::common::{TestCommand, root};
use crate::eval::{Answer, completion, serve};

/// The valid domain the scripted model ends with.
fn tea() -> String {
    std::fs::read_to_string(root().join("tests/fixtures/propose/tea.yaml")).unwrap()
}

/// Unclosed flow sequence: a YAML syntax error located at 22:11.
fn broken() -> String {
    tea().replace("rolled: [Sencha, Matcha]", "rolled: [Sencha, Matcha")
}

/// A rule-out naming no truth: the validator's error at 20:15.
fn misspelt() -> String {
    tea().replace("needles: [Assam, Oolong]", "needles: [Asam, Oolong]")
}

fn fenced(yaml: &str) -> String {
    format!("Here is the domain.\n\n```yaml\n{yaml}```\n")
}

fn propose_cmd(base: &str, out: &Path, extra: &[&str]) -> TestCommand {
    let mut cmd = TestCommand::new();
    cmd.args([
        "propose",
        "--topic",
        "Teas of the world",
        "--api-base",
        base,
    ])
    .args(["--model", "org/scripted", "--actions", "8"])
    .args(["--backoff-ms", "1", "-o"])
    .arg(out)
    .args(extra)
    .env_remove("OPENAI_API_KEY")
    .env("KUMO_API_KEY", "sk-test-secret");
    cmd
}

/// The messages of every request the server saw.
fn sent(requests: &std::sync::Mutex<Vec<(String, Value)>>) -> Vec<Vec<Value>> {
    requests
        .lock()
        .unwrap()
        .iter()
        .map(|(_, body)| body["messages"].as_array().unwrap().clone())
        .collect()
}

fn last_user(messages: &[Value]) -> String {
    let m = messages.last().unwrap();
    assert_eq!(m["role"], "user");
    m["content"].as_str().unwrap().to_string()
}

#[test]
fn broken_then_misspelt_then_valid_ends_in_the_valid_file_after_three_rounds() {
    let replies = [fenced(&broken()), fenced(&misspelt()), fenced(&tea())];
    let server = serve(Arc::new(move |_: &Value, n| completion(&replies[n.min(2)])));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("domains/tea.yaml");
    let output = propose_cmd(&server.base, &out, &["--truths", "6"]).run();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), tea());
    assert!(
        stdout.contains("after 3 round(s), 8 truths, 10 actions"),
        "{stdout}"
    );
    assert!(!tmp.path().join("domains/tea.last-attempt.txt").exists());

    let sent = sent(&server.requests);
    assert_eq!(sent.len(), 3, "one request per round");
    let first = last_user(&sent[0]);
    assert!(
        first.contains("Teas of the world") && first.contains("name: tea"),
        "{first}"
    );
    assert!(
        first.contains("name: coffee"),
        "the shipped example is shown"
    );
    let file = out.display().to_string();
    let repair1 = last_user(&sent[1]);
    assert!(repair1.contains("invalid YAML"), "{repair1}");
    assert!(repair1.contains(&format!("{file}:22:11")), "{repair1}");
    assert!(repair1.contains("repair 1 of at most 3"), "{repair1}");
    // The repair carries the reply it is about.
    assert_eq!(sent[1][1]["role"], "assistant");
    assert!(
        sent[1][1]["content"]
            .as_str()
            .unwrap()
            .contains("rolled: [Sencha, Matcha\n")
    );
    let repair2 = last_user(&sent[2]);
    assert!(repair2.contains("unknown truth `Asam`"), "{repair2}");
    assert!(repair2.contains(&format!("{file}:20:15")), "{repair2}");
    assert!(
        !repair2.contains("invalid YAML"),
        "only the last findings: {repair2}"
    );
    assert_eq!(sent[2].len(), 3, "first prompt, last reply, findings");
}

#[test]
fn a_model_that_never_repairs_exits_1_and_writes_nothing_at_the_output() {
    let server = serve(Arc::new(|_: &Value, _| completion(&fenced(&misspelt()))));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tea.yaml");
    let output = propose_cmd(&server.base, &out, &["--rounds", "2", "--truths", "6"]).run();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!out.exists(), "nothing written at -o");
    assert_eq!(
        sent(&server.requests).len(),
        3,
        "the proposal and 2 repairs"
    );
    assert!(
        stderr.contains("unknown truth `Asam`"),
        "the last errors: {stderr}"
    );
    let last = std::fs::read_to_string(tmp.path().join("tea.last-attempt.txt")).unwrap();
    assert_eq!(last, misspelt(), "the last attempt is kept for inspection");
    let files: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(files.len(), 1, "no temporary files left");
}

#[test]
fn the_checks_beyond_the_validator_are_fed_back() {
    // Valid YAML, but smaller than asked: 8 truths for `--truths 9`.
    let server = serve(Arc::new(|_: &Value, _| completion(&tea())));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tea.yaml");
    let output = propose_cmd(&server.base, &out, &["--rounds", "1", "--truths", "9"]).run();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let sent = sent(&server.requests);
    assert_eq!(sent.len(), 2);
    assert!(last_user(&sent[1]).contains("the domain has 8 truths; at least 9 were asked for"));
    assert!(!out.exists());
}

fn cut_off(text: &str) -> Answer {
    Answer::Reply(
        200,
        json!({"choices": [{"index": 0, "finish_reason": "length",
            "message": {"role": "assistant", "content": text}}],
            "usage": {"total_tokens": 10}})
        .to_string(),
    )
}

#[test]
fn a_reply_cut_off_for_length_is_continued() {
    let whole = fenced(&tea());
    let (head, tail) = whole.split_at(whole.len() / 2);
    let (head, tail) = (head.to_string(), tail.to_string());
    let server = serve(Arc::new(move |_: &Value, n| match n {
        0 => cut_off(&head),
        _ => completion(&tail),
    }));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tea.yaml");
    let output = propose_cmd(&server.base, &out, &["--truths", "6"]).run();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), tea());
    let sent = sent(&server.requests);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[1][1]["role"], "assistant");
    assert!(last_user(&sent[1]).contains("cut off"));
}

#[test]
fn review_goes_to_a_report_and_changes_nothing() {
    let server = serve(Arc::new(|body: &Value, _| {
        let prompt = body["messages"][0]["content"].as_str().unwrap();
        if prompt.contains("factually doubtful") {
            completion("Powder Test / leaf / Matcha: matcha is sold as powder.")
        } else {
            completion(&fenced(&tea()))
        }
    }));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tea.yaml");
    propose_cmd(&server.base, &out, &["--review", "--truths", "6"]).expect_code(0);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), tea());
    let report = std::fs::read_to_string(tmp.path().join("tea.review.txt")).unwrap();
    assert!(report.contains("Powder Test / leaf / Matcha"), "{report}");
    let sent = sent(&server.requests);
    assert_eq!(sent.len(), 2);
    assert!(
        last_user(&sent[1]).contains("name: Powder Test"),
        "the review sees the file"
    );
}

#[test]
fn a_batch_resumes_without_asking_finished_topics_again() {
    // The model writes a valid domain under the name it is asked for,
    // except for `mystery`, which it never gets right.
    let server = serve(Arc::new(|body: &Value, _| {
        let prompt = body["messages"][0]["content"].as_str().unwrap();
        let name = prompt
            .lines()
            .find_map(|l| l.trim().strip_prefix("name: "))
            .and_then(|l| l.split_whitespace().next())
            .unwrap()
            .to_string();
        let yaml = tea().replace("name: tea", &format!("name: {name}"));
        match name.as_str() {
            "mystery" => completion(&yaml.replace("[Assam, Oolong]", "[Asam, Oolong]")),
            _ => completion(&fenced(&yaml)),
        }
    }));
    let tmp = tempfile::tempdir().unwrap();
    let topics = tmp.path().join("topics.txt");
    std::fs::write(
        &topics,
        "# teas\nGreen teas of Japan\nmystery | Unknown brews\n",
    )
    .unwrap();
    let dir = tmp.path().join("out");
    let run = || {
        let mut cmd = TestCommand::new();
        cmd.args(["propose", "--topics"])
            .arg(&topics)
            .args(["--api-base", &server.base, "--model", "m", "--rounds", "1"])
            .args(["--truths", "6", "--actions", "8", "--backoff-ms", "1", "-o"])
            .arg(&dir);
        cmd.run()
    };
    let first = run();
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert_eq!(first.status.code(), Some(1), "a topic failed: {stdout}");
    assert!(stdout.contains("[1/2] green-teas-of-japan: ok"), "{stdout}");
    assert!(
        stdout.contains("[2/2] mystery: FAILED after 2 round(s)"),
        "{stdout}"
    );
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("topic"))
        .collect();
    assert_eq!(table.len(), 3, "{stdout}");
    assert!(
        table[0]
            .split_whitespace()
            .eq(["topic", "name", "rounds", "truths", "actions", "result"])
    );
    assert!(
        table[1].ends_with("green-teas-of-japan  1       8       10       pass"),
        "{stdout}"
    );
    assert!(table[2].ends_with("FAIL"), "{stdout}");
    assert!(dir.join("green-teas-of-japan.yaml").is_file());
    assert!(!dir.join("mystery.yaml").exists());
    assert_eq!(sent(&server.requests).len(), 1 + 2);

    let again = run();
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stdout.contains("[1/2] green-teas-of-japan: skipped"),
        "{stdout}"
    );
    assert!(stdout.contains("pass (done earlier)"), "{stdout}");
    let sent = sent(&server.requests);
    assert_eq!(sent.len(), 3 + 2, "only the failed topic is asked again");
    assert!(
        sent[3..]
            .iter()
            .all(|m| m[0]["content"].as_str().unwrap().contains("name: mystery"))
    );
}

#[test]
fn prompt_templates_are_overridden_by_name_and_share_the_renderers_directory() {
    let replies = [misspelt(), tea()];
    let server = serve(Arc::new(move |_: &Value, n| completion(&replies[n.min(1)])));
    let tmp = tempfile::tempdir().unwrap();
    let templates = tmp.path().join("templates");
    std::fs::create_dir(&templates).unwrap();
    std::fs::write(
        templates.join("propose_repair.j2"),
        "House repair prompt. {% for e in errors %}[{{ e }}]{% endfor %}",
    )
    .unwrap();
    let out = tmp.path().join("tea.yaml");
    let dir = templates.to_str().unwrap();
    let output = propose_cmd(
        &server.base,
        &out,
        &["--truths", "6", "--templates-dir", dir],
    )
    .run();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let repair = last_user(&sent(&server.requests)[1]);
    assert!(
        repair.starts_with("House repair prompt. [error: unknown truth `Asam`"),
        "{repair}"
    );
    // `generate` reads the same directory and leaves propose's prompts to it.
    let generated = TestCommand::new()
        .args(["generate", "--domain"])
        .arg(&out)
        .args(["-n", "3", "--templates-dir", dir, "--out"])
        .arg(tmp.path().join("gen"))
        .run();
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    // A broken override fails before any request.
    std::fs::write(templates.join("propose.j2"), "{{ no_such_variable }}").unwrap();
    let before = sent(&server.requests).len();
    let output = propose_cmd(
        &server.base,
        &tmp.path().join("b.yaml"),
        &["--templates-dir", dir],
    )
    .expect_code(1);
    assert!(String::from_utf8_lossy(&output.stderr).contains("propose"));
    assert_eq!(sent(&server.requests).len(), before);
}
