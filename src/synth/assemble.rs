//! Synthesis step 3: from a SAT model to a complete instance.
//!
//! In: a [`Sample`], the instance RNG. Out: exactly N_action instance
//! actions in a random presentation order, one observation each, or the
//! [`Failure`] that sends the draw back to sampling.
//!
//! Order of work: solve the selection problem; fill with unused relevant
//! actions (each with a random non-contradictory state), then with
//! irrelevant actions (any state); shuffle; apply the shortcut guard (each
//! valid truth must be related to some instance action, else the book
//! alone names it); sample numeric values last.
//!
//! Invariants of the result: no observation rules out a valid truth; every
//! invalid truth is ruled out by some observation; actions are distinct;
//! a numeric value lies in its state's range and in no other range of its
//! action, rounded to the configured decimals (integral for `int`).

use super::cnf::{Infeasible, Selection};
use super::sample::{Failure, Sample, Tables, below};
use super::values::sample_value;
use super::{Observation, Params, Stats};
use crate::domain::Domain;
use rand_chacha::ChaCha8Rng;

/// Builds the instance's actions and observations from `sample`.
pub fn assemble(
    domain: &Domain,
    tables: &Tables,
    params: &Params,
    sample: &Sample,
    rng: &mut ChaCha8Rng,
    stats: &mut Stats,
) -> Result<(Vec<usize>, Vec<Observation>), Failure> {
    let selection =
        Selection::build(tables, sample, params.actions, rng).map_err(|reason| match reason {
            Infeasible::Uncoverable => Failure::Uncoverable,
            Infeasible::Conflict => Failure::Unsat,
        })?;
    stats.sat_calls += 1;
    let selected = selection.solve().ok_or(Failure::Unsat)?;

    let action_count = tables.action_count();
    let mut used = vec![false; action_count];
    let mut chosen: Vec<(usize, usize)> = Vec::with_capacity(params.actions);
    for &s in &selected {
        let a = tables.state_action[s as usize] as usize;
        used[a] = true;
        chosen.push((a, s as usize));
    }

    // Unused actions that can appear: relevant ones first, then the rest.
    let mut relevant = Vec::new();
    let mut irrelevant = Vec::new();
    for a in (0..action_count).filter(|&a| !used[a]) {
        let states = tables.states_of(a);
        let usable = states
            .clone()
            .any(|s| tables.observable[s] && !sample.contradictory(s));
        if !usable {
            continue;
        }
        if states.clone().any(|s| sample.relevant(s)) {
            relevant.push(a);
        } else {
            irrelevant.push(a);
        }
    }
    let need = params.actions - chosen.len();
    if relevant.len() + irrelevant.len() < need {
        return Err(Failure::TooFewActions);
    }
    for pool in [&mut relevant, &mut irrelevant] {
        let take = (params.actions - chosen.len()).min(pool.len());
        for j in 0..take {
            let r = j + below(rng, pool.len() - j);
            pool.swap(j, r);
            let a = pool[j];
            chosen.push((a, random_usable_state(tables, sample, a, rng)));
        }
    }
    for i in (1..chosen.len()).rev() {
        chosen.swap(i, below(rng, i + 1));
    }

    if !params.allow_shortcuts {
        for v in sample.valid_truths() {
            let related = chosen
                .iter()
                .any(|&(a, _)| domain.actions[a].related.contains(v as usize));
            if !related {
                return Err(Failure::Shortcut);
            }
        }
    }

    let mut actions = Vec::with_capacity(chosen.len());
    let mut observations = Vec::with_capacity(chosen.len());
    for (a, s) in chosen {
        let first = tables.action_first[a] as usize;
        let value = tables.ranges[s].map(|_| sample_value(tables, s, rng));
        actions.push(a);
        observations.push(Observation {
            state: s - first,
            value,
        });
    }
    Ok((actions, observations))
}

/// A uniformly random observable, non-contradictory state of action `a`.
fn random_usable_state(tables: &Tables, sample: &Sample, a: usize, rng: &mut ChaCha8Rng) -> usize {
    let usable = |s: &usize| tables.observable[*s] && !sample.contradictory(*s);
    let count = tables.states_of(a).filter(usable).count();
    let pick = below(rng, count);
    tables
        .states_of(a)
        .filter(usable)
        .nth(pick)
        .expect("pick < count")
}
