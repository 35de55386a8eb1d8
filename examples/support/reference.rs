//! KUMO's optimal search as DESIGN.md states it, for the examples that
//! time the search side by side with an independent solver.

use std::collections::HashMap;

use kumo_gen::search::Problem;

/// KUMO's optimal search written the way DESIGN.md states it, sharing no
/// code with `kumo_gen::search` beyond the instance's rule-out masks: `E`
/// memoised on `(T, A)` with the actions related to no truth of `T`
/// dropped from the key, every action tried in instance order, a sum
/// stopped once it reaches the best so far (exact pruning).
pub struct Reference<'p> {
    problem: &'p Problem,
    /// Truths each action relates to (the union of its states' rule-outs).
    related: Vec<u128>,
    memo: HashMap<(u128, u128), f64>,
    /// Nodes expanded so far.
    pub nodes: u64,
    max_nodes: u64,
}

impl<'p> Reference<'p> {
    pub fn new(problem: &'p Problem, max_nodes: u64) -> Self {
        let related = (0..problem.action_count())
            .map(|a| problem.states(a).iter().fold(0, |r, &x| r | x))
            .collect();
        Reference {
            problem,
            related,
            memo: HashMap::new(),
            nodes: 0,
            max_nodes,
        }
    }

    /// `E` of the whole instance, or `None` over the node cap.
    pub fn root_value(&mut self) -> Option<f64> {
        let all = |n: usize| u128::MAX.checked_shr(128 - n as u32).unwrap_or(0);
        let (truths, actions) = (self.problem.truth_count(), self.problem.action_count());
        self.value(all(truths), all(actions))
    }

    /// `E(truths, actions)`, or `None` once more than `max_nodes` nodes
    /// were expanded.
    fn value(&mut self, truths: u128, actions: u128) -> Option<f64> {
        if truths.count_ones() <= 1 {
            return Some(0.0);
        }
        let (mut kept, mut covered) = (0u128, 0u128);
        for b in ones(actions) {
            let r = self.related[b] & truths;
            if r != 0 {
                kept |= 1 << b;
                covered |= r;
            }
        }
        if covered != truths {
            // A truth related to no action (this covers `A` empty).
            return Some(0.0);
        }
        if let Some(&v) = self.memo.get(&(truths, kept)) {
            return Some(v);
        }
        self.nodes += 1;
        if self.nodes > self.max_nodes {
            return None;
        }
        let mut best = f64::INFINITY;
        for b in ones(kept) {
            let states = self.problem.states(b);
            let total: u32 = states.iter().map(|&x| (truths & !x).count_ones()).sum();
            let mut sum = 0.0f64;
            for &x in states {
                let left = truths & !x;
                let p = f64::from(left.count_ones()) / (f64::from(total) + 1e-9);
                sum += self.value(left, kept & !(1 << b))? * p;
                if sum >= best {
                    break;
                }
            }
            if sum < best {
                best = sum;
            }
        }
        let value = best + 1.0;
        self.memo.insert((truths, kept), value);
        Some(value)
    }
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
