//! Where a writer's lines go ([`Target`]): the whole dataset,
//! `OUT/<domain>/<setting>.jsonl` recorded in the domain's
//! `manifest.json`, or shard K of N (`--shard K/N`),
//! `OUT/<domain>/shards/<setting>/shard-K-of-N.jsonl` with its own shard
//! manifest. One skeleton ([`write`]) writes both: lock, resume checks,
//! the search budget, the prefix already there, the lines appended in
//! index order, the finished record. What truly differs is in small named
//! steps: the files, how the record is read and written, the budget rule
//! (a shard keeps the budget it was started with), how the prefix is
//! replayed and how a chunk is drawn (a shard cannot know the other
//! shards' keys, so it does no dedup: it writes the first draw of each of
//! its indices that no `--exclude` set or other `--split` part takes, and
//! `merge` does the rest).

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::manifest::{
    self, Counts, DatasetEntry, DomainInfo, Generator, Parameters, ShardId, ShardManifest, Status,
    Timings,
};
use super::{
    Job, Made, OutputError, Plan, Summary, append, check_digest, difficulty_of, domain_dir, draws,
    files, make_range, rebudget, resume, timings,
};
use crate::dataset::setting::Setting;
use crate::pipeline::job::Target;
use crate::search::SearchBudget;
use crate::synth::{Dedup, Params, Stats};

/// The files of a target: its lines, its record, and their directory.
struct TargetFiles {
    path: PathBuf,
    manifest: PathBuf,
    dir: PathBuf,
}

impl Target {
    /// The dataset index of the target's line `j`.
    fn index(self, j: u64) -> u64 {
        match self {
            Target::Whole => j,
            Target::Shard(s) => s.index + j * s.count,
        }
    }

    fn files(self, out: &Path, domain_name: &str, params: &Params) -> TargetFiles {
        match self {
            Target::Whole => {
                let dir = domain_dir(out, domain_name);
                TargetFiles {
                    path: dir.join(Setting::from(params).file_name()),
                    manifest: dir.join("manifest.json"),
                    dir,
                }
            }
            Target::Shard(shard) => {
                let (path, manifest) = shard_paths(out, domain_name, params, shard);
                let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                TargetFiles {
                    path,
                    manifest,
                    dir,
                }
            }
        }
    }

    /// The record of what the file holds now, if any (`--force` reads past
    /// a damaged manifest: it starts over).
    fn recorded(
        self,
        files: &TargetFiles,
        setting: &str,
        force: bool,
    ) -> Result<Option<DatasetEntry>, OutputError> {
        let read = match self {
            Target::Whole => manifest::read_domain_manifest(&files.manifest)
                .map(|m| manifest::dataset_entry(&m, setting)),
            Target::Shard(_) => manifest::read_json::<ShardManifest>(&files.manifest)
                .map(|m| m.as_ref().map(ShardManifest::entry)),
        };
        match read {
            Err(_) if force => Ok(None),
            read => Ok(read?),
        }
    }

    /// Writes the record `entry` of the file: the domain manifest's entry,
    /// or the shard manifest.
    fn record(
        self,
        files: &TargetFiles,
        info: &DomainInfo,
        setting: &str,
        entry: &DatasetEntry,
    ) -> Result<(), OutputError> {
        let written = match self {
            Target::Whole => {
                manifest::update_domain_manifest(&files.manifest, info, setting, entry)
            }
            Target::Shard(shard) => manifest::write_json(
                &files.manifest,
                &ShardManifest {
                    generator: Generator::current(),
                    domain: info.clone(),
                    shard,
                    file: entry.file.clone(),
                    status: entry.status,
                    parameters: entry.parameters.clone(),
                    counts: entry.counts.clone(),
                    timings: entry.timings.clone(),
                    digest: entry.digest.clone(),
                },
            ),
        };
        Ok(written?)
    }
}

pub(super) fn shard_paths(
    out: &Path,
    domain_name: &str,
    params: &Params,
    shard: ShardId,
) -> (PathBuf, PathBuf) {
    let dir = domain_dir(out, domain_name)
        .join("shards")
        .join(Setting::from(params).to_string());
    let stem = format!("shard-{}-of-{}", shard.index, shard.count);
    (
        dir.join(format!("{stem}.jsonl")),
        dir.join(format!("{stem}.manifest.json")),
    )
}

/// Writes `job`'s target: continues or extends what is there, relabels
/// under a larger budget, or finds it up to date.
pub(super) fn write(job: &Job, plan: &Plan) -> Result<Summary, OutputError> {
    let start = Instant::now();
    let (domain, target) = (job.domain(), job.target());
    check_target(target)?;
    let files = target.files(job.out(), &domain.name, job.params);
    files::create_dir_below(job.out(), &files.dir)?;
    let path = files.path.clone();
    let setting = Setting::from(job.params).to_string();
    let lock = files::FileLock::exclusive(&path)?;
    let parameters = job.parameters();
    let resume = resumable_entry(job, &files, &setting, &parameters)?;
    let total = target.lines_of(job.n());
    // A finished file of this length (its digest just checked) with
    // nothing to relabel is up to date, decided before it is opened for
    // writing: a dataset on a read-only disk or directory can be re-run.
    if let Some(note) = finished(job, resume.as_ref(), total) {
        let mut summary = Summary::up_to_date(path, total, start, lock);
        summary.note = note;
        return Ok(summary);
    }
    let (mut file, lines) = files::open_for_append(&path, resume.is_none())?;
    if lines > total {
        return Err(too_long(&path, lines, job.n()));
    }
    let info = DomainInfo::of(domain);
    let complete = resume
        .as_ref()
        .is_some_and(|e| e.status == Status::Complete);
    let mut note = None;
    if let (Some(entry), Some(budget)) = (resume.as_ref(), job.labels()) {
        let budget = budget.for_actions(job.params.actions);
        let recorded = rebudget::recorded(&entry.parameters);
        match rebudget::compare(recorded, budget) {
            rebudget::Change::Same => {}
            rebudget::Change::NotLarger if complete && lines == total => {
                let mut summary = Summary::up_to_date(path, lines, start, lock);
                summary.note = Some(not_larger_note(recorded));
                return Ok(summary);
            }
            rebudget::Change::NotLarger => return Err(smaller_budget(path, recorded)),
            rebudget::Change::Larger if job.band().is_some() => {
                return Err(banded_budget(path, recorded));
            }
            rebudget::Change::Larger => {
                drop(file);
                let recorded_at = (&files, &info, setting.as_str());
                let done = relabel(job, plan, recorded_at, entry, lines, budget)?;
                file = files::open_for_append(&path, false)?.0;
                note = Some(rebudget::relabelled_note(budget, done));
            }
        }
    }
    if lines == total && complete && note.is_none() {
        return Ok(Summary::up_to_date(path, lines, start, lock));
    }

    // Keys of the lines already there: instance `lines` competes with them.
    // The record counts the work of every line, not only this run's.
    let mut seen = Dedup::excluding(job.exclude().cloned());
    let before = prefix(job, plan, &path, lines, resume.as_ref(), &mut seen)?;
    let mut entry = in_progress_entry(&path, &domain.source_hash, parameters);
    target.record(&files, &info, &setting, &entry)?;

    let mut stats = Stats::default();
    let (synthesis_s, write_s) = append::append_chunks(
        job,
        plan.reference,
        &mut file,
        &path,
        lines,
        total,
        |range| draw(job, plan, range, &mut seen, &mut stats),
    )?;
    let total_s = start.elapsed().as_secs_f64();
    entry.status = Status::Complete;
    let mut whole = before;
    whole.add(&stats);
    entry.counts = Counts::new(total, lines, &whole);
    entry.timings = timings(synthesis_s, write_s, total_s, total - lines);
    entry.digest = Some(files::digest(&path)?);
    if target == Target::Whole {
        entry.difficulty = difficulty_of(&path, total, plan.reference)?;
    }
    target.record(&files, &info, &setting, &entry)?;
    Ok(Summary {
        path,
        instances: total,
        resumed_from: lines,
        stats,
        synthesis_s,
        total_s,
        up_to_date: false,
        note,
        lock: Some(lock),
        part: job.exclude().and_then(|e| e.part_name()),
    })
}

/// The record of the lines already there that this run continues, if
/// any: checked against the file (its digest) and the job (the domain, the
/// parameters, a shard's budget).
fn resumable_entry(
    job: &Job,
    files: &TargetFiles,
    setting: &str,
    parameters: &Parameters,
) -> Result<Option<DatasetEntry>, OutputError> {
    let (target, path) = (job.target(), &files.path);
    let entry = target.recorded(files, setting, job.force())?;
    let resume = existing(
        path,
        entry,
        &job.domain().source_hash,
        parameters,
        job.force(),
    )?;
    check_digest(path, resume.as_ref())?;
    if let Target::Shard(_) = target {
        rebudget::shard_conflict(path, resume.as_ref(), parameters)?;
    }
    Ok(resume)
}

/// Relabels the unlabelled lines of the first `lines` under the larger
/// `budget`. The record is marked
/// unfinished under the old budget first (`recorded_at`: where the record
/// is, the domain, the setting): a run killed while relabelling relabels
/// again, to the same bytes.
fn relabel(
    job: &Job,
    plan: &Plan,
    (files, info, setting): (&TargetFiles, &DomainInfo, &str),
    entry: &DatasetEntry,
    lines: u64,
    budget: SearchBudget,
) -> Result<rebudget::Relabelled, OutputError> {
    let mut pending = entry.clone();
    pending.status = Status::InProgress;
    pending.digest = None;
    job.target().record(files, info, setting, &pending)?;
    rebudget::relabel_unlabelled(
        job.domain(),
        &files.path,
        lines,
        budget,
        plan.reference,
        job.progress,
    )
}

/// The record of the file at `path` while lines are being appended: no
/// counts, no digest yet.
fn in_progress_entry(path: &Path, domain_hash: &str, parameters: Parameters) -> DatasetEntry {
    DatasetEntry {
        file: path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
        status: Status::InProgress,
        generator_version: manifest::VERSION.into(),
        domain_hash: domain_hash.to_string(),
        parameters,
        merged_shards: None,
        counts: Counts::default(),
        timings: Timings::default(),
        digest: None,
        difficulty: None,
    }
}

/// A shard id that names a shard (the command line checks it too).
fn check_target(target: Target) -> Result<(), OutputError> {
    match target {
        Target::Shard(shard) if shard.count == 0 || shard.index >= shard.count => {
            Err(OutputError::Shards {
                message: format!("`--shard {}/{}` names no shard", shard.index, shard.count),
                help: "use `--shard K/N` with 0 <= K < N, e.g. `--shard 0/4` to `--shard 3/4`"
                    .into(),
            })
        }
        _ => Ok(()),
    }
}

/// `Some(note)` when the resumed file is finished at `total` lines and
/// this run's budget relabels nothing.
fn finished(job: &Job, resume: Option<&DatasetEntry>, total: u64) -> Option<Option<String>> {
    let entry = resume.filter(|e| {
        e.status == Status::Complete && e.digest.is_some() && e.counts.instances == total
    })?;
    let recorded = rebudget::recorded(&entry.parameters);
    match job
        .labels()
        .map(|budget| rebudget::compare(recorded, budget))
    {
        Some(rebudget::Change::Larger) => None,
        Some(rebudget::Change::NotLarger) => Some(Some(not_larger_note(recorded))),
        _ => Some(None),
    }
}

/// The counts of the lines already there, their keys put into `seen` (a
/// shard, which does no dedup, only replays its draws' counts).
fn prefix(
    job: &Job,
    plan: &Plan,
    path: &Path,
    lines: u64,
    resume: Option<&DatasetEntry>,
    seen: &mut Dedup,
) -> Result<Stats, OutputError> {
    match job.target() {
        Target::Whole => resume::dataset_prefix(job.domain(), plan, path, lines, resume, seen),
        Target::Shard(_) => resume::shard_prefix(plan, job.exclude(), lines, resume, |j| {
            job.target().index(j)
        }),
    }
}

/// The target's lines `range`: the dataset's instances (dedup in index
/// order), or a shard's first draws.
fn draw(
    job: &Job,
    plan: &Plan,
    range: std::ops::Range<u64>,
    seen: &mut Dedup,
    stats: &mut Stats,
) -> Result<Vec<Made>, OutputError> {
    if job.target() == Target::Whole {
        return make_range(plan.synth, plan.banded, range, seen, stats);
    }
    let indices: Vec<u64> = range.map(|j| job.target().index(j)).collect();
    let drawn = draws::first_draws(plan, job.exclude(), &indices)?;
    Ok(drawn
        .into_iter()
        .map(|(c, label)| {
            stats.add(&c.stats);
            stats.instances += 1;
            (c.instance, label)
        })
        .collect())
}

/// Decides where an existing file continues: `Ok(Some(entry))` to resume
/// from it, `Ok(None)` to start fresh, or the reason it may not be touched.
fn existing(
    path: &Path,
    entry: Option<DatasetEntry>,
    domain_hash: &str,
    parameters: &Parameters,
    force: bool,
) -> Result<Option<DatasetEntry>, OutputError> {
    // An empty file holds nothing to lose: a run killed before its first
    // manifest entry was written (a full disk) starts afresh.
    let empty = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0);
    if force || !path.exists() || (entry.is_none() && empty) {
        return Ok(None);
    }
    let Some(entry) = entry else {
        return Err(in_the_way(
            path,
            "no manifest entry says how it was made".into(),
        ));
    };
    if let Some(reason) = entry.conflict(domain_hash, parameters) {
        return Err(in_the_way(path, reason));
    }
    Ok(Some(entry))
}

fn in_the_way(path: &Path, reason: String) -> OutputError {
    OutputError::Exists {
        path: path.to_path_buf(),
        reason,
        help: "pass `--force` to overwrite it, or choose another `--out`".into(),
    }
}

fn too_long(path: &Path, lines: u64, n: u64) -> OutputError {
    OutputError::Exists {
        path: path.to_path_buf(),
        reason: format!("it holds {lines} instances, more than `-n {n}`"),
        help: format!("use `-n {lines}` or more, or pass `--force` to overwrite it"),
    }
}

fn smaller_budget(path: PathBuf, recorded: SearchBudget) -> OutputError {
    OutputError::Exists {
        path,
        reason: format!(
            "its labels were searched under {}, this run's budget is smaller",
            rebudget::flags(recorded)
        ),
        help: format!(
            "continue it with {} or larger, or pass `--force` to start over",
            rebudget::flags(recorded)
        ),
    }
}

fn banded_budget(path: PathBuf, recorded: SearchBudget) -> OutputError {
    OutputError::Exists {
        path,
        reason: format!(
            "its lines lie in a difficulty band under {}: which draw lies in it depends on the budget",
            rebudget::flags(recorded)
        ),
        help: format!(
            "continue it with {}, or pass `--force` to draw it again under the larger budget",
            rebudget::flags(recorded)
        ),
    }
}

fn not_larger_note(recorded: SearchBudget) -> String {
    format!(
        "its labels were searched under {}; a budget that is not larger changes nothing (a larger one labels the lines left unlabelled)",
        rebudget::flags(recorded)
    )
}
