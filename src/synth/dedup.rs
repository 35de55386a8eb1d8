//! Synthesis step 4: canonical keys and duplicate detection.
//!
//! In: instances. Out: a [`Key`] per instance and a [`Dedup`] set.
//! Two instances are duplicates when their canonical keys are equal: the
//! sorted truths, the sorted valid truths, and the observed state of each
//! action in sorted action order (DESIGN.md step 7). Presentation order
//! and numeric values are not part of the key.
//!
//! The set is a hash set (`O(1)` per lookup); its iteration order is never
//! used, so the hasher's per-process seed cannot reach the output.

use super::Instance;
use std::collections::HashSet;

/// The canonical key of an instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(Box<[u32]>);

impl Key {
    /// The key of `instance`.
    pub fn of(instance: &Instance) -> Key {
        let pairs = instance
            .actions
            .iter()
            .zip(&instance.observations)
            .map(|(&a, o)| (a, o.state));
        Key::from_parts(&instance.truths, &instance.valid, pairs)
    }

    /// The key of truths, valid truths and `(action, state)` pairs, each in
    /// any order.
    pub fn from_parts(
        truths: &[usize],
        valid: &[usize],
        observations: impl IntoIterator<Item = (usize, usize)>,
    ) -> Key {
        let mut pairs: Vec<(usize, usize)> = observations.into_iter().collect();
        pairs.sort_unstable();
        let mut truths = truths.to_vec();
        truths.sort_unstable();
        let mut valid = valid.to_vec();
        valid.sort_unstable();
        let mut key = Vec::with_capacity(3 + truths.len() + valid.len() + 2 * pairs.len());
        key.push(truths.len() as u32);
        key.extend(truths.iter().map(|&t| t as u32));
        key.push(valid.len() as u32);
        key.extend(valid.iter().map(|&t| t as u32));
        key.push(pairs.len() as u32);
        for (a, s) in pairs {
            key.push(a as u32);
            key.push(s as u32);
        }
        Key(key.into_boxed_slice())
    }
}

/// The keys of the instances admitted so far.
#[derive(Clone, Debug, Default)]
pub struct Dedup {
    seen: HashSet<Key>,
}

impl Dedup {
    pub fn new() -> Dedup {
        Dedup::default()
    }

    pub fn contains(&self, key: &Key) -> bool {
        self.seen.contains(key)
    }

    /// Records `key`; `false` if it was already there.
    pub fn insert(&mut self, key: Key) -> bool {
        self.seen.insert(key)
    }

    pub fn len(&self) -> usize {
        self.seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_ignores_presentation_order() {
        let a = Key::from_parts(&[3, 1, 2], &[2], [(5, 0), (1, 1)]);
        let b = Key::from_parts(&[1, 2, 3], &[2], [(1, 1), (5, 0)]);
        assert_eq!(a, b);
        assert_ne!(a, Key::from_parts(&[1, 2, 3], &[3], [(1, 1), (5, 0)]));
        assert_ne!(a, Key::from_parts(&[1, 2, 3], &[2], [(1, 0), (5, 0)]));
        let mut seen = Dedup::new();
        assert!(seen.insert(a.clone()));
        assert!(!seen.insert(b));
        assert!(seen.contains(&a));
    }
}
