//! `kumo-gen merge`: joins every complete shard group under `--out` into
//! exactly the file the unsharded run writes. Shard files are read
//! round-robin (index order); a line whose key is new is copied verbatim,
//! a taken key replays stream `i` (first draw, then retries) as the
//! unsharded run does.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::manifest::{self, Counts, DatasetEntry, DomainInfo, ShardManifest, Status};
use super::rebudget;
use super::{
    OutputError, Progress, Summary, check_digest, domain_dir, files, record, setting_name, timings,
};
use crate::contamination::{Exclusion, KeyKind, sets_conflict};
use crate::difficulty::{Banded, Reference};
use crate::search::SearchBudget;
use crate::synth::{Dedup, Stats, Synthesizer};

/// `--exclude` of a merge: read against each group's domain; it must be
/// the set the shards were made with.
#[derive(Clone, Debug, Default)]
pub struct MergeExclude {
    pub paths: Vec<PathBuf>,
    pub key: KeyKind,
}

/// The shard groups under `out`: one directory per (domain, setting).
pub(super) fn shard_groups(out: &Path) -> Result<Vec<PathBuf>, OutputError> {
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
    labels: Option<SearchBudget>,
    progress: Option<Progress>,
    exclude: &MergeExclude,
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
        .map(|group| merge_group(out, group, force, labels, progress, exclude))
        .collect()
}

/// The manifests of a shard group (sorted by shard index, one per shard)
/// and their paths, after checking that every shard of the group is there,
/// finished, and made by this generator with the same parameters and
/// domain.
fn complete_group(group: &Path) -> Result<(Vec<ShardManifest>, Vec<PathBuf>), OutputError> {
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
    Ok((manifests, names))
}

pub(super) fn merge_group(
    out: &Path,
    group: &Path,
    force: bool,
    labels: Option<SearchBudget>,
    progress: Option<Progress>,
    exclude: &MergeExclude,
) -> Result<Summary, OutputError> {
    let start = Instant::now();
    let (manifests, names) = complete_group(group)?;
    let first = manifests[0].clone();
    let count = first.shard.count;
    let shards_error = |message: String| OutputError::Shards {
        message,
        help: "run the missing shards with the same command and `--shard K/N`, then merge again"
            .into(),
    };
    // Merged lines are labelled exactly when the shards' lines are, under
    // the shards' budget (the unsharded file's bytes); a larger requested
    // budget then relabels what it left unlabelled.
    let recorded = rebudget::recorded(&first.parameters);
    let requested = if first.parameters.labels {
        match labels {
            Some(requested) => Some(requested),
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
    let exclusion = if exclude.paths.is_empty() {
        None
    } else {
        Some(std::sync::Arc::new(Exclusion::read(
            &domain,
            &exclude.paths,
            exclude.key,
        )?))
    };
    let sets = super::excluded_sets(exclusion.as_deref());
    if let Some(reason) = sets_conflict(&first.parameters.exclude, &sets) {
        return Err(OutputError::Shards {
            message: format!("`{}`: {reason}", group.display()),
            help: "merge with the `--exclude` and `--exclude-key` the shards were generated with"
                .into(),
        });
    }
    let n = first.parameters.n;
    let reference = if first.parameters.labels {
        Some(Reference::cached(&domain, &params)?)
    } else {
        None
    };
    let banded = match first.parameters.band {
        Some(band) => {
            if requested.is_some_and(|r| rebudget::compare(recorded, r) == rebudget::Change::Larger)
            {
                return Err(shards_error(format!(
                    "`{}`: the shards' lines lie in a difficulty band under {}, and which draw lies in it depends on the budget",
                    group.display(),
                    rebudget::flags(recorded)
                )));
            }
            Some(Banded::new(&synth, band, recorded)?)
        }
        None => None,
    };

    let dir = domain_dir(out, &domain.name);
    let setting = setting_name(&params);
    let path = dir.join(format!("{setting}.jsonl"));
    files::create_dir_below(out, &dir)?;
    let lock = files::FileLock::exclusive(&path)?;
    let manifest_path = dir.join("manifest.json");
    if path.exists() && !force {
        let entry = manifest::read_domain_manifest(&manifest_path)
            .ok()
            .and_then(|m| manifest::dataset_entry(&m, &setting));
        if let Some(entry) = entry
            && entry.status == Status::Complete
            && rebudget::same_but_budget(&entry.parameters, &first.parameters)
            && requested.is_none_or(|requested| {
                rebudget::compare(rebudget::recorded(&entry.parameters), requested)
                    != rebudget::Change::Larger
            })
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
            out_of_band: m.counts.out_of_band_rejected,
        });
    }
    let tmp = files::temp_path(&path);
    let tmp_file = std::fs::File::create(&tmp).map_err(|e| OutputError::io(&tmp, e))?;
    let mut writer = std::io::BufWriter::with_capacity(1 << 20, tmp_file);
    let index = record::NameIndex::new(&domain);
    let mut seen = Dedup::excluding(exclusion);
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
            let (mut candidate, mut label) = match &banded {
                Some(banded) => {
                    let (candidate, label) = banded.first(i)?;
                    (candidate, Some(label))
                }
                None => (synth.candidate(i)?, None),
            };
            if candidate.key != key {
                return Err(corrupt(format!(
                    "instance {i} is not the first draw of its stream"
                )));
            }
            // The shard counted the first draw; add the retries.
            let first_draw = candidate.stats;
            match (&banded, label.as_mut()) {
                (Some(banded), Some(label)) => banded.admit(&mut candidate, label, &mut seen)?,
                _ => synth.admit(&mut candidate, &mut seen)?,
            }
            let after = candidate.stats;
            stats.duplicates += after.duplicates;
            stats.out_of_band += after.out_of_band - first_draw.out_of_band;
            stats.resamples += after.resamples - first_draw.resamples;
            stats.unsat += after.unsat - first_draw.unsat;
            stats.sat_calls += after.sat_calls - first_draw.sat_calls;
            let optimal = match label {
                Some(label) => Some(Ok(label)),
                None => requested.map(|_| {
                    crate::search::optimal_for_instance(&domain, &candidate.instance, recorded)
                }),
            };
            let bytes = record::render(
                &domain,
                &candidate.instance,
                optimal.as_ref(),
                reference.as_deref(),
            );
            writer.write_all(&bytes).map_err(io)?;
        }
        writer.write_all(b"\n").map_err(io)?;
        if let Some(progress) = progress
            && (i + 1) % super::append::CHUNK == 0
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
    // Relabelled before the rename: the merged file appears whole.
    let mut parameters = first.parameters.clone();
    let note = match requested.map(|requested| (requested, rebudget::compare(recorded, requested)))
    {
        Some((requested, rebudget::Change::Larger)) => {
            let done = rebudget::relabel_unlabelled(
                &domain,
                &tmp,
                n,
                requested,
                reference.as_deref(),
                progress,
            )?;
            parameters.search_budget = Some(requested.max_memo_entries);
            parameters.search_nodes = Some(requested.max_nodes);
            Some(rebudget::relabelled_note(requested, done))
        }
        Some((_, rebudget::Change::NotLarger)) => Some(format!(
            "the shards' labels were searched under {}, kept (a smaller budget changes nothing)",
            rebudget::flags(recorded)
        )),
        _ => None,
    };
    std::fs::rename(&tmp, &path).map_err(|e| OutputError::io(&path, e))?;
    stats.instances = n;
    let total_s = start.elapsed().as_secs_f64();
    let synthesis_s: f64 = manifests.iter().map(|m| m.timings.synthesis_s).sum();
    let entry = DatasetEntry {
        file: format!("{setting}.jsonl"),
        status: Status::Complete,
        generator_version: manifest::VERSION.into(),
        domain_hash: first.domain.hash.clone(),
        parameters,
        merged_shards: Some(count),
        counts: Counts::new(n, 0, &stats),
        timings: timings(synthesis_s, total_s, total_s, n),
        digest: Some(files::digest(&path)?),
        difficulty: super::difficulty_of(&path, n, reference.as_deref())?,
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
        note,
        lock: Some(lock),
    })
}
