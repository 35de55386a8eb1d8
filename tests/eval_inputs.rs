//! What `kumo-gen eval` reads besides the model (`tests/eval.rs` has the
//! server): missing knowledge books are named, `--templates-dir` overrides
//! the platform prompt, and a dataset under a folder no domain is named
//! after finds its domain in its manifest.

use std::sync::Arc;

use serde_json::Value;

use crate::common::{TestCommand, root};
use crate::eval::{
    SETTING, completion, dataset, eval_cmd, eval_on, instances, rendered_book_and_prompt, serve,
};

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
        let mut c = eval_on("http://127.0.0.1:9/v1", &tmp.path().join("data"));
        c.arg("--domain")
            .arg(root().join("tests/fixtures/ok/tiny.yaml"))
            .arg("--out")
            .arg(tmp.path().join("results"))
            .args(extra);
        c
    };
    cmd(&["--require-books"])
        .expect_code(1)
        .stderr_contains("3 knowledge book(s) missing")
        .stderr_contains("seed=0.txt");

    // By default the missing books are rendered from the domain, as the
    // generator renders them, and the model sees them in the platform prompt.
    let server = serve(Arc::new(|_: &Value, _| {
        completion("<ANSWER> Lamp </ANSWER>")
    }));
    let mut c = eval_on(&server.base, &tmp.path().join("data"));
    c.args(["--trials", "1"])
        .arg("--domain")
        .arg(root().join("tests/fixtures/ok/tiny.yaml"))
        .arg("--out")
        .arg(tmp.path().join("results"))
        .ok()
        .stderr_contains("3 knowledge book(s) missing")
        .stderr_contains("rendered from the domain");
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
        let output = TestCommand::new()
            .arg("score")
            .arg(tmp.path().join("results"))
            .arg("--instances")
            .arg(tmp.path().join("data"))
            .arg("--domain")
            .arg(root().join("tests/fixtures/ok/tiny.yaml"))
            .arg("--json")
            .run();
        serde_json::from_slice::<Value>(&output.stdout).unwrap()[0].clone()
    };
    // `Lamp` is right on seed 0 only.
    assert_eq!(row["success_rate"].as_f64().unwrap(), 1.0 / 3.0);
    assert_eq!(row["mean_actions"], 2.0);
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
        .ok();
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
        .expect_code(1)
        .stderr_contains("unknown template `promt.j2`");
}

/// A generated dataset under a directory no domain is named after: the
/// domain comes from its manifest.json, for eval and for score.
#[test]
fn generated_dataset_domain_from_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    TestCommand::new()
        .args(["generate", "--domain", "medical", "-n", "3", "--out"])
        .arg(tmp.path().join("gen"))
        .ok();
    std::fs::create_dir_all(tmp.path().join("data")).unwrap();
    std::fs::rename(
        tmp.path().join("gen/medical"),
        tmp.path().join("data/my-medical"),
    )
    .unwrap();
    let server = serve(Arc::new(|_: &Value, _| {
        completion("<ANSWER> nothing </ANSWER>")
    }));
    eval_on(&server.base, &tmp.path().join("data"))
        .args(["--trials", "1"])
        .arg("--out")
        .arg(tmp.path().join("results"))
        .ok()
        .stdout_contains("3 played");
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
    let output = TestCommand::new()
        .arg("score")
        .arg(tmp.path().join("results"))
        .arg("--instances")
        .arg(tmp.path().join("data"))
        .arg("--json")
        .run();
    let rows: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(rows[0]["domain"], "my-medical");
    assert_eq!(rows[0]["success_from"], "checked");
    assert_eq!(rows[0]["parse_error_rate"], 1.0);
}
