//! `kumo-gen serve` under the explore-then-predict protocol (`reset`'s
//! `protocol`, docs/serve.md): episodes played over HTTP and WebSocket
//! with the golden player's replies from eval's result lines give eval's
//! trials line for line, nothing hidden is shown before it is due, the
//! final reward is the accuracy, and `score --json` reads the served
//! lines as it reads eval's; settings out of range are refused with 422.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{TestCommand, eval_player, generate_in, json_lines};
use crate::serve::{get_json, post, start, stop};

const SETTING: &str = "truth_num=8+action_num=6+valid_truth_num=1";

/// Keys that tell the outcome or the hidden truth: never before the end.
const SECRET_KEYS: [&str; 7] = [
    "answer",
    "predict",
    "expected",
    "right_at",
    "valid_truth",
    "successful",
    "accuracy",
];

fn keys(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                found.push(k.clone());
                keys(v, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys(v, found)),
        _ => {}
    }
}

/// What a response before the end may not show: a secret key, the hidden
/// truth's name (outside the system prompt, whose candidates name every
/// truth), a verdict with one attempt, and before the tests a test
/// input's name or (feedback `end`) any probe's output.
fn check_nothing_leaks(response: &Value, truth: &str, tests: &[String], end: bool, attempts: u64) {
    let observation = &response["observation"];
    let mut found = Vec::new();
    keys(response, &mut found);
    for secret in SECRET_KEYS {
        assert!(!found.iter().any(|k| k == secret), "{secret}: {response}");
    }
    let mut shown = observation.clone();
    shown.as_object_mut().unwrap().remove("system_prompt");
    let text = shown.to_string();
    assert!(!text.contains(truth), "the hidden truth `{truth}`: {text}");
    if attempts == 1 {
        assert!(observation["last"].get("right").is_none(), "{response}");
    }
    if observation["phase"] == "explore" {
        for input in tests {
            assert!(!text.contains(input.as_str()), "test `{input}`: {text}");
        }
        if end {
            assert!(
                observation["last"].get("observation").is_none(),
                "{response}"
            );
        }
    }
}

/// Eval's golden result lines under `flags`.
fn eval_lines(data: &Path, out: &Path, flags: &[&str], agent: &str) -> Vec<Value> {
    eval_player("golden", data, out, flags).ok();
    let file = out
        .join("golden")
        .join(agent)
        .join("opponents")
        .join(SETTING)
        .join("eval_times=1.jsonl");
    json_lines(&file)
}

fn without_tokens(mut trial: Value) -> Value {
    trial.as_object_mut().unwrap().remove("consumed_tokens");
    trial
}

fn score_rows(results: &Path, data: &Path) -> Vec<Value> {
    let ran = TestCommand::new()
        .arg("score")
        .arg(results)
        .arg("--instances")
        .arg(data)
        .arg("--json")
        .ok();
    serde_json::from_slice(&ran.output.stdout).unwrap()
}

/// Plays eval's line `line` over HTTP; the last response.
fn play_http(url: &str, env: &str, index: usize, protocol: &Value, line: &Value) -> Value {
    let (status, mut response) = post(
        &format!("{url}/reset"),
        &json!({"env": env, "index": index, "model": "golden", "protocol": protocol}),
    );
    assert_eq!(status, 200, "{response}");
    let id = response["observation"]["episode_id"].clone();
    let trial = &line["trajectories"][0];
    let tests: Vec<String> = trial["predict"]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["input"].as_str().unwrap().to_string())
        .collect();
    let truth = line["valid_truth"].as_str().unwrap().to_string();
    let end = protocol["feedback"] == "end";
    let attempts = protocol["attempts"].as_u64().unwrap_or(1);
    for text in trial["generated_text"].as_array().unwrap() {
        assert_eq!(response["done"], false, "{response}");
        check_nothing_leaks(&response, &truth, &tests, end, attempts);
        let (status, next) = post(
            &format!("{url}/step"),
            &json!({"episode_id": id, "action": {"message": text}}),
        );
        assert_eq!(status, 200, "{next}");
        response = next;
    }
    response
}

#[test]
fn a_served_protocol_episode_is_evals_trial_and_scores_like_it() {
    let dir = tempfile::tempdir().unwrap();
    let (data, evals, out) = (
        dir.path().join("data"),
        dir.path().join("eval"),
        dir.path().join("results"),
    );
    let domain = concat!(env!("CARGO_MANIFEST_DIR"), "/domains/opponents.yaml");
    generate_in(domain, (8, 6), &data, 3, &[]).ok();
    let each = ["--trials", "1", "--turns", "2", "--tests", "6"];
    let each_lines = eval_lines(&data, &evals, &each, "VanillaAgent-predict=2@1");
    let end_flags = [&each[..], &["--attempts", "2", "--feedback", "end"]].concat();
    let end_lines = eval_lines(&data, &evals, &end_flags, "VanillaAgent-predict=2@2-end");
    // The served lines are matched with eval's by seed (eval writes them
    // in the order its workers finish).
    let instances = json_lines(&data.join("opponents").join(format!("{SETTING}.jsonl")));
    let by_seed = |lines: &[Value], seed: &Value| -> Value {
        lines.iter().find(|l| &l["seed"] == seed).unwrap().clone()
    };

    let (child, url, _stdout) = start(&[
        "--data".as_ref(),
        data.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    let envs = get_json(&format!("{url}/list_environments"));
    let env = envs[0].as_str().unwrap().to_string();

    // Over HTTP, feedback after each probe, one attempt.
    let protocol = json!({"turns": 2, "tests": 6});
    for (index, instance) in instances.iter().enumerate() {
        let mut line = by_seed(&each_lines, &instance["seed"]);
        line["valid_truth"] = instance["valid_truth"].clone();
        let last = play_http(&url, &env, index, &protocol, &line);
        assert_eq!(last["done"], true, "{last}");
        let record = &line["trajectories"][0]["predict"];
        assert_eq!(last["reward"], record["accuracy"], "{last}");
        assert_eq!(last["observation"]["predict"], *record);
        assert_eq!(
            last["observation"]["answer"],
            json!([instance["valid_truth"]])
        );
    }
    // The state names the protocol.
    let (_, started) = post(
        &format!("{url}/reset"),
        &json!({"env": env, "index": 0, "protocol": {"turns": 3, "feedback": "end"}}),
    );
    let id = started["observation"]["episode_id"].as_str().unwrap();
    let state = get_json(&format!("{url}/state?episode_id={id}"));
    assert_eq!(
        state["protocol"],
        json!({"turns": 3, "tests": 5, "attempts": 1, "feedback": "end"})
    );
    post(&format!("{url}/close"), &json!({"episode_id": id}));

    // Over WebSocket, the non-adaptive control with two attempts.
    let ws_url = format!("{}/ws", url.replace("http://", "ws://"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let protocol = json!({"turns": 2, "tests": 6, "attempts": 2, "feedback": "end"});
    for (index, instance) in instances.iter().enumerate() {
        let mut line = by_seed(&end_lines, &instance["seed"]);
        line["valid_truth"] = instance["valid_truth"].clone();
        let last = runtime.block_on(play_ws(&ws_url, &env, index, &protocol, &line));
        assert_eq!(last["done"], true, "{last}");
        let record = &line["trajectories"][0]["predict"];
        assert_eq!(last["reward"], record["accuracy"], "{last}");
    }

    // Out of range, or more tests than the held-out inputs: 422.
    for (protocol, says) in [
        (
            json!({"turns": 0}),
            "`protocol.turns` is a whole number from 1 to 1000",
        ),
        (json!({"turns": 2, "attempts": 1001}), "`protocol.attempts`"),
        (
            json!({"turns": 2, "feedback": "later"}),
            "`protocol.feedback`",
        ),
        (
            json!({"turns": 2, "tests": 1000}),
            "asks for more test inputs",
        ),
    ] {
        let (status, refused) = post(
            &format!("{url}/reset"),
            &json!({"env": env, "index": 0, "protocol": protocol}),
        );
        assert_eq!(status, 422, "{refused}");
        assert_eq!(refused["code"], "VALIDATION_ERROR");
        let detail = refused["detail"].as_str().unwrap();
        assert!(detail.contains(says), "{detail}");
    }
    let (status, refused) = post(
        &format!("{url}/reset"),
        &json!({"env": env, "protocol": {"turns": 2}, "reward": "dense"}),
    );
    assert_eq!(status, 422, "{refused}");

    let (code, stderr) = stop(child);
    assert_eq!(code, 0, "{stderr}");
    // The served lines are eval's trials (the tokens aside), filed where
    // eval files them, and score reads them as it reads eval's.
    for (agent, lines) in [
        ("VanillaAgent-predict=2@1", &each_lines),
        ("VanillaAgent-predict=2@2-end", &end_lines),
    ] {
        let file = out
            .join("golden")
            .join(agent)
            .join(&env)
            .join(SETTING)
            .join("eval_times=1.jsonl");
        let served = json_lines(&file);
        assert_eq!(served.len(), instances.len());
        for line in &served {
            let eval = by_seed(lines, &line["seed"]);
            assert_eq!(line["agent"], agent);
            assert_eq!(
                without_tokens(line["trajectories"][0].clone()),
                without_tokens(eval["trajectories"][0].clone())
            );
        }
    }
    let rows = |root: &Path| -> Vec<Value> {
        let mut rows: Vec<Value> = score_rows(root, &data)
            .into_iter()
            .filter(|r| r["model"] != "all")
            .collect();
        rows.sort_by_key(|r| r["agent"].as_str().unwrap().to_string());
        rows
    };
    let (served, evaluated) = (rows(&out), rows(&evals));
    assert_eq!(served.len(), 2);
    for (s, e) in served.iter().zip(&evaluated) {
        assert_eq!(s["agent"], e["agent"]);
        assert_eq!(s["prediction"], e["prediction"], "{s}\n{e}");
    }
}

/// Plays eval's line `line` over a WebSocket; the last observation.
async fn play_ws(url: &str, env: &str, index: usize, protocol: &Value, line: &Value) -> Value {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let mut exchange = async |message: Value| -> Value {
        ws.send(Message::Text(message.to_string().into()))
            .await
            .unwrap();
        loop {
            if let Message::Text(text) = ws.next().await.unwrap().unwrap() {
                let reply: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(reply["type"], "observation", "{reply}");
                return reply["data"].clone();
            }
        }
    };
    let mut response = exchange(json!({"type": "reset", "data": {
        "env": env, "index": index, "model": "golden", "protocol": protocol
    }}))
    .await;
    let trial = &line["trajectories"][0];
    let tests: Vec<String> = trial["predict"]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["input"].as_str().unwrap().to_string())
        .collect();
    let truth = line["valid_truth"].as_str().unwrap().to_string();
    for text in trial["generated_text"].as_array().unwrap() {
        assert_eq!(response["done"], false, "{response}");
        check_nothing_leaks(&response, &truth, &tests, true, 2);
        response = exchange(json!({"type": "step", "data": {"message": text}})).await;
    }
    response
}
