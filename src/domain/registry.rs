//! Finding domains by name or path: the shipped domains embedded in the
//! binary, a user directory (`--domains-dir`) that overrides them, and
//! domain files given as paths.
//!
//! A domain spec is a path when it contains a path separator or ends in
//! `.yaml`/`.yml`; otherwise it is a name. Names resolve in the user
//! directory first, then among the shipped domains; a KUMO env name
//! (`MedicalEnv`, [`kumo_env_domain`]) resolves as the domain it names,
//! and an unknown name is refused with the closest known names. Listings are sorted by
//! name.

use std::path::{Path, PathBuf};

use super::Domain;
use super::compile::{MAX_FILE_BYTES, load_bytes};
use super::diagnostic::{Diagnostic, LoadError};

/// A domain built into the binary from `domains/`.
#[derive(Clone, Copy, Debug)]
pub struct ShippedDomain {
    pub name: &'static str,
    pub text: &'static str,
}

static SHIPPED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/shipped_domains.rs"));

impl ShippedDomain {
    /// All shipped domains, sorted by name.
    pub fn all() -> impl Iterator<Item = ShippedDomain> {
        SHIPPED
            .iter()
            .map(|&(name, text)| ShippedDomain { name, text })
    }
}

/// Where a domain comes from.
#[derive(Clone, Debug)]
pub enum DomainSource {
    Shipped(ShippedDomain),
    File(PathBuf),
}

impl DomainSource {
    /// How diagnostics name the source.
    pub fn display_name(&self) -> String {
        match self {
            DomainSource::Shipped(d) => format!("<shipped>/domains/{}.yaml", d.name),
            DomainSource::File(path) => path.display().to_string(),
        }
    }

    /// Reads and compiles the domain.
    pub fn load(&self) -> Result<(Domain, Vec<Diagnostic>), LoadError> {
        let file = self.display_name();
        match self {
            DomainSource::Shipped(d) => load_bytes(&file, d.text.as_bytes()),
            DomainSource::File(path) => load_bytes(&file, &read_limited(path)?),
        }
    }
}

/// Reads a file by [`crate::files::read`]' rule (a regular file, not a
/// device, FIFO or directory), refusing sizes beyond what a domain can be.
fn read_limited(path: &Path) -> Result<Vec<u8>, LoadError> {
    crate::files::read::read_at_most(path, MAX_FILE_BYTES as u64, "a domain file").map_err(
        |source| LoadError::Io {
            file: path.display().to_string(),
            source,
        },
    )
}

/// Resolves domain specs against a user directory and the shipped domains.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    domains_dir: Option<PathBuf>,
}

impl Registry {
    pub fn new(domains_dir: Option<PathBuf>) -> Self {
        Registry { domains_dir }
    }

    /// Whether `spec` names a file rather than a domain.
    pub fn is_path(spec: &str) -> bool {
        spec.contains('/')
            || spec.contains(std::path::MAIN_SEPARATOR)
            || spec.ends_with(".yaml")
            || spec.ends_with(".yml")
    }

    /// Every known domain by name: the user directory's, then the shipped
    /// ones it does not override, sorted by name.
    pub fn all(&self) -> Result<Vec<(String, DomainSource)>, LoadError> {
        let mut found: Vec<(String, DomainSource)> = Vec::new();
        if let Some(dir) = &self.domains_dir {
            let io = |source| LoadError::Io {
                file: dir.display().to_string(),
                source,
            };
            for entry in std::fs::read_dir(dir).map_err(io)? {
                let path = entry.map_err(io)?.path();
                let stem = path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .map(str::to_string);
                let is_yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
                if let (Some(stem), true) = (stem, is_yaml) {
                    found.push((stem, DomainSource::File(path)));
                }
            }
        }
        for shipped in ShippedDomain::all() {
            if !found.iter().any(|(name, _)| name == shipped.name) {
                found.push((shipped.name.to_string(), DomainSource::Shipped(shipped)));
            }
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(found)
    }

    /// Resolves a name or path.
    pub fn resolve(&self, spec: &str) -> Result<DomainSource, LoadError> {
        if spec.ends_with(".py") {
            // A KUMO data file (`medical_data.py`): Python, not YAML.
            return Err(LoadError::KumoPython {
                file: spec.to_string(),
            });
        }
        if Registry::is_path(spec) {
            return Ok(DomainSource::File(PathBuf::from(spec)));
        }
        if let Some(dir) = &self.domains_dir {
            for ext in ["yaml", "yml"] {
                let path = dir.join(format!("{spec}.{ext}"));
                // Whatever is there overrides the shipped domain: a FIFO,
                // a device or a dangling link is then refused by name
                // when it is read, never silently replaced.
                if std::fs::symlink_metadata(&path).is_ok() {
                    return Ok(DomainSource::File(path));
                }
            }
        }
        if let Some(shipped) = ShippedDomain::all().find(|d| d.name == spec) {
            return Ok(DomainSource::Shipped(shipped));
        }
        // KUMO's env names (`MedicalEnv`, `ArtStyleEnv`), accepted wherever
        // a domain name is: the user directory first, as for names.
        if let Some(name) = kumo_env_domain(spec) {
            return self.resolve(name);
        }
        let names: Vec<String> = self.all()?.into_iter().map(|(n, _)| n).collect();
        let close = close_names(spec, &names);
        let help = if close.is_empty() {
            "run `kumo-gen domains` to list the domains, or give a path to a .yaml file".to_string()
        } else {
            format!(
                "did you mean {}? `kumo-gen domains` lists them all",
                close
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        Err(LoadError::UnknownDomain {
            name: spec.to_string(),
            help,
        })
    }

    /// Resolves and loads a domain.
    pub fn load(&self, spec: &str) -> Result<(Domain, Vec<Diagnostic>), LoadError> {
        self.resolve(spec)?.load()
    }
}

/// The shipped domain of a KUMO env name, from `domains/kumo-import.tsv`
/// (an env whose name column is `-` reads the data file of another env,
/// whose domain serves both).
pub fn kumo_env_domain(env: &str) -> Option<&'static str> {
    const TABLE: &str = include_str!("../../domains/kumo-import.tsv");
    let rows: Vec<Vec<&'static str>> = TABLE
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("env\t"))
        .map(|l| l.split('\t').collect())
        .filter(|r: &Vec<&str>| r.len() > 2)
        .collect();
    let row = rows.iter().find(|r| r[0] == env)?;
    if row[2] != "-" {
        return Some(row[2]);
    }
    rows.iter()
        .find(|r| r[1] == row[1] && r[2] != "-")
        .map(|r| r[2])
}

/// The names (shipped and `--domains-dir`) a mistyped `spec` may mean, at
/// most 5, closest first: those within a small edit distance (one edit
/// per four characters, at least one), and those containing `spec` or
/// contained in it.
fn close_names<'a>(spec: &str, names: &'a [String]) -> Vec<&'a String> {
    let spec_lower = spec.to_lowercase();
    let allowed = (spec.chars().count() / 4).max(1);
    let mut close: Vec<(usize, &String)> = names
        .iter()
        .filter_map(|name| {
            let distance = edit_distance(&spec_lower, &name.to_lowercase());
            let contains =
                !spec.is_empty() && (name.contains(spec) || spec.contains(name.as_str()));
            (distance <= allowed || contains).then_some((distance, name))
        })
        .collect();
    close.sort();
    close.into_iter().take(5).map(|(_, name)| name).collect()
}

/// Edit distance over characters where an insertion, a deletion, a
/// substitution and a swap of two neighbouring characters each count one
/// (optimal string alignment: `medicla` is one edit from `medical`).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows of the table: i - 2, i - 1 and i.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut current = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            current[j] = (previous[j - 1] + cost)
                .min(previous[j] + 1)
                .min(current[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                current[j] = current[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut previous, current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swap_of_neighbouring_letters_is_one_edit() {
        assert_eq!(edit_distance("medicla", "medical"), 1);
        assert_eq!(edit_distance("emdical", "medical"), 1);
        assert_eq!(edit_distance("medcal", "medical"), 1);
        assert_eq!(edit_distance("medical", "medical"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("ca", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn a_transposed_name_gets_did_you_mean() {
        let names: Vec<String> = ["medical", "music", "mineral-lab"]
            .map(String::from)
            .to_vec();
        assert_eq!(close_names("medicla", &names), vec!["medical"]);
    }

    #[test]
    fn a_kumo_python_file_points_at_import() {
        for spec in ["medical_data.py", "../kumo/env/data/medical_data.py"] {
            let e = Registry::new(None).resolve(spec).unwrap_err();
            assert!(matches!(e, LoadError::KumoPython { .. }), "{spec}: {e}");
            assert!(e.to_string().contains("kumo-gen import"), "{e}");
        }
    }
}
