//! Secret seeds: `--seed random` and `kumo-gen verify --seed-file F`.
//!
//! A public seed lets anyone regenerate a split. `--seed random` draws the
//! seed from the operating system and writes it only to a private seed
//! file, `OUT/SECRET-seeds/<domain>/<setting>.json` (mode 0600 on Unix,
//! written before the first instance so a crash never loses it, and again
//! with the dataset's digest when the dataset is finished). The public
//! files never hold it: the manifest records `"seed": 0` with
//! `"secret_seed": true`, the instance lines' `seed` is the index as
//! always, and the HF export has no dataset seed.
//!
//! A run killed before it finished (the seed file records no digest yet)
//! is continued by the same command: [`interrupted`] finds its seed file,
//! the run takes the seed from it instead of drawing a new one, resumes the
//! dataset file and writes the books, SFT records and HF export it had not
//! written. A finished run is never continued (a new `--seed random` draws
//! a new seed and refuses the existing dataset unless `--force`, which
//! always draws a new one).
//!
//! [`verify`] later proves a published file: it regenerates the dataset in
//! memory from the seed file (domain document, parameters, search budget,
//! excluded sets re-read and checked against their recorded digests) and
//! compares the bytes with the file, and its digest with the recorded one.

use std::path::{Path, PathBuf};

use rand::TryRng;
use serde::{Deserialize, Serialize};

use crate::contamination::split::PartFilter;
use crate::contamination::{Exclusion, sets_conflict};
use crate::dataset::manifest::{DomainInfo, Parameters};
use crate::dataset::setting::Setting;
use crate::files;
use crate::pipeline::write::{Job, OutputError, dataset_path, domain_dir};
use crate::search::SearchBudget;

/// The directory of the private seed files under `--out`.
pub const SECRET_DIR: &str = "SECRET-seeds";

/// What a private seed file holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedFile {
    pub warning: String,
    pub seed: u64,
    pub domain: DomainInfo,
    /// The dataset's parameters, with the real seed.
    pub parameters: Parameters,
    pub search_budget: usize,
    pub search_nodes: u64,
    /// The dataset file, relative to `--out`.
    pub dataset: String,
    /// FNV-1a 64 of the finished dataset file (as its manifest entry).
    #[serde(default)]
    pub digest: Option<String>,
}

use super::seed_error::MAX_SEED_FILE_BYTES;
pub use super::seed_error::{MAX_VERIFIED_INSTANCES, SeedError};

/// A seed from the operating system's random source.
pub fn draw_seed() -> Result<u64, SeedError> {
    rand::rngs::SysRng
        .try_next_u64()
        .map_err(|e| SeedError::NoRandomSeed(Box::new(e)))
}

/// `OUT/SECRET-seeds/<domain>/<setting>.json`.
pub fn seed_file_path(out: &Path, domain_name: &str, parameters: &Parameters) -> PathBuf {
    let setting = Setting::from(&parameters.params());
    domain_dir(&out.join(SECRET_DIR), domain_name).join(format!("{setting}.json"))
}

/// The dataset path a seed file names, relative to `--out`.
pub fn dataset_relative(domain_name: &str, parameters: &Parameters) -> String {
    let setting = Setting::from(&parameters.params());
    let dir = domain_dir(Path::new(""), domain_name);
    dir.join(setting.file_name()).display().to_string()
}

/// Writes `seed_file` to `path` (below `out`, `--out` or a part's
/// folder in it) atomically (temp file + rename), readable by its owner
/// only from the moment the temp file exists: 0600, in `SECRET-seeds`
/// and `SECRET-seeds/<domain>` folders made 0700 whatever the umask. A
/// symbolic link among the folders from `out` down is refused
/// ([`files::create_dir_below`]): the seed never lands outside `--out`.
pub fn write_seed_file(out: &Path, path: &Path, seed_file: &SeedFile) -> Result<(), OutputError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    files::create_dir_below(out, dir)?;
    let mut text = serde_json::to_vec_pretty(seed_file).map_err(|e| OutputError::Internal {
        message: e.to_string(),
    })?;
    text.push(b'\n');
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Every folder from `OUT/SECRET-seeds` down to the file's.
        let below = dir.strip_prefix(out).unwrap_or(dir);
        let mut private = out.to_path_buf();
        let mut inside = false;
        for part in below.components() {
            private.push(part);
            inside |= part.as_os_str() == SECRET_DIR;
            if inside {
                std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700))
                    .map_err(|e| OutputError::io(&private, e))?;
            }
        }
    }
    let mut file = files::AtomicFile::create_private(path)?;
    file.write_all(&text)?;
    Ok(file.commit()?)
}

/// A `--seed random` run in progress: its seed file.
#[derive(Clone, Debug)]
pub struct SecretRun {
    /// The `--out` (or part folder) the seed file is below.
    pub out: PathBuf,
    pub path: PathBuf,
    pub record: SeedFile,
}

/// Before generating `job` (whose `params.seed` is the drawn seed and
/// `secret_seed` set): refuses an existing dataset unless `--force` (a
/// random seed makes a new dataset; it never continues one) and writes the
/// seed file, so the seed is kept even if the run is killed.
pub fn begin(job: &Job) -> Result<SecretRun, super::error::JobError> {
    if job.target() != crate::pipeline::job::Target::Whole {
        return Err(super::error::JobError::Output(OutputError::Shards {
            message: "`--seed random` cannot be sharded: every shard would draw its own seed"
                .into(),
            help: "generate unsharded, or shard with a fixed `--seed`".into(),
        }));
    }
    let parameters = job.parameters();
    let dataset = dataset_path(job.out(), &job.domain().name, job.params);
    let path = seed_file_path(job.out(), &job.domain().name, &parameters);
    // `--force` replaces the seed file unread; otherwise a seed file that
    // exists must be readable, or writing ours would lose its seed.
    let continuing = !job.force()
        && read_existing_seed_file(&path)?.is_some_and(|record| record.seed == job.params.seed);
    if dataset.exists() && !job.force() && !continuing {
        return Err(super::error::JobError::Output(OutputError::Exists {
            path: dataset,
            reason: "`--seed random` makes a new dataset and never continues one".into(),
            help: "pass `--force` to replace it, or choose another `--out`".into(),
        }));
    }
    // The budget the labels are searched under (the default one, unused,
    // without labels).
    let budget = job.labels().unwrap_or_default();
    let record = SeedFile {
        warning: warning(),
        seed: job.params.seed,
        domain: DomainInfo::of(job.domain()),
        dataset: dataset_relative(&job.domain().name, &parameters),
        parameters,
        search_budget: budget.max_memo_entries,
        search_nodes: budget.nodes_for(job.params.actions),
        digest: None,
    };
    write_seed_file(job.out(), &path, &record)?;
    Ok(SecretRun {
        out: job.out().to_path_buf(),
        path,
        record,
    })
}

/// After the dataset is finished: records its digest in the seed file.
pub fn finish(run: &mut SecretRun, dataset: &Path) -> Result<String, OutputError> {
    let digest = files::digest(dataset)?;
    run.record.digest = Some(digest.clone());
    write_seed_file(&run.out, &run.path, &run.record)?;
    Ok(digest)
}

/// Reads a seed file. The error never quotes the file's content: a
/// value in the wrong place may be the seed itself.
pub fn read_seed_file(path: &Path) -> Result<SeedFile, SeedError> {
    use std::io::Read;
    let unreadable = |source| SeedError::Unreadable {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(SeedError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let mut text = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SEED_FILE_BYTES + 1).read_to_end(&mut text))
        .map_err(unreadable)?;
    if text.len() as u64 > MAX_SEED_FILE_BYTES {
        return Err(SeedError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    serde_json::from_slice(&text).map_err(|e| SeedError::NotASeedFile {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        why: match e.classify() {
            serde_json::error::Category::Io => "unreadable",
            serde_json::error::Category::Syntax => "not JSON",
            serde_json::error::Category::Data => "a field is missing or of the wrong type",
            serde_json::error::Category::Eof => "it ends too early",
        },
    })
}

/// The seed file under `out` of an interrupted `--seed random` run of
/// `domain_name` with `params`' setting: it exists and records no digest
/// (the run stopped before its dataset and derived files were finished).
/// A seed file that exists but cannot be read is an error
/// ([`SeedError::BrokenSeedFile`]): a new seed would overwrite it.
pub fn interrupted(
    out: &Path,
    domain_name: &str,
    params: &crate::synth::Params,
) -> Result<Option<(PathBuf, SeedFile)>, SeedError> {
    let setting = Setting::from(params);
    let path = domain_dir(&out.join(SECRET_DIR), domain_name).join(format!("{setting}.json"));
    let Some(record) = read_existing_seed_file(&path)? else {
        return Ok(None);
    };
    Ok(record.digest.is_none().then_some((path, record)))
}

/// The seed file at `path`, `None` when there is none; one that exists
/// but cannot be read is [`SeedError::BrokenSeedFile`].
fn read_existing_seed_file(path: &Path) -> Result<Option<SeedFile>, SeedError> {
    match read_seed_file(path) {
        Ok(record) => Ok(Some(record)),
        // No file there (or a file where a folder on its way should be,
        // which the writer refuses in its own words).
        Err(SeedError::Unreadable { source, .. })
            if matches!(
                source.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(SeedError::BrokenSeedFile(Box::new(e))),
    }
}

/// The warning every seed file carries.
pub fn warning() -> String {
    "PRIVATE: this seed regenerates the dataset. Keep it; never publish it (not with the dataset, \
     not in the HF export). `kumo-gen verify --seed-file THIS DATASET` proves the dataset later."
        .into()
}

/// What [`verify`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Verified {
    pub dataset: PathBuf,
    pub instances: u64,
    pub digest: String,
}

impl Verified {
    /// What `kumo-gen verify --seed-file SEED_FILE` prints of it, ending
    /// in a newline: what was proven, and what was not compared.
    pub fn text(&self, seed_file: &Path) -> String {
        format!(
            "verified: `{}` is byte for byte the {} instance lines the seed in `{}` generates (digest {})\n         this proves the instance lines only: `kumo-gen check-books DIR` proves each knowledge book against its line; SFT records and the HF export are not compared\n",
            self.dataset.display(),
            self.instances,
            seed_file.display(),
            self.digest
        )
    }
}

/// Regenerates the dataset of `seed_file` and compares it with `dataset`
/// (default: the file the seed file names, under the `--out` it lives in).
/// The error says what differs.
pub fn verify(seed_file: &Path, dataset: Option<&Path>) -> Result<Verified, SeedError> {
    let record = read_seed_file(seed_file)?;
    let n = record.parameters.n;
    if n == 0 || n > MAX_VERIFIED_INSTANCES {
        return Err(SeedError::Count {
            path: seed_file.to_path_buf(),
            n,
        });
    }
    let dataset = match dataset {
        Some(path) => path.to_path_buf(),
        None => dataset_beside(seed_file, &record)?,
    };
    let (domain, _) =
        crate::domain::compile(&seed_file.display().to_string(), &record.domain.document).map_err(
            |source| SeedError::Domain {
                path: seed_file.to_path_buf(),
                source,
            },
        )?;
    let exclusion = exclusion_of(&record, &domain)?;
    let mut params = record.parameters.params();
    params.seed = record.seed;
    let budget = record
        .parameters
        .labels
        .then_some(SearchBudget::new(record.search_budget, record.search_nodes));
    let band = record.parameters.band;
    // Count the published lines first: a seed file whose `n` is not the
    // file's is refused before any instance is regenerated.
    let published_lines = count_lines(&dataset)?;
    if published_lines != n {
        return Err(SeedError::LineCount {
            path: dataset,
            lines: published_lines,
            n,
        });
    }
    let lines = super::generate_range_lines(&domain, params, 0..n, budget, exclusion, band)
        .map_err(SeedError::Regenerate)?;
    let mut bytes = lines.join("\n").into_bytes();
    bytes.push(b'\n');
    let digest = crate::fnv::fnv1a_hex(&bytes);
    let published = crate::files::read::read(&dataset).map_err(|source| SeedError::Unreadable {
        path: dataset.clone(),
        source,
    })?;
    if published != bytes {
        let first_line = published
            .split(|&b| b == b'\n')
            .zip(bytes.split(|&b| b == b'\n'))
            .position(|(a, b)| a != b)
            .map(|i| i + 1);
        return Err(SeedError::Differs {
            path: dataset,
            first_line,
            digest,
        });
    }
    if let Some(recorded) = &record.digest
        && recorded != &digest
    {
        return Err(SeedError::DigestDiffers {
            recorded: recorded.clone(),
            digest,
        });
    }
    Ok(Verified {
        dataset,
        instances: n,
        digest,
    })
}

/// The dataset a seed file names, under the `--out` it lives in
/// (`OUT/SECRET-seeds/<domain>/<setting>.json`).
fn dataset_beside(seed_file: &Path, record: &SeedFile) -> Result<PathBuf, SeedError> {
    let out = seed_file
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .ok_or(SeedError::NoDataset)?;
    Ok(out.join(&record.dataset))
}

/// What the recorded run kept out of its draws: the `--exclude` sets
/// (read again, refused when they changed) and the other `--split` parts.
fn exclusion_of(
    record: &SeedFile,
    domain: &crate::domain::Domain,
) -> Result<Option<std::sync::Arc<Exclusion>>, SeedError> {
    let exclusion = if record.parameters.exclude.is_empty() && record.parameters.split.is_none() {
        None
    } else if record.parameters.exclude.is_empty() {
        Some(std::sync::Arc::new(Exclusion::none(domain)))
    } else {
        let paths: Vec<PathBuf> = record
            .parameters
            .exclude
            .iter()
            .map(|s| PathBuf::from(&s.path))
            .collect();
        let read = Exclusion::read(domain, &paths, record.parameters.exclude[0].key)
            .map_err(SeedError::Excluded)?;
        if let Some(reason) = sets_conflict(&record.parameters.exclude, read.sets()) {
            return Err(SeedError::ExcludedChanged { reason });
        }
        Some(std::sync::Arc::new(read))
    };
    Ok(match (&record.parameters.split, exclusion) {
        (Some(label), Some(base)) => Some(std::sync::Arc::new(base.for_part(part_of(label)?))),
        (_, exclusion) => exclusion,
    })
}

/// The lines of `path` (a last line without a newline counts), read in
/// one streaming pass.
fn count_lines(path: &Path) -> Result<u64, SeedError> {
    use std::io::Read;
    let cannot = |source| SeedError::Unreadable {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if !meta.is_file() {
        return Err(SeedError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let mut file = std::fs::File::open(path).map_err(cannot)?;
    let mut buf = vec![0u8; 1 << 16];
    let (mut lines, mut last) = (0u64, b'\n');
    loop {
        let read = file.read(&mut buf).map_err(cannot)?;
        if read == 0 {
            break;
        }
        lines += buf[..read].iter().filter(|&&b| b == b'\n').count() as u64;
        last = buf[read - 1];
        if lines > MAX_VERIFIED_INSTANCES {
            break;
        }
    }
    Ok(lines + u64::from(last != b'\n'))
}

/// The part filter a manifest's `split` label names
/// (`test of train=0.9,test=0.1`).
fn part_of(label: &str) -> Result<PartFilter, SeedError> {
    PartFilter::from_label(label).map_err(SeedError::Split)
}
