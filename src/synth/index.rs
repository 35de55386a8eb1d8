//! The line index of a setting: which draw of its stream each line is,
//! so line `i` is drawn in constant time instead of after every earlier
//! line (DESIGN.md "Instance synthesis", the dedup rule).
//!
//! In: a [`Synthesizer`] (domain + setting + `--seed`) and how many lines
//! to cover. Out: a [`LineIndex`]: for lines `0..covered`, the number of
//! duplicate retries of each line's stream, stored only where it is not
//! zero (sorted `(line, retries)` pairs). Line `i` is then
//! [`Synthesizer::candidate`]`(i)` retried that many times: the same
//! instance the dedup replay of lines `0..i` finds, with no replay.
//!
//! Building the index is the replay, done once: lines are drawn in
//! parallel chunks and admitted in index order against a map from a
//! 64-bit fingerprint of each admitted key to its line. Fingerprints
//! only narrow the search: a fingerprint that matches is confirmed by
//! drawing that earlier line again and comparing the full keys, and two
//! different keys with one fingerprint keep the later one in a small
//! exact map, so the index is exact whatever the hash. Extending an
//! index draws its lines again for their fingerprints (cheaper than
//! keeping them: 12 bytes a line) and then draws the new lines; callers
//! extend by doubling, so the total stays linear.
//!
//! The index is bytes ([`LineIndex::to_bytes`], [`LineIndex::from_bytes`])
//! for the cross-process cache (`crate::cache`); this module does no
//! I/O. The bytes start with the caller's identity of the setting and
//! end with a checksum, so a stale or torn file reads as `None`.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

use rayon::prelude::*;

use super::{Instance, Key, SynthError, Synthesizer};

/// Lines drawn per parallel chunk while building.
const CHUNK: u64 = 8192;

/// The bytes' format tag.
const MAGIC: &[u8; 8] = b"KGLIDX01";

/// Which draw of its stream each line `0..covered` of a setting is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineIndex {
    covered: u64,
    /// `(line, retries)` of the lines whose first draw was a duplicate,
    /// ascending by line.
    retried: Vec<(u64, u32)>,
}

impl LineIndex {
    /// Lines `0..covered` are indexed.
    pub fn covered(&self) -> u64 {
        self.covered
    }

    /// Lines whose first draw was a duplicate.
    pub fn retried_lines(&self) -> usize {
        self.retried.len()
    }

    /// Duplicate retries of line `index` (which must be covered).
    pub fn retries(&self, index: u64) -> u32 {
        debug_assert!(index < self.covered);
        match self.retried.binary_search_by_key(&index, |&(i, _)| i) {
            Ok(at) => self.retried[at].1,
            Err(_) => 0,
        }
    }

    /// Instance `index` (covered) of the setting `synth`.
    pub fn instance(&self, synth: &Synthesizer, index: u64) -> Result<Instance, SynthError> {
        let mut candidate = synth.candidate(index)?;
        for _ in 0..self.retries(index) {
            synth.retry(&mut candidate)?;
        }
        Ok(candidate.instance)
    }

    /// Instances `range` (covered), drawn in parallel, in index order.
    pub fn instances(
        &self,
        synth: &Synthesizer,
        range: std::ops::Range<u64>,
    ) -> Result<Vec<Instance>, SynthError> {
        debug_assert!(range.end <= self.covered);
        let indices: Vec<u64> = range.collect();
        indices
            .par_iter()
            .with_min_len(16)
            .map(|&i| self.instance(synth, i))
            .collect()
    }

    /// The index of lines `0..end` of `synth`'s setting, and of lines up
    /// to `ahead` (at least `end`) as far as the setting has distinct
    /// instances, reusing `from` (an index of the same setting) for its
    /// lines. Fails as [`Synthesizer::generate`] of `0..end` does.
    pub fn build(
        synth: &Synthesizer,
        from: &LineIndex,
        end: u64,
        ahead: u64,
    ) -> Result<LineIndex, SynthError> {
        if end <= from.covered {
            return Ok(from.clone());
        }
        let ahead = ahead.max(end);
        let mut seen = Fingerprints::with_capacity(ahead as usize);
        let mut index = from.clone();
        // The covered lines: their keys, from their known draws.
        let mut start = 0;
        while start < from.covered {
            let stop = (start + CHUNK).min(from.covered);
            let indices: Vec<u64> = (start..stop).collect();
            let keys: Vec<Key> = indices
                .par_iter()
                .with_min_len(16)
                .map(|&i| i)
                .map(|i| index.instance(synth, i).map(|instance| Key::of(&instance)))
                .collect::<Result<_, _>>()?;
            for (i, key) in (start..stop).zip(keys) {
                seen.insert(key, i);
            }
            start = stop;
        }
        // The new lines: first draws in parallel, admitted in order. Past
        // `end` a line the setting cannot draw ends the index there.
        let mut start = from.covered;
        while start < ahead {
            let stop = (start + CHUNK).min(ahead);
            let indices: Vec<u64> = (start..stop).collect();
            let candidates = match synth.candidates(&indices) {
                Ok(candidates) => candidates,
                Err(_) if start >= end => break,
                Err(e) => return Err(e),
            };
            for mut candidate in candidates {
                let line = candidate.instance.index;
                let mut retries = 0;
                let admitted = loop {
                    let taken = seen.contains(&candidate.key, |j| {
                        index.instance(synth, j).map(|i| Key::of(&i))
                    });
                    match taken.and_then(|taken| match taken {
                        true => synth.retry(&mut candidate).map(|()| true),
                        false => Ok(false),
                    }) {
                        Ok(true) => retries += 1,
                        Ok(false) => break Ok(()),
                        Err(e) => break Err(e),
                    }
                };
                match admitted {
                    Ok(()) => {}
                    Err(_) if line >= end => return Ok(index),
                    Err(e) => return Err(e),
                }
                if retries > 0 {
                    index.retried.push((line, retries));
                }
                // Line `line` is indexed before any later line is checked:
                // a later fingerprint match on it redraws it correctly.
                index.covered = line + 1;
                seen.insert(candidate.key, line);
            }
            start = stop;
        }
        Ok(index)
    }

    /// The index as bytes under `identity` (the caller's hash of what the
    /// setting's lines depend on).
    pub fn to_bytes(&self, identity: u64) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(40 + 12 * self.retried.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&identity.to_le_bytes());
        bytes.extend_from_slice(&self.covered.to_le_bytes());
        bytes.extend_from_slice(&(self.retried.len() as u64).to_le_bytes());
        for &(line, retries) in &self.retried {
            bytes.extend_from_slice(&line.to_le_bytes());
            bytes.extend_from_slice(&retries.to_le_bytes());
        }
        let sum = crate::fnv::fnv1a(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        bytes
    }

    /// The index [`LineIndex::to_bytes`] wrote under `identity`, or `None`
    /// for bytes of another identity, format or a damaged file.
    pub fn from_bytes(bytes: &[u8], identity: u64) -> Option<LineIndex> {
        let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
        if crate::fnv::fnv1a(body) != u64::from_le_bytes(sum.try_into().ok()?) {
            return None;
        }
        let word = |at: usize| -> Option<u64> {
            Some(u64::from_le_bytes(body.get(at..at + 8)?.try_into().ok()?))
        };
        if body.get(..8)? != MAGIC || word(8)? != identity {
            return None;
        }
        let covered = word(16)?;
        let count = usize::try_from(word(24)?).ok()?;
        let pairs = body.get(32..)?;
        if pairs.len() != count.checked_mul(12)? {
            return None;
        }
        let retried: Vec<(u64, u32)> = pairs
            .chunks_exact(12)
            .map(|p| {
                let line = u64::from_le_bytes(p[..8].try_into().expect("8 bytes"));
                let retries = u32::from_le_bytes(p[8..].try_into().expect("4 bytes"));
                (line, retries)
            })
            .collect();
        let ordered = retried.windows(2).all(|w| w[0].0 < w[1].0);
        let inside = retried.last().is_none_or(|&(line, _)| line < covered);
        (ordered && inside).then_some(LineIndex { covered, retried })
    }
}

impl Synthesizer<'_> {
    /// A fingerprint of the setting's draws as this build makes them: the
    /// hash of the keys of the first draws of streams `0..4`. Files that
    /// store what draws lead to (a line index, a reference sample) record
    /// it, so a change to synthesis makes them stale even without a
    /// version bump.
    pub fn fingerprint(&self) -> Result<u64, SynthError> {
        let mut words = Vec::new();
        for i in 0..4 {
            let key = self.candidate(i)?.key;
            let (truths, valid, pairs) = key.parts();
            for part in [truths, valid, pairs] {
                words.push(part.len() as u32);
                words.extend_from_slice(part);
            }
        }
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        Ok(crate::fnv::fnv1a(&bytes))
    }
}

/// The admitted keys by fingerprint: the line of the first key with each
/// fingerprint, and the keys that share a fingerprint with an earlier,
/// different key (exact).
struct Fingerprints {
    hasher: std::hash::RandomState,
    lines: HashMap<u64, u64>,
    clashes: HashMap<Key, u64>,
}

impl Fingerprints {
    fn with_capacity(n: usize) -> Fingerprints {
        Fingerprints {
            hasher: std::hash::RandomState::new(),
            lines: HashMap::with_capacity(n),
            clashes: HashMap::new(),
        }
    }

    fn fingerprint(&self, key: &Key) -> u64 {
        let mut state = self.hasher.build_hasher();
        key.hash(&mut state);
        std::hash::Hasher::finish(&state)
    }

    fn insert(&mut self, key: Key, line: u64) {
        let fingerprint = self.fingerprint(&key);
        if let std::collections::hash_map::Entry::Vacant(slot) = self.lines.entry(fingerprint) {
            slot.insert(line);
        } else {
            self.clashes.insert(key, line);
        }
    }

    /// Whether `key` was admitted; `key_of` draws an admitted line's key
    /// to confirm a fingerprint match.
    fn contains(
        &self,
        key: &Key,
        key_of: impl Fn(u64) -> Result<Key, SynthError>,
    ) -> Result<bool, SynthError> {
        if self.clashes.contains_key(key) {
            return Ok(true);
        }
        match self.lines.get(&self.fingerprint(key)) {
            Some(&line) => Ok(key_of(line)? == *key),
            None => Ok(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{Dedup, Params, Stats, fixture};

    fn small() -> (crate::domain::Domain, Params) {
        (fixture::random(5, 9, 7, 0.3), Params::new(3, 3, 1))
    }

    #[test]
    fn indexed_lines_equal_the_replayed_lines_and_extend() {
        let (domain, params) = small();
        let synth = Synthesizer::new(&domain, params).unwrap();
        let mut stats = Stats::default();
        let replayed = synth
            .generate(0..400, &mut Dedup::new(), &mut stats)
            .unwrap();
        assert!(stats.duplicates > 20, "the setting must collide often");
        let part = LineIndex::build(&synth, &LineIndex::default(), 150, 150).unwrap();
        let whole = LineIndex::build(&synth, &part, 400, 400).unwrap();
        assert_eq!(
            whole,
            LineIndex::build(&synth, &LineIndex::default(), 400, 400).unwrap()
        );
        assert_eq!(whole.covered(), 400);
        assert!(whole.retried_lines() > 0);
        assert_eq!(whole.instances(&synth, 0..400).unwrap(), replayed);
        assert_eq!(
            part.instances(&synth, 100..150).unwrap(),
            replayed[100..150]
        );
    }

    #[test]
    fn building_ahead_stops_where_the_setting_runs_out() {
        // Two distinct instances in all.
        let domain = fixture::two_truths_one_action();
        let synth = Synthesizer::new(&domain, Params::new(2, 1, 1)).unwrap();
        let index = LineIndex::build(&synth, &LineIndex::default(), 1, 1000).unwrap();
        assert_eq!(index.covered(), 2);
        let err = LineIndex::build(&synth, &index, 3, 1000).unwrap_err();
        assert_eq!(err.kind, crate::synth::ErrorKind::TooFewDistinct);
    }

    #[test]
    fn bytes_round_trip_and_refuse_another_identity_or_damage() {
        let (domain, params) = small();
        let synth = Synthesizer::new(&domain, params).unwrap();
        let index = LineIndex::build(&synth, &LineIndex::default(), 200, 200).unwrap();
        let bytes = index.to_bytes(7);
        assert_eq!(LineIndex::from_bytes(&bytes, 7), Some(index));
        assert_eq!(LineIndex::from_bytes(&bytes, 8), None);
        let mut torn = bytes.clone();
        torn.truncate(bytes.len() - 3);
        assert_eq!(LineIndex::from_bytes(&torn, 7), None);
        let mut flipped = bytes;
        flipped[20] ^= 1;
        assert_eq!(LineIndex::from_bytes(&flipped, 7), None);
        assert_eq!(LineIndex::from_bytes(&[], 7), None);
    }

    #[test]
    fn a_fingerprint_clash_is_settled_by_the_full_key() {
        let (domain, params) = small();
        let synth = Synthesizer::new(&domain, params).unwrap();
        let a = synth.candidate(0).unwrap().key;
        let mut b = synth.candidate(1).unwrap();
        while b.key == a {
            synth.retry(&mut b).unwrap();
        }
        let mut seen = Fingerprints::with_capacity(4);
        seen.insert(a.clone(), 0);
        // A clash: `b` stored under `a`'s fingerprint is an exact entry.
        seen.clashes.insert(b.key.clone(), 1);
        let key_of = |_| Ok(a.clone());
        assert!(seen.contains(&a, key_of).unwrap());
        assert!(seen.contains(&b.key, key_of).unwrap());
        // A fingerprint match whose line has another key is no match.
        let other = Fingerprints {
            hasher: seen.hasher.clone(),
            lines: [(seen.fingerprint(&b.key), 0)].into_iter().collect(),
            clashes: HashMap::new(),
        };
        assert!(!other.contains(&b.key, key_of).unwrap());
    }
}
