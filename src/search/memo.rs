//! The memo of the search: an open-addressing hash table from a canonical
//! node key `(truths, actions)` to the node's value.
//!
//! A value is either exact (`E(T, A)` bit for bit) or a proven lower bound
//! (`value <= E(T, A)`), left by a search that was cut off at a threshold;
//! a later search that needs more overwrites it. Keys never have an empty
//! truth set (nodes with `|T| <= 1` are base cases and never stored), so a
//! zero truth mask marks a free slot. Linear probing, power-of-two
//! capacity, at most half full; a multiplicative (Fx-style) hash. The
//! table is never iterated, so its layout cannot leak into any output.

use super::mask::Mask;

#[derive(Clone, Copy)]
struct Slot<M> {
    truths: M,
    actions: M,
    value: f64,
    exact: bool,
}

/// What the memo knows about a node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Known {
    Exact(f64),
    AtLeast(f64),
}

pub struct Memo<M> {
    slots: Vec<Slot<M>>,
    len: usize,
    shift: u32,
}

const MIN_BITS: u32 = 10;

impl<M: Mask> Memo<M> {
    pub fn new() -> Self {
        Memo {
            slots: vec![Self::EMPTY; 1 << MIN_BITS],
            len: 0,
            shift: 64 - MIN_BITS,
        }
    }

    const EMPTY: Slot<M> = Slot {
        truths: M::ZERO,
        actions: M::ZERO,
        value: 0.0,
        exact: false,
    };

    /// Number of stored nodes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Forgets every node, keeping a moderate allocation for reuse.
    pub fn clear(&mut self) {
        const KEEP_BITS: u32 = 16;
        if self.slots.len() > 1 << KEEP_BITS {
            self.slots = vec![Self::EMPTY; 1 << KEEP_BITS];
            self.shift = 64 - KEEP_BITS;
        } else {
            self.slots.fill(Self::EMPTY);
        }
        self.len = 0;
    }

    #[inline]
    fn home(&self, truths: M, actions: M) -> usize {
        const K: u64 = 0xf135_7aea_2e62_a9c5;
        let h = (truths.digest().rotate_left(26) ^ actions.digest()).wrapping_mul(K);
        let h = (h ^ (h >> 29)).wrapping_mul(K);
        (h >> self.shift) as usize
    }

    #[inline]
    pub fn get(&self, truths: M, actions: M) -> Option<Known> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(truths, actions);
        loop {
            let slot = &self.slots[i];
            if slot.truths == truths && slot.actions == actions {
                return Some(if slot.exact {
                    Known::Exact(slot.value)
                } else {
                    Known::AtLeast(slot.value)
                });
            }
            if slot.truths.is_zero() {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Stores or overwrites a node; returns whether the key is new.
    pub fn put(&mut self, truths: M, actions: M, known: Known) -> bool {
        debug_assert!(!truths.is_zero());
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let (value, exact) = match known {
            Known::Exact(v) => (v, true),
            Known::AtLeast(v) => (v, false),
        };
        let mask = self.slots.len() - 1;
        let mut i = self.home(truths, actions);
        loop {
            let slot = &mut self.slots[i];
            if slot.truths.is_zero() {
                *slot = Slot {
                    truths,
                    actions,
                    value,
                    exact,
                };
                self.len += 1;
                return true;
            }
            if slot.truths == truths && slot.actions == actions {
                slot.value = value;
                slot.exact = exact;
                return false;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let old = std::mem::replace(&mut self.slots, vec![Self::EMPTY; 0]);
        let bits = 64 - self.shift + 1;
        self.slots = vec![Self::EMPTY; 1 << bits];
        self.shift = 64 - bits;
        let mask = self.slots.len() - 1;
        for slot in old.into_iter().filter(|s| !s.truths.is_zero()) {
            let mut i = self.home(slot.truths, slot.actions);
            while !self.slots[i].truths.is_zero() {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }

    /// Bytes held by the table.
    pub fn bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot<M>>()
    }
}

impl<M: Mask> Default for Memo<M> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_get_overwrite_and_grow() {
        let mut memo = Memo::<u64>::new();
        for t in 1..5000u64 {
            assert!(memo.put(t, t * 7, Known::AtLeast(t as f64)));
        }
        assert_eq!(memo.len(), 4999);
        assert_eq!(memo.get(17, 119), Some(Known::AtLeast(17.0)));
        assert!(!memo.put(17, 119, Known::Exact(2.5)));
        assert_eq!(memo.get(17, 119), Some(Known::Exact(2.5)));
        assert_eq!(memo.get(17, 118), None);
        memo.clear();
        assert_eq!(memo.len(), 0);
        assert_eq!(memo.get(17, 119), None);
    }
}
