//! The parameters of one setting (`--truths`, `--actions`, `--valid`,
//! `--seed`, ...), the defaults and bounds of synthesis, and the counters
//! of the work done.

/// The parameters of one setting. `n` is not among them: instance `i`
/// does not depend on how many instances are asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// N_truth: truths per instance.
    pub truths: usize,
    /// N_action: actions per instance.
    pub actions: usize,
    /// N_valid: valid truths per instance (>= 1, < N_truth).
    pub valid: usize,
    /// The dataset seed (`--seed`).
    pub seed: u64,
    /// Turn the shortcut guard off (paper behaviour).
    pub allow_shortcuts: bool,
    /// Decimals of sampled float values.
    pub decimals: u32,
}

/// The default `--seed`.
pub const DEFAULT_SEED: u64 = 0;
/// The default number of decimals of float observations.
pub const DEFAULT_DECIMALS: u32 = 2;
/// Samples one draw may take (UNSAT, too few usable actions, shortcut)
/// before the request is declared infeasible.
pub const MAX_SAMPLES: u32 = 2000;
/// Draws one index may take to find a key not seen before.
pub const MAX_DUPLICATE_RETRIES: u32 = 1000;

impl Params {
    /// A setting with the default seed, guard and precision.
    pub fn new(truths: usize, actions: usize, valid: usize) -> Params {
        Params {
            truths,
            actions,
            valid,
            seed: DEFAULT_SEED,
            allow_shortcuts: false,
            decimals: DEFAULT_DECIMALS,
        }
    }
}

/// Counters of the work done, summed in index order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Instances produced.
    pub instances: u64,
    /// Samples thrown away and drawn again (any reason).
    pub resamples: u64,
    /// Samples proven UNSAT (by the solver or the coverage pre-check).
    pub unsat: u64,
    /// SAT calls made.
    pub sat_calls: u64,
    /// Draws rejected because their key was already taken.
    pub duplicates: u64,
    /// Draws rejected because their difficulty is outside the requested
    /// band.
    pub out_of_band: u64,
    /// Of `out_of_band`: certified draws whose interval crosses an edge of
    /// the band (`difficulty::band`).
    pub band_straddling: u64,
    /// Of `out_of_band`: draws the search budget left unlabelled
    /// (`--exact-only`).
    pub band_unlabelled: u64,
}

impl Stats {
    pub fn add(&mut self, other: &Stats) {
        self.instances += other.instances;
        self.resamples += other.resamples;
        self.unsat += other.unsat;
        self.sat_calls += other.sat_calls;
        self.duplicates += other.duplicates;
        self.out_of_band += other.out_of_band;
        self.band_straddling += other.band_straddling;
        self.band_unlabelled += other.band_unlabelled;
    }
}
