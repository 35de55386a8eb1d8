//! `kumo-gen merge`: joins every complete shard group under `--out` into
//! exactly the file the unsharded run writes. Shard files are read
//! round-robin (index order); a line whose key is new is copied verbatim,
//! a taken key replays stream `i` (first draw, then retries) as the
//! unsharded run does.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::manifest::{self, Counts, DatasetEntry, DomainInfo, ShardManifest, Status};
use super::{OutputError, Summary, check_digest, domain_dir, files, record, timings};
use super::{draws, rebudget};
use crate::contamination::split::PartFilter;
use crate::contamination::{Exclusion, sets_conflict};
use crate::dataset::setting::Setting;
use crate::difficulty::{Banded, Reference};
use crate::domain::Domain;
use crate::pipeline::job::MergeExclude;
use crate::progress::Progress;
use crate::search::SearchBudget;
use crate::synth::{Dedup, Key, Stats, Synthesizer};
use std::sync::Arc;

/// One shard group: the shards of one (domain, setting), and the root its
/// dataset goes under (`--out`, or `OUT/<part>/` for a `--split` part).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ShardGroup {
    pub root: PathBuf,
    pub dir: PathBuf,
}

/// The shard groups under `out`: `OUT/<domain>/shards/<setting>/`, and
/// those of `--split` parts, `OUT/<part>/<domain>/shards/<setting>/`.
pub(super) fn shard_groups(out: &Path) -> Result<Vec<ShardGroup>, OutputError> {
    let mut groups = Vec::new();
    let read = |dir: &Path| -> Result<Vec<PathBuf>, OutputError> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| OutputError::read(dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            // Hidden folders are kumo-gen's own (the lock files' `.locks`).
            .filter(|p| {
                p.is_dir()
                    && !p
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        entries.sort();
        Ok(entries)
    };
    if !out.is_dir() {
        return Ok(groups);
    }
    let mut add = |root: &Path, domain: &Path| {
        let shards = domain.join("shards");
        if shards.is_dir() {
            for dir in read(&shards)? {
                groups.push(ShardGroup {
                    root: root.to_path_buf(),
                    dir,
                });
            }
        }
        Ok::<(), OutputError>(())
    };
    for child in read(out)? {
        add(out, &child)?;
        // A `--split` part: `OUT/<part>/<domain>/shards/`.
        for domain in read(&child)? {
            add(&child, &domain)?;
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
    progress: &dyn Progress,
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
        .map(|group| merge_group(&group.root, &group.dir, force, labels, progress, exclude))
        .collect()
}

/// The manifests of a shard group (sorted by shard index, one per shard)
/// and their paths, after checking that every shard of the group is there,
/// finished, and made by this generator with the same parameters and
/// domain.
fn complete_group(group: &Path) -> Result<(Vec<ShardManifest>, Vec<PathBuf>), OutputError> {
    let mut manifests: Vec<ShardManifest> = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(group)
        .map_err(|e| OutputError::read(group, e))?
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

/// The shards of one group, checked, with what they were made of.
struct Group {
    manifests: Vec<ShardManifest>,
    first: ShardManifest,
    domain: Domain,
    /// The shards' exclusion (their `--exclude` sets and `--split` part).
    exclusion: Option<Arc<Exclusion>>,
    part: Option<String>,
    /// The setting's difficulty reference sample (labelled shards only).
    reference: Option<Arc<Reference>>,
}

pub(super) fn merge_group(
    out: &Path,
    dir: &Path,
    force: bool,
    labels: Option<SearchBudget>,
    progress: &dyn Progress,
    exclude: &MergeExclude,
) -> Result<Summary, OutputError> {
    let start = Instant::now();
    let group = read_group(dir, exclude)?;
    let requested = requested_budget(&group.first, labels, dir)?;
    let params = group.first.parameters.params();
    let n = group.first.parameters.n;
    let domain_dir = domain_dir(out, &group.domain.name);
    let setting = Setting::from(&params);
    let path = domain_dir.join(setting.file_name());
    let setting = setting.to_string();
    files::create_dir_below(out, &domain_dir)?;
    let lock = files::FileLock::exclusive(&path)?;
    let manifest_path = domain_dir.join("manifest.json");
    if path.exists() && !force {
        already_merged(&path, &manifest_path, &setting, &group.first, requested)?;
        let mut summary = Summary::up_to_date(path, n, start, lock);
        summary.part = group.part;
        return Ok(summary);
    }
    let mut merged = files::AtomicFile::create(&path)?;
    let stats = merge_lines(&group, dir, requested, progress, &mut merged)?;
    merged.sync()?;
    // Relabelled before the rename: the merged file appears whole.
    let (parameters, note) = relabel_merged(&group, requested, &mut merged, progress)?;
    merged.commit()?;
    let total_s = start.elapsed().as_secs_f64();
    let synthesis_s: f64 = group.manifests.iter().map(|m| m.timings.synthesis_s).sum();
    let entry = DatasetEntry {
        file: format!("{setting}.jsonl"),
        status: Status::Complete,
        generator_version: manifest::VERSION.into(),
        domain_hash: group.first.domain.hash.clone(),
        parameters,
        merged_shards: Some(group.first.shard.count),
        counts: Counts::new(n, 0, &stats),
        timings: timings(synthesis_s, total_s, total_s, n),
        digest: Some(files::digest(&path)?),
        difficulty: super::difficulty_of(&path, n, group.reference.as_deref())?,
    };
    let info = DomainInfo {
        name: group.domain.name.clone(),
        hash: group.first.domain.hash.clone(),
        document: group.first.domain.document.clone(),
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
        part: group.part,
    })
}

fn shards_error(message: String) -> OutputError {
    OutputError::Shards {
        message,
        help: "run the missing shards with the same command and `--shard K/N`, then merge again"
            .into(),
    }
}

/// The complete shards of `dir`, their domain, and the exclusion they
/// were made under: the `--exclude` sets (which must be the recorded
/// ones) and, for a `--split` part (its label is recorded), the other
/// parts' contexts, as in the unsharded part.
fn read_group(dir: &Path, exclude: &MergeExclude) -> Result<Group, OutputError> {
    let (manifests, names) = complete_group(dir)?;
    let first = manifests[0].clone();
    let (domain, _) =
        crate::domain::compile(&names[0].display().to_string(), &first.domain.document).map_err(
            |e| OutputError::Corrupt {
                path: names[0].clone(),
                message: format!("its domain does not compile: {e}"),
            },
        )?;
    let part = match &first.parameters.split {
        None => None,
        Some(label) => Some(
            PartFilter::from_label(label).map_err(|e| OutputError::Corrupt {
                path: names[0].clone(),
                message: e.to_string(),
            })?,
        ),
    };
    let read = if exclude.paths.is_empty() {
        None
    } else {
        Some(Exclusion::read(&domain, &exclude.paths, exclude.key)?)
    };
    let part_name = part.as_ref().map(|p| p.name.clone());
    let exclusion = match (read, part) {
        (None, None) => None,
        (Some(read), None) => Some(Arc::new(read)),
        (read, Some(part)) => Some(Arc::new(
            read.unwrap_or_else(|| Exclusion::none(&domain))
                .for_part(part),
        )),
    };
    let sets = super::excluded_sets(exclusion.as_deref());
    if let Some(reason) = sets_conflict(&first.parameters.exclude, &sets) {
        return Err(OutputError::Shards {
            message: format!("`{}`: {reason}", dir.display()),
            help: "merge with the `--exclude` and `--exclude-key` the shards were generated with"
                .into(),
        });
    }
    let reference = if first.parameters.labels {
        Some(Reference::cached(&domain, &first.parameters.params())?)
    } else {
        None
    };
    Ok(Group {
        manifests,
        first,
        domain,
        exclusion,
        part: part_name,
        reference,
    })
}

/// The budget merged lines are labelled under: exactly when the shards'
/// lines are, under the shards' budget (the unsharded file's bytes); a
/// larger requested budget then relabels what it left unlabelled.
fn requested_budget(
    first: &ShardManifest,
    labels: Option<SearchBudget>,
    dir: &Path,
) -> Result<Option<SearchBudget>, OutputError> {
    if !first.parameters.labels {
        return Ok(None);
    }
    match labels {
        Some(requested) => Ok(Some(requested.for_actions(first.parameters.actions))),
        None => Err(shards_error(format!(
            "`{}`: shards were made with labels, this merge has no labeler",
            dir.display()
        ))),
    }
}

/// `Ok` when the dataset already at `path` is this merge, finished and
/// intact (and the requested budget is not larger): nothing to do.
/// Anything else there is in the way without `--force`.
fn already_merged(
    path: &Path,
    manifest_path: &Path,
    setting: &str,
    first: &ShardManifest,
    requested: Option<SearchBudget>,
) -> Result<(), OutputError> {
    let entry = manifest::read_domain_manifest(manifest_path)
        .ok()
        .and_then(|m| manifest::dataset_entry(&m, setting));
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
        return check_digest(path, Some(&entry));
    }
    Err(OutputError::Exists {
        path: path.to_path_buf(),
        reason: "a dataset is already there".into(),
        help: "pass `--force` to replace it with the merged shards".into(),
    })
}

/// A damaged shard: `--force` (which replaces the merged dataset) does
/// not mend it; making the shard again does.
fn damaged_shard(path: &Path, message: String) -> OutputError {
    OutputError::Shards {
        message: format!("`{}` is damaged: {message}", path.display()),
        help: "make that shard again (its `kumo-gen generate ... --shard K/N` with `--force`), then run `merge` again".into(),
    }
}

/// A shard file open for reading, and its path (for messages).
/// (Lines under the line cap: a shard is a user's file once it is on disk.)
type ShardReader = (PathBuf, crate::files::read::Lines<BufReader<std::fs::File>>);

/// The shard files of the group, open for reading, and the counts the
/// shards recorded (draws an excluded set or another part took, redrawn
/// by the shard itself, are among their duplicates).
fn open_shards(group: &Group, dir: &Path) -> Result<(Vec<ShardReader>, Stats), OutputError> {
    let mut readers = Vec::new();
    let mut stats = Stats::default();
    for m in &group.manifests {
        let shard_path = dir.join(&m.file);
        let file =
            crate::files::read::open(&shard_path).map_err(|e| OutputError::read(&shard_path, e))?;
        let lines = crate::files::read::Lines::new(BufReader::with_capacity(1 << 20, file));
        readers.push((shard_path, lines));
        stats.add(&Stats {
            instances: 0,
            resamples: m.counts.resamples,
            unsat: m.counts.unsat_samples,
            sat_calls: m.counts.sat_calls,
            duplicates: m.counts.duplicates_rejected,
            out_of_band: m.counts.out_of_band_rejected,
            band_straddling: m.counts.out_of_band_straddling,
            band_unlabelled: m.counts.out_of_band_unlabelled,
        });
    }
    Ok((readers, stats))
}

/// Writes instances `0..n` into `merged`: the shards' lines round-robin,
/// a line whose key is taken replayed from its stream as the unsharded
/// run does. Returns the counts of the whole dataset.
fn merge_lines(
    group: &Group,
    dir: &Path,
    requested: Option<SearchBudget>,
    progress: &dyn Progress,
    merged: &mut files::AtomicFile,
) -> Result<Stats, OutputError> {
    let domain = &group.domain;
    let n = group.first.parameters.n;
    let count = group.first.shard.count;
    let synth = Synthesizer::new(domain, group.first.parameters.params())?;
    let banded = banded_of(group, dir, &synth, requested)?;
    let plan = super::Plan {
        synth: &synth,
        banded: banded.as_ref(),
        reference: group.reference.as_deref(),
    };
    let redraw = Redraw {
        plan: &plan,
        group,
        requested,
        recorded: rebudget::recorded(&group.first.parameters),
    };
    let (mut readers, mut stats) = open_shards(group, dir)?;
    let index = record::NameIndex::new(domain);
    let mut seen = Dedup::excluding(group.exclusion.clone());
    let mut line = Vec::new();
    for i in 0..n {
        let (shard_path, reader) = &mut readers[(i % count) as usize];
        line.clear();
        reader
            .next_line(&mut line)
            .map_err(|e| OutputError::read(shard_path, e))?;
        if line.pop() != Some(b'\n') {
            return Err(damaged_shard(
                shard_path,
                format!("instance {i} is missing"),
            ));
        }
        let corrupt = |message: String| damaged_shard(shard_path, message);
        let (seed, key) = record::read_key(domain, &index, &line)
            .map_err(|m| corrupt(format!("instance {i}: {m}")))?;
        if seed != i {
            return Err(corrupt(format!("expected instance {i}, found seed {seed}")));
        }
        if seen.insert(key.clone()) {
            merged.write_all(&line)?;
        } else {
            let bytes = redraw
                .line(i, &key, &mut seen, &mut stats)?
                .ok_or_else(|| corrupt(format!(
                    "instance {i} is not the first draw of its stream that no excluded set (or other `--split` part) takes"
                )))?;
            merged.write_all(&bytes)?;
        }
        merged.write_all(b"\n")?;
        if (i + 1) % super::append::CHUNK == 0 {
            progress.position(i + 1);
        }
    }
    check_shards_end(&mut readers, n)?;
    stats.instances = n;
    Ok(stats)
}

/// The band the shards' lines lie in, if any: a merge cannot relabel them
/// under a larger budget, since which draw lies in it depends on the
/// budget.
fn banded_of<'p, 'd>(
    group: &Group,
    dir: &Path,
    synth: &'p Synthesizer<'d>,
    requested: Option<SearchBudget>,
) -> Result<Option<Banded<'p, 'd>>, OutputError> {
    let recorded = rebudget::recorded(&group.first.parameters);
    let Some(band) = group.first.parameters.band else {
        return Ok(None);
    };
    if requested.is_some_and(|r| rebudget::compare(recorded, r) == rebudget::Change::Larger) {
        return Err(shards_error(format!(
            "`{}`: the shards' lines lie in a difficulty band under {}, and which draw lies in it depends on the budget",
            dir.display(),
            rebudget::flags(recorded)
        )));
    }
    Ok(Some(Banded::new(synth, band, recorded)?))
}

/// How a merge draws a shard's line again whose key another shard's line
/// took first, as the unsharded run does.
struct Redraw<'r, 'p, 'd> {
    plan: &'r super::Plan<'p, 'd>,
    group: &'r Group,
    /// The budget asked of the merge, if any.
    requested: Option<SearchBudget>,
    /// The budget the shards' labels were searched under.
    recorded: SearchBudget,
}

impl Redraw<'_, '_, '_> {
    /// Instance `i`'s line, redrawn from its stream past the keys in
    /// `seen` (the shard's retries added to `stats`); `None` when the
    /// shard's line (its key `key`) is not its stream's first draw.
    fn line(
        &self,
        i: u64,
        key: &Key,
        seen: &mut Dedup,
        stats: &mut Stats,
    ) -> Result<Option<Vec<u8>>, OutputError> {
        let domain = &self.group.domain;
        let (mut candidate, mut label) =
            draws::first_draw(self.plan, self.group.exclusion.as_ref(), i)?;
        if candidate.key != *key {
            return Ok(None);
        }
        // The shard counted the draws up to its line; add the retries.
        let at_shard = candidate.stats;
        match (self.plan.banded, label.as_mut()) {
            (Some(banded), Some(label)) => banded.admit(&mut candidate, label, seen)?,
            _ => self.plan.synth.admit(&mut candidate, seen)?,
        }
        let after = candidate.stats;
        stats.duplicates += after.duplicates - at_shard.duplicates;
        stats.out_of_band += after.out_of_band - at_shard.out_of_band;
        stats.band_straddling += after.band_straddling - at_shard.band_straddling;
        stats.band_unlabelled += after.band_unlabelled - at_shard.band_unlabelled;
        stats.resamples += after.resamples - at_shard.resamples;
        stats.unsat += after.unsat - at_shard.unsat;
        stats.sat_calls += after.sat_calls - at_shard.sat_calls;
        let optimal = match label {
            Some(label) => Some(Ok(label)),
            None => self.requested.map(|_| {
                crate::search::optimal_for_instance(domain, &candidate.instance, self.recorded)
            }),
        };
        Ok(Some(record::render(
            domain,
            &candidate.instance,
            optimal.as_ref(),
            self.group.reference.as_deref(),
        )))
    }
}

/// Every shard ends where `-n n` ends it: a line more is damage.
fn check_shards_end(readers: &mut [ShardReader], n: u64) -> Result<(), OutputError> {
    for (shard_path, reader) in readers {
        let mut rest = Vec::new();
        let more = reader
            .next_line(&mut rest)
            .map_err(|e| OutputError::read(shard_path, e))?;
        if more {
            return Err(damaged_shard(
                shard_path,
                format!("it holds more lines than `-n {n}` gives it"),
            ));
        }
    }
    Ok(())
}

/// With a larger requested budget than the shards', labels the lines
/// they left unlabelled in the merged temp file. Returns the parameters to
/// record and the note to print.
fn relabel_merged(
    group: &Group,
    requested: Option<SearchBudget>,
    merged: &mut files::AtomicFile,
    progress: &dyn Progress,
) -> Result<(super::manifest::Parameters, Option<String>), OutputError> {
    let mut parameters = group.first.parameters.clone();
    let recorded = rebudget::recorded(&parameters);
    let n = parameters.n;
    let note = match requested.map(|requested| (requested, rebudget::compare(recorded, requested)))
    {
        Some((requested, rebudget::Change::Larger)) => {
            let done = rebudget::relabel_unlabelled(
                &group.domain,
                merged.tmp(),
                n,
                requested,
                group.reference.as_deref(),
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
    Ok((parameters, note))
}
