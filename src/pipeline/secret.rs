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

/// A seed from the operating system's random source.
pub fn draw_seed() -> Result<u64, String> {
    rand::rngs::SysRng
        .try_next_u64()
        .map_err(|e| format!("the operating system gave no random seed: {e}"))
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

/// Writes `seed_file` to `path` atomically (temp file + rename), readable
/// by its owner only (0600 in a 0700 directory on Unix) from the moment
/// the temp file exists.
pub fn write_seed_file(path: &Path, seed_file: &SeedFile) -> Result<(), OutputError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| OutputError::io(dir, e))?;
    let mut text = serde_json::to_vec_pretty(seed_file).map_err(|e| OutputError::Internal {
        message: e.to_string(),
    })?;
    text.push(b'\n');
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| OutputError::io(dir, e))?;
    }
    let mut file = files::AtomicFile::create_private(path)?;
    file.write_all(&text)?;
    Ok(file.commit()?)
}

/// A `--seed random` run in progress: its seed file.
#[derive(Clone, Debug)]
pub struct SecretRun {
    pub path: PathBuf,
    pub record: SeedFile,
}

/// Before generating `job` (whose `params.seed` is the drawn seed and
/// `secret_seed` set): refuses an existing dataset unless `--force` (a
/// random seed makes a new dataset; it never continues one) and writes the
/// seed file, so the seed is kept even if the run is killed.
pub fn begin(job: &Job) -> Result<SecretRun, OutputError> {
    if job.target != crate::pipeline::write::Target::Whole {
        return Err(OutputError::Shards {
            message: "`--seed random` cannot be sharded: every shard would draw its own seed"
                .into(),
            help: "generate unsharded, or shard with a fixed `--seed`".into(),
        });
    }
    let parameters = job.parameters();
    let dataset = dataset_path(&job.out, &job.domain.name, &job.params);
    if dataset.exists() && !job.force {
        return Err(OutputError::Exists {
            path: dataset,
            reason: "`--seed random` makes a new dataset and never continues one".into(),
            help: "pass `--force` to replace it, or choose another `--out`".into(),
        });
    }
    let path = seed_file_path(&job.out, &job.domain.name, &parameters);
    // The budget the labels are searched under (the default one, unused,
    // without labels).
    let budget = job.labels.unwrap_or_default();
    let record = SeedFile {
        warning: warning(),
        seed: job.params.seed,
        domain: DomainInfo::of(job.domain),
        dataset: dataset_relative(&job.domain.name, &parameters),
        parameters,
        search_budget: budget.max_memo_entries,
        search_nodes: budget.max_nodes,
        digest: None,
    };
    write_seed_file(&path, &record)?;
    Ok(SecretRun { path, record })
}

/// After the dataset is finished: records its digest in the seed file.
pub fn finish(run: &mut SecretRun, dataset: &Path) -> Result<String, OutputError> {
    let digest = files::digest(dataset)?;
    run.record.digest = Some(digest.clone());
    write_seed_file(&run.path, &run.record)?;
    Ok(digest)
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

/// Regenerates the dataset of `seed_file` and compares it with `dataset`
/// (default: the file the seed file names, under the `--out` it lives in).
/// The error says what differs.
pub fn verify(seed_file: &Path, dataset: Option<&Path>) -> Result<Verified, String> {
    let text = std::fs::read(seed_file)
        .map_err(|e| format!("cannot read `{}`: {e}", seed_file.display()))?;
    let record: SeedFile = serde_json::from_slice(&text)
        .map_err(|e| format!("`{}` is not a kumo-gen seed file: {e}", seed_file.display()))?;
    let dataset = match dataset {
        Some(path) => path.to_path_buf(),
        None => {
            // OUT/SECRET-seeds/<domain>/<setting>.json
            let out = seed_file
                .parent()
                .and_then(Path::parent)
                .and_then(Path::parent)
                .ok_or("give the dataset file to verify")?;
            out.join(&record.dataset)
        }
    };
    let (domain, _) =
        crate::domain::compile(&seed_file.display().to_string(), &record.domain.document).map_err(
            |e| {
                format!(
                    "the domain in `{}` does not compile: {e}",
                    seed_file.display()
                )
            },
        )?;
    let exclusion = if record.parameters.exclude.is_empty() && record.parameters.split.is_none() {
        None
    } else if record.parameters.exclude.is_empty() {
        Some(std::sync::Arc::new(Exclusion::none(&domain)))
    } else {
        let paths: Vec<PathBuf> = record
            .parameters
            .exclude
            .iter()
            .map(|s| PathBuf::from(&s.path))
            .collect();
        let read = Exclusion::read(&domain, &paths, record.parameters.exclude[0].key)
            .map_err(|e| format!("an excluded set of the dataset cannot be read: {e}"))?;
        if let Some(reason) = sets_conflict(&record.parameters.exclude, read.sets()) {
            return Err(format!(
                "the excluded sets changed since the dataset was made: {reason}"
            ));
        }
        Some(std::sync::Arc::new(read))
    };
    let exclusion = match (&record.parameters.split, exclusion) {
        (Some(label), Some(base)) => Some(std::sync::Arc::new(base.for_part(part_of(label)?))),
        (_, exclusion) => exclusion,
    };
    let mut params = record.parameters.params();
    params.seed = record.seed;
    let budget = record.parameters.labels.then_some(SearchBudget {
        max_memo_entries: record.search_budget,
        max_nodes: record.search_nodes,
        max_time: None,
    });
    let n = record.parameters.n;
    let band = record.parameters.band;
    let lines = super::generate_range_lines(&domain, params, 0..n, budget, exclusion, band)
        .map_err(|e| format!("regenerating failed: {}", e.message))?;
    let mut bytes = lines.join("\n").into_bytes();
    bytes.push(b'\n');
    let digest = crate::domain::fnv1a_hex(&bytes);
    let published =
        std::fs::read(&dataset).map_err(|e| format!("cannot read `{}`: {e}", dataset.display()))?;
    if published != bytes {
        let first = published
            .split(|&b| b == b'\n')
            .zip(bytes.split(|&b| b == b'\n'))
            .position(|(a, b)| a != b)
            .map(|i| format!("line {} differs", i + 1))
            .unwrap_or_else(|| "the lengths differ".into());
        return Err(format!(
            "`{}` is not the dataset of this seed: {first} (regenerated digest {digest})",
            dataset.display()
        ));
    }
    if let Some(recorded) = &record.digest
        && recorded != &digest
    {
        return Err(format!(
            "the dataset matches the seed, but the seed file recorded digest {recorded}, not {digest}"
        ));
    }
    Ok(Verified {
        dataset,
        instances: n,
        digest,
    })
}

/// The part filter a manifest's `split` label names
/// (`test of train=0.9,test=0.1`).
fn part_of(label: &str) -> Result<PartFilter, String> {
    PartFilter::from_label(label).map_err(|e| format!("the seed file: {e}"))
}
