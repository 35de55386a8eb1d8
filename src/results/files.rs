//! The files `score` and `stats` read: result files (any `*.jsonl` under
//! the paths given), an oracle file, and the domains of the results'
//! instance sets. `score`, `stats`, `moves` and `report` work on what these
//! return.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{OracleEntry, ResultFile, parse_result_file};
use crate::dataset::{Dataset, DatasetError, InstanceSet, jsonl_files};
use crate::domain::{Domain, LoadError, Registry};

/// A result or oracle file that is missing, unreadable or not in its
/// format: always the user's input.
#[derive(Debug, thiserror::Error)]
pub enum ScoreFileError {
    #[error(transparent)]
    Files(#[from] DatasetError),
    #[error(transparent)]
    Result(#[from] super::ReadError),
    #[error(
        "{}:{line}: not an oracle line ({message}); expected {{env, truth_num, action_num, seed, expected_steps}}",
        path.display()
    )]
    Oracle {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

fn read(path: &Path) -> Result<String, DatasetError> {
    crate::game::read_jsonl(path).map_err(|source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Every result file under `paths`, parsed, in walk order.
pub fn read_result_files(paths: &[PathBuf]) -> Result<Vec<ResultFile>, ScoreFileError> {
    let mut files = Vec::new();
    for path in jsonl_files(paths)? {
        files.push(parse_result_file(&path, &read(&path)?)?);
    }
    Ok(files)
}

/// The lines of an oracle file (`oracle-medical.jsonl`'s format).
pub fn read_oracle(path: &Path) -> Result<Vec<OracleEntry>, ScoreFileError> {
    let text = read(path)?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str::<OracleEntry>(line).map_err(|e| ScoreFileError::Oracle {
                path: path.to_path_buf(),
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

/// The domain of each result domain name in `names` (KUMO's env name,
/// or a dataset directory's): that of the instance set's dataset
/// directory of that name (its manifest's, else its name's), else the
/// domain or KUMO env of that name. Names without one are left out; a
/// dataset whose manifest or domain file is broken is an error naming it
/// (leaving it out would score its results as unknown without a word).
pub fn domains_by_name<'a>(
    registry: &Registry,
    names: impl IntoIterator<Item = &'a str>,
    sets: &[InstanceSet],
) -> Result<BTreeMap<String, Domain>, DatasetError> {
    let mut found = BTreeMap::new();
    for name in names {
        let dir = sets
            .iter()
            .filter(|s| s.domain == name)
            .find_map(|s| s.dir.as_deref());
        let from_dataset = match dir.map(|dir| Dataset::open(registry, dir, None)) {
            Some(Ok(data)) => Some(data.domain().clone()),
            Some(Err(DatasetError::NoDomain { .. })) | None => None,
            Some(Err(e)) => return Err(e),
        };
        let domain = match from_dataset {
            Some(domain) => Some(domain),
            None => match registry.load(name) {
                Ok((domain, _)) => Some(domain),
                Err(LoadError::UnknownDomain { .. }) => None,
                Err(LoadError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    None
                }
                Err(source) => {
                    return Err(DatasetError::DomainSpec {
                        spec: name.to_string(),
                        source,
                    });
                }
            },
        };
        if let Some(domain) = domain {
            found.insert(name.to_string(), domain);
        }
    }
    Ok(found)
}
