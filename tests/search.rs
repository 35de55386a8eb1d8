//! Optimal search: conformance with KUMO's reference values, a cross-check
//! against the plain recursion (`tests/reference.rs`), golden
//! trajectories, and `kumo-gen label`.

use std::collections::HashMap;

use kumo_gen::domain::{Domain, Registry};
use kumo_gen::search::{Move, Problem, SearchBudget, SearchError, Searcher};
use proptest::prelude::*;
use serde_json::Value;

use crate::common::{TestCommand, generate_in, kumo_reference, root};
use crate::reference::Reference;

fn medical() -> Domain {
    Registry::new(None)
        .load("medical")
        .expect("shipped medical domain")
        .0
}

/// Resolves a KUMO instance line against `domain` the one way every
/// reader does (`InstanceLine::resolve`): (truths, actions, observed
/// states) as indices.
fn resolve(domain: &Domain, line: &Value) -> (Vec<usize>, Vec<usize>, Vec<Option<usize>>) {
    let parsed: kumo_gen::game::InstanceLine = serde_json::from_value(line.clone()).unwrap();
    let r = parsed.resolve(domain).unwrap();
    (r.truths, r.actions, r.observed)
}

/// Replays a label's golden trajectory against the instance and returns
/// the named truth (a domain index).
fn replay(
    domain: &Domain,
    truths: &[usize],
    actions: &[usize],
    observed: &[Option<usize>],
    moves: &[Move],
) -> usize {
    let mut alive: Vec<usize> = truths.to_vec();
    let mut used = vec![false; actions.len()];
    for m in moves {
        match *m {
            Move::Act { action, state } => {
                assert!(!used[action], "action taken twice");
                used[action] = true;
                assert_eq!(
                    state, observed[action],
                    "trajectory shows the instance's observation"
                );
                if let Some(state) = state {
                    let x = &domain.actions[actions[action]].states[state].rules_out;
                    alive.retain(|&t| !x.contains(t));
                }
            }
            Move::Answer { truth } => {
                let t = truths[truth];
                assert!(alive.contains(&t), "the answer is not ruled out");
                return t;
            }
        }
    }
    panic!("trajectory without an answer");
}

#[test]
fn matches_kumo_reference_on_every_medical_instance() {
    let Some(reference) = kumo_reference() else {
        return;
    };
    let domain = medical();
    let oracle: HashMap<(u64, u64, u64), f64> =
        std::fs::read_to_string(reference.join("oracle-medical.jsonl"))
            .unwrap()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let key = (
                    v["truth_num"].as_u64().unwrap(),
                    v["action_num"].as_u64().unwrap(),
                    v["seed"].as_u64().unwrap(),
                );
                (key, v["expected_steps"].as_f64().unwrap())
            })
            .collect();
    let mut searcher = Searcher::new();
    let mut checked = 0;
    for setting in [
        "truth_num=4+action_num=6+valid_truth_num=1",
        "truth_num=12+action_num=16+valid_truth_num=1",
    ] {
        let path = reference.join(format!("instances/MedicalEnv/{setting}.jsonl"));
        for line in std::fs::read_to_string(path).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let (truths, actions, observed) = resolve(&domain, &v);
            let key = (
                truths.len() as u64,
                actions.len() as u64,
                v["seed"].as_u64().unwrap(),
            );
            let want = oracle[&key];
            let problem = Problem::new(&domain, &truths, &actions).unwrap();
            let label = searcher
                .label(&problem, &observed, SearchBudget::default())
                .unwrap();
            assert!(
                (label.expected_steps - want).abs() <= 1e-9,
                "{key:?}: got {} want {want}",
                label.expected_steps
            );
            let valid = domain
                .truth_index(v["valid_truth"].as_str().unwrap())
                .unwrap();
            let named = replay(
                &domain,
                &truths,
                &actions,
                &observed,
                &label.golden_trajectory,
            );
            assert_eq!(
                named, valid,
                "{key:?}: golden trajectory ends on the valid truth"
            );
            assert_eq!(label.first_action, label.golden_actions.first().copied());
            checked += 1;
        }
    }
    assert_eq!(checked, 100);
}

#[test]
fn label_command_adds_optimal_and_keeps_the_line() {
    let Some(reference) = kumo_reference() else {
        return;
    };
    let input =
        reference.join("instances/MedicalEnv/truth_num=4+action_num=6+valid_truth_num=1.jsonl");
    let text = std::fs::read_to_string(&input).unwrap();
    let run = |threads: &str| {
        TestCommand::new()
            .args([
                "label",
                "--domain",
                "medical",
                "--threads",
                threads,
                "--instances",
            ])
            .arg(&input)
            .ok()
            .stdout
            .clone()
    };
    let one = run("1");
    assert_eq!(one, run("2"), "output does not depend on the thread count");
    let out = String::from_utf8(one).unwrap();
    assert_eq!(out.lines().count(), text.lines().count());
    for (input, output) in text.lines().zip(out.lines()) {
        assert!(output.starts_with(input.trim_end_matches('}')));
        let v: Value = serde_json::from_str(output).unwrap();
        let optimal = &v["optimal"];
        assert!(optimal["expected_steps"].as_f64().unwrap() >= 0.0);
        let trajectory = optimal["golden_trajectory"].as_array().unwrap();
        assert_eq!(optimal["golden_answer"], v["valid_truth"]);
        assert_eq!(
            optimal["golden_actions"].as_u64().unwrap() as usize,
            trajectory.len()
        );
        assert!(
            trajectory
                .iter()
                .all(|a| v["actions"].as_array().unwrap().contains(a))
        );
    }
}

#[test]
fn label_command_marks_budget_exceeded() {
    let Some(reference) = kumo_reference() else {
        return;
    };
    let input =
        reference.join("instances/MedicalEnv/truth_num=12+action_num=16+valid_truth_num=1.jsonl");
    let output = TestCommand::new()
        .args([
            "label",
            "--domain",
            "medical",
            "--search-budget",
            "1",
            "--exact-only",
            "--instances",
        ])
        .arg(&input)
        .ok()
        .stderr_contains("budget exceeded")
        .stdout
        .clone();
    let out = String::from_utf8(output).unwrap();
    let marked = out
        .lines()
        .filter(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["optimal"]["unlabelled"] == "budget exceeded"
        })
        .count();
    assert!(marked > 0 && marked < 50, "{marked}");
}

#[test]
fn label_command_names_a_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.jsonl");
    std::fs::write(
        &input,
        "{\"truths\": [\"Nope\"], \"actions\": [], \"observations\": {}, \"seed\": 0, \"valid_truth\": \"Nope\"}\n",
    )
    .unwrap();
    TestCommand::new()
        .args(["label", "--domain", "medical", "--instances"])
        .arg(&input)
        .expect_code(1)
        .stderr_contains("bad.jsonl:1: unknown truth `Nope`");
    // The fields every reader needs (one line type): a missing `seed` is
    // named.
    std::fs::write(
        &input,
        "{\"truths\": [\"Flu\"], \"actions\": [], \"observations\": {}}\n",
    )
    .unwrap();
    TestCommand::new()
        .args(["label", "--domain", "medical", "--instances"])
        .arg(&input)
        .expect_code(1)
        .stderr_contains("bad.jsonl:1: not an instance line: missing field `seed`");
}

#[test]
fn oversized_instances_are_refused() {
    let actions = vec![vec![vec![0], vec![]]; 129];
    assert_eq!(
        Problem::from_rule_outs(2, &actions),
        Err(SearchError::TooLarge {
            truths: 2,
            actions: 129
        })
    );
}

/// A random instance: `(truths, rule-outs per action and state, valid
/// truth, observed state per action)` where the observations are
/// consistent with the valid truth and rule out every other truth.
fn instance() -> impl Strategy<Value = (usize, Vec<Vec<Vec<usize>>>, usize, Vec<usize>)> {
    (2usize..=6, 1usize..=5).prop_flat_map(|(truths, actions)| {
        let state = proptest::collection::vec(any::<bool>(), truths);
        let action = proptest::collection::vec(state, 2..=3);
        (
            Just(truths),
            proptest::collection::vec(action, actions),
            0..truths,
            proptest::collection::vec(0usize..3, actions),
            proptest::collection::vec(0usize..actions, truths),
        )
            .prop_map(|(truths, bits, valid, pick, cover)| {
                let mut rules: Vec<Vec<Vec<usize>>> = bits
                    .iter()
                    .map(|states| {
                        states
                            .iter()
                            .map(|b| (0..truths).filter(|&t| b[t]).collect())
                            .collect()
                    })
                    .collect();
                let observed: Vec<usize> =
                    pick.iter().zip(&rules).map(|(&p, s)| p % s.len()).collect();
                for (a, &s) in observed.iter().enumerate() {
                    rules[a][s].retain(|&t| t != valid);
                }
                for t in (0..truths).filter(|&t| t != valid) {
                    let a = cover[t];
                    if !rules[a][observed[a]].contains(&t) {
                        rules[a][observed[a]].push(t);
                    }
                }
                // No truth may be ruled out by every state of one action.
                // Trim it from a state that is not observed: coverage stays.
                for (a, states) in rules.iter_mut().enumerate() {
                    for t in 0..truths {
                        if states.iter().all(|x| x.contains(&t)) {
                            let s = usize::from(observed[a] == 0);
                            states[s].retain(|&u| u != t);
                        }
                    }
                }
                (truths, rules, valid, observed)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn fast_search_equals_brute_force((truths, rules, _valid, _observed) in instance()) {
        let problem = Problem::from_rule_outs(truths, &rules).unwrap();
        let (want, first) = Reference::from_lists(truths, &rules).root();
        let observed = vec![Some(0); rules.len()];
        let label = Searcher::new().label(&problem, &observed, SearchBudget::UNLIMITED).unwrap();
        prop_assert!((label.expected_steps - want).abs() <= 1e-12, "{} vs {}", label.expected_steps, want);
        prop_assert_eq!(label.first_action, first);
    }

    #[test]
    fn golden_trajectories_end_on_the_valid_truth((truths, rules, valid, observed) in instance()) {
        let covered = (0..truths).filter(|&t| t != valid).all(|t| {
            observed.iter().enumerate().any(|(a, &s)| rules[a][s].contains(&t))
        });
        prop_assert!(covered, "the strategy builds covered instances");
        let problem = Problem::from_rule_outs(truths, &rules).unwrap();
        let seen: Vec<Option<usize>> = observed.iter().copied().map(Some).collect();
        let label = Searcher::new().label(&problem, &seen, SearchBudget::UNLIMITED).unwrap();
        prop_assert_eq!(label.answer(), Some(valid));
        let mut alive: Vec<usize> = (0..truths).collect();
        for m in &label.golden_trajectory {
            if let Move::Act { action, state } = *m {
                prop_assert_eq!(state, Some(observed[action]));
                let state = observed[action];
                alive.retain(|t| !rules[action][state].contains(t));
            }
        }
        prop_assert!(alive.contains(&valid));
        prop_assert_eq!(label.golden_actions.len() + 1, label.golden_trajectory.len());
    }
}

#[test]
fn label_command_writes_output_file_atomically() {
    let Some(reference) = kumo_reference() else {
        return;
    };
    let input =
        reference.join("instances/MedicalEnv/truth_num=4+action_num=6+valid_truth_num=1.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("labelled.jsonl");
    TestCommand::new()
        .args(["label", "--domain", "medical", "--instances"])
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .ok()
        .stdout_is("");
    let text = std::fs::read_to_string(&output).unwrap();
    assert_eq!(text.lines().count(), 50);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "no temporary file left behind: {names:?}");
}

#[test]
fn synthesized_hard_instances_get_labels_that_replay_to_the_valid_truth() {
    use kumo_gen::synth::{Dedup, Params, Stats, Synthesizer};
    let domain = medical();
    let synth = Synthesizer::new(&domain, Params::new(12, 16, 1)).unwrap();
    let instances = synth
        .generate(0..200, &mut Dedup::default(), &mut Stats::default())
        .unwrap();
    for instance in &instances {
        let optimal =
            kumo_gen::search::optimal_for_instance(&domain, instance, SearchBudget::default())
                .unwrap();
        let answer = optimal.answer().map(|t| instance.truths[t]);
        assert_eq!(
            answer,
            Some(instance.valid[0]),
            "instance {}",
            instance.index
        );
        // Same value from a fresh searcher: nothing leaks between searches.
        let problem = Problem::new(&domain, &instance.truths, &instance.actions).unwrap();
        let observed: Vec<Option<usize>> = instance
            .observations
            .iter()
            .map(|o| Some(o.state))
            .collect();
        let label = Searcher::new()
            .label(&problem, &observed, SearchBudget::default())
            .unwrap();
        assert_eq!(
            optimal.expected_steps.to_bits(),
            label.expected_steps.to_bits()
        );
    }
}

/// `kumo-gen label` writes the main command's `optimal` objects: relabelling
/// a generated file reproduces it byte for byte, labels and "unlabelled"
/// markers alike.
#[test]
fn label_reproduces_the_main_commands_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let clinic = root().join("tests/fixtures/ok/clinic.yaml");
    // The memo budget, the node budget (`--search-nodes`), and no limit.
    for (flag, budget) in [
        ("--search-budget", "1"),
        ("--search-nodes", "1"),
        ("--search-budget", "100000"),
    ] {
        let out = tmp.path().join(format!("{flag}{budget}"));
        TestCommand::new()
            .arg("generate")
            .arg("--domain")
            .arg(&clinic)
            .args(["--truths", "4", "--actions", "5", "-n", "20"])
            .args([flag, budget, "--out"])
            .arg(&out)
            .ok();
        let file = out.join("clinic/truth_num=4+action_num=5+valid_truth_num=1.jsonl");
        let written = std::fs::read(&file).unwrap();
        let relabelled = TestCommand::new()
            .arg("label")
            .arg("--domain")
            .arg(&clinic)
            .args([flag, budget, "--instances"])
            .arg(&file)
            .ok()
            .stdout
            .clone();
        assert_eq!(
            String::from_utf8(relabelled).unwrap(),
            String::from_utf8(written.clone()).unwrap(),
            "{flag} {budget}"
        );
        let text = String::from_utf8(written).unwrap();
        // Over budget, a line is certified (`"exact":false`), not exact.
        let marked = text.matches(r#""exact":false"#).count();
        if budget == "1" {
            assert!(marked > 0, "{flag} 1 leaves lines certified");
        } else {
            assert_eq!(marked, 0);
        }
    }
}

/// A memo or node budget of 0, or a negative one, is the same usage error
/// (exit 2, naming the flag) in every command that labels.
#[test]
fn zero_or_negative_budgets_are_refused_by_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let clinic = root().join("tests/fixtures/ok/clinic.yaml");
    let clinic = clinic.to_str().unwrap();
    let out = tmp.path().to_str().unwrap();
    let commands: [&[&str]; 3] = [
        &[
            "generate",
            "--domain",
            clinic,
            "--truths",
            "4",
            "--actions",
            "5",
            "-n",
            "2",
            "--out",
            out,
        ],
        &["merge", "--out", out],
        &["label", "--domain", clinic, "--instances", out],
    ];
    for command in commands {
        for flag in ["--search-budget", "--search-nodes"] {
            for value in ["0", "-3"] {
                TestCommand::new()
                    .args(command)
                    .arg(format!("{flag}={value}"))
                    .expect_code(2)
                    .stderr_contains(flag)
                    .stderr_contains("at least 1");
            }
        }
    }
}

/// The budget flags and `--domain-max-nodes` follow the one count rule
/// (`parse_count`): a value with spaces around it is read, and the rule a
/// refused one breaks quotes it at most 40 characters long.
#[test]
fn budget_counts_are_trimmed_and_a_refused_one_is_echoed_short() {
    let long = "9".repeat(100);
    for flag in ["--search-budget", "--search-nodes", "--domain-max-nodes"] {
        let ran = TestCommand::new()
            .args(["generate", "--domain", "medical", "-n", "1"])
            .arg(format!("{flag}={long}"))
            .expect_code(2);
        ran.stderr_contains(flag)
            .stderr_contains("of at least 1, not `9999999999999999999999999999999999999999...`");
    }
    let tmp = tempfile::tempdir().unwrap();
    generate_in(
        "tests/fixtures/ok/tiny.yaml",
        (3, 3),
        tmp.path(),
        1,
        &["--search-budget", " 100000 ", "--search-nodes", " 5000000"],
    )
    .ok();
}
