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
//!
//! A [`Dedup`] may also carry keys that are [`Taken`] before any instance
//! is admitted (other datasets' under `--exclude`, other parts' under
//! `--split`: `crate::contamination::Exclusion`): a key they hold counts
//! as taken, so an excluded draw is redrawn from its own stream like a
//! duplicate. The trait keeps synthesis below the contamination module,
//! which builds those sets from files.

use super::Instance;
use std::collections::HashSet;
use std::sync::Arc;

/// Keys that count as taken before any instance is admitted.
pub trait Taken: Send + Sync + std::fmt::Debug {
    /// Whether `key` is taken.
    fn excludes(&self, key: &Key) -> bool;
}

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

    /// The sorted truths, the sorted valid truths and the flattened
    /// `(action, state)` pairs sorted by action.
    pub fn parts(&self) -> (&[u32], &[u32], &[u32]) {
        let words = &self.0;
        let truths = words[0] as usize;
        let valid_at = 1 + truths;
        let valid = words[valid_at] as usize;
        let pairs_at = valid_at + 1 + valid;
        (
            &words[1..valid_at],
            &words[valid_at + 1..pairs_at],
            &words[pairs_at + 1..],
        )
    }
}

/// The keys of the instances admitted so far.
#[derive(Clone, Debug, Default)]
pub struct Dedup {
    seen: HashSet<Key>,
    excluded: Option<Arc<dyn Taken>>,
}

impl Dedup {
    pub fn new() -> Dedup {
        Dedup::default()
    }

    /// An empty set that also counts the keys of `excluded` as taken.
    pub fn excluding<T: Taken + 'static>(excluded: Option<Arc<T>>) -> Dedup {
        Dedup {
            seen: HashSet::new(),
            excluded: excluded.map(|e| e as Arc<dyn Taken>),
        }
    }

    /// Whether `key` is taken: admitted before, or excluded.
    pub fn contains(&self, key: &Key) -> bool {
        self.seen.contains(key) || self.excluded.as_ref().is_some_and(|e| e.excludes(key))
    }

    /// Records `key`; `false` (and nothing recorded) if it was taken.
    pub fn insert(&mut self, key: Key) -> bool {
        if self.excluded.as_ref().is_some_and(|e| e.excludes(&key)) {
            return false;
        }
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
        let (truths, valid, pairs) = a.parts();
        assert_eq!(
            (truths, valid, pairs),
            (&[1, 2, 3][..], &[2][..], &[1, 1, 5, 0][..])
        );
    }
}
