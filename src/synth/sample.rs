//! Synthesis step 1: sampling truths and classifying states.
//!
//! In: the domain's incidence [`Tables`] (built once per setting) and an
//! instance RNG. Out: a [`Sample`]: N_truth distinct truths in sampled
//! order, N_valid of them valid, and for every state of the domain the set
//! of sampled truths it rules out, as a bitmask over *sample positions*
//! (bit `j` is `truths[j]`), so that relevance, contradiction and coverage
//! are word operations.
//!
//! Invariants: `truths` are distinct domain indices; the valid positions
//! are distinct and fewer than N_truth; `masks` is `states × words` with
//! no bit at or beyond N_truth.

use super::Params;
use crate::domain::{ActionKind, Domain, StateLabel};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Why a sample was thrown away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Some invalid truth is ruled out by no non-contradictory state.
    Uncoverable,
    /// The solver proved the selection problem UNSAT.
    Unsat,
    /// Fewer than N_action actions can appear without contradiction.
    TooFewActions,
    /// A valid truth is related to no instance action (shortcut guard).
    Shortcut,
}

/// Failure counts of one draw, to name the infeasible parameter.
#[derive(Clone, Copy, Debug, Default)]
pub struct Failures {
    pub uncoverable: u32,
    pub unsat: u32,
    pub too_few_actions: u32,
    pub shortcut: u32,
}

impl Failures {
    pub fn count(&mut self, failure: Failure) {
        match failure {
            Failure::Uncoverable => self.uncoverable += 1,
            Failure::Unsat => self.unsat += 1,
            Failure::TooFewActions => self.too_few_actions += 1,
            Failure::Shortcut => self.shortcut += 1,
        }
    }

    /// The most frequent failure; ties go to the first in declaration
    /// order.
    pub fn dominant(&self) -> Failure {
        let all = [
            (self.unsat, Failure::Unsat),
            (self.uncoverable, Failure::Uncoverable),
            (self.too_few_actions, Failure::TooFewActions),
            (self.shortcut, Failure::Shortcut),
        ];
        let mut best = all[0];
        for entry in all {
            if entry.0 > best.0 {
                best = entry;
            }
        }
        best.1
    }
}

/// A numeric state: its range and whether a value can be observed in it.
#[derive(Clone, Copy, Debug)]
pub struct NumericState {
    pub lo: f64,
    pub hi: f64,
}

/// The domain's incidence, flattened: states are numbered action by action
/// in file order ("flat state ids").
#[derive(Clone, Debug)]
pub struct Tables {
    pub truth_count: usize,
    /// `action_first[a]..action_first[a + 1]` are the flat ids of action `a`.
    pub action_first: Vec<u32>,
    /// The action of each flat state.
    pub state_action: Vec<u32>,
    /// CSR lists: the flat states ruling out truth `t` are
    /// `ruled_by[ruled_by_first[t]..ruled_by_first[t + 1]]`.
    pub ruled_by_first: Vec<u32>,
    pub ruled_by: Vec<u32>,
    /// Whether some value (for numeric states) or the label (for named
    /// states) can be observed: a numeric state whose every rounded value
    /// lies in another range of its action cannot be. Filled by
    /// [`super::values::mark_observable`] (empty after [`Tables::new`]).
    pub observable: Vec<bool>,
    /// Range of each flat state, for numeric actions.
    pub ranges: Vec<Option<NumericState>>,
    pub kinds: Vec<ActionKind>,
    /// `10^decimals`.
    pub scale: f64,
}

impl Tables {
    pub fn new(domain: &Domain, decimals: u32) -> Tables {
        let scale = 10f64.powi(decimals as i32);
        let mut action_first = Vec::with_capacity(domain.actions.len() + 1);
        let mut state_action = Vec::new();
        let mut ranges = Vec::new();
        let mut per_truth: Vec<Vec<u32>> = vec![Vec::new(); domain.truths.len()];
        for (a, action) in domain.actions.iter().enumerate() {
            action_first.push(state_action.len() as u32);
            for state in &action.states {
                let flat = state_action.len() as u32;
                state_action.push(a as u32);
                ranges.push(match state.label {
                    StateLabel::Range { lo, hi } if action.kind.is_numeric() => {
                        Some(NumericState { lo, hi })
                    }
                    _ => None,
                });
                for t in state.rules_out.iter() {
                    if let Some(list) = per_truth.get_mut(t) {
                        list.push(flat);
                    }
                }
            }
        }
        action_first.push(state_action.len() as u32);
        let mut ruled_by_first = Vec::with_capacity(per_truth.len() + 1);
        let mut ruled_by = Vec::new();
        for list in &per_truth {
            ruled_by_first.push(ruled_by.len() as u32);
            ruled_by.extend_from_slice(list);
        }
        ruled_by_first.push(ruled_by.len() as u32);
        let kinds: Vec<ActionKind> = domain.actions.iter().map(|a| a.kind).collect();
        Tables {
            truth_count: domain.truths.len(),
            action_first,
            state_action,
            ruled_by_first,
            ruled_by,
            observable: Vec::new(),
            ranges,
            kinds,
            scale,
        }
    }

    pub fn action_count(&self) -> usize {
        self.action_first.len() - 1
    }

    pub fn states_of(&self, action: usize) -> std::ops::Range<usize> {
        self.action_first[action] as usize..self.action_first[action + 1] as usize
    }

    pub fn ruled_by(&self, truth: usize) -> &[u32] {
        &self.ruled_by[self.ruled_by_first[truth] as usize..self.ruled_by_first[truth + 1] as usize]
    }
}

/// Reusable buffers of one draw.
#[derive(Default)]
pub struct Scratch {
    pool: Vec<u32>,
}

/// One sample of truths with every state classified against it.
#[derive(Clone, Debug)]
pub struct Sample {
    /// Domain indices, in sampled order.
    pub truths: Vec<u32>,
    /// Words per mask: `ceil(N_truth / 64)`.
    pub words: usize,
    /// Bit `j` set: `truths[j]` is valid.
    pub valid: Vec<u64>,
    /// Bit `j` set: `truths[j]` is invalid.
    pub invalid: Vec<u64>,
    /// `masks[s * words..][..words]`: sample positions flat state `s` rules out.
    pub masks: Vec<u64>,
}

/// Uniform integer in `0..n` (n > 0), drawn as `u32` so the stream is the
/// same on every platform.
pub fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    rng.random_range(0..n as u32) as usize
}

impl Sample {
    /// Draws N_truth truths uniformly (partial Fisher–Yates), then N_valid
    /// of them, and classifies every state.
    pub fn draw(
        tables: &Tables,
        params: &Params,
        rng: &mut ChaCha8Rng,
        scratch: &mut Scratch,
    ) -> Sample {
        let universe = tables.truth_count;
        let pool = &mut scratch.pool;
        pool.clear();
        pool.extend(0..universe as u32);
        for j in 0..params.truths {
            let r = j + below(rng, universe - j);
            pool.swap(j, r);
        }
        let truths = pool[..params.truths].to_vec();
        let words = params.truths.div_ceil(64);
        let mut valid = vec![0u64; words];
        pool.clear();
        pool.extend(0..params.truths as u32);
        for j in 0..params.valid {
            let r = j + below(rng, params.truths - j);
            pool.swap(j, r);
            let p = pool[j] as usize;
            valid[p / 64] |= 1 << (p % 64);
        }
        let mut invalid = vec![0u64; words];
        for j in 0..params.truths {
            if valid[j / 64] & (1 << (j % 64)) == 0 {
                invalid[j / 64] |= 1 << (j % 64);
            }
        }
        let mut masks = vec![0u64; tables.state_action.len() * words];
        for (j, &t) in truths.iter().enumerate() {
            for &s in tables.ruled_by(t as usize) {
                masks[s as usize * words + j / 64] |= 1 << (j % 64);
            }
        }
        Sample {
            truths,
            words,
            valid,
            invalid,
            masks,
        }
    }

    pub fn mask(&self, state: usize) -> &[u64] {
        &self.masks[state * self.words..(state + 1) * self.words]
    }

    /// Rules out some sampled truth.
    pub fn relevant(&self, state: usize) -> bool {
        self.mask(state).iter().any(|&w| w != 0)
    }

    /// Rules out a valid truth.
    pub fn contradictory(&self, state: usize) -> bool {
        self.mask(state)
            .iter()
            .zip(&self.valid)
            .any(|(m, v)| m & v != 0)
    }

    /// Whether sample position `j` is set in `mask`.
    pub fn has(mask: &[u64], j: usize) -> bool {
        mask[j / 64] & (1 << (j % 64)) != 0
    }

    /// The valid truths (domain indices) in sampled order.
    pub fn valid_truths(&self) -> impl Iterator<Item = u32> + '_ {
        self.truths
            .iter()
            .enumerate()
            .filter(|&(j, _)| Sample::has(&self.valid, j))
            .map(|(_, &t)| t)
    }

    /// The invalid sample positions.
    pub fn invalid_positions(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.truths.len()).filter(|&j| Sample::has(&self.invalid, j))
    }
}
