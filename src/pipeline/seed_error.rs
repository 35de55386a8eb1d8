//! Why a `--seed random` run's private seed could not be drawn, its seed
//! file read, or a dataset proven its ([`SeedError`], `pipeline::secret`'s
//! error), and the bounds its messages name.

use std::path::PathBuf;

/// Most bytes a seed file may have (a seed file holds the domain
/// document, which a domain file bounds).
pub(super) const MAX_SEED_FILE_BYTES: u64 = 64 << 20;

/// Most instances [`super::secret::verify`] regenerates: `generate -n`'s bound.
pub const MAX_VERIFIED_INSTANCES: u64 = super::MAX_INSTANCES;

/// Why a seed could not be drawn, a seed file read, or a dataset proven
/// the seed's ([`super::secret::verify`]).
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    /// The operating system's random source failed (exit 2).
    #[error("the operating system gave no random seed: {0}")]
    NoRandomSeed(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A file cannot be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{}` is not a regular file", path.display())]
    NotAFile { path: PathBuf },
    #[error("`{}` is larger than any seed file ({MAX_SEED_FILE_BYTES} bytes at most)", path.display())]
    TooLarge { path: PathBuf },
    /// Not a seed file's JSON (the content is never quoted: a value in the
    /// wrong place may be the seed itself).
    #[error("`{}` is not a kumo-gen seed file (line {line}, column {column}: {why})", path.display())]
    NotASeedFile {
        path: PathBuf,
        line: usize,
        column: usize,
        why: &'static str,
    },
    #[error(
        "`{}` records {n} instances; a dataset `generate` can make has 1 to {MAX_VERIFIED_INSTANCES} (`-n`'s bound), so this is no seed file of one",
        path.display()
    )]
    Count { path: PathBuf, n: u64 },
    /// The seed file is not in `OUT/SECRET-seeds/<domain>/`.
    #[error("give the dataset file to verify")]
    NoDataset,
    #[error("the domain in `{}` does not compile: {source}", path.display())]
    Domain {
        path: PathBuf,
        #[source]
        source: crate::domain::LoadError,
    },
    #[error("an excluded set of the dataset cannot be read: {0}")]
    Excluded(#[source] crate::contamination::ReadError),
    #[error("the excluded sets changed since the dataset was made: {reason}")]
    ExcludedChanged { reason: String },
    #[error("the seed file: {0}")]
    Split(#[source] crate::contamination::split::LabelError),
    #[error(
        "`{}` has {lines} lines, the seed file records {n} instances: it is not the dataset of this seed (or it is not finished; rerun the same `generate` command to finish it)",
        path.display()
    )]
    LineCount { path: PathBuf, lines: u64, n: u64 },
    #[error("regenerating failed: {}", .0.message)]
    Regenerate(#[source] crate::synth::SynthError),
    /// `first_line`: the first line that differs (`None`: the lengths do).
    #[error(
        "`{}` is not the dataset of this seed: {} (regenerated digest {digest})",
        path.display(),
        match first_line { Some(line) => format!("line {line} differs"), None => "the lengths differ".into() }
    )]
    Differs {
        path: PathBuf,
        first_line: Option<usize>,
        digest: String,
    },
    #[error(
        "the dataset matches the seed, but the seed file recorded digest {recorded}, not {digest}"
    )]
    DigestDiffers { recorded: String, digest: String },
    /// The seed file of an earlier `--seed random` run of the same setting
    /// exists but cannot be read: drawing a new seed would overwrite the
    /// only record of that run's seed.
    #[error(
        "the seed file of an earlier `--seed random` run cannot be read, so its seed can be neither continued nor kept: {0}"
    )]
    BrokenSeedFile(#[source] Box<SeedError>),
}

impl SeedError {
    /// Whether the user's file or dataset is the cause (exit 1), not the
    /// operating system (exit 2).
    pub fn is_input(&self) -> bool {
        !matches!(self, SeedError::NoRandomSeed(_))
    }

    /// How to fix it, when there is advice.
    pub fn help(&self) -> Option<String> {
        match self {
            SeedError::BrokenSeedFile(_) => Some(
                "restore the seed file from a copy to continue that run, or pass `--force` to draw a new seed and replace that run's dataset and seed file (its seed is then lost)".into(),
            ),
            _ => None,
        }
    }
}
