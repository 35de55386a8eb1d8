//! A small, fixed instance sampler for benchmarks (not the generator):
//! sample truths, pick one valid, cover every invalid truth with randomly
//! chosen non-contradictory states (as SAT synthesis would), fill up with
//! other actions, and shuffle. Deterministic in `seed`.

use kumo_gen::domain::Domain;
use rand::seq::SliceRandom;
use rand::seq::index::sample as sample_indices;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One sampled instance: domain indices in instance order.
pub struct Sampled {
    pub truths: Vec<usize>,
    pub actions: Vec<usize>,
    /// Observed state per instance action.
    pub observed: Vec<usize>,
    pub valid: usize,
}

/// Samples an instance with `n_truths` truths and `n_actions` actions.
pub fn sample(domain: &Domain, n_truths: usize, n_actions: usize, seed: u64) -> Sampled {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    loop {
        let truths: Vec<usize> = sample_indices(&mut rng, domain.truths.len(), n_truths).into_vec();
        let valid = truths[rng.random_range(0..n_truths)];
        let allowed = |a: usize| -> Vec<usize> {
            (0..domain.actions[a].states.len())
                .filter(|&s| !domain.actions[a].states[s].rules_out.contains(valid))
                .collect()
        };
        let mut order: Vec<usize> = (0..domain.actions.len()).collect();
        order.shuffle(&mut rng);
        let mut uncovered: Vec<usize> = truths.iter().copied().filter(|&t| t != valid).collect();
        let mut chosen: Vec<(usize, usize)> = Vec::new();
        for &a in &order {
            if uncovered.is_empty() {
                break;
            }
            let useful: Vec<usize> = allowed(a)
                .into_iter()
                .filter(|&s| {
                    uncovered
                        .iter()
                        .any(|&t| domain.actions[a].states[s].rules_out.contains(t))
                })
                .collect();
            if useful.is_empty() {
                continue;
            }
            let s = useful[rng.random_range(0..useful.len())];
            uncovered.retain(|&t| !domain.actions[a].states[s].rules_out.contains(t));
            chosen.push((a, s));
        }
        if !uncovered.is_empty() || chosen.len() > n_actions {
            continue;
        }
        let relevant = |a: usize| {
            truths
                .iter()
                .any(|&t| domain.actions[a].related.contains(t))
        };
        let rest: Vec<usize> = order
            .iter()
            .copied()
            .filter(|a| !chosen.iter().any(|c| c.0 == *a))
            .collect();
        let (rel, irr): (Vec<usize>, Vec<usize>) = rest.into_iter().partition(|&a| relevant(a));
        for a in rel.into_iter().chain(irr) {
            if chosen.len() == n_actions {
                break;
            }
            let ok = allowed(a);
            chosen.push((a, ok[rng.random_range(0..ok.len())]));
        }
        if chosen.len() < n_actions {
            panic!("domain `{}` has too few actions", domain.name);
        }
        chosen.shuffle(&mut rng);
        let mut truths = truths;
        truths.shuffle(&mut rng);
        return Sampled {
            truths,
            actions: chosen.iter().map(|c| c.0).collect(),
            observed: chosen.iter().map(|c| c.1).collect(),
            valid,
        };
    }
}
