//! The fixed reference sample of a setting and the percentile of an
//! instance's exact expected steps within it (DESIGN.md "Outputs").
//!
//! In: a compiled domain and the [`Params`] of a setting. Out: a
//! [`Reference`]: the first draws of streams `0..REFERENCE_SIZE` of the
//! setting under the fixed seed [`REFERENCE_SEED`] (not the dataset's
//! `--seed`: every dataset of a setting is measured against the same
//! sample), each labelled under the default search budget, and
//! [`Reference::percentile`].
//!
//! The percentile of expected steps `x` is
//! `100 * (below + equal / 2) / REFERENCE_SIZE`, where `below` counts the
//! sample's labelled instances with expected steps strictly below `x` and
//! `equal` those exactly equal (the same `f64`). Sample instances the
//! budget leaves unlabelled (only under `--exact-only`-style budgets)
//! count as harder than every labelled one. Settings of more than 16
//! actions label their sample under a small node budget
//! ([`reference_budget`]): there the sample's values are exact or
//! certified upper bounds, and so is the line's value placed against it. With a sample of 256 the value is a multiple of 100/512, exact in
//! binary, so it prints the same everywhere.
//!
//! The sample takes first draws without dedup (a duplicate draw weighs as
//! the draw distribution does), depends on neither `-n`, `--seed`,
//! `--search-budget` nor the thread count, and is computed once per
//! process and setting and once per cache directory, or shipped with the
//! binary for the shipped domains' common settings ([`Reference::cached`],
//! `super::stored`).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::domain::Domain;
use crate::search::{KUMO_MAX_ACTIONS, SearchBudget, optimal_for_instance};
use crate::synth::{Params, SynthError, Synthesizer};

/// Instances in a setting's reference sample.
pub const REFERENCE_SIZE: u64 = 256;

/// The `--seed` the reference sample is drawn with (FNV-1a 64 of
/// `kumo-gen/difficulty-reference/v1`, fixed).
pub const REFERENCE_SEED: u64 = 0xdda1_705c_5fb5_c852;

/// The reference sample of one setting.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// Expected steps of the labelled sample instances, ascending.
    pub expected: Vec<f64>,
    /// Golden lengths of the labelled sample instances, ascending.
    pub golden: Vec<usize>,
    /// Sample instances over the default budget.
    pub unlabelled: u64,
    /// `(expected steps, golden length)` of each labelled sample instance,
    /// in stream order.
    pub labelled: Vec<(f64, usize)>,
    /// The label of each stream `0..REFERENCE_SIZE` (`None`: over the
    /// default budget).
    pub streams: Vec<Option<(f64, usize)>>,
    /// The node budget each instance was searched under where it is not
    /// the default ([`reference_budget`]).
    pub search_nodes: Option<u64>,
}

/// The node budget of each reference-sample instance of a setting of
/// more than [`KUMO_MAX_ACTIONS`] actions: its labels are certified past
/// it, and the sample then ranks upper bounds (see [`reference_budget`]).
pub const FRONTIER_REFERENCE_NODES: u64 = 5_000;

/// The search budget the reference sample of setting `params` is
/// labelled under: the default (every sample label exact, as every
/// shipped 4x6 and 12x16 sample is) up to [`KUMO_MAX_ACTIONS`] actions;
/// beyond, [`FRONTIER_REFERENCE_NODES`] node expansions per instance, each
/// over it certified, so that the sample costs a few seconds before a
/// run's first line instead of 256 hard searches. Such a sample holds the
/// `expected_steps` of its labels, exact or the certified upper bound,
/// and a line is placed against it by its own `expected_steps`
/// (docs/difficulty.md, "What a percentile is measured against").
pub fn reference_budget(params: &Params) -> SearchBudget {
    if params.actions > KUMO_MAX_ACTIONS {
        SearchBudget::new(
            SearchBudget::DEFAULT_MAX_MEMO_ENTRIES,
            FRONTIER_REFERENCE_NODES,
        )
    } else {
        SearchBudget::default()
    }
}

/// The setting `params` with the reference sample's seed.
pub fn reference_params(params: &Params) -> Params {
    Params {
        seed: REFERENCE_SEED,
        ..params.clone()
    }
}

/// What the manifest records of a reference sample: enough to name it
/// and to check a percentile against it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReferenceInfo {
    /// The `--seed` the sample was drawn with.
    pub seed: u64,
    /// Instances in the sample (streams `0..size`, first draws).
    pub size: u64,
    /// Of those, instances the default search budget left unlabelled
    /// (counted as harder than every labelled one).
    pub unlabelled: u64,
    /// FNV-1a 64 of the sorted expected steps (little-endian `f64` bits).
    pub digest: String,
    /// Expected steps at the 0, 10, 25, 50, 75, 90 and 100th percentile
    /// of the labelled sample (nearest rank).
    pub expected_quantiles: Vec<f64>,
    /// Shortest and longest golden length in the sample.
    pub golden_range: [usize; 2],
    /// The node budget of each sample instance's search where it is not
    /// the default (settings of more than 16 actions: labels past it are
    /// certified upper bounds, see [`reference_budget`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_nodes: Option<u64>,
}

/// The percentiles [`ReferenceInfo::expected_quantiles`] lists.
pub const QUANTILES: [u32; 7] = [0, 10, 25, 50, 75, 90, 100];

impl Reference {
    /// Draws and labels the reference sample of the setting `params`
    /// (its `--seed` is ignored) in parallel on the current rayon pool.
    pub fn sample(domain: &Domain, params: &Params) -> Result<Reference, SynthError> {
        let synth = Synthesizer::new(domain, reference_params(params))?;
        let indices: Vec<u64> = (0..REFERENCE_SIZE).collect();
        let candidates = synth.candidates(&indices)?;
        let budget = reference_budget(params);
        let streams: Vec<Option<(f64, usize)>> = candidates
            .par_iter()
            .with_min_len(1)
            .map(|c| {
                optimal_for_instance(domain, &c.instance, budget)
                    .ok()
                    .map(|l| (l.expected_steps, l.golden_actions.len()))
            })
            .collect();
        Ok(Reference::from_streams(streams).labelled_under(params))
    }

    /// This sample, recording the budget its setting's instances are
    /// searched under ([`reference_budget`]).
    pub fn labelled_under(mut self, params: &Params) -> Reference {
        let budget = reference_budget(params);
        self.search_nodes = (!budget.scale_nodes).then_some(budget.max_nodes);
        self
    }

    /// The sample whose stream `i` has the label `streams[i]` (`None`:
    /// over the default budget).
    pub fn from_streams(streams: Vec<Option<(f64, usize)>>) -> Reference {
        let labelled: Vec<(f64, usize)> = streams.iter().flatten().copied().collect();
        let mut expected: Vec<f64> = labelled.iter().map(|l| l.0).collect();
        let mut golden: Vec<usize> = labelled.iter().map(|l| l.1).collect();
        expected.sort_by(f64::total_cmp);
        golden.sort_unstable();
        let unlabelled = streams.len() as u64 - expected.len() as u64;
        Reference {
            expected,
            golden,
            unlabelled,
            labelled,
            streams,
            search_nodes: None,
        }
    }

    /// The percentile (0 to 100) of `expected_steps` in the sample: the
    /// share strictly below plus half the share exactly equal.
    pub fn percentile(&self, expected_steps: f64) -> f64 {
        let below = self.expected.partition_point(|&v| v < expected_steps);
        let not_above = self.expected.partition_point(|&v| v <= expected_steps);
        let equal = not_above - below;
        100.0 * (2 * below + equal) as f64 / (2 * REFERENCE_SIZE) as f64
    }

    /// The range of expected steps and golden lengths the labelled sample
    /// reaches, for messages: `(min, max)` of each.
    pub fn reach(&self) -> Option<((f64, f64), (usize, usize))> {
        Some((
            (*self.expected.first()?, *self.expected.last()?),
            (*self.golden.first()?, *self.golden.last()?),
        ))
    }

    /// What the manifest records.
    pub fn info(&self) -> ReferenceInfo {
        let mut bytes = Vec::with_capacity(8 * self.expected.len());
        for v in &self.expected {
            bytes.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        let expected_quantiles = if self.expected.is_empty() {
            Vec::new()
        } else {
            let last = self.expected.len() - 1;
            QUANTILES
                .iter()
                .map(|&q| self.expected[(q as usize * last).div_ceil(100)])
                .collect()
        };
        ReferenceInfo {
            seed: REFERENCE_SEED,
            size: REFERENCE_SIZE,
            unlabelled: self.unlabelled,
            digest: crate::fnv::fnv1a_hex(&bytes),
            expected_quantiles,
            golden_range: [
                self.golden.first().copied().unwrap_or(0),
                self.golden.last().copied().unwrap_or(0),
            ],
            search_nodes: self.search_nodes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_counts_below_and_half_the_ties() {
        let mut expected = vec![1.0; 64];
        expected.extend(vec![2.0; 128]);
        expected.extend(vec![3.0; 60]);
        let mut streams: Vec<Option<(f64, usize)>> =
            expected.iter().map(|&e| Some((e, 1))).collect();
        streams.extend([None; 4]);
        let reference = Reference::from_streams(streams);
        assert_eq!(reference.percentile(0.5), 0.0);
        assert_eq!(reference.percentile(1.0), 12.5);
        assert_eq!(reference.percentile(1.5), 25.0);
        assert_eq!(reference.percentile(2.0), 50.0);
        assert_eq!(reference.percentile(3.0), 100.0 * (192.0 + 30.0) / 256.0);
        // The unlabelled four are above everything labelled.
        assert_eq!(reference.percentile(9.0), 100.0 * 252.0 / 256.0);
        assert_eq!(reference.info().expected_quantiles[3], 2.0);
    }

    #[test]
    fn the_reference_seed_is_the_hash_of_its_name() {
        let hash = crate::fnv::fnv1a(b"kumo-gen/difficulty-reference/v1");
        assert_eq!(REFERENCE_SEED, hash);
    }

    #[test]
    fn the_sample_ignores_the_dataset_seed_and_threads() {
        let (domain, _) = crate::domain::Registry::new(None).load("medical").unwrap();
        let mut params = Params::new(4, 6, 1);
        let pool = |n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
        };
        let one = pool(1).install(|| Reference::sample(&domain, &params).unwrap());
        params.seed = 99;
        let two = pool(2).install(|| Reference::sample(&domain, &params).unwrap());
        assert_eq!(one, two);
        assert_eq!(one.expected.len() as u64 + one.unlabelled, REFERENCE_SIZE);
        assert!(one.expected.first() < one.expected.last());
    }
}
