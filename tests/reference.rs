//! KUMO's optimal search written plainly: the oracle the integration
//! tests (`search`, `search_exact`, `conformance`) and the timing examples
//! (`examples/domain_sweep.rs`, `examples/search_settings.rs`, through
//! `#[path]`) compare `kumo_gen::search` against.
//!
//! It is KUMO's `OracleSearchEngine._calculate_expected_stpes` as DESIGN.md
//! "Optimal search" states it, and shares no code with `src/search`: an
//! instance is only its rule-out masks (per action, per state, the truths
//! observing that state rules out). `E(T, A)` is 0 when at most one truth
//! is left, or a truth of `T` is related to no action of `A` (this covers
//! `A` empty); otherwise `1 + min` over the actions `a` of `A`, in instance
//! order, of `sum over states x of E(T \ X_x, A \ a) * w_x / (sum w + 1e-9)`
//! with `w_x = |T \ X_x|`; the first strict minimum names the optimal first
//! action. A memo on `(T, A)` and stopping a sum once it reaches the best so
//! far change no bit of the result (the terms are never negative and the
//! minimum is strict), so they are always on.
//!
//! (The solver's unit tests, `src/search/solver/tests.rs`, carry a second
//! plain recursion of their own, since a unit test cannot reach `tests/`.)

use std::collections::HashMap;

/// The recursion over one instance. [`canonical`](Self::canonical) drops
/// the actions related to no truth of `T` from `A` before the memo (they
/// never attain the minimum: DESIGN.md), which keeps deep games within
/// reach; without it every action of `A` is tried, as KUMO does.
pub struct Reference {
    truths: usize,
    /// Per action, per state: the truths that state rules out.
    rules: Vec<Vec<u128>>,
    /// Per action: the truths any of its states rules out.
    related: Vec<u128>,
    memo: HashMap<(u128, u128), (f64, Option<usize>)>,
    canonical: bool,
    /// Nodes expanded so far (memo misses that were not a base case).
    pub nodes: u64,
    max_nodes: u64,
}

#[allow(dead_code)]
impl Reference {
    /// An instance of `truths` truths with these rule-out masks.
    pub fn new(truths: usize, rules: Vec<Vec<u128>>) -> Self {
        assert!(truths <= 128 && rules.len() <= 128, "masks hold 128");
        let related = rules
            .iter()
            .map(|states| states.iter().fold(0, |r, &x| r | x))
            .collect();
        Reference {
            truths,
            rules,
            related,
            memo: HashMap::new(),
            canonical: false,
            nodes: 0,
            max_nodes: u64::MAX,
        }
    }

    /// The same from lists of truth indices per action and state.
    pub fn from_lists(truths: usize, rules: &[Vec<Vec<usize>>]) -> Self {
        let masks = rules
            .iter()
            .map(|states| {
                states
                    .iter()
                    .map(|ruled| ruled.iter().fold(0u128, |m, &t| m | 1 << t))
                    .collect()
            })
            .collect();
        Self::new(truths, masks)
    }

    /// Drop the actions related to no truth of `T` (see the type's doc).
    pub fn canonical(mut self) -> Self {
        self.canonical = true;
        self
    }

    /// Give up (`None` from [`root_value`](Self::root_value)) once more
    /// than `max_nodes` nodes were expanded.
    pub fn with_node_cap(mut self, max_nodes: u64) -> Self {
        self.max_nodes = max_nodes;
        self
    }

    /// The rule-out masks, per action and state.
    pub fn rules(&self) -> &[Vec<u128>] {
        &self.rules
    }

    /// `E` of the whole instance, or `None` over the node cap.
    pub fn root_value(&mut self) -> Option<f64> {
        let (truths, actions) = (all(self.truths), all(self.rules.len()));
        self.value(truths, actions).map(|(e, _)| e)
    }

    /// `(E, first optimal action)` of the whole instance.
    pub fn root(&mut self) -> (f64, Option<usize>) {
        self.solve(all(self.truths), all(self.rules.len()))
    }

    /// `Q(a)` at `(truths, actions)`: the expected steps if action `a` is
    /// taken now and play is optimal after, written out as DESIGN.md
    /// states the recursion's action sum, on this reference's values.
    pub fn q(&mut self, truths: u128, actions: u128, a: usize) -> f64 {
        let rules = self.rules[a].clone();
        let total: u32 = rules.iter().map(|&x| (truths & !x).count_ones()).sum();
        let mut sum = 0.0f64;
        for x in rules {
            let left = truths & !x;
            let p = f64::from(left.count_ones()) / (f64::from(total) + 1e-9);
            sum += self.solve(left, actions & !(1 << a)).0 * p;
        }
        sum + 1.0
    }

    /// `(E(truths, actions), first optimal action in instance order)`.
    pub fn solve(&mut self, truths: u128, actions: u128) -> (f64, Option<usize>) {
        self.value(truths, actions)
            .expect("no node cap was set, so the recursion always ends")
    }

    /// The golden trajectory of DESIGN.md on the observed state of each
    /// action: the actions the optimal policy takes, then its answer (the
    /// lowest truth no observation ruled out and no action left can rule
    /// out, or the last one standing).
    pub fn golden(&mut self, observed: &[usize]) -> (Vec<usize>, Option<usize>) {
        let (mut truths, mut actions) = (all(self.truths), all(self.rules.len()));
        let mut taken = Vec::new();
        loop {
            let covered = ones(actions).fold(0, |m, a| m | self.related[a]);
            let uncovered = truths & !covered;
            if truths.count_ones() <= 1 || uncovered != 0 {
                let pick = if uncovered != 0 { uncovered } else { truths };
                let answer = (pick != 0).then(|| pick.trailing_zeros() as usize);
                return (taken, answer);
            }
            let a = self.solve(truths, actions).1.expect("a non-base node acts");
            taken.push(a);
            truths &= !self.rules[a][observed[a]];
            actions &= !(1 << a);
        }
    }

    fn value(&mut self, truths: u128, actions: u128) -> Option<(f64, Option<usize>)> {
        if truths.count_ones() <= 1 {
            return Some((0.0, None));
        }
        let covered = ones(actions).fold(0, |m, a| m | self.related[a]);
        if truths & !covered != 0 {
            // A truth related to no action of `A` (this covers `A` empty).
            return Some((0.0, None));
        }
        let actions = if self.canonical {
            ones(actions)
                .filter(|&a| self.related[a] & truths != 0)
                .fold(0, |m, a| m | 1 << a)
        } else {
            actions
        };
        if let Some(&v) = self.memo.get(&(truths, actions)) {
            return Some(v);
        }
        self.nodes += 1;
        if self.nodes > self.max_nodes {
            return None;
        }
        let (mut best, mut best_action) = (f64::INFINITY, None);
        for a in ones(actions) {
            let total: u32 = self.rules[a]
                .iter()
                .map(|&x| (truths & !x).count_ones())
                .sum();
            let mut sum = 0.0f64;
            for s in 0..self.rules[a].len() {
                let left = truths & !self.rules[a][s];
                let p = f64::from(left.count_ones()) / (f64::from(total) + 1e-9);
                sum += self.value(left, actions & !(1 << a))?.0 * p;
                if sum >= best {
                    break;
                }
            }
            if sum < best {
                (best, best_action) = (sum, Some(a));
            }
        }
        let v = (best + 1.0, best_action);
        self.memo.insert((truths, actions), v);
        Some(v)
    }
}

/// The set of the first `n` indices.
fn all(n: usize) -> u128 {
    u128::MAX.checked_shr(128 - n as u32).unwrap_or(0)
}

/// The indices of the set bits of `mask`, lowest first.
fn ones(mut mask: u128) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let b = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            b
        })
    })
}
