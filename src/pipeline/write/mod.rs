//! The write engine of the main job: KUMO-compatible JSONL datasets, shard
//! files, `merge`, and their manifests (DESIGN.md "Outputs").
//!
//! In: a [`Job`] (domain, setting, `n`, output root, [`Target`]: the
//! whole dataset or one shard, `--force`, and the search budget of the
//! `optimal` labels as a value, recorded in the manifest). Out:
//!
//! ```text
//! <out>/<domain>/truth_num=T+action_num=A+valid_truth_num=V.jsonl
//! <out>/<domain>/manifest.json
//! <out>/<domain>/shards/<setting>/shard-K-of-N.jsonl            (--shard K/N)
//! <out>/<domain>/shards/<setting>/shard-K-of-N.manifest.json
//! ```
//!
//! Files: this one (jobs, errors, summaries), `target` (the one writer
//! skeleton for a whole dataset and a `--shard K/N`, with their small
//! differing steps), `append` (lines written in order as they are
//! labelled), [`merge`], `rebudget` (a
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
mod draws;
mod merge;
mod rebudget;
mod resume;
mod target;

use crate::dataset::{manifest, record};
use crate::files::{self, FileError};

pub use merge::merge;

use crate::contamination::Exclusion;
use crate::dataset::setting::Setting;
use crate::difficulty::{Band, Banded, Reference};
use crate::domain::Domain;
use crate::pipeline::job::{DatasetRun, GenerateJob, Target};
use crate::progress::Progress;
use crate::search::SearchBudget;
use crate::synth::{Dedup, FirstDraws, Instance, Params, Stats, SynthError, Synthesizer};
use manifest::{DatasetEntry, Parameters, Status, Timings};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// One dataset of the main job as the engine writes it: the job value the
/// command line built ([`GenerateJob`]: domain, setting, target, budget,
/// `--force`, secret seed) and what is particular to this dataset of it
/// ([`DatasetRun`]: where it goes, its `n`, exclusion and band), never a
/// copy of their fields.
pub struct Job<'a> {
    pub main: &'a GenerateJob,
    /// The job's setting with the seed this run draws from (a `--seed
    /// random` run's drawn seed in place of `params.seed`).
    pub params: &'a Params,
    pub run: &'a DatasetRun,
    /// The first draws the capacity estimate made, copied by the run
    /// instead of drawn again (draws of another setting are not used).
    pub first_draws: Option<Arc<FirstDraws<'a>>>,
    /// Told the lines done of the stage the caller started.
    pub progress: &'a dyn Progress,
}

impl<'a> Job<'a> {
    pub fn domain(&self) -> &'a Domain {
        &self.main.domain
    }

    /// Lines of the whole dataset (a shard writes its share of them).
    pub fn n(&self) -> u64 {
        self.run.n
    }

    /// The dataset's output root (`--out`, or a part's or level's folder).
    pub fn out(&self) -> &'a Path {
        &self.run.out
    }

    pub fn target(&self) -> Target {
        self.main.target
    }

    pub fn force(&self) -> bool {
        self.main.force
    }

    /// The search budget of the `optimal` labels, each line's exact
    /// optimal search under it (`None`: `--no-labels`). Recorded in the
    /// manifest; a larger one than recorded relabels the unlabelled lines.
    pub fn labels(&self) -> Option<SearchBudget> {
        self.main.labels
    }

    /// `--exclude` (and the other `--split` parts): instances of these
    /// sets are redrawn like duplicates.
    pub fn exclude(&self) -> Option<&'a Arc<Exclusion>> {
        self.run.exclude.as_ref()
    }

    /// `--seed random`: the manifest records no seed (the pipeline keeps
    /// it only in a private seed file).
    pub fn secret_seed(&self) -> bool {
        self.main.secret_seed
    }

    /// A difficulty band: draws outside it are redrawn from their own
    /// stream. Needs labels.
    pub fn band(&self) -> Option<Band> {
        self.run.band
    }
}

impl Job<'_> {
    /// The manifest's parameters of this job.
    pub fn parameters(&self) -> Parameters {
        let mut parameters = Parameters::new(self.params, self.n(), self.labels().is_some());
        parameters.exclude = excluded_sets(self.exclude().map(|e| &**e));
        parameters.split = self.exclude().and_then(|e| e.part_label());
        if let Some(budget) = self.labels() {
            parameters.search_budget = Some(budget.max_memo_entries);
            parameters.search_nodes = Some(budget.nodes_for(self.params.actions));
        }
        if self.secret_seed() {
            parameters.seed = 0;
            parameters.secret_seed = true;
        }
        parameters.band = self.band();
        parameters
    }

    /// The setting's reference sample, for the `percentile` of labelled
    /// lines (`None` without labels).
    fn reference(&self) -> Result<Option<Arc<Reference>>, SynthError> {
        if self.labels().is_none() {
            if self.band().is_some() {
                return Err(band_needs_labels());
            }
            return Ok(None);
        }
        Reference::cached(self.domain(), self.params).map(Some)
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

/// The line of `made` (without the trailing newline): its band's label,
/// else one searched now under `labels` (none with labels off), rendered
/// by [`record::render`]. The dataset writer and the per-index API both
/// make lines here, so line `i` is the same bytes from either.
pub(crate) fn made_line(
    domain: &Domain,
    labels: Option<SearchBudget>,
    reference: Option<&Reference>,
    (instance, labelled): &Made,
) -> Vec<u8> {
    let optimal = match labelled {
        Some(labelled) => Some(labelled.clone()),
        None => labels.map(|budget| crate::search::optimal_for_instance(domain, instance, budget)),
    };
    record::render(domain, instance, optimal.as_ref(), reference)
}

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
        .map_err(OutputError::from)
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
    /// Writing failed (exit 2).
    #[error("cannot write `{}`: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file there cannot be read (exit 1: the user's files).
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The file layer's kinds, kind for kind.
impl From<FileError> for OutputError {
    fn from(e: FileError) -> OutputError {
        match e {
            FileError::Busy { path } => OutputError::Busy { path },
            FileError::Corrupt { path, message } => OutputError::Corrupt { path, message },
            FileError::Io { path, source } => OutputError::Io { path, source },
            FileError::Read { path, source } => OutputError::Read { path, source },
        }
    }
}

/// The derived files' kinds, kind for kind.
impl From<crate::derived::DerivedError> for OutputError {
    fn from(e: crate::derived::DerivedError) -> OutputError {
        use crate::derived::DerivedError;
        match e {
            DerivedError::File(e) => e.into(),
            DerivedError::Template { message, help } => OutputError::Template { message, help },
            DerivedError::Internal { message } => OutputError::Internal { message },
        }
    }
}

impl From<crate::files::AtomicError> for OutputError {
    fn from(e: crate::files::AtomicError) -> OutputError {
        OutputError::io(&e.path, e.source)
    }
}

impl OutputError {
    pub fn io(path: &Path, source: std::io::Error) -> OutputError {
        OutputError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub fn read(path: &Path, source: std::io::Error) -> OutputError {
        OutputError::Read {
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
            OutputError::Io { .. } | OutputError::Read { .. } => None,
        }
    }

    /// Whether this is the user's request (exit 1) rather than I/O or an
    /// internal error (exit 2).
    pub fn is_input(&self) -> bool {
        match self {
            // A file read by the rule of `files::read` that breaks it.
            OutputError::Io { source, .. } => crate::files::read::is_refusal(source),
            OutputError::Internal { .. } => false,
            _ => true,
        }
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
    let synth =
        Synthesizer::new(job.domain(), job.params.clone())?.reusing(job.first_draws.clone());
    synth.check_count(job.n())?;
    let reference = job.reference()?;
    let banded = match (job.band(), job.labels()) {
        (Some(band), Some(budget)) => Some(Banded::new(&synth, band, budget)?),
        _ => None,
    };
    let plan = Plan {
        synth: &synth,
        banded: banded.as_ref(),
        reference: reference.as_deref(),
    };
    target::write(job, &plan)
}

/// How a run draws its lines: the setting, its band, and the reference
/// sample of its percentiles.
pub(crate) struct Plan<'p, 'd> {
    pub synth: &'p Synthesizer<'d>,
    pub banded: Option<&'p Banded<'p, 'd>>,
    pub reference: Option<&'p Reference>,
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
