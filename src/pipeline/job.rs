//! The pipeline's job values: what a command asks of it, built by the
//! command line (or an embedder) and read by the pipeline's steps and its
//! write engine ([`crate::pipeline::write`]): [`GenerateJob`] and the
//! [`DatasetRun`]s it makes, the [`Target`] a writer writes, the
//! [`DerivedFiles`] of a run, [`MergeJob`] and [`LabelJob`]. Values only:
//! the steps that run them are `generate`, `merge`, `label` and `write`.

use std::path::PathBuf;
use std::sync::Arc;

use crate::contamination::split::Part;
use crate::contamination::{Exclusion, KeyKind};
use crate::dataset::manifest::ShardId;
use crate::difficulty::Band;
use crate::domain::{Domain, Registry};
use crate::render::{RenderOptions, Templates};
use crate::search::SearchBudget;
use crate::synth::Params;

/// One run of the main job.
pub struct GenerateJob {
    pub domain: Domain,
    /// The setting and the dataset seed (ignored with `secret_seed`).
    pub params: Params,
    /// Instances per dataset (`--split` divides them among its parts).
    pub n: u64,
    /// Output root (`--out`).
    pub out: PathBuf,
    /// The whole dataset, or one shard of it (`--shard K/N`).
    pub target: Target,
    /// The search budget of the `optimal` labels (`None`: `--no-labels`).
    pub labels: Option<SearchBudget>,
    /// `--exclude`: instances of these sets are redrawn like duplicates.
    pub exclude: Option<Arc<Exclusion>>,
    /// A difficulty band (`--min-expected` ...; needs labels).
    pub band: Option<Band>,
    /// One dataset, `--split` parts, or curriculum levels.
    pub datasets: Datasets,
    /// Books, SFT records and the HF export.
    pub derived: DerivedFiles,
    /// `--seed random`: the seed is drawn from the operating system and
    /// kept only in the private `OUT/SECRET-seeds/` file.
    pub secret_seed: bool,
    /// Overwrite an existing dataset instead of refusing.
    pub force: bool,
}

/// The datasets one job writes.
#[derive(Clone, Debug, PartialEq)]
pub enum Datasets {
    /// One dataset under `--out`.
    One,
    /// `--split`: disjoint parts, each its own dataset under `OUT/<part>/`
    /// with its share of `n`; `sft_parts` names the parts that get SFT
    /// records (`None`: every part); `key` is what no two parts share
    /// (`Context`, or `Book`: [`PartFilter::by`]).
    Split {
        parts: Vec<Part>,
        sft_parts: Option<Vec<String>>,
        key: KeyKind,
    },
    /// `kumo-gen curriculum --levels K`: `n` instances per level `k`
    /// under `OUT/level-k/`, each in the level's band (the job's `band`
    /// is not used).
    Levels(usize),
}

/// One dataset of a job: where it goes and what it draws from (the job's
/// `out`, `n`, `exclude` and `band`, refined per `--split` part or
/// curriculum level).
pub struct DatasetRun {
    pub out: PathBuf,
    pub n: u64,
    pub exclude: Option<Arc<Exclusion>>,
    /// The `--split` part or curriculum level it is.
    pub part: Option<String>,
    pub band: Option<Band>,
    pub sft: bool,
    /// What it is, when the job writes several (reported before it is
    /// written).
    pub announce: Option<Announce>,
}

/// Which of a job's several datasets a [`DatasetRun`] is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Announce {
    /// A `--split` part (`label`: its name and share).
    Part { label: String },
    /// Curriculum level `level` of `levels` (its band is the run's).
    Level { level: usize, levels: usize },
}

impl GenerateJob {
    /// The job's one dataset when it writes one (`Datasets::One`).
    pub fn whole(&self) -> DatasetRun {
        DatasetRun {
            out: self.out.clone(),
            n: self.n,
            exclude: self.exclude.clone(),
            part: None,
            band: self.band,
            sft: self.derived.sft,
            announce: None,
        }
    }
}

/// What a writer writes: the whole dataset, or one shard of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// The dataset file of the setting.
    #[default]
    Whole,
    /// Shard K of N (`--shard K/N`): the indices `i` with `i % N == K`.
    Shard(ShardId),
}

impl Target {
    /// How many of the instances `0..n` the target holds: `n`, or a
    /// shard's indices below `n` (no overflow for any count).
    pub fn lines_of(self, n: u64) -> u64 {
        match self {
            Target::Whole => n,
            Target::Shard(s) if s.index >= n => 0,
            Target::Shard(s) => (n - 1 - s.index) / s.count + 1,
        }
    }
}

/// Above this many instances [`Books::Auto`] writes no book files.
pub const AUTO_BOOKS_LIMIT: u64 = 100_000;

/// Which knowledge-book files a run writes (every book is checked either
/// way; eval and play render a missing one from the domain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Books {
    /// Up to [`AUTO_BOOKS_LIMIT`] instances, and not beyond.
    Auto,
    Files,
    None,
}

/// What derived files a run writes and how it renders them.
pub struct DerivedFiles {
    /// The template set (the shipped one, or `--templates-dir` over it).
    pub templates: Templates,
    pub render: RenderOptions,
    pub books: Books,
    /// SFT chat records (`--split` parts may leave some out: `sft_parts`).
    pub sft: bool,
    /// The per-step prompt/completion file (with `sft` only).
    pub steps: bool,
    /// The Hugging Face export `OUT/hf/`.
    pub hf: bool,
}

/// One run of `kumo-gen merge`.
pub struct MergeJob<'a> {
    /// Where a dataset's domain is looked up when its manifest records none.
    pub registry: &'a Registry,
    /// Output root the shards were written to (`OUT/<domain>/shards/`).
    pub out: PathBuf,
    /// Replace an existing dataset file.
    pub force: bool,
    /// The search budget: redrawn instances are labelled under the shards'
    /// recorded one; a larger one then labels the lines it left
    /// unlabelled (and is recorded).
    pub labels: SearchBudget,
    /// The `--exclude` the shards were generated with.
    pub exclude: MergeExclude,
    /// Books, SFT records and the HF export of each merged dataset.
    pub derived: DerivedFiles,
    /// Shards of a `--split` run: the parts that get SFT records (`None`:
    /// every part).
    pub sft_parts: Option<Vec<String>>,
}

/// `--exclude` of a merge: read against each group's domain; it must be
/// the set the shards were made with.
#[derive(Clone, Debug, Default)]
pub struct MergeExclude {
    pub paths: Vec<PathBuf>,
    pub key: KeyKind,
}

/// One run of `kumo-gen label`.
pub struct LabelJob {
    pub domain: Domain,
    /// KUMO-format instance lines (JSONL); `-` reads stdin.
    pub instances: PathBuf,
    /// Written here atomically; `None`: to the caller's writer.
    pub output: Option<PathBuf>,
    /// The search each line's label is the optimum of (a search over it
    /// leaves the line unlabelled).
    pub budget: SearchBudget,
}
