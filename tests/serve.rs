//! `kumo-gen serve` from the command line: startup errors, an HTTP
//! episode end to end with its result line, the shutdown report, and
//! dense rewards (`reward: "dense"`) equal to the library's. The
//! OpenEnv client, raw WebSocket frames and the page are played in
//! `tests/serve/` (Python, run by `.ci/run`).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Child;
use std::time::Duration;

use kumo_gen::analysis::{Analyst, LiveGame};
use kumo_gen::domain::Registry;
use kumo_gen::game::InstanceLine;
use kumo_gen::search::SearchBudget;
use serde_json::{Value, json};

use crate::common::{TINY_SETTING, TestCommand, generate_tiny, json_lines};

/// `n` tiny instances generated into `DIR/data` and served with results
/// into `DIR/results`.
pub(crate) fn serve_tiny(
    dir: &Path,
    n: u64,
) -> (Child, String, BufReader<std::process::ChildStdout>) {
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
pub(crate) fn start(
    args: &[&std::ffi::OsStr],
) -> (Child, String, BufReader<std::process::ChildStdout>) {
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

pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(20)))
        .http_status_as_error(false)
        .build()
        .into()
}

pub(crate) fn post(url: &str, body: &Value) -> (u16, Value) {
    let mut response = agent()
        .post(url)
        .header("Content-Type", "application/json")
        .send(body.to_string())
        .expect("the server answers");
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().expect("a body");
    (status, serde_json::from_str(&text).expect("JSON"))
}

/// A GET's JSON body.
pub(crate) fn get_json(url: &str) -> Value {
    let text = agent()
        .get(url)
        .call()
        .expect("the server answers")
        .body_mut()
        .read_to_string()
        .expect("a body");
    serde_json::from_str(&text).expect("JSON")
}

/// SIGTERM, then the exit code and stderr.
pub(crate) fn stop(child: Child) -> (i32, String) {
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
    let envs = get_json(&format!("{url}/list_environments"));
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
    // The page's verdict compares the game with its own optimum.
    assert_eq!(
        last["observation"]["golden_actions"],
        lines[1]["optimal"]["golden_actions"]
    );

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
        .arg(out.with_file_name("other-results"))
        .args(["--port", &port])
        .expect_code(1);
    ran.stderr_contains("choose another --port");
    // The same --out: a second server is refused (it would lose the end
    // of each episode to the first one's file locks).
    let ran = TestCommand::new()
        .arg("serve")
        .arg("--data")
        .arg(&data)
        .arg("--out")
        .arg(&out)
        .expect_code(1);
    ran.stderr_contains("another `kumo-gen serve` writes its results to");
    let (code, stderr) = stop(child);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("none open"), "{stderr}");
}

/// The name of the golden player's move in `game`'s state: the first
/// optimal action, else (where answering is optimal) the certified truth.
fn golden_move(game: &mut LiveGame) -> String {
    let values = game.state_values().unwrap();
    let analyst = game.analyst();
    match values.best {
        Some(a) => analyst.action_names()[a].clone(),
        None => {
            let t = analyst.golden_answer(game.state()).unwrap();
            analyst.truth_names()[t].clone()
        }
    }
}

/// Plays `replies` (names, or `None` for a reply naming nothing) as one
/// HTTP episode of line `index`, with `reset`'s `extra` arguments; returns
/// each step's reward and the last response.
fn play_http(
    url: &str,
    index: usize,
    extra: &Value,
    replies: &[Option<String>],
) -> (Vec<f64>, Value) {
    let mut args = json!({"split": "6x8", "index": index, "model": "dense-test"});
    args.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let (status, reset) = post(&format!("{url}/reset"), &args);
    assert_eq!(status, 200, "{reset}");
    assert_eq!(reset["reward"], Value::Null);
    let id = reset["observation"]["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut rewards = Vec::new();
    let mut last = Value::Null;
    for reply in replies {
        let message = match reply {
            Some(name) => format!("I choose <ANSWER> {name} </ANSWER>"),
            None => "no choice".to_string(),
        };
        let (status, step) = post(
            &format!("{url}/step"),
            &json!({"episode_id": id, "action": {"message": message}}),
        );
        assert_eq!(status, 200, "{step}");
        for secret in ["optimal_actions", "candidates", "regret", "q", "value"] {
            assert!(step["observation"].get(secret).is_none(), "{secret} sent");
        }
        rewards.push(step["reward"].as_f64().expect("a number"));
        last = step;
    }
    assert_eq!(last["done"], true, "the replies end the episode");
    (rewards, last)
}

#[test]
fn dense_rewards_are_the_librarys_and_sum_to_the_documented_total() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    TestCommand::new()
        .args([
            "--domain",
            "medical",
            "--truths",
            "6",
            "--actions",
            "8",
            "-n",
            "3",
        ])
        .args(["--books", "none", "--no-sft", "--out"])
        .arg(&data)
        .ok();
    let out = dir.path().join("results");
    let (child, url, _stdout) = start(&[
        "--data".as_ref(),
        data.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    let domain = Registry::new(None).load("medical").unwrap().0;
    let lines: Vec<InstanceLine> = json_lines(
        &data
            .join("medical")
            .join("truth_num=6+action_num=8+valid_truth_num=1.jsonl"),
    )
    .into_iter()
    .map(|v| serde_json::from_value(v).unwrap())
    .collect();
    let dense = json!({"reward": "dense"});
    for (index, line) in lines.iter().enumerate() {
        let new_game =
            || LiveGame::new(Analyst::new(&domain, line, SearchBudget::default()).unwrap());

        // The golden player: every action optimal (reward 0), the proven
        // answer 1: the episode earns exactly 1.
        let mut game = new_game();
        let mut golden = Vec::new();
        loop {
            let name = golden_move(&mut game);
            let scored = game.reward(Some(&name)).unwrap();
            golden.push(Some(name));
            if scored.analysed.unwrap().proven.is_some() {
                break;
            }
        }
        let (rewards, last) = play_http(&url, index, &dense, &golden);
        let (actions, answer) = rewards.split_at(rewards.len() - 1);
        assert!(actions.iter().all(|&r| r == 0.0), "{rewards:?}");
        assert_eq!(answer, [1.0]);
        assert_eq!(last["observation"]["successful"], true);

        // Actions in instance order with a repeat, then a guess: each
        // reward the library's, a repeat -1, and the sum 1[proven] - regret.
        let mut replies: Vec<Option<String>> =
            line.actions.iter().take(3).cloned().map(Some).collect();
        replies.insert(2, replies[0].clone());
        replies.push(Some(line.truths[index % line.truths.len()].clone()));
        let mut game = new_game();
        let mut expected = Vec::new();
        let mut regret = 0.0;
        let mut proven = false;
        for reply in &replies {
            let scored = game.reward(reply.as_deref()).unwrap();
            let m = scored.analysed.unwrap();
            regret += m.regret;
            proven = m.proven.unwrap_or(proven);
            expected.push(scored.reward);
        }
        let (rewards, _) = play_http(&url, index, &dense, &replies);
        assert_eq!(rewards.len(), expected.len());
        for (got, want) in rewards.iter().zip(&expected) {
            assert!((got - want).abs() < 1e-12, "{rewards:?} != {expected:?}");
        }
        assert!(
            (rewards[2] + 1.0).abs() < 1e-12,
            "a repeat wastes one action"
        );
        let total: f64 = rewards.iter().sum();
        assert!((total - (f64::from(u8::from(proven)) - regret)).abs() < 1e-12);

        // A reply naming nothing earns 0 and ends the episode.
        let (rewards, last) = play_http(&url, index, &dense, &[replies[0].clone(), None]);
        assert!((rewards[0] - expected[0]).abs() < 1e-12 && rewards[1] == 0.0);
        assert_eq!(last["observation"]["parse_error"], true);

        // The default stays the outcome: 0 before the end, 1 for a win.
        let (rewards, _) = play_http(&url, index, &json!({}), &golden);
        let mut outcome = vec![0.0; golden.len() - 1];
        outcome.push(1.0);
        assert_eq!(rewards, outcome);
    }
    let (status, bad) = post(&format!("{url}/reset"), &json!({"reward": "shaped"}));
    assert_eq!(
        (status, bad["code"].as_str()),
        (422, Some("VALIDATION_ERROR"))
    );
    assert!(
        bad["detail"].as_str().unwrap().contains("\"dense\""),
        "{bad}"
    );
    let (code, stderr) = stop(child);
    assert_eq!(code, 0, "{stderr}");
}
