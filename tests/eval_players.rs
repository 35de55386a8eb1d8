//! `eval --player golden|random|guess`: the offline players write ordinary
//! result files (no server) that `score` reads, and play the library's
//! in-memory tasks through `eval::Session` as the Python `Env` does.

use std::path::Path;
use std::sync::Arc;

use kumo_gen::domain::Registry;
use kumo_gen::eval::players::Player;
use kumo_gen::game::session::Session;
use kumo_gen::pipeline;
use kumo_gen::render::{RenderOptions, Renderer, Templates};
use kumo_gen::search::SearchBudget;
use kumo_gen::synth::Params;
use serde_json::Value;

use crate::common::{TestCommand, eval_player, generate_in, json_lines, root};

const SETTING: &str = "truth_num=4+action_num=3+valid_truth_num=1";

fn play(player: &str, out: &Path, seed: &str) -> TestCommand {
    let mut command = TestCommand::new();
    command
        .args(["eval", "--player", player, "--data"])
        .arg(root().join("tests/fixtures/eval"))
        .arg("--domain")
        .arg(root().join("tests/fixtures/ok/tiny.yaml"))
        .arg("--out")
        .arg(out)
        .args(["--trials", "2", "--seed", seed])
        .env_remove("OPENAI_API_KEY")
        .env_remove("KUMO_API_KEY");
    command
}

fn results(out: &Path, player: &str) -> String {
    let path = out
        .join(player)
        .join("VanillaAgent/tiny")
        .join(SETTING)
        .join("eval_times=2.jsonl");
    std::fs::read_to_string(path).unwrap()
}

fn scores(out: &Path) -> Vec<Value> {
    let output = TestCommand::new()
        .arg("score")
        .arg(out)
        .arg("--instances")
        .arg(root().join("tests/fixtures/eval"))
        .arg("--domain")
        .arg(root().join("tests/fixtures/ok/tiny.yaml"))
        .arg("--json")
        .ok();
    serde_json::from_slice::<Vec<Value>>(&output.stdout).unwrap()
}

#[test]
fn offline_players_write_results_that_score_reads() {
    let tmp = tempfile::tempdir().unwrap();
    for player in ["golden", "random", "guess"] {
        let out = play(player, tmp.path(), "3").ok();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(stdout.contains(&format!("player `{player}`")), "{stdout}");
    }
    let instances = json_lines(
        &root()
            .join("tests/fixtures/eval/tiny")
            .join(format!("{SETTING}.jsonl")),
    );
    // Golden: the golden trajectory, then the prediction (counted twice).
    let golden_actions = instances
        .iter()
        .map(|i| i["optimal"]["golden_trajectory"].as_array().unwrap().len() as f64 + 2.0)
        .sum::<f64>()
        / instances.len() as f64;
    let by_player = |name: &str| {
        scores(tmp.path())
            .into_iter()
            .find(|s| s["model"] == name)
            .unwrap()
    };
    let golden = by_player("golden");
    assert_eq!(golden["success_rate"], 1.0);
    assert!((golden["mean_actions"].as_f64().unwrap() - golden_actions).abs() < 1e-9);
    assert_eq!(by_player("random")["success_rate"], 1.0);
    let guess = by_player("guess");
    assert_eq!(guess["mean_actions"], 2.0);
    assert!(guess["success_rate"].as_f64().unwrap() < 1.0);
    // Every trial records its tokens (counted words, no tokenizer).
    for line in results(tmp.path(), "golden").lines() {
        let line: Value = serde_json::from_str(line).unwrap();
        assert!(line["average_tokens"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn random_players_are_seeded() {
    let (a, b, c) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    play("random", a.path(), "1").ok();
    play("random", b.path(), "1").ok();
    play("random", c.path(), "2").ok();
    let (ra, rb, rc) = (
        results(a.path(), "random"),
        results(b.path(), "random"),
        results(c.path(), "random"),
    );
    let sorted = |s: &str| {
        let mut v: Vec<String> = s.lines().map(str::to_string).collect();
        v.sort();
        v
    };
    assert_eq!(sorted(&ra), sorted(&rb));
    assert_ne!(sorted(&ra), sorted(&rc));
}

#[test]
fn a_player_and_an_api_are_exclusive() {
    let tmp = tempfile::tempdir().unwrap();
    TestCommand::new()
        .args([
            "eval",
            "--player",
            "golden",
            "--api-base",
            "http://127.0.0.1:9/v1",
        ])
        .arg("--data")
        .arg(root().join("tests/fixtures/eval"))
        .arg("--out")
        .arg(tmp.path())
        .expect_code(2);
    TestCommand::new()
        .args(["eval", "--player", "oracle", "--data"])
        .arg(root().join("tests/fixtures/eval"))
        .arg("--out")
        .arg(tmp.path())
        .expect_code(2);
}

#[test]
fn golden_refuses_unlabelled_instances() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    generate_in("medical", (4, 6), &data, 3, &["--no-labels"]).ok();
    let out = eval_player("golden", &data, &tmp.path().join("results"), &[]).expect_code(1);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        stderr.contains("needs labelled instances") && stderr.contains("kumo-gen label"),
        "{stderr}"
    );
    assert!(!tmp.path().join("results").exists());
    TestCommand::new()
        .args(["eval", "--player", "guess", "--data"])
        .arg(tmp.path().join("data"))
        .arg("--out")
        .arg(tmp.path().join("results"))
        .ok();
}

/// 12 labelled medical 4x6 instances (no books, no SFT) in a new folder.
fn medical_4x6_dataset() -> tempfile::TempDir {
    let data = tempfile::tempdir().unwrap();
    TestCommand::new()
        .args(["--domain", "medical", "--truths", "4", "--actions", "6"])
        .args(["-n", "12", "--no-sft", "--books", "none", "--out"])
        .arg(data.path())
        .ok();
    data
}

/// The seeds a results file of medical 4x6 holds, ascending.
fn played_seeds(out: &Path, player: &str) -> Vec<u64> {
    let path = out
        .join(player)
        .join("VanillaAgent/medical/truth_num=4+action_num=6+valid_truth_num=1/eval_times=2.jsonl");
    let mut seeds: Vec<u64> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["seed"]
                .as_u64()
                .unwrap()
        })
        .collect();
    seeds.sort_unstable();
    seeds
}

#[test]
fn limit_and_sample_pick_the_same_instances_for_every_player() {
    let data = medical_4x6_dataset();
    let subset = |flags: &[&str]| {
        let tmp = tempfile::tempdir().unwrap();
        let seeds: Vec<Vec<u64>> = ["golden", "guess"]
            .iter()
            .enumerate()
            .map(|(i, player)| {
                // Another `--seed` (retries, the players' choices) must not
                // change the subset.
                TestCommand::new()
                    .args(["eval", "--player", player, "--data"])
                    .arg(data.path())
                    .args(["--domain", "medical", "--out"])
                    .arg(tmp.path())
                    .args(["--trials", "2", "--seed", &i.to_string()])
                    .args(flags)
                    .ok();
                played_seeds(tmp.path(), player)
            })
            .collect();
        assert_eq!(
            seeds[0], seeds[1],
            "{flags:?}: players played other instances"
        );
        seeds[0].clone()
    };
    assert_eq!(subset(&["--limit", "2"]), [0, 1]);
    let sample = subset(&["--sample", "4", "--sample-seed", "5"]);
    assert_eq!(sample.len(), 4);
    assert_ne!(sample, [0, 1, 2, 3], "a sample, not the first lines");
    assert_eq!(sample, subset(&["--sample", "4", "--sample-seed", "5"]));
    assert_ne!(sample, subset(&["--sample", "4", "--sample-seed", "6"]));
    let limited = subset(&["--limit", "6", "--sample", "3", "--sample-seed", "5"]);
    assert!(limited.len() == 3 && limited.iter().all(|&s| s < 6));
    TestCommand::new()
        .args(["eval", "--player", "guess", "--limit", "0", "--data"])
        .arg(data.path())
        .expect_code(2)
        .stderr_contains("--limit");
}

#[test]
fn budgeted_protocol_goes_on_after_a_wrong_answer_and_scores_within_the_budget() {
    let data = medical_4x6_dataset();
    let results = tempfile::tempdir().unwrap();
    for budget in [None, Some("3")] {
        let mut cmd = TestCommand::new();
        cmd.args(["eval", "--player", "guess", "--data"])
            .arg(data.path())
            .args(["--domain", "medical", "--trials", "2", "--out"])
            .arg(results.path());
        if let Some(b) = budget {
            cmd.args(["--budget", b]);
        }
        cmd.ok();
    }
    let trials = |agent: &str| -> Vec<Value> {
        let path = results
            .path()
            .join("guess")
            .join(agent)
            .join("medical/truth_num=4+action_num=6+valid_truth_num=1/eval_times=2.jsonl");
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .flat_map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["trajectories"]
                    .as_array()
                    .unwrap()
                    .clone()
            })
            .collect()
    };
    // KUMO's protocol: the first answer ends every game.
    for t in trials("VanillaAgent") {
        assert_eq!(t["actions"].as_array().unwrap().len(), 2, "{t}");
        assert!(t.get("budget").is_none());
    }
    // Budgeted: a wrong answer is told "wrong" and play goes on.
    let budgeted = trials("VanillaAgent-budget=3");
    assert!(budgeted.iter().all(|t| t["budget"] == 3));
    let went_on = budgeted
        .iter()
        .find(|t| t["actions"].as_array().unwrap().len() > 2)
        .expect("some first guess is wrong and play goes on");
    assert_eq!(went_on["observations"][1]["observation"], "wrong");
    let rows = scores_of(results.path(), data.path());
    let row = |agent: &str| rows.iter().find(|r| r["agent"] == agent).unwrap().clone();
    let kumo = row("VanillaAgent");
    let within = row("VanillaAgent-budget=3");
    assert!(kumo["budget_accuracy"].is_null());
    assert!(within["budget_accuracy"].as_f64().unwrap() > kumo["success_rate"].as_f64().unwrap());
    assert_eq!(within["budget_accuracy"], within["success_rate"]);
    assert!(within["mean_turns_solved"].as_f64().unwrap() > 1.0);
    assert_eq!(kumo["mean_turns_solved"], 1.0);
}

fn scores_of(results: &Path, instances: &Path) -> Vec<Value> {
    let output = TestCommand::new()
        .arg("score")
        .arg(results)
        .arg("--instances")
        .arg(instances)
        .args(["--domain", "medical", "--json"])
        .ok();
    serde_json::from_slice(&output.stdout).unwrap()
}

/// `player`'s trials of twelve labelled medical 4x6 tasks made in memory:
/// (successful, action count, expected steps) per task.
fn play_in_memory(player: Player, seed: u64) -> Vec<(bool, usize, Option<f64>)> {
    let (domain, _) = Registry::new(None).load("medical").unwrap();
    let templates = Templates::resolve(None).unwrap();
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let lines = pipeline::generate_lines(
        &domain,
        Params::new(4, 6, 1),
        12,
        Some(SearchBudget::default()),
    )
    .unwrap();
    lines
        .iter()
        .map(|line| {
            let task = Arc::new(pipeline::task(&renderer, &domain, line).unwrap());
            let mut session = Session::new(Arc::clone(&task), "golden", 50);
            while let Some(request) = session.request() {
                let reply = player
                    .reply(&domain, &task.instance, &request, seed)
                    .unwrap();
                assert!(reply.input_tokens > 0 && reply.output_tokens >= 3);
                session
                    .respond(Some(&reply.text), reply.output_tokens)
                    .unwrap();
            }
            (
                session.successful(),
                session.action_count(),
                task.instance.expected_steps(),
            )
        })
        .collect()
}

#[test]
fn golden_plays_the_labelled_trajectory_and_always_succeeds() {
    for (successful, count, expected) in play_in_memory(Player::Golden, 0) {
        assert!(successful);
        // The golden trajectory's length, then the predicting reply and
        // its `predicted_truth` entry.
        assert!(count >= 2 && expected.is_some());
    }
}

#[test]
fn random_always_succeeds_and_guess_answers_at_once() {
    let random = play_in_memory(Player::Random, 7);
    assert!(random.iter().all(|&(ok, _, _)| ok));
    assert_eq!(
        random,
        play_in_memory(Player::Random, 7),
        "same seed, same trials"
    );
    let guess = play_in_memory(Player::Guess, 7);
    assert!(guess.iter().all(|&(_, count, _)| count == 2));
    let wins = guess.iter().filter(|&&(ok, _, _)| ok).count();
    assert!(wins < guess.len(), "guessing does not always win");
}
