//! Resuming a dataset or shard file: the lines already there are read
//! back, and the manifest's work counters (`resamples`, `unsat_samples`,
//! `sat_calls`, `duplicates_rejected`) are made to cover them, so the
//! counts of a resumed or extended file are those of one uninterrupted
//! run (a pure function of instances `0..n`, DESIGN.md "Outputs").
//!
//! A finished file's entry already counts its lines; any other prefix (a
//! killed run's) is counted by replaying its synthesis, which draws the
//! same instances from the same streams. Synthesis is the cheap half of a
//! run (labelling is not replayed), and every replayed key is checked
//! against the line on disk, so a file that is not this setting's prefix
//! is reported as damage.

use std::path::Path;

use rayon::prelude::*;

use std::sync::Arc;

use super::manifest::{Counts, DatasetEntry, Status};
use super::{OutputError, Plan, files, record};
use crate::contamination::Exclusion;
use crate::domain::Domain;
use crate::synth::{Dedup, Key, Stats};

/// The counts an entry records for its first `lines` instances, if it
/// records exactly those: a finished file of that length.
fn recorded(entry: Option<&DatasetEntry>, lines: u64) -> Option<Stats> {
    let entry = entry?;
    (entry.status == Status::Complete && entry.counts.instances == lines).then(|| {
        let Counts {
            instances,
            resamples,
            unsat_samples,
            sat_calls,
            duplicates_rejected,
            ..
        } = entry.counts;
        Stats {
            instances,
            resamples,
            unsat: unsat_samples,
            sat_calls,
            duplicates: duplicates_rejected,
            out_of_band: entry.counts.out_of_band_rejected,
            band_straddling: entry.counts.out_of_band_straddling,
            band_unlabelled: entry.counts.out_of_band_unlabelled,
        }
    })
}

fn not_instance(path: &Path, i: u64) -> OutputError {
    OutputError::Corrupt {
        path: path.to_path_buf(),
        message: format!("line {} is not instance {i} of this dataset", i + 1),
    }
}

/// Reads the first `lines` lines of the dataset at `path` back: the keys
/// every later instance competes with go into `seen`, and the returned
/// counters are those of making lines `0..lines`.
pub(super) fn dataset_prefix(
    domain: &Domain,
    plan: &Plan,
    path: &Path,
    lines: u64,
    entry: Option<&DatasetEntry>,
    seen: &mut Dedup,
) -> Result<Stats, OutputError> {
    let known = recorded(entry, lines);
    let mut stats = known.unwrap_or_default();
    let names = record::NameIndex::new(domain);
    files::for_each_batch(path, lines, |start, batch| {
        let keys: Vec<Result<(u64, Key), record::KeyError>> = batch
            .par_iter()
            .map(|line| record::read_key(domain, &names, line))
            .collect();
        let mut read = Vec::with_capacity(keys.len());
        for (i, key) in (start..).zip(keys) {
            let (seed, key) = key.map_err(|message| OutputError::Corrupt {
                path: path.to_path_buf(),
                message: format!("line {}: {message}", i + 1),
            })?;
            if seed != i {
                return Err(not_instance(path, i));
            }
            read.push(key);
        }
        if known.is_some() {
            for (i, key) in (start..).zip(read) {
                if !seen.insert(key) {
                    return Err(not_instance(path, i));
                }
            }
            return Ok(());
        }
        // Replay: the same draws (in-band ones under a band, labelled to
        // know), admitted against the same keys.
        let end = start + read.len() as u64;
        let made = super::make_range(plan.synth, plan.banded, start..end, seen, &mut stats)?;
        for ((i, key), (instance, _)) in (start..).zip(&read).zip(&made) {
            if Key::of(instance) != *key {
                return Err(not_instance(path, i));
            }
        }
        Ok(())
    })?;
    Ok(stats)
}

/// The counters of making the first `lines` lines of a shard that owns
/// the indices `owned(0), owned(1), ...`: the finished entry's when it
/// counts exactly those lines, else the shard's draws replayed (a shard
/// does no dedup, so its lines are [`super::draws::first_draws`]).
pub(super) fn shard_prefix(
    plan: &Plan,
    exclusion: Option<&Arc<Exclusion>>,
    lines: u64,
    entry: Option<&DatasetEntry>,
    owned: impl Fn(u64) -> u64,
) -> Result<Stats, OutputError> {
    if let Some(stats) = recorded(entry, lines) {
        return Ok(stats);
    }
    let mut stats = Stats::default();
    let mut next = 0;
    while next < lines {
        let end = (next + super::append::CHUNK).min(lines);
        let indices: Vec<u64> = (next..end).map(&owned).collect();
        for (candidate, _) in super::draws::first_draws(plan, exclusion, &indices)? {
            stats.add(&candidate.stats);
            stats.instances += 1;
        }
        next = end;
    }
    Ok(stats)
}
