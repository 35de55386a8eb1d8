//! `--shard K/N`: the first draw of every index `i ≡ K (mod N)`, in index
//! order, into `OUT/<domain>/shards/<setting>/shard-K-of-N.jsonl` with a
//! shard manifest. A shard cannot know the other shards' keys, so it does
//! no dedup (`merge` does); it does redraw what an `--exclude` set or
//! another `--split` part takes, since every shard knows those. It resumes
//! like a dataset.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::manifest::{
    self, Counts, DomainInfo, Generator, ShardId, ShardManifest, Status, Timings,
};
use super::{
    Job, OutputError, Plan, Summary, append, check_digest, domain_dir, existing, files, timings,
    too_long,
};
use crate::setting::Setting;
use crate::synth::{Params, Stats};

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

pub(super) fn write_shard(job: &Job, plan: &Plan, shard: ShardId) -> Result<Summary, OutputError> {
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
        files::create_dir_below(&job.out, dir)?;
    }
    let lock = files::FileLock::exclusive(&path)?;
    let parameters = job.parameters();
    let previous = match manifest::read_json::<ShardManifest>(&manifest_path) {
        Ok(m) => m,
        Err(_) if job.force => None,
        Err(e) => return Err(e),
    };
    let entry = previous.as_ref().map(ShardManifest::entry);
    let resume = existing(&path, entry, &domain.source_hash, &parameters, job.force)?;
    check_digest(&path, resume.as_ref())?;
    super::rebudget::shard_conflict(&path, resume.as_ref(), &parameters)?;
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

    let before =
        super::resume::shard_prefix(plan, job.exclude.as_ref(), lines, resume.as_ref(), |j| {
            shard.index + j * shard.count
        })?;
    let mut stats = Stats::default();
    let (synthesis_s, write_s) = append::append_chunks(
        job,
        plan.reference,
        &mut file,
        &path,
        lines,
        total,
        |range| {
            let indices: Vec<u64> = range.map(|j| shard.index + j * shard.count).collect();
            let drawn = super::draws::first_draws(plan, job.exclude.as_ref(), &indices)?;
            Ok(drawn
                .into_iter()
                .map(|(c, label)| {
                    stats.add(&c.stats);
                    stats.instances += 1;
                    (c.instance, label)
                })
                .collect())
        },
    )?;
    let total_s = start.elapsed().as_secs_f64();
    manifest.status = Status::Complete;
    let mut whole = before;
    whole.add(&stats);
    manifest.counts = Counts::new(total, lines, &whole);
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
        note: None,
        lock: Some(lock),
        part: job.exclude.as_ref().and_then(|e| e.part_name()),
    })
}
