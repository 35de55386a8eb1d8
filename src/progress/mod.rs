//! How a long job reports: the one channel the library reports through
//! (`pipeline::generate` and `pipeline::merge`, the derived files,
//! `pipeline::relabel`, `eval` and its API client), re-exported as
//! `pipeline::Progress`: how far it is, and what it has to say besides.
//!
//! A job names each stage it starts ([`Stage`]: what it does, what it
//! counts, how many) and then reports positions; its notes, warnings and
//! summaries are typed [`Event`]s carrying the facts, not text. The command
//! line's display (`cli::progress`: a bar on a terminal, a line every few
//! seconds elsewhere, the up-front forecast of a long stage, and each
//! event's line) implements it, and [`Quiet`] reports nowhere. The words
//! it prints are built here, as strings: [`words`] (each event's line) and
//! [`stage_lines`] (the progress lines and the forecast). Nothing here
//! prints, so the output never depends on it.

pub mod stage_lines;
pub mod words;

use std::path::Path;
use std::time::Duration;

/// One stage of a job: what it does, what it counts, and how many.
#[derive(Clone, Debug)]
pub struct Stage<'a> {
    /// What the stage does, e.g. `synthesis and labels`.
    pub name: &'a str,
    /// What it counts, e.g. `instances`.
    pub unit: &'a str,
    /// How many (0: not known yet; positions past it raise it).
    pub total: u64,
    /// Ask for an up-front estimate when the stage will be long.
    pub forecast: Option<Forecast>,
}

/// What an up-front estimate names: what the stage makes and on how many
/// threads, e.g. `car-identification 12x16` on 2.
#[derive(Clone, Debug)]
pub struct Forecast {
    pub subject: String,
    pub threads: usize,
}

impl<'a> Stage<'a> {
    /// A stage of `total` `unit`s (0: not known yet) without a forecast.
    pub fn new(name: &'a str, unit: &'a str, total: u64) -> Self {
        Stage {
            name,
            unit,
            total,
            forecast: None,
        }
    }
}

/// What a job says besides how far it is: a note, a warning or a summary,
/// with its facts; how it looks is the reporter's choice (the command
/// line's words are [`words::line`]).
#[derive(Clone, Debug)]
pub enum Event<'a> {
    /// A `--split` part begins: `n` instances into `out`.
    PartBegins {
        part: &'a str,
        n: u64,
        out: &'a Path,
    },
    /// A curriculum level begins: `n` instances between two percentiles
    /// of the setting's reference sample, into `out`.
    LevelBegins {
        level: usize,
        levels: usize,
        min_percentile: f64,
        max_percentile: f64,
        n: u64,
        out: &'a Path,
    },
    /// The capacity of `domain`'s setting, estimated from its first draws
    /// (`estimate` says it in words).
    Capacity { domain: &'a str, estimate: &'a str },
    /// The requested count comes close to the setting's capacity.
    CapacityClose { message: &'a str },
    /// A dataset file, shard or merged file is complete.
    Written(Written<'a>),
    /// What else writing a dataset did or left alone (the search budget).
    WriteNote { note: &'a str },
    /// `--books auto` writes no book files for this many instances.
    BooksSkipped { instances: u64, limit: u64 },
    /// A derived file that no longer matched its dataset was removed
    /// (`what`: `path: why; how to rebuild`).
    StaleRemoved { what: &'a str },
    /// The derived files of `domain`'s dataset already match it
    /// (`no_sft`: why they hold no SFT records, if they hold none).
    DerivedUpToDate {
        domain: &'a str,
        no_sft: Option<NoSft>,
    },
    /// The derived files of `domain`'s dataset are written.
    Derived(DerivedWritten<'a>),
    /// How `domain`'s dataset is labelled: lines with an exact label,
    /// lines with a certified one (DESIGN.md "Certified labels"), and the
    /// mean and largest relative gap `(upper - lower) / lower` of those.
    Labels {
        domain: &'a str,
        exact: u64,
        certified: u64,
        mean_gap: f64,
        max_gap: f64,
    },
    /// Instances of a labelled run left unlabelled by the search budget.
    Unlabelled { instances: u64 },
    /// `label`: a line's warning, naming the line.
    LabelWarning { message: &'a str },
    /// `label`: instances left unlabelled (search budget exceeded).
    LabelsLeft { unlabelled: u64, total: u64 },
    /// An interrupted `--seed random` run is continued with the seed
    /// kept in `seed_file`.
    SecretSeedContinued { seed_file: &'a Path },
    /// A secret seed was drawn and kept only in `seed_file`; `digest` is
    /// the dataset's, to publish.
    SecretSeedKept {
        seed_file: &'a Path,
        digest: &'a str,
    },
    /// A request to `url` failed (`why`) and is retried after `delay`.
    Retry {
        url: &'a str,
        why: &'a str,
        attempt: u32,
        retries: u32,
        delay: Duration,
    },
}

/// Which file a [`Event::Written`] is.
#[derive(Clone, Copy, Debug)]
pub enum WrittenFile<'a> {
    /// A whole dataset of the named domain.
    Dataset { domain: &'a str },
    /// Shard `index` of `count`.
    Shard { index: u64, count: u64 },
    /// A dataset merged from shards.
    Merged,
}

/// The facts of a completed dataset file.
#[derive(Clone, Debug)]
pub struct Written<'a> {
    pub file: WrittenFile<'a>,
    pub path: &'a Path,
    /// Lines in the file now, and before this run.
    pub instances: u64,
    pub resumed_from: u64,
    /// The file was already complete; nothing was written.
    pub up_to_date: bool,
    pub seconds: f64,
    /// Instances made by this run per second.
    pub rate: f64,
    pub resamples: u64,
    pub unsat: u64,
    pub duplicates: u64,
    /// Draws outside the difficulty band, redrawn.
    pub out_of_band: u64,
    /// Of those, certified draws whose interval crosses an edge of the
    /// band, and draws left unlabelled (`--exact-only`).
    pub band_straddling: u64,
    pub band_unlabelled: u64,
}

/// Why a dataset's derived files hold no SFT records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoSft {
    /// `--no-sft`.
    Flag,
    /// `--sft-parts` leaves this `--split` part out.
    PartLeftOut,
}

/// The facts of a dataset's written derived files.
#[derive(Clone, Debug)]
pub struct DerivedWritten<'a> {
    pub domain: &'a str,
    /// Books checked, and whether their files were written.
    pub books: u64,
    pub books_written: bool,
    pub sft_records: u64,
    pub sft_steps: u64,
    /// Why no SFT records were written, if none were.
    pub no_sft: Option<NoSft>,
    /// Unlabelled lines, which get no SFT record.
    pub unlabelled: u64,
    pub seconds: f64,
}

/// Where a long job reports how far it is. Called from worker threads, so
/// every method takes `&self`.
pub trait Progress: Sync {
    /// A stage begins; the one before it, if any, is over.
    fn stage(&self, stage: Stage<'_>);
    /// `done` units of the current stage are finished (a `done` past the
    /// stage's total raises the total).
    fn position(&self, done: u64);
    /// The current stage has at least `total` units.
    fn grow_to(&self, total: u64);
    /// The current stage is over.
    fn finish(&self);
    /// A note, warning or summary.
    fn event(&self, event: Event<'_>);
}

/// Progress reported nowhere (tests, benchmarks, embedders).
#[derive(Clone, Copy, Debug, Default)]
pub struct Quiet;

impl Progress for Quiet {
    fn stage(&self, _: Stage<'_>) {}
    fn position(&self, _: u64) {}
    fn grow_to(&self, _: u64) {}
    fn finish(&self) {}
    fn event(&self, _: Event<'_>) {}
}
