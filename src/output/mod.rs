//! The writers: KUMO-compatible JSONL datasets, shard files, `merge`, and
//! their manifests (DESIGN.md "Outputs").
//!
//! In: a [`Job`] (domain, setting, `n`, output root, shard split,
//! `--force`) and optionally a labeler for the `optimal` field. Out:
//!
//! ```text
//! <out>/<domain>/truth_num=T+action_num=A+valid_truth_num=V.jsonl
//! <out>/<domain>/manifest.json
//! <out>/<domain>/shards/<setting>/shard-K-of-N.jsonl            (--shard K/N)
//! <out>/<domain>/shards/<setting>/shard-K-of-N.manifest.json
//! ```
//!
//! Only this module and domain loading touch the file system.
//!
//! # Dedup, shards and resume: one rule
//!
//! The dataset is defined by the rule of [`crate::synth`]: *instance `i` is
//! the first draw of stream `i` whose canonical key is not the key of an
//! instance `j < i`.* Everything here replays that rule.
//!
//! - **Unsharded**: chunks of indices are drawn in parallel (first draws),
//!   then admitted one by one in index order, a taken key redrawing from
//!   its own stream. Lines are appended chunk by chunk.
//! - **Resume / extend**: instance `i` depends only on `0..i`, so a file
//!   with `m` complete lines made with the same parameters (all but `n`,
//!   checked against `manifest.json`) is continued at `m` after its keys
//!   are read back. A partial last line is cut first. An interrupted run
//!   re-run with the same command therefore ends byte-identical, and a
//!   larger `-n` extends a finished file.
//! - **Shards**: `--shard K/N` owns the indices `i ≡ K (mod N)` and writes
//!   the *first draw* of each, in index order — it cannot know the other
//!   shards' keys, so it does no dedup. `merge` reads the shard files
//!   round-robin (index order), keeps a line whose key is new, and for a
//!   taken key replays stream `i` (first draw, then retries) exactly as
//!   the unsharded run does. Most lines are copied verbatim; the result is
//!   the unsharded file byte for byte. Shards are resumable like datasets
//!   (no dedup state to rebuild).
//!
//! # Overwriting
//! An existing dataset is continued only when its manifest entry matches;
//! a finished one of the same length is left alone ("up to date"). Any
//! other existing file is an error unless `--force`, which starts over.
//! Manifests are replaced atomically under their lock, so runs of other
//! settings of one domain never lose each other's entries; a dataset or
//! shard file is owned by one run at a time (a second run exits 1 with a
//! clear message). A finished file's manifest entry records its digest:
//! edited or appended lines are reported as damage.
//!
//! # Progress on disk
//! Lines are labelled in parallel and written in index order as soon as
//! every earlier line is written, synced at least every two seconds, so a
//! kill keeps the finished prefix and the resume continues it.

pub mod derived;
pub mod files;
pub mod manifest;
pub mod record;

use crate::domain::Domain;
use crate::synth::{Dedup, Instance, Params, Stats, SynthError, Synthesizer};
use manifest::{
    Counts, DatasetEntry, DomainInfo, Generator, Parameters, ShardId, ShardManifest, Status,
    Timings,
};
use rayon::prelude::*;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Instances drawn and admitted per step. Their lines are labelled in
/// parallel and written as soon as each prefix is complete.
const CHUNK: u64 = 4096;

/// Longest time written lines may wait for an fsync.
const SYNC_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Computes the `optimal` object of a line (the search stage's labels).
pub type Labeler<'a> = &'a (dyn Fn(&Domain, &Instance) -> serde_json::Value + Sync);

/// Called with the number of instances done so far.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// One generation request.
pub struct Job<'a> {
    pub domain: &'a Domain,
    pub params: Params,
    pub n: u64,
    /// Output root (`--out`, default `generated/`).
    pub out: PathBuf,
    pub shard: Option<ShardId>,
    pub force: bool,
    pub labeler: Option<Labeler<'a>>,
    pub progress: Option<Progress<'a>>,
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct Summary {
    pub path: PathBuf,
    /// Lines in the file now.
    pub instances: u64,
    /// Lines that were there before.
    pub resumed_from: u64,
    pub stats: Stats,
    pub synthesis_s: f64,
    pub total_s: f64,
    /// The file was already complete; nothing was written.
    pub up_to_date: bool,
    /// This run's hold on the file: kept while derived files are written
    /// from it, released when the summary is dropped.
    pub lock: Option<files::FileLock>,
}

impl Summary {
    /// The summary of a file that was already complete.
    fn up_to_date(path: PathBuf, lines: u64, start: Instant, lock: files::FileLock) -> Summary {
        Summary {
            path,
            instances: lines,
            resumed_from: lines,
            stats: Stats::default(),
            synthesis_s: 0.0,
            total_s: start.elapsed().as_secs_f64(),
            up_to_date: true,
            lock: Some(lock),
        }
    }

    /// Instances made by this run per second of wall time.
    pub fn rate(&self) -> f64 {
        (self.instances - self.resumed_from) as f64 / self.total_s.max(1e-9)
    }
}

/// Why writing failed.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The request cannot be met by the domain (exit 1).
    #[error(transparent)]
    Synth(#[from] SynthError),
    /// An existing file stands in the way (exit 1).
    #[error("`{}` already exists: {reason}", path.display())]
    Exists {
        path: PathBuf,
        reason: String,
        help: String,
    },
    /// Another run is writing the file (exit 1).
    #[error("`{}` is being written by another kumo-gen run", path.display())]
    Busy { path: PathBuf },
    /// An existing file is not what its manifest says (exit 1).
    #[error("`{}` is damaged: {message}", path.display())]
    Corrupt { path: PathBuf, message: String },
    /// Shards are missing or disagree (exit 1).
    #[error("{message}")]
    Shards { message: String, help: String },
    /// Reading or writing failed (exit 2).
    #[error("cannot write `{}`: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl OutputError {
    pub fn io(path: &Path, source: std::io::Error) -> OutputError {
        OutputError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// How to fix it, when there is advice.
    pub fn help(&self) -> Option<String> {
        match self {
            OutputError::Synth(e) => Some(e.help.clone()),
            OutputError::Exists { help, .. } | OutputError::Shards { help, .. } => {
                Some(help.clone())
            }
            OutputError::Corrupt { .. } => {
                Some("pass `--force` to start over, or choose another `--out`".into())
            }
            OutputError::Busy { .. } => Some(
                "wait for that run to finish (re-running the same command then resumes or finds it up to date), or choose another `--out`".into(),
            ),
            OutputError::Io { .. } => None,
        }
    }

    /// Whether this is the user's request (exit 1) rather than I/O (exit 2).
    pub fn is_input(&self) -> bool {
        !matches!(self, OutputError::Io { .. })
    }
}

/// `truth_num=T+action_num=A+valid_truth_num=V`: KUMO's setting name.
pub fn setting_name(params: &Params) -> String {
    format!(
        "truth_num={}+action_num={}+valid_truth_num={}",
        params.truths, params.actions, params.valid
    )
}

/// The directory of a domain's outputs under `out`.
pub fn domain_dir(out: &Path, domain_name: &str) -> PathBuf {
    out.join(domain_name.replace(['/', '\\'], "_"))
}

/// Path of the dataset file of a setting.
pub fn dataset_path(out: &Path, domain_name: &str, params: &Params) -> PathBuf {
    domain_dir(out, domain_name).join(format!("{}.jsonl", setting_name(params)))
}

fn shard_paths(
    out: &Path,
    domain_name: &str,
    params: &Params,
    shard: ShardId,
) -> (PathBuf, PathBuf) {
    let dir = domain_dir(out, domain_name)
        .join("shards")
        .join(setting_name(params));
    let stem = format!("shard-{}-of-{}", shard.index, shard.count);
    (
        dir.join(format!("{stem}.jsonl")),
        dir.join(format!("{stem}.manifest.json")),
    )
}

/// Runs `job`: the dataset, or one shard of it.
pub fn generate(job: &Job) -> Result<Summary, OutputError> {
    let synth = Synthesizer::new(job.domain, job.params.clone())?;
    synth.check_count(job.n)?;
    match job.shard {
        None => write_dataset(job, &synth),
        Some(shard) => write_shard(job, &synth, shard),
    }
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
    if force || !path.exists() {
        return Ok(None);
    }
    let Some(entry) = entry else {
        return Err(OutputError::Exists {
            path: path.to_path_buf(),
            reason: "no manifest entry says how it was made".into(),
            help: "pass `--force` to overwrite it, or choose another `--out`".into(),
        });
    };
    if let Some(reason) = entry.conflict(domain_hash, parameters) {
        return Err(OutputError::Exists {
            path: path.to_path_buf(),
            reason,
            help: "pass `--force` to overwrite it, or choose another `--out`".into(),
        });
    }
    Ok(Some(entry))
}

fn too_long(path: &Path, lines: u64, n: u64) -> OutputError {
    OutputError::Exists {
        path: path.to_path_buf(),
        reason: format!("it holds {lines} instances, more than `-n {n}`"),
        help: format!("use `-n {lines}` or more, or pass `--force` to overwrite it"),
    }
}

fn write_dataset(job: &Job, synth: &Synthesizer) -> Result<Summary, OutputError> {
    let start = Instant::now();
    let domain = job.domain;
    let dir = domain_dir(&job.out, &domain.name);
    std::fs::create_dir_all(&dir).map_err(|e| OutputError::io(&dir, e))?;
    let setting = setting_name(&job.params);
    let path = dir.join(format!("{setting}.jsonl"));
    let lock = files::FileLock::exclusive(&path)?;
    let manifest_path = dir.join("manifest.json");
    let parameters = Parameters::new(&job.params, job.n, job.labeler.is_some());
    let manifest = manifest::read_domain_manifest(&manifest_path);
    let entry = match manifest {
        Ok(m) => manifest::dataset_entry(&m, &setting),
        Err(e) if job.force => {
            let _ = e;
            None
        }
        Err(e) => return Err(e),
    };
    let resume = existing(&path, entry, &domain.source_hash, &parameters, job.force)?;
    check_digest(&path, resume.as_ref())?;
    let (mut file, lines) = files::open_for_append(&path, resume.is_none())?;
    if lines > job.n {
        return Err(too_long(&path, lines, job.n));
    }
    let info = DomainInfo::of(domain);
    if lines == job.n
        && resume
            .as_ref()
            .is_some_and(|e| e.status == Status::Complete)
    {
        return Ok(Summary::up_to_date(path, lines, start, lock));
    }

    // Keys of the lines already there: instance `lines` competes with them.
    let mut seen = Dedup::new();
    let names = record::NameIndex::new(domain);
    files::for_each_batch(&path, lines, |start, batch| {
        let keys: Vec<Result<(u64, crate::synth::Key), String>> = batch
            .par_iter()
            .map(|line| record::read_key(domain, &names, line))
            .collect();
        for (i, key) in (start..).zip(keys) {
            let (seed, key) = key.map_err(|message| OutputError::Corrupt {
                path: path.clone(),
                message: format!("line {}: {message}", i + 1),
            })?;
            if seed != i || !seen.insert(key) {
                return Err(OutputError::Corrupt {
                    path: path.clone(),
                    message: format!("line {} is not instance {i} of this dataset", i + 1),
                });
            }
        }
        Ok(())
    })?;

    let mut entry = DatasetEntry {
        file: format!("{setting}.jsonl"),
        status: Status::InProgress,
        generator_version: manifest::VERSION.into(),
        domain_hash: domain.source_hash.clone(),
        parameters,
        merged_shards: None,
        counts: Counts::default(),
        timings: Timings::default(),
        digest: None,
    };
    manifest::update_domain_manifest(&manifest_path, &info, &setting, &entry)?;

    let mut stats = Stats::default();
    let (synthesis_s, write_s) = append_chunks(job, &mut file, &path, lines, job.n, |range| {
        Ok(synth.generate(range, &mut seen, &mut stats)?)
    })?;
    let total_s = start.elapsed().as_secs_f64();
    entry.status = Status::Complete;
    entry.counts = Counts::new(job.n, lines, &stats);
    entry.timings = timings(synthesis_s, write_s, total_s, job.n - lines);
    entry.digest = Some(files::digest(&path)?);
    manifest::update_domain_manifest(&manifest_path, &info, &setting, &entry)?;
    Ok(Summary {
        path,
        instances: job.n,
        resumed_from: lines,
        stats,
        synthesis_s,
        total_s,
        up_to_date: false,
        lock: Some(lock),
    })
}

/// A finished file must still hold the bytes its manifest entry digested:
/// edited or appended lines are damage, never "up to date".
fn check_digest(path: &Path, entry: Option<&DatasetEntry>) -> Result<(), OutputError> {
    let Some(want) = entry
        .filter(|e| e.status == Status::Complete)
        .and_then(|e| e.digest.as_deref())
    else {
        return Ok(());
    };
    let got = files::digest(path)?;
    if got != want {
        return Err(OutputError::Corrupt {
            path: path.to_path_buf(),
            message: format!(
                "its content changed after it was finished (digest {got}, manifest says {want})"
            ),
        });
    }
    Ok(())
}

fn timings(synthesis_s: f64, write_s: f64, total_s: f64, made: u64) -> Timings {
    Timings {
        synthesis_s,
        write_s,
        total_s,
        instances_per_s: made as f64 / total_s.max(1e-9),
    }
}

/// Appends lines `from..to` to `file`: `make` produces a chunk's
/// instances (line positions in, instances in line order out); their
/// lines are labelled in parallel and written in index order as soon as
/// each prefix of the chunk is complete, so a run killed at any moment
/// keeps every line finished before the kill that all earlier lines were
/// also finished for. Written lines are synced at least every
/// [`SYNC_EVERY`] and at the end; progress is reported per line.
/// Returns the seconds spent making and labelling/writing.
fn append_chunks(
    job: &Job,
    file: &mut std::fs::File,
    path: &Path,
    from: u64,
    to: u64,
    mut make: impl FnMut(std::ops::Range<u64>) -> Result<Vec<Instance>, OutputError>,
) -> Result<(f64, f64), OutputError> {
    let (mut synthesis_s, mut write_s) = (0.0, 0.0);
    let mut next = from;
    let mut synced = Instant::now();
    while next < to {
        let end = (next + CHUNK).min(to);
        let t = Instant::now();
        let instances = make(next..end)?;
        synthesis_s += t.elapsed().as_secs_f64();
        let t = Instant::now();
        write_in_order(job, &instances, |k, line| {
            file.write_all(line).map_err(|e| OutputError::io(path, e))?;
            if synced.elapsed() >= SYNC_EVERY {
                file.sync_data().map_err(|e| OutputError::io(path, e))?;
                synced = Instant::now();
            }
            if let Some(progress) = job.progress {
                progress(next + k as u64 + 1);
            }
            Ok(())
        })?;
        write_s += t.elapsed().as_secs_f64();
        next = end;
    }
    file.sync_all().map_err(|e| OutputError::io(path, e))?;
    Ok((synthesis_s, write_s))
}

/// Labels and renders `instances` on the current rayon pool while a
/// writer thread hands each line to `write`, in order, as soon as it and
/// all lines before it are done. The writer only waits and writes; it
/// takes no worker from the pool.
fn write_in_order(
    job: &Job,
    instances: &[Instance],
    write: impl FnMut(usize, &[u8]) -> Result<(), OutputError> + Send,
) -> Result<(), OutputError> {
    let (domain, labeler) = (job.domain, job.labeler);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Vec<u8>)>();
    let count = instances.len();
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || {
            let mut write = write;
            let mut pending: Vec<Option<Vec<u8>>> = vec![None; count];
            let mut done = 0;
            for (k, line) in rx {
                pending[k] = Some(line);
                while let Some(line) = pending.get_mut(done).and_then(Option::take) {
                    write(done, &line)?;
                    done += 1;
                }
            }
            Ok(())
        });
        instances
            .par_iter()
            .enumerate()
            .with_min_len(1)
            .for_each_with(tx, |tx, (k, instance)| {
                let optimal = labeler.map(|label| label(domain, instance));
                let mut line = record::render(domain, instance, optimal.as_ref());
                line.push(b'\n');
                // A closed receiver means writing failed; the writer's
                // error is returned below.
                let _ = tx.send((k, line));
            });
        writer.join().unwrap_or_else(|_| {
            Err(OutputError::Io {
                path: PathBuf::from("<writer>"),
                source: std::io::Error::other("the writer thread panicked"),
            })
        })
    })
}

fn write_shard(job: &Job, synth: &Synthesizer, shard: ShardId) -> Result<Summary, OutputError> {
    let start = Instant::now();
    let domain = job.domain;
    if shard.count == 0 || shard.index >= shard.count {
        return Err(OutputError::Shards {
            message: format!("`--shard {}/{}` names no shard", shard.index, shard.count),
            help: "use `--shard K/N` with 0 <= K < N, e.g. `--shard 0/4` to `--shard 3/4`".into(),
        });
    }
    let (path, manifest_path) = shard_paths(&job.out, &domain.name, &job.params, shard);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| OutputError::io(dir, e))?;
    }
    let lock = files::FileLock::exclusive(&path)?;
    let parameters = Parameters::new(&job.params, job.n, job.labeler.is_some());
    let previous = match manifest::read_json::<ShardManifest>(&manifest_path) {
        Ok(m) => m,
        Err(_) if job.force => None,
        Err(e) => return Err(e),
    };
    let entry = previous.as_ref().map(ShardManifest::entry);
    let resume = existing(&path, entry, &domain.source_hash, &parameters, job.force)?;
    check_digest(&path, resume.as_ref())?;
    let (mut file, lines) = files::open_for_append(&path, resume.is_none())?;
    // Indices i < n with i % count == index (no overflow for any count).
    let owned = |n: u64| {
        if shard.index >= n {
            0
        } else {
            (n - 1 - shard.index) / shard.count + 1
        }
    };
    let total = owned(job.n);
    if lines > total {
        return Err(too_long(&path, lines, job.n));
    }
    let mut manifest = ShardManifest {
        generator: Generator::current(),
        domain: DomainInfo::of(domain),
        shard,
        file: path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
        status: Status::InProgress,
        parameters,
        counts: Counts::default(),
        timings: Timings::default(),
        digest: None,
    };
    if lines == total
        && resume
            .as_ref()
            .is_some_and(|e| e.status == Status::Complete)
    {
        return Ok(Summary::up_to_date(path, lines, start, lock));
    }
    manifest::write_json(&manifest_path, &manifest)?;

    let mut stats = Stats::default();
    let (synthesis_s, write_s) = append_chunks(job, &mut file, &path, lines, total, |range| {
        let indices: Vec<u64> = range.map(|j| shard.index + j * shard.count).collect();
        let candidates = synth.candidates(&indices)?;
        Ok(candidates
            .into_iter()
            .map(|c| {
                stats.add(&c.stats);
                stats.instances += 1;
                c.instance
            })
            .collect())
    })?;
    let total_s = start.elapsed().as_secs_f64();
    manifest.status = Status::Complete;
    manifest.counts = Counts::new(total, lines, &stats);
    manifest.timings = timings(synthesis_s, write_s, total_s, total - lines);
    manifest.digest = Some(files::digest(&path)?);
    manifest::write_json(&manifest_path, &manifest)?;
    Ok(Summary {
        path,
        instances: total,
        resumed_from: lines,
        stats,
        synthesis_s,
        total_s,
        up_to_date: false,
        lock: Some(lock),
    })
}

/// The shard groups under `out`: one directory per (domain, setting).
fn shard_groups(out: &Path) -> Result<Vec<PathBuf>, OutputError> {
    let mut groups = Vec::new();
    let read = |dir: &Path| -> Result<Vec<PathBuf>, OutputError> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| OutputError::io(dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        entries.sort();
        Ok(entries)
    };
    if !out.is_dir() {
        return Ok(groups);
    }
    for domain in read(out)? {
        let shards = domain.join("shards");
        if shards.is_dir() {
            groups.extend(read(&shards)?);
        }
    }
    Ok(groups)
}

/// Merges every complete shard group under `out` into its dataset file
/// (`kumo-gen merge`). Returns one summary per dataset.
pub fn merge(
    out: &Path,
    force: bool,
    labeler: Option<Labeler>,
    progress: Option<Progress>,
) -> Result<Vec<Summary>, OutputError> {
    let groups = shard_groups(out)?;
    if groups.is_empty() {
        return Err(OutputError::Shards {
            message: format!("no shards under `{}`", out.display()),
            help: "run `kumo-gen generate --shard K/N --out DIR ...` for every K first".into(),
        });
    }
    groups
        .iter()
        .map(|group| merge_group(out, group, force, labeler, progress))
        .collect()
}

fn merge_group(
    out: &Path,
    group: &Path,
    force: bool,
    labeler: Option<Labeler>,
    progress: Option<Progress>,
) -> Result<Summary, OutputError> {
    let start = Instant::now();
    let mut manifests: Vec<ShardManifest> = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(group)
        .map_err(|e| OutputError::io(group, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(".manifest.json"))
        })
        .collect();
    names.sort();
    for path in &names {
        if let Some(m) = manifest::read_json::<ShardManifest>(path)? {
            manifests.push(m);
        }
    }
    let shards_error = |message: String| OutputError::Shards {
        message,
        help: "run the missing shards with the same command and `--shard K/N`, then merge again"
            .into(),
    };
    let Some(first) = manifests.first().cloned() else {
        return Err(shards_error(format!(
            "no shard manifests in `{}`",
            group.display()
        )));
    };
    let count = first.shard.count;
    manifests.retain(|m| m.shard.count == count);
    manifests.sort_by_key(|m| m.shard.index);
    manifests.dedup_by_key(|m| m.shard.index);
    let missing: Vec<String> = (0..count)
        .filter(|k| !manifests.iter().any(|m| m.shard.index == *k))
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(shards_error(format!(
            "`{}`: shards {} are missing",
            group.display(),
            missing.join(", ")
        )));
    }
    for m in &manifests {
        if m.status != Status::Complete {
            return Err(shards_error(format!(
                "`{}`: shard {}/{count} is not finished",
                group.display(),
                m.shard.index
            )));
        }
        if m.parameters != first.parameters
            || m.domain.hash != first.domain.hash
            || m.generator != first.generator
        {
            return Err(shards_error(format!(
                "`{}`: shard {}/{count} was made with other parameters or another domain than shard 0/{count}",
                group.display(),
                m.shard.index
            )));
        }
    }
    if first.generator.version != manifest::VERSION {
        return Err(shards_error(format!(
            "`{}`: shards were made by kumo-gen {}, this is {}",
            group.display(),
            first.generator.version,
            manifest::VERSION
        )));
    }
    // Merged lines are labelled exactly when the shards' lines are.
    let labeler = if first.parameters.labels {
        match labeler {
            Some(labeler) => Some(labeler),
            None => {
                return Err(shards_error(format!(
                    "`{}`: shards were made with labels, this merge has no labeler",
                    group.display()
                )));
            }
        }
    } else {
        None
    };

    let (domain, _) =
        crate::domain::compile(&names[0].display().to_string(), &first.domain.document).map_err(
            |e| OutputError::Corrupt {
                path: names[0].clone(),
                message: format!("its domain does not compile: {e}"),
            },
        )?;
    let params = first.parameters.params();
    let synth = Synthesizer::new(&domain, params.clone())?;
    let n = first.parameters.n;

    let dir = domain_dir(out, &domain.name);
    let setting = setting_name(&params);
    let path = dir.join(format!("{setting}.jsonl"));
    std::fs::create_dir_all(&dir).map_err(|e| OutputError::io(&dir, e))?;
    let lock = files::FileLock::exclusive(&path)?;
    let manifest_path = dir.join("manifest.json");
    if path.exists() && !force {
        let entry = manifest::read_domain_manifest(&manifest_path)
            .ok()
            .and_then(|m| manifest::dataset_entry(&m, &setting));
        if let Some(entry) = entry
            && entry.status == Status::Complete
            && entry.parameters == first.parameters
            && entry
                .conflict(&first.domain.hash, &first.parameters)
                .is_none()
        {
            check_digest(&path, Some(&entry))?;
            return Ok(Summary::up_to_date(path, n, start, lock));
        }
        return Err(OutputError::Exists {
            path,
            reason: "a dataset is already there".into(),
            help: "pass `--force` to replace it with the merged shards".into(),
        });
    }

    let mut readers = Vec::new();
    let mut stats = Stats::default();
    for m in &manifests {
        let shard_path = group.join(&m.file);
        let file = std::fs::File::open(&shard_path).map_err(|e| OutputError::io(&shard_path, e))?;
        readers.push((shard_path, BufReader::with_capacity(1 << 20, file)));
        stats.add(&Stats {
            instances: 0,
            resamples: m.counts.resamples,
            unsat: m.counts.unsat_samples,
            sat_calls: m.counts.sat_calls,
            duplicates: 0,
        });
    }
    let tmp = files::temp_path(&path);
    let tmp_file = std::fs::File::create(&tmp).map_err(|e| OutputError::io(&tmp, e))?;
    let mut writer = std::io::BufWriter::with_capacity(1 << 20, tmp_file);
    let index = record::NameIndex::new(&domain);
    let mut seen = Dedup::new();
    let mut line = Vec::new();
    for i in 0..n {
        let (shard_path, reader) = &mut readers[(i % count) as usize];
        line.clear();
        reader
            .read_until(b'\n', &mut line)
            .map_err(|e| OutputError::io(shard_path, e))?;
        if line.pop() != Some(b'\n') {
            return Err(OutputError::Corrupt {
                path: shard_path.clone(),
                message: format!("instance {i} is missing"),
            });
        }
        let corrupt = |message: String| OutputError::Corrupt {
            path: shard_path.clone(),
            message,
        };
        let (seed, key) = record::read_key(&domain, &index, &line)
            .map_err(|m| corrupt(format!("instance {i}: {m}")))?;
        if seed != i {
            return Err(corrupt(format!("expected instance {i}, found seed {seed}")));
        }
        let io = |e| OutputError::io(&tmp, e);
        if seen.insert(key.clone()) {
            writer.write_all(&line).map_err(io)?;
        } else {
            let mut candidate = synth.candidate(i)?;
            if candidate.key != key {
                return Err(corrupt(format!(
                    "instance {i} is not the first draw of its stream"
                )));
            }
            // The shard counted the first draw; add the retries.
            let first_draw = candidate.stats;
            synth.admit(&mut candidate, &mut seen)?;
            let after = candidate.stats;
            stats.duplicates += after.duplicates;
            stats.resamples += after.resamples - first_draw.resamples;
            stats.unsat += after.unsat - first_draw.unsat;
            stats.sat_calls += after.sat_calls - first_draw.sat_calls;
            let optimal = labeler.map(|label| label(&domain, &candidate.instance));
            let bytes = record::render(&domain, &candidate.instance, optimal.as_ref());
            writer.write_all(&bytes).map_err(io)?;
        }
        writer.write_all(b"\n").map_err(io)?;
        if let Some(progress) = progress
            && (i + 1) % CHUNK == 0
        {
            progress(i + 1);
        }
    }
    for (shard_path, reader) in &mut readers {
        let mut rest = Vec::new();
        reader
            .read_until(b'\n', &mut rest)
            .map_err(|e| OutputError::io(shard_path, e))?;
        if !rest.is_empty() {
            return Err(OutputError::Corrupt {
                path: shard_path.clone(),
                message: format!("it holds more lines than `-n {n}` gives it"),
            });
        }
    }
    let file = writer
        .into_inner()
        .map_err(|e| OutputError::io(&tmp, e.into_error()))?;
    file.sync_all().map_err(|e| OutputError::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| OutputError::io(&path, e))?;
    stats.instances = n;
    let total_s = start.elapsed().as_secs_f64();
    let synthesis_s: f64 = manifests.iter().map(|m| m.timings.synthesis_s).sum();
    let entry = DatasetEntry {
        file: format!("{setting}.jsonl"),
        status: Status::Complete,
        generator_version: manifest::VERSION.into(),
        domain_hash: first.domain.hash.clone(),
        parameters: first.parameters.clone(),
        merged_shards: Some(count),
        counts: Counts::new(n, 0, &stats),
        timings: timings(synthesis_s, total_s, total_s, n),
        digest: Some(files::digest(&path)?),
    };
    let info = DomainInfo {
        name: domain.name.clone(),
        hash: first.domain.hash.clone(),
        document: first.domain.document.clone(),
    };
    manifest::update_domain_manifest(&manifest_path, &info, &setting, &entry)?;
    Ok(Summary {
        path,
        instances: n,
        resumed_from: 0,
        stats,
        synthesis_s,
        total_s,
        up_to_date: false,
        lock: Some(lock),
    })
}
