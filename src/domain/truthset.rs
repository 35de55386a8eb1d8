//! `TruthSet`: a fixed-width bitset over the truths of one domain.
//!
//! Every rule-out set of a compiled [`Domain`](super::Domain) is a `TruthSet`
//! indexed by truth position in the domain file, so later stages test
//! membership, intersect and count without touching strings. Iteration is in
//! ascending index order, which is the domain file's order.

use std::fmt;

/// A set of truth indices `0..capacity`, stored as 64-bit words.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TruthSet {
    words: Vec<u64>,
}

impl TruthSet {
    /// The empty set able to hold indices `0..capacity`.
    pub fn with_capacity(capacity: usize) -> Self {
        TruthSet {
            words: vec![0; capacity.div_ceil(64)],
        }
    }

    /// The set built from `indices`, able to hold `0..capacity`.
    pub fn from_indices(capacity: usize, indices: impl IntoIterator<Item = usize>) -> Self {
        let mut set = TruthSet::with_capacity(capacity);
        for index in indices {
            set.insert(index);
        }
        set
    }

    /// Adds `index`; the set grows when `index` is beyond its capacity.
    pub fn insert(&mut self, index: usize) {
        let word = index / 64;
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        self.words[word] |= 1 << (index % 64);
    }

    /// Removes `index` if present.
    pub fn remove(&mut self, index: usize) {
        if let Some(word) = self.words.get_mut(index / 64) {
            *word &= !(1 << (index % 64));
        }
    }

    pub fn contains(&self, index: usize) -> bool {
        self.words
            .get(index / 64)
            .is_some_and(|word| word & (1 << (index % 64)) != 0)
    }

    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Whether the two sets share an element.
    pub fn intersects(&self, other: &TruthSet) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    /// In-place union.
    pub fn union_with(&mut self, other: &TruthSet) {
        if other.words.len() > self.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// The elements in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(w * 64 + bit)
            })
        })
    }
}

impl fmt::Debug for TruthSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_remove_iterate_across_words() {
        let mut set = TruthSet::with_capacity(130);
        for i in [0, 63, 64, 129] {
            set.insert(i);
        }
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![0, 63, 64, 129]);
        assert_eq!(set.len(), 4);
        set.remove(64);
        assert!(!set.contains(64));
        assert!(set.contains(129));
        let other = TruthSet::from_indices(130, [129]);
        assert!(set.intersects(&other));
        assert!(!TruthSet::from_indices(130, [5]).intersects(&other));
    }
}
