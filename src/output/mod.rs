//! The writers: KUMO-compatible JSONL datasets, shard files, `merge`, and
//! their manifests (DESIGN.md "Outputs").
//!
//! In: a [`Job`] (domain, setting, `n`, output root, shard split,
//! `--force`) and optionally a labeler for the `optimal` field. Out:
//!
//! ```text
//! <out>/<domain>/truth_num=T+action_num=A+valid_truth_num=V.jsonl
//! <out>/<domain>/manifest.json
//! <out>/<domain>/shards/<setting>/shard-K-of-N.jsonl            (--shard K/N)
//! <out>/<domain>/shards/<setting>/shard-K-of-N.manifest.json
//! ```
//!
//! Only this module and domain loading touch the file system. Files:
//! this one (jobs, errors, datasets, resume), [`append`] (lines written in
//! order as they are labelled), `shard` (`--shard K/N`), [`merge`],
//! [`files`] (atomic writes, locks, digests), [`manifest`], [`record`]
//! (the instance line), [`derived`] (books, SFT, HF), `rebudget` (a
//! larger search budget relabels the unlabelled lines in place), `resume`
//! (the lines already there read back, and counted).
//!
//! # Dedup, shards and resume: one rule
//!
//! The dataset is defined by the rule of [`crate::synth`]: *instance `i` is
//! the first draw of stream `i` whose canonical key is not the key of an
//! instance `j < i`.* Everything here replays that rule.
//!
//! - **Unsharded**: chunks of indices are drawn in parallel (first draws),
//!   then admitted one by one in index order, a taken key redrawing from
//!   its own stream. Lines are appended chunk by chunk.
//! - **Resume / extend**: instance `i` depends only on `0..i`, so a file
//!   with `m` complete lines made with the same parameters (all but `n`,
//!   checked against `manifest.json`) is continued at `m` after its keys
//!   are read back. A partial last line is cut first. An interrupted run
//!   re-run with the same command therefore ends byte-identical, and a
//!   larger `-n` extends a finished file. The manifest's counters cover
//!   all `n` lines (a killed run's prefix is counted by replaying its
//!   synthesis), so they equal an uninterrupted run's.
//! - **Shards**: `--shard K/N` owns the indices `i ≡ K (mod N)` and writes
//!   for each, in index order, the *first draw* of stream `i` that no
//!   `--exclude` set or other `--split` part takes (every shard knows
//!   those) — it cannot know the other shards' keys, so it does no dedup.
//!   `merge` reads the shard files round-robin (index order), keeps a line
//!   whose key is new, and for a taken key replays stream `i` (up to the
//!   shard's draw, then retries) exactly as the unsharded run does. Most
//!   lines are copied verbatim; the result is the unsharded file byte for
//!   byte, for a `--split` part too (`OUT/<part>/<domain>/shards/`, its
//!   filter rebuilt from the recorded `split`). Shards are resumable like
//!   datasets (no dedup state to rebuild).
//!
//! # Overwriting
//! An existing dataset is continued only when its manifest entry matches;
//! a finished one of the same length is left alone ("up to date"). Any
//! other existing file is an error unless `--force`, which starts over.
//! Manifests are replaced atomically under their lock, so runs of other
//! settings of one domain never lose each other's entries; a dataset or
//! shard file is owned by one run at a time (a second run exits 1 with a
//! clear message). A finished file's manifest entry records its digest:
//! edited or appended lines are reported as damage.
//!
//! # Progress on disk
//! Lines are labelled in parallel and written in index order as soon as
//! every earlier line is written, synced at least every two seconds, so a
//! kill keeps the finished prefix and the resume continues it.

mod append;
pub mod derived;
mod derived_stamp;
mod draws;
pub mod files;
mod hf_card;
#[cfg(feature = "parquet")]
pub mod hf_parquet;
pub mod manifest;
mod merge;
mod rebudget;
pub mod record;
pub mod relabel;
mod resume;
mod shard;

pub use merge::{MergeExclude, merge};

use crate::contamination::Exclusion;
use crate::difficulty::{Band, Banded, Reference};
use crate::domain::Domain;
use crate::search::SearchBudget;
use crate::setting::Setting;
use crate::synth::{Dedup, Instance, Params, Stats, SynthError, Synthesizer};
use manifest::{Counts, DatasetEntry, DomainInfo, Parameters, ShardId, Status, Timings};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Computes the `optimal` object of a line (the search stage's labels).
pub type Labeler<'a> = &'a (dyn Fn(&Domain, &Instance) -> record::Labelled + Sync);

/// Called with the number of instances done so far.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// One generation request.
pub struct Job<'a> {
    pub domain: &'a Domain,
    pub params: Params,
    pub n: u64,
    /// Output root (`--out`, default `generated/`).
    pub out: PathBuf,
    pub shard: Option<ShardId>,
    pub force: bool,
    pub labeler: Option<Labeler<'a>>,
    /// The search budget `labeler` labels under (recorded in the manifest;
    /// a larger one than recorded relabels the unlabelled lines).
    pub budget: SearchBudget,
    pub progress: Option<Progress<'a>>,
    /// `--exclude`: instances of these sets are redrawn like duplicates.
    pub exclude: Option<Arc<Exclusion>>,
    /// `--seed random`: the manifest records no seed (see
    /// [`crate::contamination::secret`]).
    pub secret_seed: bool,
    /// A difficulty band (`--min-expected` ...): draws outside it are
    /// redrawn from their own stream. Needs `labeler`.
    pub band: Option<Band>,
}

impl Job<'_> {
    /// The manifest's parameters of this job.
    pub fn parameters(&self) -> Parameters {
        let mut parameters = Parameters::new(&self.params, self.n, self.labeler.is_some());
        parameters.exclude = excluded_sets(self.exclude.as_deref());
        parameters.split = self.exclude.as_ref().and_then(|e| e.part_label());
        if self.labeler.is_some() {
            parameters.search_budget = Some(self.budget.max_memo_entries);
            parameters.search_nodes = Some(self.budget.max_nodes);
        }
        if self.secret_seed {
            parameters.seed = 0;
            parameters.secret_seed = true;
        }
        parameters.band = self.band;
        parameters
    }

    /// The setting's reference sample, for the `percentile` of labelled
    /// lines (`None` without labels).
    fn reference(&self) -> Result<Option<Arc<Reference>>, SynthError> {
        if self.labeler.is_none() {
            if self.band.is_some() {
                return Err(band_needs_labels());
            }
            return Ok(None);
        }
        Reference::cached(self.domain, &self.params).map(Some)
    }
}

fn band_needs_labels() -> SynthError {
    SynthError::new(
        crate::synth::ErrorKind::Invalid,
        "--min-expected",
        "a difficulty band needs labels: a draw's difficulty is its label".into(),
        "drop `--no-labels`, or drop the band",
    )
}

/// A line's instance and, when a band already searched it, its label.
pub(crate) type Made = (Instance, Option<record::Labelled>);

/// The draws of `range` for a writer: banded (labelled on the way) or
/// plain.
fn make_range(
    synth: &Synthesizer,
    banded: Option<&Banded>,
    range: std::ops::Range<u64>,
    seen: &mut Dedup,
    stats: &mut Stats,
) -> Result<Vec<Made>, OutputError> {
    Ok(match banded {
        Some(banded) => banded
            .generate(range, seen, stats)?
            .into_iter()
            .map(|(instance, label)| (instance, Some(Ok(label))))
            .collect(),
        None => synth
            .generate(range, seen, stats)?
            .into_iter()
            .map(|instance| (instance, None))
            .collect(),
    })
}

/// The finished file's difficulty counts for its manifest entry.
fn difficulty_of(
    path: &Path,
    lines: u64,
    reference: Option<&Reference>,
) -> Result<Option<manifest::DifficultySummary>, OutputError> {
    reference
        .map(|r| manifest::difficulty_summary(path, lines, r))
        .transpose()
}

/// What the manifest records of an exclusion.
pub fn excluded_sets(exclude: Option<&Exclusion>) -> Vec<crate::contamination::ExcludedSet> {
    exclude.map(|e| e.sets().to_vec()).unwrap_or_default()
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct Summary {
    pub path: PathBuf,
    /// Lines in the file now.
    pub instances: u64,
    /// Lines that were there before.
    pub resumed_from: u64,
    pub stats: Stats,
    pub synthesis_s: f64,
    pub total_s: f64,
    /// The file was already complete; nothing was written.
    pub up_to_date: bool,
    /// What else the run did or left alone (the search budget), to print.
    pub note: Option<String>,
    /// This run's hold on the file: kept while derived files are written
    /// from it, released when the summary is dropped.
    pub lock: Option<files::FileLock>,
    /// The `--split` part the file is, if any (its derived HF files go to
    /// the run's export).
    pub part: Option<String>,
}

impl Summary {
    /// The summary of a file that was already complete.
    fn up_to_date(path: PathBuf, lines: u64, start: Instant, lock: files::FileLock) -> Summary {
        Summary {
            path,
            instances: lines,
            resumed_from: lines,
            stats: Stats::default(),
            synthesis_s: 0.0,
            total_s: start.elapsed().as_secs_f64(),
            up_to_date: true,
            note: None,
            lock: Some(lock),
            part: None,
        }
    }

    /// Instances made by this run per second of wall time.
    pub fn rate(&self) -> f64 {
        (self.instances - self.resumed_from) as f64 / self.total_s.max(1e-9)
    }
}

/// Why writing failed.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The request cannot be met by the domain (exit 1).
    #[error(transparent)]
    Synth(#[from] SynthError),
    /// An existing file stands in the way (exit 1).
    #[error("`{}` already exists: {reason}", path.display())]
    Exists {
        path: PathBuf,
        reason: String,
        help: String,
    },
    /// Another run is writing the file (exit 1).
    #[error("`{}` is being written by another kumo-gen run", path.display())]
    Busy { path: PathBuf },
    /// An existing file is not what its manifest says (exit 1).
    #[error("`{}` is damaged: {message}", path.display())]
    Corrupt { path: PathBuf, message: String },
    /// Shards are missing or disagree (exit 1).
    #[error("{message}")]
    Shards { message: String, help: String },
    /// A user's template (`--templates-dir`) fails on an instance: it does
    /// not render, or renders a book that fails its check (exit 1).
    #[error("{message}")]
    Template { message: String, help: String },
    /// A bug in kumo-gen, such as a book rendered by the shipped templates
    /// that fails its check; the data is not at fault (exit 2).
    #[error("internal error: {message}")]
    Internal { message: String },
    /// An `--exclude` set cannot be read (exit 1).
    #[error(transparent)]
    Exclude(#[from] crate::contamination::ReadError),
    /// Reading or writing failed (exit 2).
    #[error("cannot write `{}`: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl OutputError {
    pub fn io(path: &Path, source: std::io::Error) -> OutputError {
        OutputError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// How to fix it, when there is advice.
    pub fn help(&self) -> Option<String> {
        match self {
            OutputError::Synth(e) => Some(e.help.clone()),
            OutputError::Exists { help, .. }
            | OutputError::Shards { help, .. }
            | OutputError::Template { help, .. } => Some(help.clone()),
            OutputError::Internal { .. } => Some(
                "this is a bug in kumo-gen, not a problem with the domain or the dataset; \
                 please report it with the domain file and the command line"
                    .into(),
            ),
            OutputError::Corrupt { .. } => {
                Some("pass `--force` to start over, or choose another `--out`".into())
            }
            OutputError::Busy { .. } => Some(
                "wait for that run to finish (re-running the same command then resumes or finds it up to date), or choose another `--out`".into(),
            ),
            OutputError::Exclude(e) => Some(e.help().into()),
            OutputError::Io { .. } => None,
        }
    }

    /// Whether this is the user's request (exit 1) rather than I/O or an
    /// internal error (exit 2).
    pub fn is_input(&self) -> bool {
        !matches!(self, OutputError::Io { .. } | OutputError::Internal { .. })
    }
}

/// The directory of a domain's outputs under `out`.
pub fn domain_dir(out: &Path, domain_name: &str) -> PathBuf {
    out.join(domain_name.replace(['/', '\\'], "_"))
}

/// Path of the dataset file of a setting.
pub fn dataset_path(out: &Path, domain_name: &str, params: &Params) -> PathBuf {
    domain_dir(out, domain_name).join(Setting::from(params).file_name())
}

/// Runs `job`: the dataset, or one shard of it.
pub fn generate(job: &Job) -> Result<Summary, OutputError> {
    let synth = Synthesizer::new(job.domain, job.params.clone())?;
    synth.check_count(job.n)?;
    let reference = job.reference()?;
    let banded = match job.band {
        Some(band) => Some(Banded::new(&synth, band, job.budget)?),
        None => None,
    };
    let plan = Plan {
        synth: &synth,
        banded: banded.as_ref(),
        reference: reference.as_deref(),
    };
    match job.shard {
        None => write_dataset(job, &plan),
        Some(shard) => shard::write_shard(job, &plan, shard),
    }
}

/// How a run draws its lines: the setting, its band, and the reference
/// sample of its percentiles.
pub(crate) struct Plan<'p, 'd> {
    pub synth: &'p Synthesizer<'d>,
    pub banded: Option<&'p Banded<'p, 'd>>,
    pub reference: Option<&'p Reference>,
}

/// Decides where an existing file continues: `Ok(Some(entry))` to resume
/// from it, `Ok(None)` to start fresh, or the reason it may not be touched.
fn existing(
    path: &Path,
    entry: Option<DatasetEntry>,
    domain_hash: &str,
    parameters: &Parameters,
    force: bool,
) -> Result<Option<DatasetEntry>, OutputError> {
    // An empty file holds nothing to lose: a run killed before its first
    // manifest entry was written (a full disk) starts afresh.
    let empty = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0);
    if force || !path.exists() || (entry.is_none() && empty) {
        return Ok(None);
    }
    let Some(entry) = entry else {
        return Err(OutputError::Exists {
            path: path.to_path_buf(),
            reason: "no manifest entry says how it was made".into(),
            help: "pass `--force` to overwrite it, or choose another `--out`".into(),
        });
    };
    if let Some(reason) = entry.conflict(domain_hash, parameters) {
        return Err(OutputError::Exists {
            path: path.to_path_buf(),
            reason,
            help: "pass `--force` to overwrite it, or choose another `--out`".into(),
        });
    }
    Ok(Some(entry))
}

fn too_long(path: &Path, lines: u64, n: u64) -> OutputError {
    OutputError::Exists {
        path: path.to_path_buf(),
        reason: format!("it holds {lines} instances, more than `-n {n}`"),
        help: format!("use `-n {lines}` or more, or pass `--force` to overwrite it"),
    }
}

fn write_dataset(job: &Job, plan: &Plan) -> Result<Summary, OutputError> {
    let synth = plan.synth;
    let start = Instant::now();
    let domain = job.domain;
    let dir = domain_dir(&job.out, &domain.name);
    files::create_dir_below(&job.out, &dir)?;
    let setting = Setting::from(&job.params);
    let path = dir.join(setting.file_name());
    let setting = setting.to_string();
    let lock = files::FileLock::exclusive(&path)?;
    let manifest_path = dir.join("manifest.json");
    let parameters = job.parameters();
    let manifest = manifest::read_domain_manifest(&manifest_path);
    let entry = match manifest {
        Ok(m) => manifest::dataset_entry(&m, &setting),
        Err(e) if job.force => {
            let _ = e;
            None
        }
        Err(e) => return Err(e),
    };
    let resume = existing(&path, entry, &domain.source_hash, &parameters, job.force)?;
    check_digest(&path, resume.as_ref())?;
    // A finished file of this length (its digest just checked) with
    // nothing to relabel is up to date, decided before it is opened for
    // writing: a dataset on a read-only disk or directory can be re-run.
    if let Some(entry) = resume.as_ref().filter(|e| {
        e.status == Status::Complete && e.digest.is_some() && e.counts.instances == job.n
    }) {
        let recorded = rebudget::recorded(&entry.parameters);
        let change = job.labeler.map(|_| rebudget::compare(recorded, job.budget));
        if !matches!(change, Some(rebudget::Change::Larger)) {
            let mut summary = Summary::up_to_date(path, job.n, start, lock);
            if matches!(change, Some(rebudget::Change::NotLarger)) {
                summary.note = Some(not_larger_note(recorded));
            }
            return Ok(summary);
        }
    }
    let (mut file, lines) = files::open_for_append(&path, resume.is_none())?;
    if lines > job.n {
        return Err(too_long(&path, lines, job.n));
    }
    let info = DomainInfo::of(domain);
    let complete = resume
        .as_ref()
        .is_some_and(|e| e.status == Status::Complete);
    let mut note = None;
    if let Some(entry) = resume.as_ref().filter(|_| job.labeler.is_some()) {
        let recorded = rebudget::recorded(&entry.parameters);
        match rebudget::compare(recorded, job.budget) {
            rebudget::Change::Same => {}
            rebudget::Change::NotLarger if complete && lines == job.n => {
                let mut summary = Summary::up_to_date(path, lines, start, lock);
                summary.note = Some(not_larger_note(recorded));
                return Ok(summary);
            }
            rebudget::Change::NotLarger => {
                return Err(OutputError::Exists {
                    path,
                    reason: format!(
                        "its labels were searched under {}, this run's budget is smaller",
                        rebudget::flags(recorded)
                    ),
                    help: format!(
                        "continue it with {} or larger, or pass `--force` to start over",
                        rebudget::flags(recorded)
                    ),
                });
            }
            rebudget::Change::Larger if job.band.is_some() => {
                return Err(OutputError::Exists {
                    path,
                    reason: format!(
                        "its lines lie in a difficulty band under {}: which draw lies in it depends on the budget",
                        rebudget::flags(recorded)
                    ),
                    help: format!(
                        "continue it with {}, or pass `--force` to draw it again under the larger budget",
                        rebudget::flags(recorded)
                    ),
                });
            }
            rebudget::Change::Larger => {
                // Marked unfinished under the old budget first: a run killed
                // while relabelling relabels again, to the same bytes.
                let mut pending = entry.clone();
                pending.status = Status::InProgress;
                pending.digest = None;
                manifest::update_domain_manifest(&manifest_path, &info, &setting, &pending)?;
                drop(file);
                let done = rebudget::relabel_unlabelled(
                    domain,
                    &path,
                    lines,
                    job.budget,
                    plan.reference,
                    job.progress,
                )?;
                file = files::open_for_append(&path, false)?.0;
                note = Some(rebudget::relabelled_note(job.budget, done));
            }
        }
    }
    if lines == job.n && complete && note.is_none() {
        return Ok(Summary::up_to_date(path, lines, start, lock));
    }

    // Keys of the lines already there: instance `lines` competes with them.
    // The manifest counts the work of every line, not only this run's.
    let mut seen = Dedup::excluding(job.exclude.clone());
    let before = resume::dataset_prefix(domain, plan, &path, lines, resume.as_ref(), &mut seen)?;

    let mut entry = DatasetEntry {
        file: format!("{setting}.jsonl"),
        status: Status::InProgress,
        generator_version: manifest::VERSION.into(),
        domain_hash: domain.source_hash.clone(),
        parameters,
        merged_shards: None,
        counts: Counts::default(),
        timings: Timings::default(),
        digest: None,
        difficulty: None,
    };
    manifest::update_domain_manifest(&manifest_path, &info, &setting, &entry)?;

    let mut stats = Stats::default();
    let (synthesis_s, write_s) = append::append_chunks(
        job,
        plan.reference,
        &mut file,
        &path,
        lines,
        job.n,
        |range| make_range(synth, plan.banded, range, &mut seen, &mut stats),
    )?;
    let total_s = start.elapsed().as_secs_f64();
    entry.status = Status::Complete;
    let mut whole = before;
    whole.add(&stats);
    entry.counts = Counts::new(job.n, lines, &whole);
    entry.timings = timings(synthesis_s, write_s, total_s, job.n - lines);
    entry.digest = Some(files::digest(&path)?);
    entry.difficulty = difficulty_of(&path, job.n, plan.reference)?;
    manifest::update_domain_manifest(&manifest_path, &info, &setting, &entry)?;
    Ok(Summary {
        path,
        instances: job.n,
        resumed_from: lines,
        stats,
        synthesis_s,
        total_s,
        up_to_date: false,
        note,
        lock: Some(lock),
        part: job.exclude.as_ref().and_then(|e| e.part_name()),
    })
}

fn not_larger_note(recorded: crate::search::SearchBudget) -> String {
    format!(
        "its labels were searched under {}; a budget that is not larger changes nothing (a larger one labels the lines left unlabelled)",
        rebudget::flags(recorded)
    )
}

/// A finished file must still hold the bytes its manifest entry digested:
/// edited or appended lines are damage, never "up to date".
fn check_digest(path: &Path, entry: Option<&DatasetEntry>) -> Result<(), OutputError> {
    let Some(want) = entry
        .filter(|e| e.status == Status::Complete)
        .and_then(|e| e.digest.as_deref())
    else {
        return Ok(());
    };
    let got = files::digest(path)?;
    if got != want {
        return Err(OutputError::Corrupt {
            path: path.to_path_buf(),
            message: format!(
                "its content changed after it was finished (digest {got}, manifest says {want})"
            ),
        });
    }
    Ok(())
}

fn timings(synthesis_s: f64, write_s: f64, total_s: f64, made: u64) -> Timings {
    Timings {
        synthesis_s,
        write_s,
        total_s,
        instances_per_s: made as f64 / total_s.max(1e-9),
    }
}
