//! `pipeline::merge`: `kumo-gen merge` end to end, configured by one
//! [`MergeJob`]: every complete shard group under `--out` joined into the
//! dataset file the unsharded run writes, byte for byte
//! ([`crate::pipeline::write::merge`]), its summary line, then its derived files
//! (books, SFT, HF) from the domain its manifest records.

use std::path::{Path, PathBuf};

use super::derive::{DerivedFiles, derive, part_gets_sft};
use super::generate::report_written;
use crate::dataset::Dataset;
use crate::domain::Registry;
use crate::error::Error;
use crate::pipeline::write::{self, MergeExclude, Summary};
use crate::progress::{Progress, Stage, WrittenFile};
use crate::search::SearchBudget;

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

/// Runs `job` on the current rayon pool. Returns each merged dataset's
/// summary (their file locks already released).
pub fn merge(job: &MergeJob, progress: &dyn Progress) -> Result<Vec<Summary>, Error> {
    progress.stage(Stage::new("merge", "instances", 0));
    let result = write::merge(
        &job.out,
        job.force,
        Some(job.labels),
        progress,
        &job.exclude,
    );
    progress.finish();
    let mut summaries = result?;
    for s in &mut summaries {
        report_written(WrittenFile::Merged, s, progress);
        // The domain the dataset was made from, as its manifest records it.
        let dir = s.path.parent().unwrap_or(Path::new("."));
        let data = Dataset::open(job.registry, dir, None)?;
        let sft = job.derived.sft && part_gets_sft(job.sft_parts.as_deref(), s.part.as_deref());
        derive(
            data.domain(),
            &s.path,
            &job.derived,
            sft,
            true,
            s.part.as_deref(),
            progress,
        )?;
        s.lock = None;
    }
    Ok(summaries)
}
