//! How far a long job is: the one progress interface the library reports
//! through (`pipeline::generate` and `pipeline::merge`, the derived files,
//! `pipeline::relabel`, `eval`), re-exported as `pipeline::Progress`.
//!
//! A job names each stage it starts ([`Stage`]: what it does, what it
//! counts, how many) and then reports positions; the command line's display
//! (`cli::progress`: a bar on a terminal, a line every few seconds
//! elsewhere, the up-front forecast of a long stage) implements it, and
//! [`Quiet`] reports nowhere. Nothing here prints, so the output never
//! depends on it.

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
}

/// Progress reported nowhere (tests, benchmarks, embedders).
#[derive(Clone, Copy, Debug, Default)]
pub struct Quiet;

impl Progress for Quiet {
    fn stage(&self, _: Stage<'_>) {}
    fn position(&self, _: u64) {}
    fn grow_to(&self, _: u64) {}
    fn finish(&self) {}
}
