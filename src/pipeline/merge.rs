//! `pipeline::merge`: `kumo-gen merge` end to end, configured by one
//! [`MergeJob`]: every complete shard group under `--out` joined into the
//! dataset file the unsharded run writes, byte for byte
//! ([`crate::pipeline::write::merge`]), its summary line, then its derived files
//! (books, SFT, HF) from the domain its manifest records.

use std::path::Path;

use super::derive::{derive, part_gets_sft};
use super::error::JobError;
use super::generate::report_written;
use super::job::MergeJob;
use crate::dataset::Dataset;
use crate::pipeline::write::{self, Summary};
use crate::progress::{Progress, Stage, WrittenFile};

/// Runs `job` on the current rayon pool. Returns each merged dataset's
/// summary (their file locks already released).
pub fn merge(job: &MergeJob, progress: &dyn Progress) -> Result<Vec<Summary>, JobError> {
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
