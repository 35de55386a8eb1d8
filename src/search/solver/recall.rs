//! The expansion cache: what `expand` listed for a node (its candidates
//! in static order and their children: truths, `P`, base flags, static
//! floors), kept for the most recently expanded nodes so that a node
//! tested again at another threshold skips the listing.
//!
//! Exact: `expand` is a function of the node `(T, A)`, the problem, and
//! the floors' source, which changes only when the reuse bound is built
//! or starts tracking (the *epoch*: a fresh one for every search, and
//! again whenever `count_expansion` changes the floors' source); the
//! reuse bound's values are a function of the problem alone. An entry is
//! used only for the same key and epoch, so the frame it restores is the
//! one `expand` would build, float for float, and every later step (the
//! children's memo bounds, the tests) runs unchanged: node counts and
//! values are identical.
//!
//! Layout: candidates and children are copied into two rings (written in
//! order, wrapping), and a direct-mapped index from the node key to the
//! ring positions; an entry whose ring span was written over since is
//! recognised by its position and dropped. The rings live in the
//! thread's memos and serve its next search too (entries of an earlier
//! search fail the epoch check). The cache starts only after
//! `RECALL_AFTER` expansions (small searches re-test few nodes and would
//! pay for the allocation). Entries are compact (32 bytes a candidate,
//! 24 a child with 64-bit masks: the frame's 72 and 48 bytes copied
//! whole touched 1.5x the cache lines for no fewer instructions).
//!
//! Measured (cachegrind, domain_sweep 40 instances, same node counts):
//! car-identification 9.67 G -> 7.71 G instructions (-20 %), D1 misses
//! 11.5 M -> 23.4 M; os-kernel 1.29 G -> 1.09 G (-15 %). On
//! car-identification 200 about 45 % of expansions are served from the
//! cache (1.06 M of 2.3 M); 4x the capacity served 55 % but was no
//! faster.

use std::any::Any;

use super::{Cand, Frame, Kid};
use crate::search::mask::Mask;
use crate::search::memo::{Bounds, Key};

/// A candidate as kept: what `expand` set (the duplicate-spotting
/// fields are not needed after it).
#[derive(Clone, Copy)]
struct KeptCand {
    action: u32,
    states: u32,
    spread: f64,
    sum: Bounds,
}

/// A child as kept: a base child is stored with floor `0.0` (a non-base
/// child's floor is at least 1), its upper bound is the node's action
/// count less one, and its actions are unset until `look_up`.
#[derive(Clone, Copy)]
struct KeptKid<M> {
    truths: M,
    p: f64,
    floor: f64,
}

/// Expansions of a search before the cache is allocated.
pub(super) const RECALL_AFTER: u64 = 500;

/// Index slots (direct-mapped).
const INDEX_BITS: u32 = 12;
/// Candidates the ring holds (32 bytes each).
const CAND_RING: usize = 1 << 15;
/// Children the ring holds (24 bytes each with 64-bit masks).
const KID_RING: usize = 1 << 17;

#[derive(Clone, Copy)]
struct Entry<K> {
    key: K,
    epoch: u64,
    cands: u32,
    kids: u32,
    cand_at: u64,
    kid_at: u64,
}

/// See the module doc.
pub(super) struct Recall<M, K> {
    index: Vec<Entry<K>>,
    cands: Vec<KeptCand>,
    kids: Vec<KeptKid<M>>,
    /// Ring positions written so far (never wrapped: `% ring` gives the
    /// slot).
    cand_head: u64,
    kid_head: u64,
    /// The last epoch handed out ([`Recall::next_epoch`]).
    epochs: u64,
}

impl<M: Mask, K: Key> Default for Recall<M, K> {
    fn default() -> Self {
        Recall {
            index: Vec::new(),
            cands: Vec::new(),
            kids: Vec::new(),
            cand_head: 0,
            kid_head: 0,
            epochs: 0,
        }
    }
}

impl<M: Mask, K: Key> Recall<M, K> {
    /// The cache kept in `slot` (a [`crate::search::memo::Memos`]'s), or
    /// a new one there if it holds none of this width: the next search
    /// of the thread reuses the rings instead of allocating and growing
    /// them again (measured: page faults, reallocation and `malloc` were
    /// several per cent of a mid domain's CPU with a cache per search).
    pub(super) fn kept_in(slot: &mut Box<dyn Any + Send>) -> &mut Self {
        if !slot.is::<Self>() {
            *slot = Box::new(Self::default());
        }
        match slot.downcast_mut::<Self>() {
            Some(recall) => recall,
            None => unreachable!("the slot was just given a cache of this type"),
        }
    }

    /// An epoch no entry kept so far has: a search takes one when it
    /// starts and whenever its floors change source, so it never restores
    /// an expansion of another search (another problem, whose node keys
    /// mean other sets) or of older floors. A `u64` never wraps.
    pub(super) fn next_epoch(&mut self) -> u64 {
        self.epochs += 1;
        self.epochs
    }

    #[inline]
    fn slot(key: K) -> usize {
        const MIX: u64 = 0xf135_7aea_2e62_a9c5;
        let h = key.digest().wrapping_mul(MIX);
        ((h ^ (h >> 29)).wrapping_mul(MIX) >> (64 - INDEX_BITS)) as usize
    }

    /// Restores the frame `expand` built for `key` in `epoch` (a node of
    /// `child_hi + 1` actions), if kept.
    #[inline]
    pub(super) fn fetch(&self, key: K, epoch: u64, child_hi: f64, frame: &mut Frame<M>) -> bool {
        let Some(entry) = self.index.get(Self::slot(key)) else {
            return false;
        };
        if entry.key != key
            || entry.epoch != epoch
            || self.cand_head > entry.cand_at + CAND_RING as u64
            || self.kid_head > entry.kid_at + KID_RING as u64
        {
            return false;
        }
        let c = (entry.cand_at % CAND_RING as u64) as usize;
        let k = (entry.kid_at % KID_RING as u64) as usize;
        frame.cands.clear();
        let mut start = 0;
        for kept in &self.cands[c..c + entry.cands as usize] {
            frame.cands.push(Cand {
                action: kept.action as usize,
                sum: kept.sum,
                spread: kept.spread,
                kids: start,
                states: kept.states as usize,
                signature: 0,
                shape: 0,
                looked_up: false,
            });
            start += kept.states as usize;
        }
        frame.kids.clear();
        frame
            .kids
            .extend(self.kids[k..k + entry.kids as usize].iter().map(|kept| {
                let base = kept.floor == 0.0;
                Kid {
                    truths: kept.truths,
                    actions: M::ZERO,
                    p: kept.p,
                    base,
                    b: if base {
                        Bounds::ZERO
                    } else {
                        Bounds {
                            lo: kept.floor,
                            hi: child_hi,
                        }
                    },
                }
            }));
        true
    }

    /// Keeps the frame `expand` just built for `key` in `epoch`.
    pub(super) fn store(&mut self, key: K, epoch: u64, frame: &Frame<M>) {
        if frame.cands.len() > CAND_RING / 4 || frame.kids.len() > KID_RING / 4 {
            return;
        }
        if self.index.is_empty() {
            self.index = vec![
                Entry {
                    key: K::ZERO,
                    epoch: 0,
                    cands: 0,
                    kids: 0,
                    cand_at: 0,
                    kid_at: 0,
                };
                1 << INDEX_BITS
            ];
        }
        // The candidates' children are stored in candidate order, so the
        // frame's `kids` offsets are rebuilt from the state counts.
        let cands = frame.cands.iter().map(|c| KeptCand {
            action: c.action as u32,
            states: c.states as u32,
            spread: c.spread,
            sum: c.sum,
        });
        let cand_at = place(
            &mut self.cands,
            &mut self.cand_head,
            CAND_RING,
            frame.cands.len(),
            cands,
        );
        let kids = frame
            .cands
            .iter()
            .flat_map(|c| &frame.kids[c.kids..c.kids + c.states])
            .map(|kid| KeptKid {
                truths: kid.truths,
                p: kid.p,
                floor: if kid.base { 0.0 } else { kid.b.lo },
            });
        let n_kids = frame.cands.iter().map(|c| c.states).sum();
        let kid_at = place(&mut self.kids, &mut self.kid_head, KID_RING, n_kids, kids);
        self.index[Self::slot(key)] = Entry {
            key,
            epoch,
            cands: frame.cands.len() as u32,
            kids: n_kids as u32,
            cand_at,
            kid_at,
        };
    }
}

/// Writes `src` at the ring's head (skipping to the ring's start when it
/// would not fit before the end) and returns its position.
fn place<T: Copy>(
    ring: &mut Vec<T>,
    head: &mut u64,
    cap: usize,
    n: usize,
    src: impl Iterator<Item = T>,
) -> u64 {
    let mut i = (*head % cap as u64) as usize;
    if i + n > cap {
        *head += (cap - i) as u64;
        i = 0;
    }
    // Writes are in order, so `i <= ring.len()`.
    if ring.len() < i + n {
        ring.truncate(i);
        ring.extend(src);
    } else {
        for (slot, item) in ring[i..i + n].iter_mut().zip(src) {
            *slot = item;
        }
    }
    let at = *head;
    *head += n as u64;
    at
}
