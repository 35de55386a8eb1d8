//! `kumo-gen eval` against the loopback server (`tests/eval.rs`): what is
//! played, counted and written: the golden policy wins with the golden
//! count and a resume skips finished instances, garbage replies are parse
//! errors, every request is the SFT record of its round, and a golden
//! player's reduction curve is the optimal one.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::common::{TestCommand, json_lines};
use crate::eval::{
    completion, eval_cmd, eval_on, golden, instances, result_file, score, serve, sft_reply,
};

#[test]
fn golden_player_wins_with_the_golden_count_and_resume_skips() {
    let server = serve(Arc::new(|body: &Value, _| golden(body)));
    let tmp = tempfile::tempdir().unwrap();
    let output = eval_cmd(&server.base, tmp.path(), &["--concurrency", "2"]).run();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("3 played, 0 already done"), "{stdout}");
    assert!(stdout.contains("success rate 1.000"), "{stdout}");
    assert!(!stdout.contains("sk-test-secret") && !stderr.contains("sk-test-secret"));

    let file = result_file(tmp.path());
    let mut got = json_lines(&file);
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
    let output = eval_cmd(&server.base, tmp.path(), &[]).ok();
    assert!(String::from_utf8_lossy(&output.stdout).contains("0 played, 3 already done"));
    assert_eq!(std::fs::read(&file).unwrap(), before);

    // A crash mid-line: the half line is cut off and that instance replayed.
    let text = String::from_utf8(before).unwrap();
    let keep: Vec<&str> = text.lines().collect();
    let half = &keep[2][..keep[2].len() / 2];
    std::fs::write(&file, format!("{}\n{}\n{half}", keep[0], keep[1])).unwrap();
    let output = eval_cmd(&server.base, tmp.path(), &[]).ok();
    assert!(String::from_utf8_lossy(&output.stdout).contains("1 played, 2 already done"));
    let after = json_lines(&file);
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
    eval_cmd(&server.base, tmp.path(), &[]).ok();
    for line in json_lines(&result_file(tmp.path())) {
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
        TestCommand::new()
            .args(["generate", "--domain", domain, "-n", "6", "--steps"])
            .args([
                "--truths",
                &truths.to_string(),
                "--actions",
                &actions.to_string(),
            ])
            .arg("--out")
            .arg(&data)
            .ok();
        let setting = format!("truth_num={truths}+action_num={actions}+valid_truth_num=1");
        let sft = data.join(domain).join("sft");
        let chats = json_lines(&sft.join(format!("{setting}.jsonl")));
        let steps = json_lines(&sft.join(format!("{setting}.steps.jsonl")));
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
        sft_reply(replies.iter().map(|(chat, _)| chat), body)
    }));
    eval_on(&server.base, &data)
        .args(["--trials", "1", "--backoff-ms", "1"])
        .arg("--out")
        .arg(tmp.path().join("results"))
        .ok()
        .stdout_contains("18 played");
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
    TestCommand::new()
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
        .ok();
    let chats =
        json_lines(&data.join("rules3/sft/truth_num=6+action_num=8+valid_truth_num=1.jsonl"));
    let server = serve(Arc::new(move |body: &Value, _| {
        sft_reply(chats.iter(), body)
    }));
    let results = tmp.path().join("results");
    eval_on(&server.base, &data)
        .args(["--trials", "2"])
        .arg("--out")
        .arg(&results)
        .ok();
    let svg = tmp.path().join("curve.svg");
    TestCommand::new()
        .arg("score")
        .arg(&results)
        .arg("--instances")
        .arg(&data)
        .arg("--curve-svg")
        .arg(&svg)
        .ok();
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
    TestCommand::new()
        .arg("score")
        .arg(&results)
        .arg("--curve-svg")
        .arg(&svg)
        .expect_code(1)
        .stderr_contains("--instances");
}
