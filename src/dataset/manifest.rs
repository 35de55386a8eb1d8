//! `manifest.json` and shard manifests: what a dataset file holds and how
//! it was made.
//!
//! In: the setting, counts and timings of a run. Out: JSON files written
//! atomically (temp file + rename). The per-domain manifest
//! (`<out>/<domain>/manifest.json`) keeps one entry per setting under
//! `datasets`, plus the generator and the domain (hash and document); keys
//! it does not know are kept, so later stages can add theirs. A shard
//! manifest (`shard-K-of-N.manifest.json`) carries everything `merge`
//! needs: parameters, the shard split and the domain document.
//!
//! The [`Parameters`] with the generator version and domain hash decide
//! whether an existing file may be resumed or extended: every field but
//! `n` must match (instance `i` does not depend on `n`).

use super::excluded::{ExcludedSet, sets_conflict};
use crate::difficulty::{Band, Reference, ReferenceInfo};
use crate::domain::{Domain, DomainDoc};
use crate::files::FileError;
use crate::synth::{Params, Stats};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub const GENERATOR: &str = "kumo-gen";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The generator that wrote a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Generator {
    pub name: String,
    pub version: String,
}

impl Generator {
    pub fn current() -> Generator {
        Generator {
            name: GENERATOR.into(),
            version: VERSION.into(),
        }
    }
}

/// The domain a file was generated from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DomainInfo {
    pub name: String,
    /// FNV-1a 64 of the domain file's bytes.
    pub hash: String,
    pub document: DomainDoc,
}

impl DomainInfo {
    pub fn of(domain: &Domain) -> DomainInfo {
        DomainInfo {
            name: domain.name.clone(),
            hash: domain.source_hash.clone(),
            document: domain.document.clone(),
        }
    }
}

/// The parameters of a dataset file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Parameters {
    pub truths: usize,
    pub actions: usize,
    pub valid: usize,
    pub n: u64,
    pub seed: u64,
    pub allow_shortcuts: bool,
    pub decimals: u32,
    /// Whether lines carry `optimal` labels.
    pub labels: bool,
    /// The `--exclude` sets the dataset is disjoint from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<ExcludedSet>,
    /// `--seed random`: `seed` is 0 here, the real one is in the private
    /// seed file only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret_seed: bool,
    /// `--split`: the part this dataset is (`test of train=0.9,test=0.1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<String>,
    /// `--search-budget` of the labels (labelled datasets only; a
    /// manifest without it was made with the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_budget: Option<usize>,
    /// `--search-nodes` of the labels (as `search_budget`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_nodes: Option<u64>,
    /// The difficulty band every line lies in (`--min-expected` and the
    /// others, or a curriculum level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<Band>,
}

impl Parameters {
    pub fn new(params: &Params, n: u64, labels: bool) -> Parameters {
        Parameters {
            truths: params.truths,
            actions: params.actions,
            valid: params.valid,
            n,
            seed: params.seed,
            allow_shortcuts: params.allow_shortcuts,
            decimals: params.decimals,
            labels,
            exclude: Vec::new(),
            secret_seed: false,
            split: None,
            search_budget: None,
            search_nodes: None,
            band: None,
        }
    }

    pub fn params(&self) -> Params {
        Params {
            truths: self.truths,
            actions: self.actions,
            valid: self.valid,
            seed: self.seed,
            allow_shortcuts: self.allow_shortcuts,
            decimals: self.decimals,
        }
    }

    /// The first difference that forbids continuing a file made with
    /// `self` by a run with `other` (`n` may differ).
    pub fn conflict(&self, other: &Parameters) -> Option<String> {
        let pairs = [
            (
                "--truths",
                self.truths.to_string(),
                other.truths.to_string(),
            ),
            (
                "--actions",
                self.actions.to_string(),
                other.actions.to_string(),
            ),
            ("--valid", self.valid.to_string(), other.valid.to_string()),
            ("--seed", self.seed.to_string(), other.seed.to_string()),
            (
                "--allow-shortcuts",
                self.allow_shortcuts.to_string(),
                other.allow_shortcuts.to_string(),
            ),
            (
                "--decimals",
                self.decimals.to_string(),
                other.decimals.to_string(),
            ),
            ("labels", self.labels.to_string(), other.labels.to_string()),
            (
                "--seed random",
                self.secret_seed.to_string(),
                other.secret_seed.to_string(),
            ),
            (
                "--split",
                self.split.clone().unwrap_or_else(|| "none".into()),
                other.split.clone().unwrap_or_else(|| "none".into()),
            ),
        ];
        let band = |b: &Option<Band>| b.map(|b| b.flags()).unwrap_or_else(|| "none".into());
        pairs
            .into_iter()
            .chain([("band", band(&self.band), band(&other.band))])
            .find(|(_, a, b)| a != b)
            .map(|(flag, a, b)| format!("it was made with `{flag}` {a}, this run has {b}"))
            .or_else(|| sets_conflict(&self.exclude, &other.exclude))
    }
}

/// Whether a file is finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    InProgress,
    Complete,
}

/// Work counters of a file: the synthesis counters count every line,
/// however many runs (resumes, extensions) made them, so they are those
/// of one uninterrupted run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Lines in the file.
    pub instances: u64,
    /// Lines that were already there when this run started.
    pub resumed_from: u64,
    pub resamples: u64,
    pub unsat_samples: u64,
    pub sat_calls: u64,
    pub duplicates_rejected: u64,
    /// Draws outside the difficulty band, redrawn.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub out_of_band_rejected: u64,
    /// Of those, certified draws whose interval crosses an edge of the
    /// band (not proven inside it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub out_of_band_straddling: u64,
    /// Of those, draws the search budget left unlabelled (`--exact-only`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub out_of_band_unlabelled: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Counts {
    pub fn new(instances: u64, resumed_from: u64, stats: &Stats) -> Counts {
        Counts {
            instances,
            resumed_from,
            resamples: stats.resamples,
            unsat_samples: stats.unsat,
            sat_calls: stats.sat_calls,
            duplicates_rejected: stats.duplicates,
            out_of_band_rejected: stats.out_of_band,
            out_of_band_straddling: stats.band_straddling,
            out_of_band_unlabelled: stats.band_unlabelled,
        }
    }
}

/// Wall-clock seconds of the run that finished a file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    pub synthesis_s: f64,
    pub write_s: f64,
    pub total_s: f64,
    pub instances_per_s: f64,
}

/// One dataset file of the per-domain manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatasetEntry {
    pub file: String,
    pub status: Status,
    pub generator_version: String,
    pub domain_hash: String,
    pub parameters: Parameters,
    /// Number of shards it was merged from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_shards: Option<u64>,
    pub counts: Counts,
    pub timings: Timings,
    /// FNV-1a 64 of the finished file's bytes: a finished dataset edited
    /// or appended to afterwards is detected, not reported up to date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The difficulty of a finished labelled file's lines (whole file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<DifficultySummary>,
}

/// What a finished labelled dataset's manifest entry says of its lines'
/// `difficulty` (counted over the whole file) and of the reference sample
/// their `percentile` is taken in.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DifficultySummary {
    /// The setting's reference sample.
    pub reference: ReferenceInfo,
    /// Lines with a `difficulty` (labelled within the search budget).
    pub labelled: u64,
    /// Of those, lines whose golden player answers with exactly one
    /// candidate still consistent with what it observed.
    pub answers_with_one_candidate: u64,
    /// Lines by `consistent_at_answer` (candidates left when the golden
    /// player answers).
    pub consistent_at_answer: BTreeMap<usize, u64>,
}

/// Counts the `difficulty` of the first `lines` lines of a dataset file.
pub fn difficulty_summary(
    path: &Path,
    lines: u64,
    reference: &Reference,
) -> Result<DifficultySummary, FileError> {
    #[derive(Deserialize)]
    struct Line {
        difficulty: Option<Counted>,
    }
    #[derive(Deserialize)]
    struct Counted {
        consistent_at_answer: usize,
    }
    let mut summary = DifficultySummary {
        reference: reference.info(),
        ..DifficultySummary::default()
    };
    crate::files::for_each_batch::<FileError>(path, lines, |start, batch| {
        for (i, line) in (start..).zip(batch) {
            let parsed: Line = serde_json::from_slice(line).map_err(|e| FileError::Corrupt {
                path: path.to_path_buf(),
                message: format!("line {}: {e}", i + 1),
            })?;
            if let Some(d) = parsed.difficulty {
                summary.labelled += 1;
                summary.answers_with_one_candidate += u64::from(d.consistent_at_answer == 1);
                *summary
                    .consistent_at_answer
                    .entry(d.consistent_at_answer)
                    .or_default() += 1;
            }
        }
        Ok(())
    })?;
    Ok(summary)
}

impl DatasetEntry {
    /// Why a file with this entry cannot be continued by a run of
    /// `parameters` on `domain_hash`, if it cannot.
    pub fn conflict(&self, domain_hash: &str, parameters: &Parameters) -> Option<String> {
        if self.generator_version != VERSION {
            return Some(format!(
                "it was made by kumo-gen {}, this is {VERSION}",
                self.generator_version
            ));
        }
        if self.domain_hash != domain_hash {
            return Some(format!(
                "it was made from a different domain file (hash {}, now {domain_hash})",
                self.domain_hash
            ));
        }
        self.parameters.conflict(parameters)
    }
}

/// The split of a sharded run: this process owns indices `i` with
/// `i % count == index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardId {
    pub index: u64,
    pub count: u64,
}

/// The manifest of one shard file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardManifest {
    pub generator: Generator,
    pub domain: DomainInfo,
    pub shard: ShardId,
    pub file: String,
    pub status: Status,
    pub parameters: Parameters,
    pub counts: Counts,
    pub timings: Timings,
    /// FNV-1a 64 of the finished shard file (see [`DatasetEntry::digest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

impl ShardManifest {
    /// The same shape as a dataset entry, for the resume checks.
    pub fn entry(&self) -> DatasetEntry {
        DatasetEntry {
            file: self.file.clone(),
            status: self.status,
            generator_version: self.generator.version.clone(),
            domain_hash: self.domain.hash.clone(),
            parameters: self.parameters.clone(),
            merged_shards: None,
            counts: self.counts.clone(),
            timings: self.timings.clone(),
            digest: self.digest.clone(),
            difficulty: None,
        }
    }
}

/// Reads a JSON file; `None` when it does not exist.
pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, FileError> {
    match crate::files::read::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| FileError::Corrupt {
                path: path.to_path_buf(),
                message: format!("not a kumo-gen manifest: {e}"),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(FileError::read(path, e)),
    }
}

/// Writes `value` as pretty JSON through a temp file and a rename.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), FileError> {
    let mut text = serde_json::to_vec_pretty(value).map_err(|e| FileError::Corrupt {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    text.push(b'\n');
    crate::files::write_atomic(path, &text)
}

/// Reads the per-domain manifest as a JSON object (empty when absent).
pub fn read_domain_manifest(
    path: &Path,
) -> Result<serde_json::Map<String, serde_json::Value>, FileError> {
    match read_json::<serde_json::Value>(path)? {
        None => Ok(serde_json::Map::new()),
        Some(serde_json::Value::Object(map)) => Ok(map),
        Some(_) => Err(FileError::Corrupt {
            path: path.to_path_buf(),
            message: "not a JSON object".into(),
        }),
    }
}

/// The entry of `setting` in a per-domain manifest, if any.
pub fn dataset_entry(
    manifest: &serde_json::Map<String, serde_json::Value>,
    setting: &str,
) -> Option<DatasetEntry> {
    let entry = manifest.get("datasets")?.get(setting)?;
    serde_json::from_value(entry.clone()).ok()
}

/// Records `entry` for `setting` (and the generator and domain) in the
/// per-domain manifest at `path`, keeping everything else.
pub fn update_domain_manifest(
    path: &Path,
    domain: &DomainInfo,
    setting: &str,
    entry: &DatasetEntry,
) -> Result<(), FileError> {
    // Runs of other settings update the same manifest: read, modify and
    // write under its lock so no run's entry is lost.
    let _lock = crate::files::FileLock::wait(path)?;
    let mut manifest = read_domain_manifest(path)?;
    let json = |v: &dyn erased::ToJson| v.to_json();
    manifest.insert("generator".into(), json(&Generator::current()));
    manifest.insert("domain".into(), json(domain));
    let datasets = manifest
        .entry("datasets")
        .or_insert_with(|| serde_json::Value::Object(Default::default()));
    if !datasets.is_object() {
        *datasets = serde_json::Value::Object(Default::default());
    }
    if let serde_json::Value::Object(map) = datasets {
        map.insert(setting.into(), json(entry));
    }
    write_json(path, &manifest)
}

mod erased {
    pub trait ToJson {
        fn to_json(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> ToJson for T {
        fn to_json(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
        }
    }
}
