//! Bounds of node values that need no search: the path bound (the
//! shortest path to a base case, from cover counts and the widest
//! rule-out), the reuse bound where built (see [`super::reuse`]), the
//! greedy rollout (an upper bound: a policy's value in the reference's
//! float operations), and the float sums of children's bounds that bound
//! an action's sum and a node's value (monotonicity of every float
//! operation, see the parent module).
//!
//! The path bound of a child is computed once per child of every
//! expansion; its `ceil((|T| - 1) / widest)` is read from a table
//! ([`PathSizes`]) instead of an integer division, and the bound of its
//! step count from a second one (`STEP_BOUNDS`, filled at compile time by
//! the same float operations): the same integers, so the same floats
//! (checked bit for bit by a unit test). The step table, `domain_sweep`,
//! cachegrind: 0.2 % fewer instructions on car-identification, music,
//! language and theatrical.

use super::{Cand, Kid, Solver};
use crate::search::SearchError;
use crate::search::mask::Mask;
use crate::search::memo::{Bounds, Key};
use crate::search::shares::Shares;

impl<M: Mask, K: Key> Solver<'_, M, K> {
    /// Static bounds of a non-base node: its path bound and its action
    /// count.
    pub(super) fn static_bounds(&self, truths: M, actions: M) -> Bounds {
        Bounds {
            lo: self.static_lo(truths, actions),
            hi: f64::from(actions.count()),
        }
    }

    /// A lower bound of a non-base node from the length of its shortest
    /// path to a base case (see `path_bound`).
    pub(super) fn static_lo(&self, truths: M, actions: M) -> f64 {
        let layers = self.layers;
        let ge = cover_layers(layers, actions.ones().map(|b| self.related[b]));
        let cover_of = |truths: M| {
            (1..layers as u32)
                .find(|&k| !(truths & !ge[k as usize]).is_zero())
                .unwrap_or(layers as u32)
        };
        let path = path_bound(cover_of(truths), truths.count(), self.widest_rule_out);
        match &self.reuse {
            Some(reuse) => path.max(reuse.get(truths, actions, cover_of(truths & reuse.high()))),
            None => path,
        }
    }

    /// The best lower bound of a non-base child `truths` of an action's
    /// use: its path bound (see `path_bound`) or the reuse bound. It takes
    /// the cover layers after the action ([`layers_after`]), the reuse
    /// bound's high truths (`high`, empty without a reuse bound) and the
    /// tracked actions left (`unused`, see `ReuseBound::unused`), each the
    /// same for every child of one action, so callers compute them once
    /// per action or node. Always inlined, with `ReuseBound::get_unused`:
    /// called per child of every listed action, and a build that left it
    /// out of line (the compiler's choice moved with unrelated changes)
    /// took 5 % more instructions (car-identification `-n 40`, one
    /// thread: 7.604 G against 7.211 G inlined). When every truth of
    /// `truths` is high (always, before tracking) the reuse bound's cover
    /// is the path bound's, taken once: `domain_sweep`, cachegrind,
    /// car-identification 60 6.879 G -> 6.713 G instructions, music 200
    /// 6.507 G -> 6.398 G, language 300 2.864 G -> 2.848 G.
    ///
    /// `L` is the solver's cover layers (`self.layers`), a constant so
    /// that the cover loops unroll; callers choose it once per node
    /// (`list`) or per action (`greedy_hi`).
    #[inline(always)]
    pub(super) fn floor_after<const L: usize>(
        &self,
        after: &[M; LAYERS],
        high: M,
        unused: u32,
        truths: M,
        widest: u32,
    ) -> f64 {
        debug_assert_eq!(L, self.layers);
        let cover = cover_in_to::<L, M>(after, truths);
        let path = self.path_sizes.bound(cover, truths.count(), widest);
        match &self.reuse {
            Some(reuse) => {
                // All of `truths` high (always so untracked): the same cover.
                let high_cover = if truths & high == truths {
                    cover
                } else {
                    cover_in_to::<L, M>(after, truths & high)
                };
                path.max(reuse.get_unused(truths, unused, high_cover))
            }
            None => path,
        }
    }

    /// An upper bound of a non-base node's value (canonical `actions`):
    /// the value of the greedy policy that takes, at every node, the
    /// action with the lowest sum of its children's path bounds (base
    /// children counting 0; the order of `expand`, with the instance's
    /// widest rule-out instead of the node's), then the fewest truths left
    /// expected, computed in the reference's float operations with the
    /// memo's upper bound of a child where tighter. By the monotonicity
    /// argument of the module comment it is at least the reference's value.
    /// Each node's rollout is computed once (the `greedy` table) and counts
    /// as one expansion.
    pub(super) fn greedy_hi(&mut self, truths: M, actions: M) -> Result<f64, SearchError> {
        let key = self.memo_key(truths, actions);
        if let Some(b) = self.greedy.get(key) {
            return Ok(b.hi);
        }
        self.count_expansion()?;
        let ge = cover_layers(self.layers, actions.ones().map(|b| self.related[b]));
        let (once, twice) = (ge[0], ge[1]);
        // (action, ΣW, bound of its sum, spread) of the greedy choice.
        let mut best = (usize::MAX, 0u32, f64::INFINITY, f64::INFINITY);
        let high = self.reuse.as_ref().map_or(M::ZERO, |reuse| reuse.high());
        for b in actions.ones() {
            let r = self.related[b];
            let covered_without = twice | (once & !r);
            let after = layers_after(&ge, r, self.layers);
            let left = actions & !M::bit(b);
            let unused = self.reuse.as_ref().map_or(0, |reuse| reuse.unused(left));
            let sum_w: u32 = self.states[b].iter().map(|&x| (truths & !x).count()).sum();
            let shares = Shares::of(sum_w);
            let (mut lo, mut spread) = (0.0f64, 0.0f64);
            for &x in &self.states[b] {
                let t = truths & !x;
                let w = t.count();
                let p = shares.share(w);
                spread += p * f64::from(w);
                if w <= 1 || !(t & !covered_without).is_zero() {
                    continue;
                }
                let widest = self.widest_rule_out;
                lo += p * if self.layers == KUMO_LAYERS {
                    self.floor_after::<KUMO_LAYERS>(&after, high, unused, t, widest)
                } else {
                    self.floor_after::<LAYERS>(&after, high, unused, t, widest)
                };
            }
            if lo < best.2 || (lo == best.2 && spread < best.3) {
                best = (b, sum_w, lo, spread);
            }
        }
        let (b, sum_w, _, _) = best;
        let child_actions = actions & !M::bit(b);
        let shares = Shares::of(sum_w);
        let mut sum = 0.0f64;
        for s in 0..self.states[b].len() {
            let t = truths & !self.states[b][s];
            let Some(a) = self.reduce(t, child_actions) else {
                continue;
            };
            let known = self.known(
                t,
                a,
                Bounds {
                    lo: 1.0,
                    hi: f64::from(a.count()),
                },
            );
            let v = if known.exact() {
                known.hi
            } else {
                known.hi.min(self.greedy_hi(t, a)?)
            };
            sum += v * shares.share(t.count());
        }
        let rollout = (sum + 1.0).min(f64::from(actions.count()));
        if self.memo_entries() >= self.budget.max_memo_entries {
            return Err(self.exceeded());
        }
        self.greedy.put(key, Bounds::point(rollout));
        Ok(rollout)
    }
}

/// Bounds of an action's sum from its children's bounds: the reference's
/// float sum, in state order, of lower and of upper bounds. Base children
/// add `0.0 * P`, which leaves a non-negative sum unchanged.
#[inline]
pub(super) fn sum_bounds<M>(kids: &[Kid<M>]) -> Bounds {
    let mut lo = 0.0f64;
    let mut hi = 0.0f64;
    for kid in kids {
        if !kid.base {
            lo += kid.b.lo * kid.p;
            hi += kid.b.hi * kid.p;
        }
    }
    Bounds { lo, hi }
}

/// Most cover-count layers kept by [`cover_layers`]: as many as the
/// reuse bound's most count levels, which covers up to
/// [`super::reuse::LEVELS`] feed. A solver fills its instance's count
/// cap of them (`Solver::layers`, `reuse::levels_for`): 10 on KUMO's
/// settings, where 16 layers cost 7 % more instructions for nothing
/// (car-identification 12 x 16 `-n 100`, one thread, cachegrind: 10.25 G
/// with 10, 10.96 G with 16 layers and the reuse count still capped at
/// 10; 4.83 G against 4.88 G at `-n 40` with the loops of constant
/// bounds below, chosen once per listing).
pub(super) const LAYERS: usize = super::reuse::LEVELS as usize;

/// Cover layers of an instance of at most KUMO's 16 actions
/// (`reuse::levels_for`).
pub(super) const KUMO_LAYERS: usize = super::reuse::KUMO_LEVELS as usize;

/// `ge[k]`: the truths related to more than `k` of the given actions
/// (`related` masks), for `k <= layers` (10 or [`LAYERS`]; the layers
/// above are empty). Each layer count has its own loop of a constant
/// bound, which the compiler unrolls: a loop to `layers` read at run time
/// took 3 % more instructions than 16 unrolled layers.
#[inline]
pub(super) fn cover_layers<M: Mask>(
    layers: usize,
    related: impl Iterator<Item = M>,
) -> [M; LAYERS + 1] {
    if layers == KUMO_LAYERS {
        cover_layers_to::<KUMO_LAYERS, M>(related)
    } else {
        cover_layers_to::<LAYERS, M>(related)
    }
}

#[inline(always)]
fn cover_layers_to<const L: usize, M: Mask>(related: impl Iterator<Item = M>) -> [M; LAYERS + 1] {
    let mut ge = [M::ZERO; LAYERS + 1];
    for r in related {
        for k in (1..=L).rev() {
            let below = ge[k - 1] & r;
            ge[k] |= below;
        }
        ge[0] |= r;
    }
    ge
}

/// `after[k]`, for `1 <= k < layers` (the rest empty): the truths
/// related to more than `k` of the actions of cover layers `ge` other
/// than the one related to `r` (`after[0]` is unused). They shrink as `k`
/// grows, as the layers do.
#[inline]
pub(super) fn layers_after<M: Mask>(ge: &[M; LAYERS + 1], r: M, layers: usize) -> [M; LAYERS] {
    if layers == KUMO_LAYERS {
        layers_after_to::<KUMO_LAYERS, M>(ge, r)
    } else {
        layers_after_to::<LAYERS, M>(ge, r)
    }
}

#[inline(always)]
fn layers_after_to<const L: usize, M: Mask>(ge: &[M; LAYERS + 1], r: M) -> [M; LAYERS] {
    let mut after = [M::ZERO; LAYERS];
    for k in 1..L {
        after[k] = (ge[k] & !r) | (ge[k + 1] & r);
    }
    after
}

/// The fewest actions relating to one truth of `truths` once the action
/// is used (capped at `L`, the solver's layers), from the layers after it
/// ([`layers_after`]): the first `k` whose layer misses a truth of
/// `truths`. As the layers shrink, the `k` whose layer holds all of
/// `truths` are `1..j`, and the first that does not is `j + 1` (or
/// `L`); so the cover is one more than the number of layers
/// holding `truths`, counted without a branch.
#[inline(always)]
pub(super) fn cover_in_to<const L: usize, M: Mask>(after: &[M; LAYERS], truths: M) -> u32 {
    let mut cover = 1;
    for layer in &after[1..L] {
        cover += u32::from((truths & !*layer).is_zero());
    }
    cover
}

/// A lower bound of the value of a non-base node from the shortest path
/// from it to a base case: `steps = min(cover, ceil((|T| - 1) / widest))`
/// where `cover` is the fewest actions relating to one of its truths (a
/// truth is left uncovered only once all of them are used) and `widest`
/// bounds the truths one state rules out (`|T| <= 1` needs `|T| - 1`
/// ruled out). Every child of such a node is non-base with a path bound
/// one less, and the sum of its `P(s)` is at least `1 - 1e-9` (up to
/// rounding), so by induction `E >= 1 + (steps - 1) * (1 - 1e-6)`, with
/// ample margin for up to a few hundred steps.
pub(super) fn path_bound(cover: u32, truths: u32, widest: u32) -> f64 {
    bound_of_steps(cover, (truths - 1).div_ceil(widest.max(1)))
}

/// [`path_bound`] from its `cover` and `size = ceil((|T| - 1) / widest)`.
#[inline]
fn bound_of_steps(cover: u32, size: u32) -> f64 {
    step_bound(step_count(cover, size))
}

/// The step count of a path bound: the cover, at most `size`, at least 1.
#[inline(always)]
fn step_count(cover: u32, size: u32) -> usize {
    cover.min(size).max(1) as usize
}

/// `1 + (steps - 1) * (1 - 1e-6)`, the bound of `steps >= 1` steps.
const fn step_bound(steps: usize) -> f64 {
    1.0 + (steps - 1) as f64 * (1.0 - 1e-6)
}

/// [`step_bound`] of every step count a cover of at most [`LAYERS`]
/// allows, a table: the same float operations, done at compile time (a
/// per-child conversion, multiplication and addition fewer).
const STEP_BOUNDS: [f64; LAYERS + 1] = {
    let mut bounds = [0.0; LAYERS + 1];
    let mut steps = 1;
    while steps <= LAYERS {
        bounds[steps] = step_bound(steps);
        steps += 1;
    }
    bounds
};

/// `ceil(reach / max(widest, 1))`, the `size` term of [`path_bound`], for
/// every `reach < truths` and `widest <= truths` of an instance of
/// `truths` truths, read from a table: `floor_after` needs it once per
/// child of every expansion, and an integer division there is 10-20 times
/// the latency of the rest of the bound. `(truths + 1)^2` bytes (169 at
/// 12 truths), filled when the solver is built.
pub(super) struct PathSizes {
    stride: usize,
    sizes: Vec<u8>,
}

impl PathSizes {
    pub(super) fn new(truths: usize) -> Self {
        let stride = truths + 1;
        let mut sizes = vec![0u8; stride * stride];
        for widest in 0..stride {
            for reach in 0..stride {
                // At most `MAX_WIDTH` = 128 truths: a `u8` holds it.
                sizes[widest * stride + reach] = reach.div_ceil(widest.max(1)) as u8;
            }
        }
        PathSizes { stride, sizes }
    }

    /// [`path_bound`] of a node of `truths` truths (at least one) whose
    /// cover is `cover`, with `widest` (at most the instance's truths)
    /// bounding the truths one state rules out: the same float.
    #[inline]
    pub(super) fn bound(&self, cover: u32, truths: u32, widest: u32) -> f64 {
        let size = u32::from(self.sizes[widest as usize * self.stride + truths as usize - 1]);
        debug_assert!(cover as usize <= LAYERS);
        let bound = STEP_BOUNDS[step_count(cover, size)];
        debug_assert_eq!(bound.to_bits(), path_bound(cover, truths, widest).to_bits());
        bound
    }
}

/// Bounds of a node's value from its candidates' sum bounds.
pub(super) fn node_bounds(cands: &[Cand]) -> Bounds {
    let lo = cands.iter().map(|c| c.sum.lo).fold(f64::INFINITY, f64::min);
    let hi = cands.iter().map(|c| c.sum.hi).fold(f64::INFINITY, f64::min);
    Bounds {
        lo: lo + 1.0,
        hi: hi + 1.0,
    }
}
