//! Fixed-width bitmasks for the search: one bit per instance truth or per
//! instance action.
//!
//! The search is generic over [`Mask`] so that the common case (at most 64
//! truths and 64 actions, e.g. KUMO's 12 x 16) runs on `u64` while larger
//! settings fall back to `u128`. Bit `i` is instance truth (or action) `i`,
//! in instance order, so iterating the set bits in ascending order is
//! iterating in instance order.

use std::hash::Hash;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, Not};

/// An unsigned integer used as a set of small indices.
pub trait Mask:
    Copy
    + Eq
    + Hash
    + Default
    + std::fmt::Debug
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitAndAssign
    + BitOrAssign
    + Not<Output = Self>
    + Send
    + Sync
    + 'static
{
    /// How many indices the mask can hold.
    const BITS: usize;
    /// The empty set.
    const ZERO: Self;

    /// The set `{index}`.
    fn bit(index: usize) -> Self;
    /// Number of elements.
    fn count(self) -> u32;
    /// Smallest element; only meaningful for a non-empty set.
    fn lowest(self) -> usize;
    /// The set without its smallest element.
    fn without_lowest(self) -> Self;
    /// Lossless conversion from the problem's storage width.
    fn from_u128(value: u128) -> Self;
    /// Lossless conversion to the widest mask.
    fn to_u128(self) -> u128;
    /// A well-mixed 64-bit digest, for the memo table.
    fn digest(self) -> u64;
    /// Bits `4 * chunk .. 4 * chunk + 4` as a number in `0..16`; `chunk`
    /// below `BITS / 4`.
    fn nibble(self, chunk: usize) -> usize;

    fn is_zero(self) -> bool {
        self == Self::ZERO
    }

    fn contains(self, index: usize) -> bool {
        !(self & Self::bit(index)).is_zero()
    }

    /// The elements in ascending (instance) order.
    fn ones(self) -> Ones<Self> {
        Ones(self)
    }
}

/// Iterator over the set bits of a mask, lowest first.
pub struct Ones<M>(M);

impl<M: Mask> Iterator for Ones<M> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0.is_zero() {
            return None;
        }
        let index = self.0.lowest();
        self.0 = self.0.without_lowest();
        Some(index)
    }
}

impl Mask for u64 {
    const BITS: usize = 64;
    const ZERO: Self = 0;

    #[inline]
    fn bit(index: usize) -> Self {
        1 << index
    }
    #[inline]
    fn count(self) -> u32 {
        self.count_ones()
    }
    #[inline]
    fn lowest(self) -> usize {
        self.trailing_zeros() as usize
    }
    #[inline]
    fn without_lowest(self) -> Self {
        self & self.wrapping_sub(1)
    }
    #[inline]
    fn from_u128(value: u128) -> Self {
        debug_assert!(value >> 64 == 0);
        value as u64
    }
    #[inline]
    fn to_u128(self) -> u128 {
        u128::from(self)
    }
    #[inline]
    fn digest(self) -> u64 {
        self
    }
    #[inline]
    fn nibble(self, chunk: usize) -> usize {
        ((self >> (4 * chunk)) & 15) as usize
    }
}

impl Mask for u128 {
    const BITS: usize = 128;
    const ZERO: Self = 0;

    #[inline]
    fn bit(index: usize) -> Self {
        1 << index
    }
    #[inline]
    fn count(self) -> u32 {
        self.count_ones()
    }
    #[inline]
    fn lowest(self) -> usize {
        self.trailing_zeros() as usize
    }
    #[inline]
    fn without_lowest(self) -> Self {
        self & self.wrapping_sub(1)
    }
    #[inline]
    fn from_u128(value: u128) -> Self {
        value
    }
    #[inline]
    fn to_u128(self) -> u128 {
        self
    }
    #[inline]
    fn digest(self) -> u64 {
        (self as u64) ^ ((self >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
    #[inline]
    fn nibble(self, chunk: usize) -> usize {
        ((self >> (4 * chunk)) & 15) as usize
    }
}

/// The union of per-index masks over any set of indices, read from tables
/// instead of a loop over the set's bits: for each group of four indices,
/// the union over each of its 16 subsets. A union then costs one load and
/// one `or` per group of four possible indices (three for 12 truths),
/// whatever the set, where a loop over the set costs a few instructions
/// per element and a hard-to-predict exit branch. Building it costs 16
/// unions per group.
pub struct UnionTable<M> {
    /// `groups[16 * g + v]`: the union of `masks[4 * g + i]` for the bits
    /// `i` of `v`.
    groups: Vec<M>,
}

impl<M: Mask> UnionTable<M> {
    /// The table of `masks[i]` for indices `i < masks.len()` (at most
    /// `M::BITS`).
    pub fn new(masks: &[M]) -> Self {
        debug_assert!(masks.len() <= M::BITS);
        let mut groups = vec![M::ZERO; 16 * masks.len().div_ceil(4)];
        for g in 0..masks.len().div_ceil(4) {
            for v in 1..16usize {
                let low = v.trailing_zeros() as usize;
                let index = 4 * g + low;
                let one = masks.get(index).copied().unwrap_or(M::ZERO);
                groups[16 * g + v] = groups[16 * g + (v & (v - 1))] | one;
            }
        }
        UnionTable { groups }
    }

    /// The union of `masks[i]` over the elements `i` of `set` (a subset of
    /// `0..masks.len()`).
    #[inline]
    pub fn union(&self, set: M) -> M {
        let mut union = M::ZERO;
        for (g, table) in self.groups.chunks_exact(16).enumerate() {
            union |= table[set.nibble(g)];
        }
        union
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ones_are_ascending() {
        let m: u64 = 0b1010_0110;
        assert_eq!(m.ones().collect::<Vec<_>>(), vec![1, 2, 5, 7]);
        let w: u128 = (1 << 100) | 1;
        assert_eq!(w.ones().collect::<Vec<_>>(), vec![0, 100]);
        assert!(w.contains(100) && !w.contains(99));
        assert_eq!(w.count(), 2);
    }

    #[test]
    fn union_table_matches_the_loop() {
        let masks: Vec<u64> = (0..13u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(i as u32) & 0xffff)
            .collect();
        let table = UnionTable::new(&masks);
        for set in 0..(1u64 << 13) {
            let looped = set.ones().fold(0, |acc, i| acc | masks[i]);
            assert_eq!(table.union(set), looped, "set {set:#b}");
        }
        let wide: Vec<u128> = (0..100).map(|i| 1u128 << (127 - i)).collect();
        let table = UnionTable::new(&wide);
        let set: u128 = (1 << 99) | (1 << 3) | 1;
        assert_eq!(table.union(set), (1 << 127) | (1 << 124) | (1 << 28));
    }
}
