//! The derived files of a finished dataset file, as the main job writes
//! them after `generate` and `merge`: knowledge books, SFT records and the
//! HF export ([`crate::derived`]), the `--books auto` rule, and
//! the lines the run prints about them.

use std::path::Path;

use super::error::JobError;
use super::job::{AUTO_BOOKS_LIMIT, Books, DerivedFiles};
use crate::derived::{self, DerivedOptions};
use crate::domain::Domain;
use crate::pipeline::write::OutputError;
use crate::progress::{DerivedWritten, Event, NoSft, Progress, Stage};
use crate::render::Renderer;

/// Writes books, SFT records (when `sft`) and the HF export for the
/// finished dataset file `dataset` of `domain` (`part`: the `--split`
/// part or curriculum level it is), and prints what it did. `labels`:
/// the run searched labels, so unlabelled lines earn a warning.
pub(super) fn derive(
    domain: &Domain,
    dataset: &Path,
    files: &DerivedFiles,
    sft: bool,
    labels: bool,
    part: Option<&str>,
    progress: &dyn Progress,
) -> Result<(), JobError> {
    let renderer = Renderer::new(&files.templates, files.render);
    // The dataset was just written: a read failing here is the disk's
    // (or the file was swapped), and would otherwise pick books by a
    // count of 0.
    let lines = crate::files::read::read(dataset)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count() as u64)
        .map_err(|source| crate::dataset::DatasetError::Io {
            path: dataset.to_path_buf(),
            source,
        })?;
    let books = match files.books {
        Books::Files => true,
        Books::None => false,
        Books::Auto => lines <= AUTO_BOOKS_LIMIT,
    };
    if files.books == Books::Auto && !books {
        progress.event(Event::BooksSkipped {
            instances: lines,
            limit: AUTO_BOOKS_LIMIT,
        });
    }
    let options = DerivedOptions {
        books,
        sft,
        steps: files.steps && sft,
        hf: files.hf,
        part,
        sft_left_out: part.is_some() && files.sft && !sft,
    };
    progress.stage(Stage::new("books and SFT records", "instances", lines));
    let result = derived::write_derived(domain, dataset, &renderer, options, progress);
    progress.finish();
    for removed in result.iter().flat_map(|s| &s.removed) {
        progress.event(Event::StaleRemoved { what: removed });
    }
    let s = result.map_err(OutputError::from)?;
    let no_sft = match (options.sft, part.is_some() && files.sft) {
        (true, _) => None,
        (false, true) => Some(NoSft::PartLeftOut),
        (false, false) => Some(NoSft::Flag),
    };
    if s.up_to_date {
        progress.event(Event::DerivedUpToDate {
            domain: &domain.name,
            no_sft,
        });
        return Ok(());
    }
    progress.event(Event::Derived(DerivedWritten {
        domain: &domain.name,
        books: s.books,
        books_written: options.books,
        sft_records: s.sft_records,
        sft_steps: s.sft_steps,
        no_sft,
        unlabelled: s.unlabelled,
        seconds: s.seconds,
    }));
    if s.labels.exact + s.labels.certified > 0 {
        progress.event(Event::Labels {
            domain: &domain.name,
            exact: s.labels.exact,
            certified: s.labels.certified,
            mean_gap: s.labels.mean_gap(),
            max_gap: s.labels.gap_max,
        });
    }
    if labels && s.unlabelled > 0 {
        progress.event(Event::Unlabelled {
            instances: s.unlabelled,
        });
    }
    Ok(())
}

/// Whether a `--split` part gets SFT records: every part when `sft_parts`
/// is not given, else the parts it names.
pub(super) fn part_gets_sft(sft_parts: Option<&[String]>, part: Option<&str>) -> bool {
    match (sft_parts, part) {
        (Some(names), Some(part)) => names.iter().any(|name| name == part),
        _ => true,
    }
}
