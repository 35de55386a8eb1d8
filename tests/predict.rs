//! The explore-then-predict protocol (docs/black-boxes.md): held-out test
//! inputs are never probeable, the golden explorer scores exactly the
//! best-explorer curve, the prompts leak nothing hidden, and `--feedback
//! end` shows no output before the last exploration reply.

use std::sync::Arc;

use kumo_gen::domain::{Domain, Registry};
use kumo_gen::eval::players::Player;
use kumo_gen::eval::predict::predict_move;
use kumo_gen::game::predict::{
    Feedback, PredictGame, PredictRules, PredictStep, bayes, output_label, output_of,
};
use kumo_gen::pipeline::explorer_curve::{Instance, golden_paths};
use kumo_gen::pipeline::family_curve::CurveRequest;
use kumo_gen::pipeline::{self, generate_lines};
use kumo_gen::render::{RenderOptions, Renderer, Templates};
use kumo_gen::search::SearchBudget;
use kumo_gen::synth::Params;
use serde_json::{Value, json};

fn puzzles() -> Domain {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/domains/puzzles.yaml");
    Registry::new(None).load(path).unwrap().0
}

/// The labelled lines of `n` puzzles instances of 6 codes and 8 guesses.
fn lines(domain: &Domain, n: u64) -> Vec<Value> {
    generate_lines(
        domain,
        Params::new(6, 8, 1),
        n,
        Some(SearchBudget::default()),
    )
    .unwrap()
    .iter()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect()
}

/// `line` with truth `valid` (domain index) as the hidden one: its
/// observations and golden trajectory (`golden`: instance positions).
fn variant(domain: &Domain, line: &Value, valid: usize, golden: &[usize]) -> Value {
    let mut v = line.clone();
    let actions: Vec<String> = serde_json::from_value(line["actions"].clone()).unwrap();
    let mut observations = serde_json::Map::new();
    for name in &actions {
        let a = domain.action_index(name).unwrap();
        let state = output_of(domain, a, valid).unwrap();
        observations.insert(name.clone(), json!(output_label(domain, a, state)));
    }
    v["observations"] = Value::Object(observations);
    v["valid_truth"] = json!(domain.truths[valid]);
    v["optimal"]["golden_trajectory"] = golden.iter().map(|&p| json!(actions[p])).collect();
    v["optimal"]["golden_answer"] = json!(domain.truths[valid]);
    v
}

fn game(domain: &Domain, line: &Value, rules: PredictRules) -> PredictGame {
    let templates = Templates::resolve(None).unwrap();
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let task = pipeline::task(&renderer, domain, &line.to_string()).unwrap();
    PredictGame::new(Arc::new(task), domain, rules, "m").unwrap()
}

/// Plays `player` to the end; the requests it was sent, in order.
fn play(domain: &Domain, game: &mut PredictGame, player: Player) -> Vec<Vec<Value>> {
    let mut requests = Vec::new();
    while let Some(request) = game.request() {
        let name = predict_move(player, domain, game, 7).unwrap();
        requests.push(request);
        game.respond(Some(&format!("<ANSWER> {name} </ANSWER>")), 1);
    }
    requests
}

#[test]
fn golden_explorer_scores_exactly_the_best_explorer_curve() {
    let domain = puzzles();
    let held = domain.actions.len() - 8;
    let request = CurveRequest {
        hypotheses: &[6],
        probes: 8,
        instances: 1,
        budget: SearchBudget::default(),
    };
    for line in lines(&domain, 4) {
        let resolved = serde_json::from_value::<kumo_gen::game::InstanceLine>(line.clone())
            .unwrap()
            .resolve(&domain)
            .unwrap();
        let instance = Instance::new(&domain, &resolved.truths, &resolved.actions);
        let paths = golden_paths(&instance, &request).unwrap();
        for turns in [1, 2, 3] {
            let rules = PredictRules {
                turns,
                tests: held,
                attempts: 1,
                feedback: Feedback::Each,
            };
            let mut total = 0.0;
            for (h, &valid) in resolved.truths.iter().enumerate() {
                let mut g = game(&domain, &variant(&domain, &line, valid, &paths[h]), rules);
                play(&domain, &mut g, Player::Golden);
                let trial = g.trial();
                let record = trial.predict.unwrap();
                assert!(record.explored <= turns);
                total += record.accuracy;
            }
            let played = total / resolved.truths.len() as f64;
            let curve = instance.golden_accuracy(&paths, turns);
            assert!(
                (played - curve).abs() < 1e-12,
                "T={turns}: played {played}, curve {curve}"
            );
            let reference =
                bayes::golden_reference(&domain, &resolved.truths, &resolved.actions, turns)
                    .unwrap();
            assert!((reference - curve).abs() < 1e-12, "reference {reference}");
        }
    }
}

#[test]
fn test_inputs_are_never_probeable_and_drawn_from_the_seed_alone() {
    let domain = puzzles();
    for line in lines(&domain, 6) {
        let actions: Vec<String> = serde_json::from_value(line["actions"].clone()).unwrap();
        let rules = PredictRules {
            turns: 8,
            tests: 10,
            attempts: 2,
            feedback: Feedback::Each,
        };
        let mut first = None;
        for player in [Player::Random, Player::Guess, Player::Golden] {
            let mut g = game(&domain, &line, rules);
            let names: Vec<String> = g.tests().iter().map(|t| t.name.clone()).collect();
            assert_eq!(names.len(), 10);
            for name in &names {
                assert!(!actions.contains(name), "{name} is an instance action");
            }
            // Every player is tested on the same inputs.
            assert_eq!(first.get_or_insert(names.clone()), &names);
            play(&domain, &mut g, player);
            let trial = g.trial();
            for probe in trial.actions.iter().filter_map(Value::as_str) {
                assert!(actions.iter().any(|a| a == probe));
                assert!(!names.iter().any(|n| n == probe));
            }
            let record = trial.predict.unwrap();
            assert_eq!(record.tests.len(), 10);
            assert!(record.tests.iter().all(|t| t.answers.len() <= 2));
        }
    }
    // A name of a test input offered as a probe is not one.
    let line = &lines(&domain, 1)[0];
    let mut g = game(
        &domain,
        line,
        PredictRules {
            turns: 2,
            tests: 3,
            attempts: 1,
            feedback: Feedback::Each,
        },
    );
    let test = g.tests()[0].name.clone();
    let step = g.respond(Some(&format!("<ANSWER> {test} </ANSWER>")), 0);
    assert_eq!(step, Some(PredictStep::Unusable));
    assert!(g.trial().parse_error);
}

#[test]
fn prompts_do_not_depend_on_the_hidden_truth_and_end_feedback_waits() {
    let domain = puzzles();
    let line = &lines(&domain, 1)[0];
    let resolved = serde_json::from_value::<kumo_gen::game::InstanceLine>(line.clone())
        .unwrap()
        .resolve(&domain)
        .unwrap();
    let actions: Vec<String> = serde_json::from_value(line["actions"].clone()).unwrap();
    let replies = [&actions[0], &actions[3], &actions[5]];
    // Per feedback, the requests before the tests for each hidden truth.
    let run = |feedback: Feedback| -> Vec<Vec<String>> {
        resolved
            .truths
            .iter()
            .map(|&valid| {
                let rules = PredictRules {
                    turns: 3,
                    tests: 4,
                    attempts: 1,
                    feedback,
                };
                let mut g = game(&domain, &variant(&domain, line, valid, &[]), rules);
                let mut seen = Vec::new();
                for reply in replies {
                    seen.push(Value::from(g.request().unwrap()).to_string());
                    let step = g.respond(Some(&format!("<ANSWER> {reply} </ANSWER>")), 0);
                    let Some(PredictStep::Probe { shown, .. }) = step else {
                        panic!("{step:?}")
                    };
                    assert_eq!(shown.is_some(), feedback == Feedback::Each);
                }
                // The first test's request: the reveal under `end`.
                let last = g.request().unwrap();
                let text = last.last().unwrap()["content"]
                    .as_str()
                    .unwrap()
                    .to_string();
                assert!(text.contains("Exploration is over"));
                assert_eq!(g.shown().len(), 3, "every output is shown by now");
                seen.push(text);
                seen
            })
            .collect()
    };
    for (feedback, differ_from) in [(Feedback::End, 3), (Feedback::Each, 1)] {
        let seen = run(feedback);
        let (first, rest) = seen.split_first().unwrap();
        for other in rest {
            // Before any output is shown every request is the same for
            // every hidden truth: nothing hidden is in it.
            assert_eq!(first[..differ_from], other[..differ_from]);
        }
        // And once outputs are shown they tell the truths apart.
        assert!(
            rest.iter().any(|o| o[differ_from] != first[differ_from]),
            "{feedback:?}"
        );
    }
}

#[test]
fn eval_and_score_under_the_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let (data, results) = (dir.path().join("data"), dir.path().join("results"));
    let domain = concat!(env!("CARGO_MANIFEST_DIR"), "/domains/opponents.yaml");
    crate::common::generate_in(domain, (8, 6), &data, 6, &[]).ok();
    let flags = ["--trials", "2", "--turns", "2", "--tests", "6"];
    for player in ["golden", "random", "guess"] {
        crate::common::eval_player(player, &data, &results, &flags).ok();
    }
    crate::common::eval_player(
        "golden",
        &data,
        &results,
        &[&flags[..], &["--feedback", "end"]].concat(),
    )
    .ok();
    // Too many test inputs for the held-out actions: refused before play.
    let refused = crate::common::eval_player(
        "random",
        &data,
        &results,
        &["--turns", "2", "--tests", "1000"],
    )
    .expect_code(1);
    let stderr = String::from_utf8_lossy(&refused.output.stderr).to_string();
    assert!(stderr.contains("--tests"), "{stderr}");
    let ran = crate::common::TestCommand::new()
        .arg("score")
        .arg(&results)
        .arg("--instances")
        .arg(&data)
        .arg("--json")
        .ok();
    let rows: Vec<Value> = serde_json::from_slice(&ran.output.stdout).unwrap();
    // The chart: a bar per row (overall rows aside), each with the golden
    // explorer's tick.
    let svg = dir.path().join("chart.svg");
    crate::common::TestCommand::new()
        .arg("score")
        .arg(&results)
        .arg("--instances")
        .arg(&data)
        .arg("--svg")
        .arg(&svg)
        .ok();
    let svg = std::fs::read_to_string(&svg).unwrap();
    let charted = rows.iter().filter(|r| r["model"] != "all").count();
    assert_eq!(charted, 4);
    assert!(svg.contains("accuracy on held-out inputs"));
    assert_eq!(svg.matches("<title>").count(), charted);
    assert_eq!(
        svg.matches(r#"stroke="black" stroke-width="2""#).count(),
        charted
    );
    for row in rows.iter().filter(|r| r["model"] != "all") {
        let title = format!(
            "{} {}: {:.3}",
            row["model"].as_str().unwrap(),
            row["agent"].as_str().unwrap(),
            row["prediction"]["accuracy"].as_f64().unwrap()
        );
        assert!(svg.contains(&title), "{title}");
    }
    // The report shows the same rows in its own section.
    let page = dir.path().join("page");
    crate::common::TestCommand::new()
        .arg("report")
        .arg(&results)
        .arg("--instances")
        .arg(&data)
        .arg("-o")
        .arg(&page)
        .ok();
    let html = std::fs::read_to_string(page.join("index.html")).unwrap();
    let section = &html[html.find(r#"<section id="predict">"#).unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert_eq!(section.matches("<tr><td>").count(), rows.len());
    assert!(section.contains("<svg"));
    let opponents = Registry::new(None).load(domain).unwrap().0;
    for row in rows.iter().filter(|r| r["model"] != "all") {
        let p = &row["prediction"];
        let end = row["agent"].as_str().unwrap().ends_with("-end");
        assert_eq!(p["turn_at_shot"], if end { "2@1-end" } else { "2@1" });
        assert_eq!(p["tests"], 6 * 2 * 6, "{row}");
        // The accuracy is the share of tests right in the result lines.
        let file = results
            .join(row["model"].as_str().unwrap())
            .join(row["agent"].as_str().unwrap())
            .join("opponents")
            .join("truth_num=8+action_num=6+valid_truth_num=1")
            .join("eval_times=2.jsonl");
        let text = std::fs::read_to_string(&file).unwrap();
        let (mut right, mut tests) = (0, 0);
        for line in text.lines() {
            let line: Value = serde_json::from_str(line).unwrap();
            for t in line["trajectories"].as_array().unwrap() {
                for test in t["predict"]["tests"].as_array().unwrap() {
                    tests += 1;
                    right += usize::from(!test["right_at"].is_null());
                }
            }
        }
        assert_eq!(p["accuracy"].as_f64().unwrap(), right as f64 / tests as f64);
        // The golden explorer column: the exact reference of the instances.
        let instances = std::fs::read_to_string(
            data.join("opponents/truth_num=8+action_num=6+valid_truth_num=1.jsonl"),
        )
        .unwrap();
        let mut reference = 0.0;
        for line in instances.lines() {
            let r = serde_json::from_str::<kumo_gen::game::InstanceLine>(line)
                .unwrap()
                .resolve(&opponents)
                .unwrap();
            reference += bayes::golden_reference(&opponents, &r.truths, &r.actions, 2).unwrap();
        }
        let golden = p["golden_explorer_accuracy"].as_f64().unwrap();
        assert!((golden - reference / 6.0).abs() < 1e-12);
        if row["model"] == "guess" {
            assert_eq!(p["mean_explored"], 0.0);
        }
    }
}

#[test]
fn play_under_end_feedback_shows_outputs_only_after_the_last_probe() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let domain = concat!(env!("CARGO_MANIFEST_DIR"), "/domains/puzzles.yaml");
    crate::common::generate_in(domain, (6, 8), &data, 1, &[]).ok();
    let file = data.join("puzzles/truth_num=6+action_num=8+valid_truth_num=1.jsonl");
    let out = dir.path().join("played.jsonl");
    let ran = crate::common::TestCommand::new()
        .args(["play", "--instances"])
        .arg(&file)
        .args([
            "--turns",
            "2",
            "--tests",
            "2",
            "--attempts",
            "2",
            "--feedback",
            "end",
            "--out",
        ])
        .arg(&out)
        .stdin("1\nnot a probe\n3\n1\n2\n1\n2\n")
        .ok();
    let stdout = String::from_utf8_lossy(&ran.output.stdout).to_string();
    let reveal = stdout.find("Exploration is over").unwrap();
    assert!(!stdout[..reveal].contains("Observation from previous action"));
    assert_eq!(
        stdout[reveal..]
            .matches("Observation from previous action")
            .count(),
        2
    );
    assert!(stdout.contains("is not on the menu"));
    let line: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(line["agent"], "HumanAgent-predict=2@2-end");
    let trial = &line["trajectories"][0];
    assert_eq!(trial["predict"]["explored"], 2);
    assert_eq!(trial["predict"]["tests"].as_array().unwrap().len(), 2);
    // Exploration observations record the probe, not its output.
    assert_eq!(trial["observations"][1].get("observation"), None);
    assert_eq!(
        trial["observations"][2]["revealed"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn verdicts_are_shown_only_with_more_than_one_attempt() {
    let domain = puzzles();
    let line = &lines(&domain, 1)[0];
    for attempts in [1, 2] {
        let rules = PredictRules {
            turns: 1,
            tests: 4,
            attempts,
            feedback: Feedback::Each,
        };
        let mut g = game(&domain, line, rules);
        g.respond(Some("<ANSWER> stop </ANSWER>"), 0);
        // Always the first listed output: wrong on some test.
        let (mut shown, mut wrong) = (String::new(), 0);
        while let Some(prompt) = g.prompt() {
            shown.push_str(&prompt);
            let first = g.menu()[0].clone();
            if let Some(PredictStep::Predicted { right: false, .. }) =
                g.respond(Some(&format!("<ANSWER> {first} </ANSWER>")), 0)
            {
                wrong += 1;
            }
        }
        assert!(wrong > 0, "some answer was wrong");
        assert_eq!(shown.contains("Wrong:"), attempts > 1, "{attempts}");
        if attempts == 1 {
            assert!(!shown.contains("Right."));
        }
    }
}
