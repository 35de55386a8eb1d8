//! The library's main job: [`generate()`] and [`merge()`] run `kumo-gen
//! generate` / `curriculum` and `kumo-gen merge` end to end, each from one
//! value ([`GenerateJob`], [`MergeJob`]) and reporting through one
//! [`Progress`]; the command line only turns flags into those values.
//!
//! This file is the pipeline in memory, for embedders (the Python package
//! in `python/`): what the main command and `eval` compute, without files.
//!
//! In: a compiled [`Domain`] and the [`Params`] of one setting. Out:
//! instance lines exactly as `kumo-gen generate` writes them into
//! `<setting>.jsonl` (without the newline) by [`generate_lines`], and the
//! playable [`Task`] of a line exactly as `kumo-gen eval` builds it by
//! [`task`].
//!
//! Same code, same bytes: instances come from [`Synthesizer::generate`]
//! over `0..n` (the dedup-in-index-order rule every writer replays, so
//! the result does not depend on the writers' chunking or the thread
//! count), labels from [`crate::search::optimal_for_instance`] under the
//! caller's [`SearchBudget`] (memo entries and node expansions, as
//! `--search-budget` and `--search-nodes`), lines from
//! [`crate::dataset::record::render`]; a task's book is
//! [`crate::game::render_book`] (the generator's book of that line), its
//! system prompt [`crate::game::protocol::system_prompt`] and its judge
//! [`Judge`]. Nothing here touches the file system.

mod derive;
pub mod error;
pub mod explorer_curve;
pub mod family_curve;
pub mod generate;
pub mod job;
pub mod label;
mod line_index;
pub mod merge;
pub mod relabel;
pub mod secret;
mod seed_error;
pub mod write;

pub use crate::progress::{Forecast, Progress, Quiet, Stage};
pub use error::JobError;
pub use generate::generate;
pub use job::{
    AUTO_BOOKS_LIMIT, Announce, Books, DatasetRun, Datasets, DerivedFiles, GenerateJob, LabelJob,
    MergeExclude, MergeJob, Target,
};
pub use label::label;
pub use line_index::{GRAIN as LINE_INDEX_GRAIN, line_index};
pub use merge::merge;

/// Most instances one dataset may have (`generate -n`, `verify`): the
/// dedup keys of every instance stay in memory (about 100 bytes each, so
/// 10^8 needs about 10 GB), and a larger request is refused at once rather
/// than failing hours later.
pub const MAX_INSTANCES: u64 = 100_000_000;

use rayon::prelude::*;

use crate::dataset::record::Labelled;
use crate::difficulty::{Band, Banded, Reference};
use crate::domain::Domain;
use crate::game::{self, Judge};
use crate::game::{Task, protocol, render_book};
use crate::render::{Renderer, TaskError};
use crate::search::SearchBudget;
use crate::synth::{Dedup, ErrorKind, Instance, Params, Stats, SynthError, Synthesizer};

/// Instances `0..n` of a setting as the lines of its dataset file, with
/// `optimal` labels when `labels` gives the search budget (`None`: as
/// `--no-labels`). Labels are computed in parallel on the current rayon
/// pool; the lines are in index order.
pub fn generate_lines(
    domain: &Domain,
    params: Params,
    n: u64,
    labels: Option<SearchBudget>,
) -> Result<Vec<String>, SynthError> {
    generate_range_lines(domain, params, 0..n, labels, None, None)
}

/// Lines `range` of the dataset file of `0..range.end` (line `i` is
/// instance `i`), without labelling or rendering the lines before
/// `range.start`. Instance `i` is the first draw of its stream whose dedup
/// key no instance `j < i` has (and that `exclude` does not hold). Without
/// `exclude` and a band, which draw that is comes from the setting's line
/// index ([`line_index`]: built once per setting and cache directory, then
/// constant time per line); with `exclude` the earlier instances are
/// drawn again (their keys decide line `i`), but only the asked-for ones
/// are labelled and rendered. With a difficulty `band`
/// (which needs `labels`) a draw must also lie in the band, so the
/// earlier instances are labelled too ([`crate::difficulty::band`]).
pub fn generate_range_lines(
    domain: &Domain,
    params: Params,
    range: std::ops::Range<u64>,
    labels: Option<SearchBudget>,
    exclude: Option<std::sync::Arc<crate::contamination::Exclusion>>,
    band: Option<Band>,
) -> Result<Vec<String>, SynthError> {
    let synth = Synthesizer::new(domain, params.clone())?;
    synth.check_count(if range.is_empty() { 0 } else { range.end })?;
    let mut stats = Stats::default();
    let indexed = range.start > 0 && exclude.is_none();
    let mut seen = Dedup::excluding(exclude);
    let reference = match labels {
        Some(_) => Some(Reference::cached(domain, &params)?),
        None => None,
    };
    let made: Vec<(Instance, Option<Labelled>)> = match (band, labels) {
        (Some(band), Some(budget)) => {
            let banded = Banded::new(&synth, band, budget)?;
            if range.start > 0 {
                banded.generate(0..range.start.min(range.end), &mut seen, &mut stats)?;
            }
            banded
                .generate(range, &mut seen, &mut stats)?
                .into_iter()
                .map(|(instance, label)| (instance, Some(Ok(label))))
                .collect()
        }
        (Some(_), None) => {
            return Err(SynthError::new(
                ErrorKind::Invalid,
                "--min-expected",
                "a difficulty band needs labels: a draw's difficulty is its label".into(),
                "drop `labels=False`, or drop the band",
            ));
        }
        (None, _) if indexed => {
            // Line `i` without the replay of lines `0..i`: the setting's
            // line index says which draw of stream `i` it is.
            line_index(&synth, range.end)?
                .instances(&synth, range)?
                .into_iter()
                .map(|instance| (instance, None))
                .collect()
        }
        (None, _) => {
            if range.start > 0 {
                synth.generate(0..range.start.min(range.end), &mut seen, &mut stats)?;
            }
            synth
                .generate(range, &mut seen, &mut stats)?
                .into_iter()
                .map(|instance| (instance, None))
                .collect()
        }
    };
    Ok(made
        .par_iter()
        .with_min_len(1)
        .map(|made| {
            let line = write::made_line(domain, labels, reference.as_deref(), made);
            // serde_json writes UTF-8.
            String::from_utf8_lossy(&line).into_owned()
        })
        .collect())
}

/// The task `kumo-gen eval` plays for an instance line of `domain` whose
/// book file is missing (the book rendered from the domain, which is the
/// book the generator writes for the line): the instance, the system
/// prompt with the book, and the judge. Errors say what is wrong with the
/// line.
pub fn task(renderer: &Renderer, domain: &Domain, line: &str) -> Result<Task, TaskError> {
    let instance: game::InstanceLine = serde_json::from_str(line).map_err(TaskError::NotALine)?;
    let book = render_book(renderer, domain, &instance)?;
    let system_prompt = protocol::system_prompt(renderer, domain, &instance, &book)?;
    let judge = Judge::new(domain, &instance)?;
    Ok(Task {
        instance,
        system_prompt,
        judge,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_judge_the_valid_truth_right() {
        let (domain, _) = crate::domain::Registry::new(None).load("medical").unwrap();
        let templates = crate::render::Templates::resolve(None).unwrap();
        let renderer = Renderer::new(&templates, crate::render::RenderOptions::default());
        for line in generate_lines(&domain, Params::new(4, 6, 1), 5, None).unwrap() {
            let task = task(&renderer, &domain, &line).unwrap();
            let valid = task.instance.valid_truths();
            assert!(task.judge.evaluate(&valid[0]));
            assert!(task.system_prompt.contains(&valid[0]));
        }
        assert!(task(&renderer, &domain, "{}").is_err());
    }

    #[test]
    fn a_range_equals_those_lines_of_the_whole_file() {
        let text = include_str!("../../tests/fixtures/ok/clinic.yaml");
        let (domain, _) = Domain::from_yaml("clinic.yaml", text).unwrap();
        // Three truths of a small domain collide often: the dedup replay
        // of the earlier draws is exercised.
        let params = Params::new(3, 3, 1);
        let budget = Some(SearchBudget::default());
        let all = generate_lines(&domain, params.clone(), 150, budget).unwrap();
        let synth = Synthesizer::new(&domain, params.clone()).unwrap();
        let mut stats = Stats::default();
        synth
            .generate(0..150, &mut Dedup::new(), &mut stats)
            .unwrap();
        assert!(
            stats.duplicates > 0,
            "the setting must have duplicate draws"
        );
        for (start, end) in [(0, 1), (97, 98), (120, 150), (149, 150)] {
            let part =
                generate_range_lines(&domain, params.clone(), start..end, budget, None, None)
                    .unwrap();
            assert_eq!(part, all[start as usize..end as usize]);
        }
        assert!(generate_range_lines(&domain, params, 5..5, budget, None, None).is_err());
    }

    #[test]
    fn a_banded_range_equals_those_lines_of_the_whole_banded_file() {
        let text = include_str!("../../tests/fixtures/ok/clinic.yaml");
        let (domain, _) = Domain::from_yaml("clinic.yaml", text).unwrap();
        let params = Params::new(3, 3, 1);
        let budget = Some(SearchBudget::default());
        let band = Some(Band {
            min_expected: Some(1.4),
            max_golden: Some(1),
            ..Band::default()
        });
        let all = generate_range_lines(&domain, params.clone(), 0..80, budget, None, band).unwrap();
        for line in &all {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(value["difficulty"]["golden_length"].as_u64() <= Some(1));
        }
        for (start, end) in [(0, 1), (41, 42), (60, 80)] {
            let part =
                generate_range_lines(&domain, params.clone(), start..end, budget, None, band)
                    .unwrap();
            assert_eq!(part, all[start as usize..end as usize]);
        }
        // The same draws without the band differ: the band redrew them.
        assert_ne!(
            generate_lines(&domain, params.clone(), 80, budget).unwrap(),
            all
        );
        assert!(generate_range_lines(&domain, params, 0..5, None, None, band).is_err());
    }
}
