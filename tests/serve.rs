//! `kumo-gen serve` from the command line: startup errors, an HTTP
//! episode end to end with its result line, and the shutdown report. The
//! OpenEnv client, raw WebSocket frames and the page are played in
//! `tests/serve/` (Python, run by `.ci/run`).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Child;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{TINY_SETTING, TestCommand, generate_tiny, json_lines};

/// `n` tiny instances generated into `DIR/data` and served with results
/// into `DIR/results`.
fn serve_tiny(dir: &Path, n: u64) -> (Child, String, BufReader<std::process::ChildStdout>) {
    let data = dir.join("data");
    generate_tiny(&data, n, &[]).ok();
    let out = dir.join("results");
    start(&[
        "--data".as_ref(),
        data.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ])
}

/// A server on a free port: the child and its address.
fn start(args: &[&std::ffi::OsStr]) -> (Child, String, BufReader<std::process::ChildStdout>) {
    let mut command = TestCommand::new();
    command.arg("serve").args(args).args(["--port", "0"]);
    let mut child = command.spawn();
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    let mut first = String::new();
    stdout
        .read_line(&mut first)
        .expect("the server's first line");
    let url = first
        .split_whitespace()
        .nth(1)
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .trim_end_matches('/')
        .to_string();
    (child, url, stdout)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(20)))
        .http_status_as_error(false)
        .build()
        .into()
}

fn post(url: &str, body: &Value) -> (u16, Value) {
    let mut response = agent()
        .post(url)
        .header("Content-Type", "application/json")
        .send(body.to_string())
        .expect("the server answers");
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().expect("a body");
    (status, serde_json::from_str(&text).expect("JSON"))
}

/// SIGTERM, then the exit code and stderr.
fn stop(child: Child) -> (i32, String) {
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    let output = child.wait_with_output().expect("the server exits");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_data_dir_without_instance_files_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let ran = TestCommand::new()
        .arg("serve")
        .arg("--data")
        .arg(&empty)
        .arg("--out")
        .arg(dir.path().join("results"))
        .expect_code(1);
    ran.stderr_contains("no instance file");
    let ran = TestCommand::new()
        .arg("serve")
        .arg("--data")
        .arg(dir.path().join("missing"))
        .arg("--out")
        .arg(dir.path().join("results"))
        .expect_code(1);
    ran.stderr_contains("does not exist");
}

#[test]
fn an_http_episode_is_evals_trial_and_its_line_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let (child, url, _stdout) = serve_tiny(dir.path(), 4);
    let (data, out) = (dir.path().join("data"), dir.path().join("results"));
    let envs: Value = serde_json::from_str(
        &agent()
            .get(format!("{url}/list_environments"))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap(),
    )
    .unwrap();
    let env = envs[0].as_str().expect("one environment").to_string();
    let lines = json_lines(&data.join(&env).join(format!("{TINY_SETTING}.jsonl")));

    // By task id; nothing secret before the end.
    let (status, reset) = post(
        &format!("{url}/reset"),
        &json!({"task_id": format!("{env}/3x3/1"), "model": "m"}),
    );
    assert_eq!(status, 200, "{reset}");
    let observation = &reset["observation"];
    assert_eq!(observation["task_id"], format!("{env}/3x3/1"));
    assert!(observation["system_prompt"].as_str().unwrap().len() > 100);
    for secret in ["answer", "successful", "expected_steps", "valid_truth"] {
        assert!(observation.get(secret).is_none(), "{secret} before the end");
    }
    let id = observation["episode_id"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 32);

    // An action, then a truth.
    let action = lines[1]["actions"][0].as_str().unwrap().to_string();
    let (status, step) = post(
        &format!("{url}/step"),
        &json!({"episode_id": id, "action": {"message": format!("<ANSWER> {action} </ANSWER>")}}),
    );
    assert_eq!(status, 200, "{step}");
    assert_eq!(step["done"], false);
    assert_eq!(step["reward"], 0.0);
    assert!(
        step["observation"]["prompt"]
            .as_str()
            .unwrap()
            .starts_with("Observation from previous action: {'action': ")
    );
    let truth = lines[1]["valid_truth"].as_str().unwrap().to_string();
    let (_, last) = post(
        &format!("{url}/step"),
        &json!({"episode_id": id, "action": {"message": format!("<ANSWER> {truth} </ANSWER>"), "tokens": 7}}),
    );
    assert_eq!(last["done"], true);
    assert_eq!(last["reward"], 1.0);
    assert_eq!(last["observation"]["successful"], true);
    assert_eq!(last["observation"]["action_count"], 3);

    // Unknown episode, bad action, bad line: typed errors.
    let (status, gone) = post(
        &format!("{url}/step"),
        &json!({"episode_id": id, "action": {"message": "x"}}),
    );
    assert_eq!(
        (status, gone["code"].as_str()),
        (404, Some("SESSION_ERROR"))
    );
    let (status, bad) = post(&format!("{url}/reset"), &json!({"split": "9x9"}));
    assert_eq!(
        (status, bad["code"].as_str()),
        (422, Some("VALIDATION_ERROR"))
    );
    assert!(
        bad["detail"]
            .as_str()
            .unwrap()
            .contains("its splits are `3x3`")
    );

    let (code, stderr) = stop(child);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("stopped: 1 episode recorded"), "{stderr}");
    let file = out
        .join("m")
        .join("VanillaAgent")
        .join(&env)
        .join(TINY_SETTING)
        .join("eval_times=1.jsonl");
    let recorded = json_lines(&file);
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0]["seed"], lines[1]["seed"]);
    let trial = &recorded[0]["trajectories"][0];
    assert_eq!(trial["successful"], true);
    assert_eq!(trial["consumed_tokens"], 7);
    assert_eq!(trial["actions"].as_array().unwrap().len(), 3);
}

#[test]
fn a_port_in_use_is_the_users_to_change() {
    let dir = tempfile::tempdir().unwrap();
    let (child, url, _stdout) = serve_tiny(dir.path(), 2);
    let (data, out) = (dir.path().join("data"), dir.path().join("results"));
    let port = url.rsplit(':').next().unwrap().to_string();
    let ran = TestCommand::new()
        .arg("serve")
        .arg("--data")
        .arg(&data)
        .arg("--out")
        .arg(&out)
        .args(["--port", &port])
        .expect_code(1);
    ran.stderr_contains("choose another --port");
    let (code, stderr) = stop(child);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("none open"), "{stderr}");
}
