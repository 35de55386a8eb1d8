//! `search::Values` against the plain recursion (`tests/reference.rs`) on
//! states off the golden path: random instances (and instances of shipped
//! domains), random reachable states (a random walk of actions, each
//! showing a random one of its states), and at each state `V`, every
//! action's `Q` (the reference's sum over the action's states, on the
//! reference's values), the optimal set and the golden choice, bit for bit.
//! One `Values` answers the states of a game in a shuffled order and must
//! agree with a fresh one per state: its memo changes no result.

use kumo_gen::domain::Registry;
use kumo_gen::search::{Problem, SearchBudget, State, Values};
use kumo_gen::synth::{Dedup, Params, Stats, Synthesizer};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::reference::Reference;

/// Random walks from the root: `walks` of them, each of up to `depth`
/// moves (an action left, then one of its states at random), every
/// state on the way.
fn walk_states(problem: &Problem, seed: u64, walks: usize, depth: usize) -> Vec<State> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..walks {
        let mut state = State::root(problem);
        out.push(state);
        for _ in 0..depth {
            let left: Vec<usize> = (0..problem.action_count())
                .filter(|&a| state.has_action(a))
                .collect();
            if left.is_empty() {
                break;
            }
            let a = left[rng.random_range(0..left.len())];
            let s = rng.random_range(0..problem.states(a).len());
            state = state.after(problem, a, Some(s));
            out.push(state);
        }
    }
    out
}

fn check_states(
    problem: &Problem,
    states: &[State],
    seed: u64,
    canonical: bool,
) -> Result<(), String> {
    let rules: Vec<Vec<u128>> = (0..problem.action_count())
        .map(|a| problem.states(a).to_vec())
        .collect();
    let mut reference = Reference::new(problem.truth_count(), rules);
    if canonical {
        reference = reference.canonical();
    }
    let mut shared = Values::new(problem.clone(), SearchBudget::UNLIMITED);
    // The shared memo sees the states in a shuffled order.
    let mut order: Vec<usize> = (0..states.len()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    for &i in &order {
        let state = states[i];
        let got = shared.state(state).map_err(|e| e.to_string())?;
        let fresh = Values::new(problem.clone(), SearchBudget::UNLIMITED)
            .state(state)
            .map_err(|e| e.to_string())?;
        if got != fresh {
            return Err(format!(
                "state {state:?}: shared memo {got:?} vs fresh {fresh:?}"
            ));
        }
        let (v, best) = reference.solve(state.truths, state.actions);
        if got.value.to_bits() != v.to_bits() {
            return Err(format!("state {state:?}: V {} vs reference {v}", got.value));
        }
        if got.best != best {
            return Err(format!("state {state:?}: best {:?} vs {best:?}", got.best));
        }
        let mut optimal = Vec::new();
        for &(a, q) in &got.q {
            let want = reference.q(state.truths, state.actions, a);
            if q.to_bits() != want.to_bits() {
                return Err(format!("state {state:?} action {a}: Q {q} vs {want}"));
            }
            if q < v {
                return Err(format!("state {state:?} action {a}: Q {q} below V {v}"));
            }
            // Optimal: within the documented tie tolerance of V (1e-9,
            // DESIGN.md), the rule every reader of moves applies.
            if best.is_some() && q - v <= 1e-9 {
                optimal.push(a);
            }
        }
        if got.q.len() != state.actions.count_ones() as usize {
            return Err(format!("state {state:?}: {} Q values", got.q.len()));
        }
        if got.optimal != optimal {
            return Err(format!(
                "state {state:?}: optimal {:?} vs {optimal:?}",
                got.optimal
            ));
        }
        if let Some(b) = best
            && !optimal.contains(&b)
        {
            return Err(format!("state {state:?}: golden action {b} not optimal"));
        }
        if best.is_none() && got.q.iter().any(|&(_, q)| q != 1.0) {
            return Err(format!("state {state:?}: a base case with Q != 1"));
        }
    }
    Ok(())
}

fn instance() -> impl Strategy<Value = (usize, Vec<Vec<Vec<usize>>>, u64)> {
    (3usize..=9, 2usize..=8).prop_flat_map(|(truths, actions)| {
        let state = proptest::collection::vec(0u8..4, truths);
        (
            Just(truths),
            proptest::collection::vec(proptest::collection::vec(state, 1..=4), actions),
            any::<u64>(),
        )
            .prop_map(|(truths, raw, seed)| {
                let rules = raw
                    .iter()
                    .map(|states| {
                        states
                            .iter()
                            .map(|cells| (0..truths).filter(|&t| cells[t] == 0).collect())
                            .collect()
                    })
                    .collect();
                (truths, rules, seed)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn values_of_random_states_equal_the_plain_recursion((truths, rules, seed) in instance()) {
        let problem = Problem::from_rule_outs(truths, &rules).unwrap();
        let states = walk_states(&problem, seed, 4, rules.len());
        if let Err(e) = check_states(&problem, &states, seed, false) {
            return Err(TestCaseError::fail(e));
        }
    }
}

/// Instances of shipped domains (hard settings, several relation
/// structures), states along random walks.
#[test]
fn values_of_shipped_domains_equal_the_plain_recursion() {
    let registry = Registry::new(None);
    for (name, truths, actions, n) in [
        ("medical", 12, 16, 3),
        ("car-identification", 8, 10, 2),
        ("herb", 10, 10, 2),
        ("cryptography", 8, 10, 2),
    ] {
        let domain = registry.load(name).unwrap().0;
        let synth = Synthesizer::new(&domain, Params::new(truths, actions, 1)).unwrap();
        let instances = synth
            .generate(0..n, &mut Dedup::new(), &mut Stats::default())
            .unwrap();
        for instance in instances {
            let problem = Problem::new(&domain, &instance.truths, &instance.actions).unwrap();
            let states = walk_states(&problem, instance.index, 3, 6);
            if let Err(e) = check_states(&problem, &states, instance.index, true) {
                panic!("{name} instance {}: {e}", instance.index);
            }
        }
    }
}

#[test]
fn a_state_outside_the_problem_is_an_error_not_a_panic() {
    let problem = Problem::from_rule_outs(3, &[vec![vec![0], vec![1]]]).unwrap();
    let mut values = Values::new(problem, SearchBudget::UNLIMITED);
    let bad = State {
        truths: 0b1111,
        actions: 1,
    };
    assert!(values.value(bad).is_err());
    assert!(
        values
            .q(
                State {
                    truths: 0b111,
                    actions: 1
                },
                5
            )
            .is_err()
    );
    // A repeated action costs a step and shows nothing: Q = 1 + V.
    let root = State {
        truths: 0b111,
        actions: 0,
    };
    assert_eq!(values.q(root, 0).unwrap(), 1.0);
}
