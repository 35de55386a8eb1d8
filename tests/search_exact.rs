//! The fast search against the plain recursion, bit for bit: KUMO's
//! Algorithm 3 written as plainly as possible (`tests/reference.rs`: every
//! action in instance order, no reductions, only a memo on the raw
//! `(T, A)` masks) labels random instances, and `Searcher::label` must give
//! the same `expected_steps` (`==` on the float, not a tolerance), the same
//! first action and the same golden trajectory and answer.
//!
//! Besides random instances, the instances `kumo-gen` writes for every
//! shipped domain are checked the same way.
//!
//! The generators aim at the structures the search's reductions rely on:
//! sparse rule-outs (truths related to one action only: private actions),
//! copies of actions (duplicates), actions that differ only by a swap of
//! two truths (mirrors), states that rule out nothing, and many states.

use kumo_gen::domain::Registry;
use kumo_gen::search::{Move, Problem, SearchBudget, Searcher};
use kumo_gen::synth::{Dedup, Params, Stats, Synthesizer};
use proptest::prelude::*;

use crate::reference::Reference;

/// A random instance: truths, rule-out masks per action and state, and
/// observed states. Structure is added on purpose: copies and mirrored
/// copies (two truths swapped) of earlier actions.
pub(crate) fn instance() -> impl Strategy<Value = (usize, Vec<Vec<u64>>, Vec<usize>)> {
    (3usize..=9, 2usize..=8, 1u32..=4).prop_flat_map(|(truths, actions, sparsity)| {
        let state = proptest::collection::vec(0u32..sparsity + 2, truths);
        let action = (proptest::collection::vec(state, 2..=4), 0u8..6, 0usize..64);
        (
            Just(truths),
            proptest::collection::vec(action, actions),
            proptest::collection::vec(0usize..4, actions),
        )
            .prop_map(move |(truths, raw, pick)| {
                let mut rules: Vec<Vec<u64>> = Vec::new();
                for (states, kind, salt) in raw {
                    // 0 in a cell: the state rules the truth out.
                    let fresh: Vec<u64> = states
                        .iter()
                        .map(|cells| {
                            (0..truths)
                                .filter(|&t| cells[t] == 0)
                                .fold(0u64, |m, t| m | 1 << t)
                        })
                        .collect();
                    let made = match (kind, rules.len()) {
                        (0, n) if n > 0 => rules[salt % n].clone(),
                        (1, n) if n > 0 => {
                            let (x, y) = (salt % truths, (salt / truths + 1 + salt) % truths);
                            rules[salt % n]
                                .iter()
                                .map(|&m| {
                                    if (m >> x & 1) != (m >> y & 1) {
                                        m ^ (1 << x) ^ (1 << y)
                                    } else {
                                        m
                                    }
                                })
                                .collect()
                        }
                        _ => fresh,
                    };
                    rules.push(made);
                }
                let observed = pick.iter().zip(&rules).map(|(&p, s)| p % s.len()).collect();
                (truths, rules, observed)
            })
    })
}

fn check(truths: usize, rules: &[Vec<u64>], observed: &[usize]) -> Result<(), TestCaseError> {
    check_with(truths, rules, observed, false)
}

fn check_with(
    truths: usize,
    rules: &[Vec<u64>],
    observed: &[usize],
    canonical: bool,
) -> Result<(), TestCaseError> {
    let lists: Vec<Vec<Vec<usize>>> = rules
        .iter()
        .map(|states| {
            states
                .iter()
                .map(|&m| (0..truths).filter(|&t| m >> t & 1 == 1).collect())
                .collect()
        })
        .collect();
    let problem = Problem::from_rule_outs(truths, &lists).unwrap();
    let seen: Vec<Option<usize>> = observed.iter().copied().map(Some).collect();
    let label = Searcher::new()
        .label(&problem, &seen, SearchBudget::UNLIMITED)
        .unwrap();

    let masks = rules
        .iter()
        .map(|states| states.iter().map(|&m| u128::from(m)).collect())
        .collect();
    let mut plain = Reference::new(truths, masks);
    if canonical {
        plain = plain.canonical();
    }
    let (want, first) = plain.root();
    let (taken, answer) = plain.golden(observed);
    prop_assert_eq!(
        label.expected_steps.to_bits(),
        want.to_bits(),
        "{} vs {}",
        label.expected_steps,
        want
    );
    prop_assert_eq!(label.first_action, first);
    prop_assert_eq!(&label.golden_actions, &taken);
    prop_assert_eq!(label.answer(), answer);
    let acts = label
        .golden_trajectory
        .iter()
        .filter(|m| matches!(m, Move::Act { .. }))
        .count();
    prop_assert_eq!(acts, taken.len());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn search_equals_the_plain_recursion_bit_for_bit((truths, rules, observed) in instance()) {
        check(truths, &rules, &observed)?;
    }
}

/// Larger instances (up to 14 truths x 12 actions), fewer cases.
fn larger() -> impl Strategy<Value = (usize, Vec<Vec<u64>>, Vec<usize>)> {
    (8usize..=14, 8usize..=12).prop_flat_map(|(truths, actions)| {
        // Each state rules out each truth with probability 1/5.
        let state = proptest::collection::vec(0u8..5, truths);
        (
            Just(truths),
            proptest::collection::vec(proptest::collection::vec(state, 2..=3), actions),
            proptest::collection::vec(0usize..3, actions),
        )
            .prop_map(|(truths, raw, pick)| {
                let rules: Vec<Vec<u64>> = raw
                    .iter()
                    .map(|states| {
                        states
                            .iter()
                            .map(|cells| {
                                (0..truths)
                                    .filter(|&t| cells[t] == 0)
                                    .fold(0u64, |m, t| m | 1 << t)
                            })
                            .collect()
                    })
                    .collect();
                let observed = pick.iter().zip(&rules).map(|(&p, s)| p % s.len()).collect();
                (truths, rules, observed)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    #[test]
    fn larger_instances_equal_the_plain_recursion((truths, rules, observed) in larger()) {
        check(truths, &rules, &observed)?;
    }
}

/// The first instances `kumo-gen` writes for every shipped domain, at 8
/// truths x 10 actions or the nearest setting the domain can synthesize
/// (fewer truths, or all its actions), against the plain recursion: the
/// search's promises hold on the real relation structures of every
/// domain, not only on medical and random ones.
#[test]
fn every_shipped_domain_equals_the_plain_recursion() {
    let registry = Registry::new(None);
    let names = registry.all().unwrap();
    assert!(names.len() >= 100, "{} shipped domains", names.len());
    for (name, _) in names {
        let domain = registry.load(&name).unwrap().0;
        let actions = domain.actions.len().min(10);
        let instances = [8, 6, 4, 3]
            .into_iter()
            .filter(|&t| t <= domain.truths.len())
            .find_map(|t| {
                let synth = Synthesizer::new(&domain, Params::new(t, actions, 1)).ok()?;
                synth
                    .generate(0..3, &mut Dedup::new(), &mut Stats::default())
                    .ok()
            })
            .unwrap_or_else(|| panic!("{name}: no setting up to 8x{actions} synthesizes"));
        for instance in instances {
            let problem = Problem::new(&domain, &instance.truths, &instance.actions).unwrap();
            let rules: Vec<Vec<u64>> = (0..problem.action_count())
                .map(|a| problem.states(a).iter().map(|&m| m as u64).collect())
                .collect();
            let observed: Vec<usize> = instance.observations.iter().map(|o| o.state).collect();
            if let Err(e) = check(problem.truth_count(), &rules, &observed) {
                panic!("{name} instance {}: {e}", instance.index);
            }
        }
    }
}

/// Deep games, where the search builds its reuse bound: car-identification
/// 12 x 16 seeds 1 and 3 (`E` 7.5 and 9.2, a truth related to ten actions
/// or more), the full label against the plain recursion.
#[test]
fn deep_games_equal_the_plain_recursion() {
    let domain = Registry::new(None).load("car-identification").unwrap().0;
    let synth = Synthesizer::new(&domain, Params::new(12, 16, 1)).unwrap();
    let instances = synth
        .generate(0..4, &mut Dedup::new(), &mut Stats::default())
        .unwrap();
    for instance in instances.iter().filter(|i| i.index == 1 || i.index == 3) {
        let problem = Problem::new(&domain, &instance.truths, &instance.actions).unwrap();
        let rules: Vec<Vec<u64>> = (0..problem.action_count())
            .map(|a| problem.states(a).iter().map(|&m| m as u64).collect())
            .collect();
        let observed: Vec<usize> = instance.observations.iter().map(|o| o.state).collect();
        if let Err(e) = check_with(problem.truth_count(), &rules, &observed, true) {
            panic!("car-identification instance {}: {e}", instance.index);
        }
    }
}
