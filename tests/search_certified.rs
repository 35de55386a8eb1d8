//! Certified labels (DESIGN.md "Certified labels") against the plain
//! recursion (`tests/reference.rs`): under a node budget too small for
//! the exact search, a label is either exact (then equal to the recursion
//! bit for bit) or certified, and then its proven interval
//! `[lower_bound, expected_steps]` contains the recursion's value; its
//! golden trajectory is a play of the instance (actions once each, the
//! observed states, then the answer rule); the same inputs give the same
//! label on a fresh searcher or a reused one; and the main command writes
//! the same bytes on one thread or two.

use kumo_gen::domain::Registry;
use kumo_gen::search::{Move, Problem, SearchBudget, Searcher};
use kumo_gen::synth::{Dedup, Params, Stats, Synthesizer};
use proptest::prelude::*;

use crate::common::generate_in;
use crate::reference::Reference;
use crate::search_exact::instance;

fn problem_of(truths: usize, rules: &[Vec<u64>]) -> Problem {
    let lists: Vec<Vec<Vec<usize>>> = rules
        .iter()
        .map(|states| {
            states
                .iter()
                .map(|&m| (0..truths).filter(|&t| m >> t & 1 == 1).collect())
                .collect()
        })
        .collect();
    Problem::from_rule_outs(truths, &lists).unwrap()
}

/// Labels under `nodes` expansions and checks the label against the
/// plain recursion; returns whether it was certified.
fn check_certified(
    truths: usize,
    rules: &[Vec<u64>],
    observed: &[usize],
    nodes: u64,
) -> Result<bool, TestCaseError> {
    let masks = rules
        .iter()
        .map(|states| states.iter().map(|&m| u128::from(m)).collect())
        .collect();
    let (want, _) = Reference::new(truths, masks).root();
    check_against(truths, rules, observed, &[nodes], want).map(|c| c > 0)
}

/// [`check_certified`] at each of `budgets` against the recursion's value
/// `want`; returns how many labels were certified.
fn check_against(
    truths: usize,
    rules: &[Vec<u64>],
    observed: &[usize],
    budgets: &[u64],
    want: f64,
) -> Result<usize, TestCaseError> {
    let mut certified = 0;
    for &nodes in budgets {
        certified += usize::from(check_one(truths, rules, observed, nodes, want)?);
    }
    Ok(certified)
}

fn check_one(
    truths: usize,
    rules: &[Vec<u64>],
    observed: &[usize],
    nodes: u64,
    want: f64,
) -> Result<bool, TestCaseError> {
    let problem = problem_of(truths, rules);
    let seen: Vec<Option<usize>> = observed.iter().copied().map(Some).collect();
    let budget = SearchBudget::new(SearchBudget::DEFAULT_MAX_MEMO_ENTRIES, nodes);
    let label = Searcher::new().label(&problem, &seen, budget).unwrap();
    let again = Searcher::new().label(&problem, &seen, budget).unwrap();
    prop_assert_eq!(&label, &again, "the same inputs, the same label");
    match label.lower_bound {
        None => prop_assert_eq!(label.expected_steps.to_bits(), want.to_bits()),
        Some(lower) => {
            prop_assert!(
                lower <= want && want <= label.expected_steps,
                "[{}, {}] does not contain {}",
                lower,
                label.expected_steps,
                want
            );
            prop_assert!(label.relative_gap() >= 0.0);
        }
    }
    // A play of the instance: each action once, with its observed state,
    // then at most one answer, last.
    let mut used = vec![false; rules.len()];
    for (i, step) in label.golden_trajectory.iter().enumerate() {
        match *step {
            Move::Act { action, state } => {
                prop_assert!(!used[action], "action {} taken twice", action);
                used[action] = true;
                prop_assert_eq!(state, Some(observed[action]));
            }
            Move::Answer { .. } => prop_assert_eq!(i + 1, label.golden_trajectory.len()),
        }
    }
    prop_assert_eq!(label.first_action, label.golden_actions.first().copied());
    Ok(!label.is_exact())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn a_certified_interval_contains_the_plain_recursion(
        (truths, rules, observed) in instance(),
        nodes in 1u64..40,
    ) {
        check_certified(truths, &rules, &observed, nodes)?;
    }
}

/// Deep games (car-identification 12 x 16 seeds 1 and 3, `E` 7.5 and
/// 9.2) under a few thousand expansions are certified, and each interval contains the
/// plain recursion's value.
#[test]
fn deep_games_under_a_small_budget_are_certified_around_the_value() {
    let domain = Registry::new(None).load("car-identification").unwrap().0;
    let synth = Synthesizer::new(&domain, Params::new(12, 16, 1)).unwrap();
    let instances = synth
        .generate(0..4, &mut Dedup::new(), &mut Stats::default())
        .unwrap();
    let mut certified = 0;
    for instance in instances.iter().filter(|i| i.index == 1 || i.index == 3) {
        let problem = Problem::new(&domain, &instance.truths, &instance.actions).unwrap();
        let rules: Vec<Vec<u64>> = (0..problem.action_count())
            .map(|a| problem.states(a).iter().map(|&m| m as u64).collect())
            .collect();
        let observed: Vec<usize> = instance.observations.iter().map(|o| o.state).collect();
        let masks = rules
            .iter()
            .map(|states| states.iter().map(|&m| u128::from(m)).collect())
            .collect();
        let (want, _) = Reference::new(problem.truth_count(), masks)
            .canonical()
            .root();
        let budgets = [50, 500, 5_000];
        match check_against(problem.truth_count(), &rules, &observed, &budgets, want) {
            Ok(count) => certified += count,
            Err(e) => panic!("instance {}: {e}", instance.index),
        }
    }
    assert!(certified >= 3, "only {certified} certified labels");
}

/// A certified run writes the same bytes on one thread and on two, and
/// marks its lines `"exact": false` with a `lower_bound`.
#[test]
fn certified_lines_are_the_same_on_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(threads);
        generate_in(
            "car-identification",
            (12, 16),
            &out,
            12,
            &["--search-nodes", "300", "--threads", threads],
        )
        .ok();
        let file =
            out.join("car-identification/truth_num=12+action_num=16+valid_truth_num=1.jsonl");
        files.push(std::fs::read_to_string(&file).unwrap());
    }
    assert_eq!(files[0], files[1]);
    let certified: Vec<serde_json::Value> = files[0]
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["optimal"]["exact"] == false)
        .collect();
    assert!(!certified.is_empty(), "300 nodes certify some lines");
    for v in &certified {
        let upper = v["optimal"]["expected_steps"].as_f64().unwrap();
        let lower = v["optimal"]["lower_bound"].as_f64().unwrap();
        assert!(lower <= upper, "{v}");
    }
}
