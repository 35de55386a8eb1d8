//! Unit tests of the solver against a plain memoised recursion: greedy
//! rollouts are upper bounds, the reuse bound is a lower bound, a search
//! using it from its first expansion gets the same values, and so does a
//! search that starts with the plain recursion and gives way to the
//! interval search at any point, and a memo keyed up to twin actions
//! gets every node's value and first action.

use super::*;

/// A xorshift stream from `seed`.
fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// One random action of 2-3 states, each ruling out a random subset of
/// truths `0..truths`.
fn random_action(next: &mut impl FnMut() -> u64, truths: usize) -> Vec<Vec<usize>> {
    let states = 2 + (next() % 2) as usize;
    (0..states)
        .map(|_| (0..truths).filter(|_| next().is_multiple_of(3)).collect())
        .collect()
}

/// Small pseudo-random problems: `truths` truths, `actions` actions of
/// 2-3 states, each state ruling out a random subset.
fn problems(count: usize, truths: usize, actions: usize) -> Vec<Problem> {
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    (0..count)
        .map(|_| {
            let rules: Vec<Vec<Vec<usize>>> = (0..actions)
                .map(|_| random_action(&mut next, truths))
                .collect();
            Problem::from_rule_outs(truths, &rules).unwrap()
        })
        .collect()
}

/// The reference recursion, plainly (memoized), for small problems.
fn plain(
    problem: &Problem,
    truths: u64,
    actions: u64,
    memo: &mut std::collections::HashMap<(u64, u64), f64>,
) -> f64 {
    let related = |a: usize| problem.states(a).iter().fold(0u64, |m, &x| m | x as u64);
    let covered = actions.ones().fold(0u64, |m, a| m | related(a));
    if truths.count() <= 1 || truths & !covered != 0 {
        return 0.0;
    }
    if let Some(&v) = memo.get(&(truths, actions)) {
        return v;
    }
    let mut best = f64::INFINITY;
    for a in actions.ones() {
        best = best.min(plain_sum(problem, truths, actions, a, memo));
    }
    let value = best + 1.0;
    memo.insert((truths, actions), value);
    value
}

/// Action `a`'s sum at a node in the reference's float operations, its
/// children by [`plain`].
fn plain_sum(
    problem: &Problem,
    truths: u64,
    actions: u64,
    a: usize,
    memo: &mut std::collections::HashMap<(u64, u64), f64>,
) -> f64 {
    let children: Vec<u64> = problem
        .states(a)
        .iter()
        .map(|&x| truths & !(x as u64))
        .collect();
    let denom = f64::from(children.iter().map(|t| t.count()).sum::<u32>()) + 1e-9;
    let mut sum = 0.0;
    for &t in &children {
        sum += plain(problem, t, actions & !(1 << a), memo) * (f64::from(t.count()) / denom);
    }
    sum
}

/// The reuse bound, with and without tracked actions, is at most the
/// value bit for bit at every node: every subset of truths with every
/// subset of actions (so tracked actions are used in every combination;
/// the induction of `reuse`, with the high truths' cover as count).
#[test]
fn reuse_bound_is_below_every_value() {
    let mut memos = Memos::<u64>::default();
    let (mut checked, mut above_path, mut tracked_above) = (0, 0, 0);
    for problem in problems(30, 9, 7) {
        let mut untracked = std::collections::HashMap::new();
        let solver = Solver::<u64, u64>::new(&problem, &mut memos, SearchBudget::UNLIMITED);
        let reuse = ReuseBound::new(
            problem.truth_count(),
            &solver.states,
            &solver.related,
            Default::default(),
        );
        for tracking in [false, true] {
            if tracking {
                reuse.start_tracking();
            }
            let all_t: u64 = (1 << problem.truth_count()) - 1;
            let all_a: u64 = (1 << problem.action_count()) - 1;
            let mut exact = std::collections::HashMap::new();
            for truths in 0..=all_t {
                for actions in 0..=all_a {
                    let Some(canonical) = solver.reduce(truths, actions) else {
                        continue;
                    };
                    let cover = (truths & reuse.high::<u64>())
                        .ones()
                        .map(|t| {
                            canonical
                                .ones()
                                .filter(|&b| solver.related[b].contains(t))
                                .count()
                        })
                        .min()
                        .unwrap_or(0) as u32;
                    let bound = reuse.get(truths, canonical, cover);
                    let value = plain(&problem, truths, actions, &mut exact);
                    assert!(bound <= value, "reuse bound {bound} > value {value}");
                    checked += 1;
                    above_path += usize::from(bound > solver.static_lo(truths, canonical));
                    tracked_above +=
                        usize::from(tracking && bound > untracked[&(truths, canonical)]);
                    if !tracking {
                        untracked.insert((truths, canonical), bound);
                    }
                }
            }
        }
    }
    assert!(checked > 100_000, "only {checked} non-base nodes checked");
    assert!(
        above_path > 1_000,
        "the bound beat the path bound {above_path} times"
    );
    assert!(
        tracked_above > 1_000,
        "tracking beat the single count {tracked_above} times"
    );
}

/// A search that uses the reuse bound from its first expansion, tracking
/// actions from the start or from its 40th expansion, gets the plain
/// recursion's values bit for bit.
#[test]
fn search_with_the_reuse_bound_equals_the_plain_recursion() {
    let mut memos = Memos::<u64>::default();
    for problem in problems(60, 11, 9) {
        let all_t: u64 = (1 << problem.truth_count()) - 1;
        let all_a: u64 = (1 << problem.action_count()) - 1;
        let want = plain(
            &problem,
            all_t,
            all_a,
            &mut std::collections::HashMap::new(),
        );
        for track_after in [1, 40] {
            let mut solver = Solver::<u64, u64>::new(&problem, &mut memos, SearchBudget::UNLIMITED);
            solver.reuse_after = 1;
            solver.track_after = track_after;
            solver.plain_left = 0;
            let got = solver.value(all_t, all_a).unwrap();
            assert!(solver.reuse.is_some());
            assert_eq!(got.to_bits(), want.to_bits(), "{got} vs {want}");
        }
    }
}

/// The greedy rollout bounds the exact value from above, at the root
/// and at every child of every root action.
#[test]
fn greedy_rollouts_are_upper_bounds() {
    let mut memos = Memos::<u64>::default();
    let mut checked = 0;
    for problem in problems(60, 9, 7) {
        let all_t: u64 = (1 << problem.truth_count()) - 1;
        let all_a: u64 = (1 << problem.action_count()) - 1;
        let mut nodes = vec![(all_t, all_a)];
        for a in 0..problem.action_count() {
            for &x in problem.states(a) {
                nodes.push((all_t & !(x as u64), all_a & !(1 << a)));
            }
        }
        let mut exact = std::collections::HashMap::new();
        for (truths, actions) in nodes {
            // A fresh solver each time, with nothing proven to lean on.
            let mut solver = Solver::<u64, u64>::new(&problem, &mut memos, SearchBudget::UNLIMITED);
            let Some(canonical) = solver.reduce(truths, actions) else {
                continue;
            };
            let rollout = solver.greedy_hi(truths, canonical).unwrap();
            let value = plain(&problem, truths, actions, &mut exact);
            assert!(rollout >= value, "rollout {rollout} < value {value}");
            checked += 1;
        }
    }
    assert!(checked > 300, "only {checked} non-base nodes checked");
}

/// The first optimal action of a node in instance order, by the plain
/// recursion (all sums exact).
fn plain_first_action(
    problem: &Problem,
    truths: u64,
    actions: u64,
    memo: &mut std::collections::HashMap<(u64, u64), f64>,
) -> Option<usize> {
    let mut best = (f64::INFINITY, None);
    for a in actions.ones() {
        let sum = plain_sum(problem, truths, actions, a, memo);
        if sum < best.0 {
            best = (sum, Some(a));
        }
    }
    best.1
}

/// A search that starts with the plain recursion gets the plain
/// recursion's value and first action whether the plain recursion
/// finishes or gives way to the interval search after any number of
/// nodes (its exact values stay in the memo).
#[test]
fn plain_first_and_its_fallback_equal_the_plain_recursion() {
    let mut memos = Memos::<u64>::default();
    let mut fell_back = 0;
    for problem in problems(40, 10, 8) {
        let all_t: u64 = (1 << problem.truth_count()) - 1;
        let all_a: u64 = (1 << problem.action_count()) - 1;
        let mut exact = std::collections::HashMap::new();
        let want = plain(&problem, all_t, all_a, &mut exact);
        let Some(canonical) =
            Solver::<u64, u64>::new(&problem, &mut memos, SearchBudget::UNLIMITED)
                .reduce(all_t, all_a)
        else {
            continue;
        };
        let want_action = plain_first_action(&problem, all_t, canonical, &mut exact);
        for cap in [0, 1, 7, 60, plain::PLAIN_NODES] {
            let mut solver = Solver::<u64, u64>::new(&problem, &mut memos, SearchBudget::UNLIMITED);
            solver.plain_left = cap;
            let (got, action) = solver.decide(all_t, all_a).unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "cap {cap}: {got} vs {want}");
            assert_eq!(action, want_action, "cap {cap}");
            fell_back += usize::from(solver.plain_left == 0);
        }
    }
    assert!(fell_back > 40, "the fallback ran {fell_back} times");
}

/// Small nodes (two truths, at most `plain::SMALL_ACTIONS` actions),
/// which the interval search hands to the plain recursion wherever it
/// meets them, get the plain recursion's value and first action, asked
/// at the node itself and met inside a larger search.
#[test]
fn small_nodes_equal_the_plain_recursion() {
    let mut memos = Memos::<u64>::default();
    let mut small = 0;
    for problem in problems(20, 8, 6) {
        let all_t: u64 = (1 << problem.truth_count()) - 1;
        let all_a: u64 = (1 << problem.action_count()) - 1;
        let mut exact = std::collections::HashMap::new();
        for pair in (0..=all_t).filter(|t: &u64| t.count() == 2) {
            for actions in 0..=all_a {
                let mut solver =
                    Solver::<u64, u64>::new(&problem, &mut memos, SearchBudget::UNLIMITED);
                solver.plain_left = 0;
                let Some(canonical) = solver.reduce(pair, actions) else {
                    continue;
                };
                if !plain::is_small(pair, canonical) {
                    continue;
                }
                let (got, action) = solver.decide(pair, actions).unwrap();
                let want = plain(&problem, pair, actions, &mut exact);
                assert_eq!(got.to_bits(), want.to_bits(), "{got} vs {want}");
                let want_action = plain_first_action(&problem, pair, canonical, &mut exact);
                assert_eq!(action, want_action);
                small += 1;
            }
        }
        let mut solver = Solver::<u64, u64>::new(&problem, &mut memos, SearchBudget::UNLIMITED);
        solver.plain_left = 0;
        let got = solver.value(all_t, all_a).unwrap();
        let want = plain(&problem, all_t, all_a, &mut exact);
        assert_eq!(got.to_bits(), want.to_bits(), "{got} vs {want}");
    }
    assert!(small > 200, "only {small} small nodes checked");
}

/// Games whose actions come in twins: each of four random actions has a
/// copy, and a variant that also rules out the last truth in its first
/// state (a twin at every node without that truth).
fn twin_problems(count: usize, truths: usize) -> Vec<Problem> {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    (0..count)
        .map(|_| {
            let mut rules: Vec<Vec<Vec<usize>>> = Vec::new();
            for _ in 0..4 {
                let action = random_action(&mut next, truths - 1);
                let mut variant = action.clone();
                variant[0].push(truths - 1);
                rules.extend([action.clone(), action, variant]);
            }
            // The last truth needs a related action in the full game.
            rules.push(vec![vec![truths - 1], vec![0]]);
            Problem::from_rule_outs(truths, &rules).unwrap()
        })
        .collect()
}

/// The memo keyed up to twin actions (`twins`), kept from one node to
/// the next so that twins' entries are shared, gives every node the plain
/// recursion's value and first optimal action in instance order.
#[test]
fn twin_keyed_memo_equals_the_plain_recursion() {
    let (mut checked, mut shared) = (0, 0);
    for problem in twin_problems(6, 7) {
        let mut memos = Memos::<u64>::default();
        let all_t: u64 = (1 << problem.truth_count()) - 1;
        let all_a: u64 = (1 << problem.action_count()) - 1;
        let mut exact = std::collections::HashMap::new();
        drop(Solver::<u64, u64>::new(
            &problem,
            &mut memos,
            SearchBudget::UNLIMITED,
        ));
        for truths in [all_t, all_t >> 1, all_t & !2] {
            for actions in (1..=all_a).step_by(13) {
                let mut solver =
                    Solver::<u64, u64>::keeping(&problem, &mut memos, SearchBudget::UNLIMITED);
                solver.twins.start(problem.truth_count());
                let Some(canonical) = solver.reduce(truths, actions) else {
                    continue;
                };
                let keyed =
                    solver
                        .twins
                        .canonical(truths, canonical, &solver.states, &solver.related);
                shared += usize::from(keyed != canonical);
                let (got, action) = solver.decide(truths, actions).unwrap();
                let want = plain(&problem, truths, actions, &mut exact);
                assert_eq!(got.to_bits(), want.to_bits(), "{got} vs {want}");
                let want_action = plain_first_action(&problem, truths, canonical, &mut exact);
                assert_eq!(action, want_action);
                checked += 1;
            }
        }
    }
    assert!(
        checked > 500 && shared > 200,
        "{checked} nodes, {shared} keyed up to twins"
    );
}

/// The path bound read from its tables (`PathSizes` and the step
/// bounds) is the float `path_bound` computes, bit for bit, for every
/// cover, truth count and widest rule-out of instances of up to 16
/// truths.
#[test]
fn tabled_path_bounds_equal_the_formula() {
    use super::bounds::{LAYERS, path_bound};
    let mut checked = 0;
    for truths in 2..=16usize {
        let sizes = PathSizes::new(truths);
        for widest in 0..=truths as u32 {
            for count in 1..=truths as u32 {
                for cover in 1..=LAYERS as u32 {
                    let tabled = sizes.bound(cover, count, widest);
                    assert_eq!(
                        tabled.to_bits(),
                        path_bound(cover, count, widest).to_bits(),
                        "cover {cover}, {count} of {truths} truths, widest {widest}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
}
