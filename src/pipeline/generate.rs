//! `pipeline::generate`: the main job end to end (`kumo-gen generate`,
//! `kumo-gen curriculum`), configured by one [`GenerateJob`].
//!
//! Per dataset of the job (one, each `--split` part under `OUT/<part>/`,
//! or each curriculum level under `OUT/level-k/`): the setting's capacity
//! (printed, and an impossible `n` refused), the private seed file of a
//! `--seed random` run, the writer ([`crate::pipeline::write::generate`]: the
//! whole dataset or one shard, labels searched under the job's
//! [`SearchBudget`], which the manifest records), the summary line, then
//! the derived files (books, SFT, HF; not for a shard: they follow
//! `merge`) and the seed file's digest. Stages report through
//! [`Progress`], and so do its notes, warnings and summaries ([`Event`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::derive::{derive, part_gets_sft};
use super::error::JobError;
use super::job::{Announce, DatasetRun, Datasets, GenerateJob, Target};
use super::secret;
use crate::contamination::split::{self, Part, PartFilter};
use crate::contamination::{Exclusion, capacity};
use crate::difficulty::curriculum::{level_band, level_name};
use crate::domain::Domain;
use crate::pipeline::write::{self, Summary};
use crate::progress::{Event, Forecast, Progress, Stage, Written, WrittenFile};
use crate::synth::{FirstDraws, Params};

/// Runs `job` on the current rayon pool: every dataset it names, each
/// with its derived files. Returns each dataset's summary (their file
/// locks already released).
pub fn generate(job: &GenerateJob, progress: &dyn Progress) -> Result<Vec<Summary>, JobError> {
    check_folder_names(job)?;
    let mut params = job.params.clone();
    let runs = dataset_runs(job)?;
    if job.secret_seed {
        // An interrupted run of this command is continued with its own
        // seed (`--force` always draws a new one).
        let mut interrupted = None;
        if !job.force {
            for run in &runs {
                interrupted = secret::interrupted(&run.out, &job.domain.name, &params)?;
                if interrupted.is_some() {
                    break;
                }
            }
        }
        params.seed = match interrupted {
            Some((path, record)) => {
                progress.event(Event::SecretSeedContinued { seed_file: &path });
                record.seed
            }
            None => secret::draw_seed()?,
        };
    }
    // Every dataset's capacity is checked before any is written: a part
    // or level too small for its share is refused with nothing written.
    // The sample's draws are drawn once for all of them (every dataset of
    // the job draws from the same streams) and handed to the writers.
    let mut first_draws = None;
    let mut checked = Vec::with_capacity(runs.len());
    for run in runs {
        let capacity = check_capacity(
            &job.domain,
            &params,
            run.exclude.as_deref(),
            run.n,
            &mut first_draws,
        )?;
        checked.push((run, capacity));
    }
    let mut summaries = Vec::new();
    for (run, capacity) in checked {
        report_run(&job.domain, &run, capacity.as_ref(), progress);
        // A part's or level's folder: made below `--out`, never through a
        // symbolic link (the writers refuse links below it).
        if run.out != job.out {
            crate::files::create_dir_below(&job.out, &run.out)?;
        }
        let mut summary = write_dataset(job, &params, run, first_draws.clone(), progress)?;
        summary.lock = None;
        summaries.push(summary);
    }
    Ok(summaries)
}

/// The datasets `job` names, in the order they are written.
fn dataset_runs(job: &GenerateJob) -> Result<Vec<DatasetRun>, JobError> {
    let mut runs = Vec::new();
    match &job.datasets {
        Datasets::One => runs.push(job.whole()),
        Datasets::Split {
            parts,
            sft_parts,
            key,
        } => {
            check_sft_parts(parts, sft_parts.as_deref())?;
            let base = job
                .exclude
                .clone()
                .unwrap_or_else(|| Arc::new(Exclusion::none(&job.domain)));
            for (index, (part, n)) in parts
                .iter()
                .zip(split::part_sizes(parts, job.n))
                .enumerate()
            {
                let filter = PartFilter::by(parts, index, *key);
                let out = job.out.join(&part.name);
                runs.push(DatasetRun {
                    announce: Some(Announce::Part {
                        label: filter.label.clone(),
                    }),
                    out,
                    n,
                    exclude: Some(Arc::new(base.for_part(filter))),
                    part: Some(part.name.clone()),
                    band: job.band,
                    sft: job.derived.sft && part_gets_sft(sft_parts.as_deref(), Some(&part.name)),
                });
            }
        }
        Datasets::Levels(levels) => {
            for level in 1..=*levels {
                let name = level_name(level);
                let out = job.out.join(&name);
                let band = level_band(level, *levels);
                runs.push(DatasetRun {
                    announce: Some(Announce::Level {
                        level,
                        levels: *levels,
                    }),
                    out,
                    n: job.n,
                    exclude: job.exclude.clone(),
                    part: Some(name),
                    band: Some(band),
                    sft: job.derived.sft,
                });
            }
        }
    }
    Ok(runs)
}

/// The folders the job names inside `--out` are not kumo-gen's own
/// ([`crate::dataset::reserved`]): the domain's folder (`OUT/<domain>/`, also
/// inside each part or level) is no reserved name, and no `--split` part
/// is the domain's folder name in any letter case (`OUT/<part>/` beside
/// `OUT/<domain>/` of an unsplit run).
fn check_folder_names(job: &GenerateJob) -> Result<(), JobError> {
    let folder = write::domain_dir(std::path::Path::new(""), &job.domain.name)
        .display()
        .to_string();
    if let Some(why) = crate::dataset::reserved::reserved(&folder) {
        return Err(JobError::input_with_help(
            format!("domain `{}`: its output folder {why}", job.domain.name),
            "rename the domain (its `name:`), or copy it under another name",
        ));
    }
    if let Datasets::Split { parts, .. } = &job.datasets
        && let Some(part) = parts.iter().find(|p| {
            crate::dataset::reserved::folded(&p.name) == crate::dataset::reserved::folded(&folder)
        })
    {
        return Err(JobError::input_with_help(
            format!(
                "`--split` part `{}` is the name of the domain's folder `{folder}`: `OUT/{}/` would mix with an unsplit dataset's `OUT/{folder}/`",
                part.name, part.name
            ),
            "name the part otherwise (`train`, `test`, `valid`)",
        ));
    }
    Ok(())
}

/// `--sft-parts` names parts of `--split` only.
fn check_sft_parts(parts: &[Part], sft_parts: Option<&[String]>) -> Result<(), JobError> {
    let Some(unknown) = sft_parts
        .into_iter()
        .flatten()
        .find(|name| !parts.iter().any(|p| &p.name == *name))
    else {
        return Ok(());
    };
    let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
    Err(JobError::Usage {
        message: format!("`--sft-parts`: `{unknown}` is not a part of `--split`"),
        help: Some(format!("name parts among {}", names.join(", "))),
    })
}

/// One dataset: the capacity check, the seed file of a secret seed, the
/// instances, the summary line, then books, SFT and HF.
fn write_dataset<'a>(
    job: &'a GenerateJob,
    params: &Params,
    run: DatasetRun,
    first_draws: Option<Arc<FirstDraws<'a>>>,
    progress: &dyn Progress,
) -> Result<Summary, JobError> {
    let domain = &job.domain;
    progress.stage(Stage {
        name: if job.labels.is_some() {
            "synthesis and labels"
        } else {
            "synthesis"
        },
        unit: "instances",
        total: job.target.lines_of(run.n),
        forecast: Some(Forecast {
            subject: format!("{} {}x{}", domain.name, params.truths, params.actions),
            threads: rayon::current_num_threads(),
        }),
    });
    let writer = write::Job {
        main: job,
        params,
        run: &run,
        first_draws,
        progress,
    };
    let mut secret_run = None;
    if job.secret_seed {
        secret_run = Some(secret::begin(&writer)?);
    }
    let result = write::generate(&writer);
    progress.finish();
    let summary = result?;
    let file = match job.target {
        Target::Shard(s) => WrittenFile::Shard {
            index: s.index,
            count: s.count,
        },
        Target::Whole => WrittenFile::Dataset {
            domain: &domain.name,
        },
    };
    report_written(file, &summary, progress);
    // Books and SFT follow the final file: after `merge` for shards.
    if job.target == Target::Whole {
        derive(
            domain,
            &summary.path,
            &job.derived,
            run.sft,
            job.labels.is_some(),
            run.part.as_deref(),
            progress,
        )?;
    }
    if let Some(run) = &mut secret_run {
        let digest = secret::finish(run, &summary.path)?;
        progress.event(Event::SecretSeedKept {
            seed_file: &run.path,
            digest: &digest,
        });
    }
    Ok(summary)
}

/// The capacity of the setting (estimated from its first draws, fewer
/// for a small `n`) and a warning when `n` comes close, to report; the
/// error when `n` is impossible. A setting whose draws fail is
/// left to the run, which names the cause.
///
/// `first_draws` holds the draws an earlier dataset of the job sampled;
/// they are extended when this one samples more, and handed to the
/// writers so the run copies them instead of drawing them again.
fn check_capacity<'d>(
    domain: &'d Domain,
    params: &Params,
    exclusion: Option<&Exclusion>,
    n: u64,
    first_draws: &mut Option<Arc<FirstDraws<'d>>>,
) -> Result<Option<CapacityFound>, JobError> {
    let Ok(synth) = crate::synth::Synthesizer::new(domain, params.clone()) else {
        return Ok(None);
    };
    // A small job needs no large sample to see that it fits: 8 draws per
    // instance asked for, at least 64 (a tiny setting still shows its
    // repeats), at most the full sample. A job that excludes (`--exclude`,
    // a `--split` part) takes the full sample, since its count is read
    // from the draws the exclusion leaves.
    let sample = match exclusion {
        Some(_) => capacity::SAMPLE,
        None => capacity::SAMPLE.min(n.saturating_mul(8).max(64)),
    };
    if first_draws.as_ref().is_none_or(|d| d.len() < sample) {
        let synth = synth.reusing(first_draws.clone());
        let Ok(drawn) = FirstDraws::draw(&synth, sample) else {
            return Ok(None);
        };
        *first_draws = Some(Arc::new(drawn));
    }
    let Some(draws) = first_draws.as_deref() else {
        return Ok(None);
    };
    let found = capacity::of_draws(domain, exclusion, draws.first(sample));
    let estimate = found.describe();
    let what = format!(
        "domain `{}` with {} truths and {} actions",
        domain.name, params.truths, params.actions
    );
    match found.check(n, &what) {
        Ok(None) => Ok(Some(CapacityFound {
            estimate,
            warning: None,
        })),
        Ok(Some(warning)) => Ok(Some(CapacityFound {
            estimate,
            warning: Some(warning),
        })),
        Err(e) => Err(JobError::Capacity(e)),
    }
}

/// A setting's estimated capacity, in words, and the warning of an `n`
/// that comes close to it.
struct CapacityFound {
    estimate: String,
    warning: Option<String>,
}

/// Reports what a dataset of the job is (a part, a level) and its
/// setting's capacity, before it is written.
fn report_run(
    domain: &Domain,
    run: &DatasetRun,
    capacity: Option<&CapacityFound>,
    progress: &dyn Progress,
) {
    match (&run.announce, run.band) {
        (Some(Announce::Part { label }), _) => progress.event(Event::PartBegins {
            part: label,
            n: run.n,
            out: &run.out,
        }),
        (Some(Announce::Level { level, levels }), band) => progress.event(Event::LevelBegins {
            level: *level,
            levels: *levels,
            min_percentile: band.and_then(|b| b.min_percentile).unwrap_or(0.0),
            max_percentile: band.and_then(|b| b.max_percentile).unwrap_or(100.0),
            n: run.n,
            out: &run.out,
        }),
        (None, _) => {}
    }
    if let Some(found) = capacity {
        progress.event(Event::Capacity {
            domain: &domain.name,
            estimate: &found.estimate,
        });
        if let Some(warning) = &found.warning {
            progress.event(Event::CapacityClose { message: warning });
        }
    }
}

/// Reports a completed dataset file (`file`: which one) and the note of
/// its run, if any.
pub(super) fn report_written(file: WrittenFile<'_>, s: &Summary, progress: &dyn Progress) {
    progress.event(Event::Written(Written {
        file,
        path: &s.path,
        instances: s.instances,
        resumed_from: s.resumed_from,
        up_to_date: s.up_to_date,
        seconds: s.total_s,
        rate: s.rate(),
        resamples: s.stats.resamples,
        unsat: s.stats.unsat,
        duplicates: s.stats.duplicates,
        out_of_band: s.stats.out_of_band,
        band_straddling: s.stats.band_straddling,
        band_unlabelled: s.stats.band_unlabelled,
    }));
    if let Some(note) = &s.note {
        progress.event(Event::WriteNote { note });
    }
}

/// The folders a job writing `datasets` of the domain `domain` under `out`
/// fills: the domain's, each part's or level's, `hf/` and `SECRET-seeds/`
/// (the command line refuses a job whose folders are, lie inside or hold
/// what it reads).
pub fn written_folders(out: &Path, domain: &str, datasets: &Datasets) -> Vec<PathBuf> {
    let mut folders = match datasets {
        Datasets::One => vec![write::domain_dir(out, domain)],
        Datasets::Split { parts, .. } => parts.iter().map(|p| out.join(&p.name)).collect(),
        Datasets::Levels(levels) => (1..=*levels).map(|k| out.join(level_name(k))).collect(),
    };
    folders.push(out.join("hf"));
    folders.push(out.join(secret::SECRET_DIR));
    folders
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{Books, DerivedFiles, generate_lines};
    use crate::render::{RenderOptions, Templates};
    use crate::search::SearchBudget;
    use std::sync::Mutex;

    /// A progress that records the stages it is told of, and the kinds
    /// of the events.
    #[derive(Default)]
    struct Stages(Mutex<Vec<String>>, Mutex<Vec<String>>);

    impl Progress for Stages {
        fn stage(&self, stage: Stage<'_>) {
            let line = format!("{} {} {}", stage.name, stage.total, stage.unit);
            self.0.lock().unwrap().push(line);
        }
        fn position(&self, _: u64) {}
        fn grow_to(&self, _: u64) {}
        fn finish(&self) {}
        fn event(&self, event: Event<'_>) {
            let debug = format!("{event:?}");
            let kind = debug.split([' ', '(']).next().unwrap().to_string();
            self.1.lock().unwrap().push(kind);
        }
    }

    fn job(out: &std::path::Path, target: Target) -> GenerateJob {
        let (domain, _) = crate::domain::Registry::new(None).load("medical").unwrap();
        GenerateJob {
            domain,
            params: Params::new(4, 6, 1),
            n: 20,
            out: out.to_path_buf(),
            target,
            labels: Some(SearchBudget::default()),
            exclude: None,
            band: None,
            datasets: Datasets::One,
            derived: DerivedFiles {
                templates: Templates::resolve(None).unwrap(),
                render: RenderOptions::default(),
                books: Books::None,
                sft: true,
                steps: false,
                hf: false,
            },
            secret_seed: false,
            force: false,
        }
    }

    #[test]
    fn one_job_writes_the_lines_of_the_setting_then_its_derived_files() {
        let dir = tempfile::tempdir().unwrap();
        let job = job(dir.path(), Target::Whole);
        let stages = Stages::default();
        let summaries = generate(&job, &stages).unwrap();
        assert_eq!(summaries.len(), 1);
        assert!(summaries[0].lock.is_none(), "the file is released");
        let written = std::fs::read_to_string(&summaries[0].path).unwrap();
        let lines = generate_lines(&job.domain, job.params.clone(), 20, job.labels).unwrap();
        assert_eq!(written, lines.join("\n") + "\n");
        assert_eq!(
            *stages.0.lock().unwrap(),
            [
                "synthesis and labels 20 instances",
                "books and SFT records 20 instances"
            ]
        );
        assert_eq!(
            *stages.1.lock().unwrap(),
            ["Capacity", "Written", "Derived", "Labels"],
            "what the job says besides its progress, in order"
        );
    }

    #[test]
    fn a_shard_job_writes_its_indices_and_no_derived_files() {
        let dir = tempfile::tempdir().unwrap();
        let shard = crate::dataset::manifest::ShardId { index: 1, count: 3 };
        let stages = Stages::default();
        let summaries = generate(&job(dir.path(), Target::Shard(shard)), &stages).unwrap();
        assert_eq!(summaries[0].instances, 7, "indices 1, 4, ..., 19");
        assert_eq!(Target::Shard(shard).lines_of(20), 7);
        assert_eq!(Target::Shard(shard).lines_of(1), 0);
        assert_eq!(
            *stages.0.lock().unwrap(),
            ["synthesis and labels 7 instances"]
        );
        let events = stages.1.lock().unwrap();
        assert_eq!(events.last().unwrap(), "Written", "{events:?}");
        assert!(!events.contains(&"Derived".to_string()), "{events:?}");
    }
}
