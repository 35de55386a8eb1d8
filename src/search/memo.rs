//! The memo of the search: an open-addressing hash table from a canonical
//! node key `(truths, actions)` to what is proven about the node's value:
//! [`Bounds`] `lo <= E(T, A) <= hi`, both floats of the same arithmetic as
//! the reference (so `lo == hi` is `E` bit for bit). A later search that
//! proves more tightens them; they never loosen.
//!
//! Keys pack the truth mask in the low bits and the action mask above it
//! into the narrowest [`Key`] that holds both (a `u64` for KUMO's 12 x 16
//! and up to 64 truths + actions in all), so a slot is 24 bytes (key and
//! two bounds). Stored nodes never have an empty truth set (nodes
//! with `|T| <= 1` are base cases), so the zero key marks a free slot.
//! Linear probing, power-of-two capacity, at most half full, a
//! multiplicative hash. The table is never iterated, so its layout cannot
//! leak into any output.

use super::solver::reuse_table::ReuseTables;

/// A packed node key.
pub trait Key: Copy + Eq + Send + 'static {
    /// The free-slot marker; no node packs to it.
    const ZERO: Self;
    /// Packs a truth mask and an action mask whose bits start at `shift`.
    fn pack(truths: u128, actions: u128, shift: u32) -> Self;
    /// A well-mixed 64-bit digest.
    fn digest(self) -> u64;
}

impl Key for u64 {
    const ZERO: Self = 0;
    #[inline]
    fn pack(truths: u128, actions: u128, shift: u32) -> Self {
        debug_assert!((truths | actions << shift) >> 64 == 0);
        (truths | actions << shift) as u64
    }
    #[inline]
    fn digest(self) -> u64 {
        self
    }
}

impl Key for u128 {
    const ZERO: Self = 0;
    #[inline]
    fn pack(truths: u128, actions: u128, shift: u32) -> Self {
        truths | actions << shift
    }
    #[inline]
    fn digest(self) -> u64 {
        (self as u64) ^ ((self >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

/// Unpacked keys for instances wider than 128 truths + actions in all.
impl Key for [u128; 2] {
    const ZERO: Self = [0, 0];
    #[inline]
    fn pack(truths: u128, actions: u128, _shift: u32) -> Self {
        [truths, actions]
    }
    #[inline]
    fn digest(self) -> u64 {
        self[0].digest().rotate_left(29) ^ self[1].digest()
    }
}

#[derive(Clone, Copy)]
struct Slot<K> {
    key: K,
    bounds: Bounds,
}

/// What is proven about a node's value: `lo <= E <= hi`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub lo: f64,
    pub hi: f64,
}

impl Bounds {
    /// The value of a base case.
    pub const ZERO: Bounds = Bounds { lo: 0.0, hi: 0.0 };

    /// A value known exactly.
    pub fn point(value: f64) -> Bounds {
        Bounds {
            lo: value,
            hi: value,
        }
    }

    /// The value is known exactly.
    pub fn exact(self) -> bool {
        self.lo == self.hi
    }

    /// Both facts together.
    pub fn meet(self, other: Bounds) -> Bounds {
        Bounds {
            lo: self.lo.max(other.lo),
            hi: self.hi.min(other.hi),
        }
    }
}

pub struct Memo<K> {
    slots: Vec<Slot<K>>,
    len: usize,
    shift: u32,
}

const MIN_BITS: u32 = 10;

impl<K: Key> Memo<K> {
    pub fn new() -> Self {
        Memo {
            slots: vec![Self::EMPTY; 1 << MIN_BITS],
            len: 0,
            shift: 64 - MIN_BITS,
        }
    }

    const EMPTY: Slot<K> = Slot {
        key: K::ZERO,
        bounds: Bounds::ZERO,
    };

    /// Number of stored nodes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Forgets every node. The table keeps about the size the last search
    /// needed (capped), so clearing costs in proportion to the work done.
    pub fn clear(&mut self) {
        const KEEP_BITS: u32 = 16;
        let needed = (2 * self.len).max(1).next_power_of_two().trailing_zeros();
        let bits = needed.clamp(MIN_BITS, KEEP_BITS);
        if 64 - self.shift > bits {
            self.slots = vec![Self::EMPTY; 1 << bits];
            self.shift = 64 - bits;
        } else {
            self.slots.fill(Self::EMPTY);
        }
        self.len = 0;
    }

    #[inline]
    fn home(&self, key: K) -> usize {
        const M: u64 = 0xf135_7aea_2e62_a9c5;
        let h = key.digest().wrapping_mul(M);
        let h = (h ^ (h >> 31)).wrapping_mul(M);
        (h >> self.shift) as usize
    }

    #[inline]
    pub fn get(&self, key: K) -> Option<Bounds> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let slot = &self.slots[i];
            if slot.key == key {
                return Some(slot.bounds);
            }
            if slot.key == K::ZERO {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Stores or overwrites a node; returns whether the key is new.
    pub fn put(&mut self, key: K, bounds: Bounds) -> bool {
        debug_assert!(key != K::ZERO);
        debug_assert!(1.0 <= bounds.lo && bounds.lo <= bounds.hi);
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let slot = &mut self.slots[i];
            if slot.key == K::ZERO {
                *slot = Slot { key, bounds };
                self.len += 1;
                return true;
            }
            if slot.key == key {
                slot.bounds = bounds;
                return false;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let bits = 64 - self.shift + 1;
        let old = std::mem::replace(&mut self.slots, vec![Self::EMPTY; 1 << bits]);
        self.shift = 64 - bits;
        let mask = self.slots.len() - 1;
        for slot in old.into_iter().filter(|s| s.key != K::ZERO) {
            let mut i = self.home(slot.key);
            while self.slots[i].key != K::ZERO {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }
}

/// The tables of one search: the proven bounds ([`Memo`] above) and a
/// cache of greedy rollout values (upper bounds, see the solver), and the
/// storage of the solver's expansion cache, kept here so that the next
/// search on this thread reuses it instead of allocating it again (its
/// type depends on the solver's mask width, so it is held as `Any`; a
/// solver of another width replaces it); and the reuse bound's table
/// buffers, all zero between searches (see the solver's `reuse_table`).
pub struct Memos<K> {
    pub proven: Memo<K>,
    pub greedy: Memo<K>,
    pub recall: Box<dyn std::any::Any + Send>,
    pub reuse_tables: ReuseTables,
}

impl<K: Key> Default for Memos<K> {
    fn default() -> Self {
        Memos {
            proven: Memo::new(),
            greedy: Memo::new(),
            recall: Box::new(()),
            reuse_tables: ReuseTables::default(),
        }
    }
}

impl<K: Key> Default for Memo<K> {
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
        let b = |lo: f64, hi: f64| Bounds { lo, hi };
        for t in 1..5000u128 {
            assert!(memo.put(u64::pack(t, t * 7, 13), b(t as f64, 1e4)));
        }
        assert_eq!(memo.len(), 4999);
        let key = u64::pack(17, 119, 13);
        assert_eq!(memo.get(key), Some(b(17.0, 1e4)));
        assert!(!memo.put(key, b(2.5, 2.5)));
        assert_eq!(memo.get(key), Some(b(2.5, 2.5)));
        assert!(memo.get(key).unwrap().exact());
        assert_eq!(memo.get(u64::pack(17, 118, 13)), None);
        memo.clear();
        assert_eq!(memo.len(), 0);
        assert_eq!(memo.get(key), None);
    }

    #[test]
    fn wide_keys() {
        let mut memo = Memo::<[u128; 2]>::new();
        let key = <[u128; 2]>::pack(1 << 100, 1 << 120, 0);
        let exact = Bounds { lo: 1.5, hi: 1.5 };
        assert!(memo.put(key, exact));
        assert_eq!(memo.get(key), Some(exact));
        assert_eq!(memo.get(<[u128; 2]>::pack(1 << 100, 1 << 121, 0)), None);
    }
}
