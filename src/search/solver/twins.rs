//! Twin actions: memo keys that name a node up to actions that play
//! alike on its truths.
//!
//! Two actions are *twins* at truths `T` when their states, in state
//! order, keep the same truths of `T`: the same sequence `T \ X_s`. The
//! value of a node `(T, A)` depends only on the multiset of its actions'
//! sequences on `T`, so two nodes of the same truths whose action sets
//! hold as many twins of each kind have the same value bit for bit, and
//! the memo keeps one entry for both (under the *canonical* action set:
//! of each kind of twins, the first ones in instance order, as many as
//! the node holds).
//!
//! Why the value is the same: let `φ` map `A` one to one onto `A'` with
//! each action onto a twin at `T`. At any `T' ⊆ T` the sequences on `T'`
//! are those on `T` intersected with `T'`, so `φ` keeps being such a map
//! below. By induction over the nodes: a base case of one node is one of
//! the other (`|T'| <= 1`; or a truth of `T'` no action relates to, where
//! an action relates to the truths of `T'` some state rules out, which
//! its sequence names); otherwise the reference's minimum runs over
//! actions whose images have the same children truths `T' \ X_s` in the
//! same order, the same weights `W(s)` and `ΣW`, so the same `P(s)`, and
//! children `(T' \ X_s, A \ {a})` and `(T' \ X_s, φ(A) \ {φ(a)})` that
//! are again related by `φ`: equal values, so every float operation is
//! the same and the minimum too. Only values are shared: a node's own
//! listing, its argmin and its tie rule still come from its own actions
//! (the expansion cache keys the real node). The greedy rollouts' table
//! is keyed the same way: a rollout of one twin node is an upper bound of
//! the value they share.
//!
//! The twins of a truth set are found the first time a key of it is
//! asked, and kept for the search (instances of at most [`MAX_TRUTHS`]
//! truths; wider ones keep the plain keys). A search looks for twins only
//! once it has made as many expansions as builds the reuse bound (parent
//! module): on the many small searches, finding them cost more than the
//! entries shared saved (medical 12 x 16, whole process `-n 100`, one
//! thread: 387 M -> 406 M instructions, 10 M of them finding twins).

use std::cell::{Cell, RefCell};

use crate::search::mask::Mask;

/// Widest instance whose keys are taken up to twins, in truths (a dense
/// index of `2^truths` truth sets).
const MAX_TRUTHS: usize = 14;

/// The twins of the truth sets asked so far.
pub(super) struct Twins<M> {
    /// Per truth set: `start << 8 | count` of its kinds in `kinds`, plus
    /// [`FOUND`] once they are found. Empty for wide instances.
    index: Vec<Cell<u32>>,
    tables: RefCell<Tables<M>>,
}

#[derive(Default)]
struct Tables<M> {
    /// Each kind of twins with at least two members, as an action mask.
    kinds: Vec<M>,
    /// Scratch: `(digest of its sequence, action)` of the related actions.
    digests: Vec<(u64, usize)>,
}

/// The index entry of a truth set whose kinds are found.
const FOUND: u32 = 1 << 31;

impl<M: Mask> Twins<M> {
    /// Twins not looked for yet: every key is the plain one until
    /// [`Twins::start`].
    pub(super) fn new() -> Self {
        Twins {
            index: Vec::new(),
            tables: RefCell::new(Tables::default()),
        }
    }

    /// From now on, keys are taken up to twins (in an instance of at most
    /// [`MAX_TRUTHS`] truths). A search may start at any point: an entry
    /// stored under a node's plain key is a fact about that node, whose
    /// action set is then its own canonical set or is never asked again
    /// under that key, so no key ever names two values.
    pub(super) fn start(&mut self, truths: usize) {
        if truths <= MAX_TRUTHS && self.index.is_empty() {
            self.index = (0..1usize << truths).map(|_| Cell::new(0)).collect();
        }
    }

    /// The canonical action set of a node `(truths, actions)` (`actions`
    /// related to `truths`): of each kind of twins at `truths`, the first
    /// members in instance order, as many as `actions` holds.
    #[inline(always)]
    pub(super) fn canonical(&self, truths: M, actions: M, states: &[Vec<M>], related: &[M]) -> M {
        let Some(cell) = self.index.get(truths.to_u128() as usize) else {
            return actions;
        };
        let mut entry = cell.get();
        if entry & FOUND == 0 {
            entry = self.tables.borrow_mut().find(truths, states, related);
            cell.set(entry);
        }
        let count = (entry & 0xff) as usize;
        if count == 0 {
            return actions;
        }
        let start = ((entry & !FOUND) >> 8) as usize;
        canonical_in(&self.tables.borrow().kinds[start..start + count], actions)
    }
}

/// `actions` with each kind's members replaced by its first ones.
#[inline]
fn canonical_in<M: Mask>(kinds: &[M], actions: M) -> M {
    let mut out = actions;
    for &members in kinds {
        let inside = actions & members;
        if inside.is_zero() || inside == members {
            continue;
        }
        let mut rest = members;
        let mut first = M::ZERO;
        for _ in 0..inside.count() {
            first |= M::bit(rest.lowest());
            rest = rest.without_lowest();
        }
        out = (out & !members) | first;
    }
    out
}

impl<M: Mask> Tables<M> {
    /// Appends the kinds of twins (two members or more) among the actions
    /// related to `truths` to `kinds`; returns the index entry.
    #[inline(never)]
    fn find(&mut self, truths: M, states: &[Vec<M>], related: &[M]) -> u32 {
        let start = self.kinds.len();
        self.digests.clear();
        for (a, row) in states.iter().enumerate() {
            if (related[a] & truths).is_zero() {
                continue;
            }
            let digest = row.iter().fold(row.len() as u64, |acc, &x| {
                (acc.rotate_left(11) ^ (truths & !x).digest()).wrapping_mul(0x9e37_79b9_7f4a_7c15)
            });
            self.digests.push((digest, a));
        }
        // Equal sequences have equal digests; equal digests are compared.
        let alike = |a: usize, b: usize| {
            states[a].len() == states[b].len()
                && states[a]
                    .iter()
                    .zip(&states[b])
                    .all(|(&x, &y)| truths & !x == truths & !y)
        };
        let mut placed = M::ZERO;
        for i in 0..self.digests.len() {
            let (digest, a) = self.digests[i];
            if placed.contains(a) {
                continue;
            }
            let mut members = M::bit(a);
            for &(other, b) in &self.digests[i + 1..] {
                if other == digest && !placed.contains(b) && alike(a, b) {
                    members |= M::bit(b);
                }
            }
            placed |= members;
            if members.count() >= 2 {
                self.kinds.push(members);
            }
        }
        let count = self.kinds.len() - start;
        debug_assert!(count < 256 && start < 1 << 23);
        FOUND | (start as u32) << 8 | count as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_keeps_the_first_twins_of_each_kind() {
        // Actions 0..6 over truths 0..3; on truths {0, 1}: 0, 2 and 5 keep
        // {1} then {0}; 1 and 4 keep {0, 1} then {}; 3 is alone.
        let states: Vec<Vec<u64>> = vec![
            vec![0b101, 0b110],
            vec![0b000, 0b011],
            vec![0b001, 0b010],
            vec![0b010, 0b001],
            vec![0b100, 0b111],
            vec![0b001, 0b110],
        ];
        let related: Vec<u64> = states
            .iter()
            .map(|r| r.iter().fold(0, |a, &x| a | x))
            .collect();
        let mut twins = Twins::<u64>::new();
        twins.start(3);
        let t = 0b011;
        let c = |a: u64| twins.canonical(t, a, &states, &related);
        assert_eq!(c(0b10_0000), 0b00_0001);
        assert_eq!(c(0b10_0100), 0b00_0101);
        assert_eq!(c(0b11_1000), 0b00_1011);
        assert_eq!(c(0b10_1100), 0b00_1101);
        assert_eq!(c(0b01_0010), 0b01_0010);
        // Asked again: from the kept kinds.
        assert_eq!(c(0b10_0000), 0b00_0001);
        // Other truths, other kinds: on {0, 2}, 1 and 4 differ.
        assert_eq!(
            twins.canonical(0b101, 0b01_0000, &states, &related),
            0b01_0000
        );
    }
}
