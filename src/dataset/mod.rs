//! What a dataset is on disk, and reading one: a dataset directory as the
//! writers ([`crate::pipeline::write`]) leave it, and KUMO's (DESIGN.md
//! "Outputs"). The on-disk format lives here: [`setting`] (a setting's
//! file names), [`record`] (the instance line we write), [`manifest`]
//! (`manifest.json` and shard manifests).
//!
//! Layout: `DIR/<setting>.jsonl` instance files (one line per instance),
//! `DIR/knowledge_book/<setting>/seed=<i>.txt` books, `DIR/manifest.json`
//! (ours only). [`Dataset::open`] picks the directory's domain once, by
//! one rule for every reader (eval, play, check-books, score, stats,
//! merge); [`Dataset::stream`], [`Dataset::book`] and [`Dataset::task`]
//! read a setting's instances, an instance's book and the task eval plays.
//! [`Setting`] names the files ([`setting`]); [`stream`] reads an
//! instance file a line at a time. Readers of loose files
//! (`score`, `stats`: any `*.jsonl` under the paths given) use
//! [`jsonl_files`] and [`instance_sets`]. Nothing here writes.

mod books;
pub mod excluded;
pub mod manifest;
pub mod record;
pub mod reserved;
pub mod setting;
pub mod stream;

pub use books::{BookCheck, BookFinding, BookFormat, check_books};
pub use setting::{Setting, SettingError, SettingProblem, book_file_name, books_dir};

use std::io;
use std::path::{Path, PathBuf};

use crate::domain::{Domain, DomainDoc, LoadError, Registry, compile};
use crate::game::{InstanceLine, Judge, parse_instances};
use crate::game::{Task, protocol, render_book};
use crate::render::{Renderer, TaskError};

/// What went wrong reading a dataset. Every kind is about the user's
/// files or flags: a missing or unreadable input file the user named is
/// bad input too (docs/exit-codes.md: 1).
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// `--domain` was given and does not load.
    #[error("{source}")]
    DomainSpec { spec: String, source: LoadError },
    /// The manifest's domain does not compile.
    #[error("{source}")]
    ManifestDomain {
        manifest: PathBuf,
        source: LoadError,
    },
    /// The dataset's `manifest.json` cannot be read as one.
    #[error(
        "{}: {message}\n  = help: give --domain NAME|PATH to read the dataset with that domain, or restore the manifest",
        manifest.display()
    )]
    Manifest { manifest: PathBuf, message: String },
    /// Neither `--domain`, a manifest nor the directory's name gives a domain.
    #[error(
        "no domain for dataset `{}`: give --domain NAME|PATH (or a manifest.json with the domain)",
        dir.display()
    )]
    NoDomain { dir: PathBuf },
    /// A path the user named does not exist.
    #[error("`{}` does not exist", path.display())]
    NotFound { path: PathBuf },
    /// A file that exists cannot be read (or a directory listed).
    #[error("cannot read `{}`: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// A line of an instance file is not an instance line.
    #[error("{}:line {line}: {message}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// An instance does not fit the domain, or its book or prompt cannot
    /// be rendered from it.
    #[error("{}: {message}", path.display())]
    Instance { path: PathBuf, message: String },
}

impl DatasetError {
    pub(crate) fn io(path: &Path, source: io::Error) -> DatasetError {
        DatasetError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A dataset directory with its domain.
#[derive(Clone, Debug)]
pub struct Dataset {
    dir: PathBuf,
    domain: Domain,
}

impl Dataset {
    /// The dataset in `dir` (`OUT/<domain>/`, or KUMO's `<Env>/`) and its
    /// domain, chosen once: `domain` when given (an error if it does not
    /// load), else the one recorded in `dir/manifest.json` (with the
    /// recorded hash of its file), else the directory's name as a domain
    /// or KUMO env name.
    pub fn open(
        registry: &Registry,
        dir: &Path,
        domain: Option<&str>,
    ) -> Result<Dataset, DatasetError> {
        let domain =
            match domain {
                Some(spec) => registry.load(spec).map(|(d, _)| d).map_err(|source| {
                    DatasetError::DomainSpec {
                        spec: spec.to_string(),
                        source,
                    }
                })?,
                None => match recorded_domain(dir)? {
                    Some(domain) => domain,
                    None => registry.load(&name_of(dir)).map(|(d, _)| d).map_err(|_| {
                        DatasetError::NoDomain {
                            dir: dir.to_path_buf(),
                        }
                    })?,
                },
            };
        Ok(Dataset::with_domain(dir, domain))
    }

    /// The dataset in `dir` read with a domain the caller already has.
    pub fn with_domain(dir: &Path, domain: Domain) -> Dataset {
        Dataset {
            dir: dir.to_path_buf(),
            domain,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The directory's name (KUMO: the env name), the name results are
    /// filed under.
    pub fn name(&self) -> String {
        name_of(&self.dir)
    }

    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// The settings that have an instance file here, in file-name order.
    pub fn settings(&self) -> Result<Vec<Setting>, DatasetError> {
        settings_in(&self.dir)
    }

    /// The instance file of a setting: `DIR/<setting>.jsonl`.
    pub fn file(&self, setting: &Setting) -> PathBuf {
        self.dir.join(setting.file_name())
    }

    /// Where the book of the instance at position `i` of the setting's
    /// file is: `DIR/knowledge_book/<setting>/seed=<i>.txt`.
    pub fn book_path(&self, setting: &Setting, i: usize) -> PathBuf {
        books_dir(&self.dir, &setting.to_string()).join(book_file_name(i as u64))
    }

    /// The book file of instance `i`, or `None` when there is none. A
    /// book goes into every prompt of its instance (and into an SFT line),
    /// so it is bounded by the line cap (16 MiB; a book of the largest
    /// shipped setting is a few KiB): a larger file is refused by name.
    pub fn book_file(&self, setting: &Setting, i: usize) -> Result<Option<String>, DatasetError> {
        let path = self.book_path(setting, i);
        let read = crate::files::read::read_as_line(&path, "a knowledge book").and_then(|bytes| {
            String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
        });
        match read {
            Ok(book) => Ok(Some(book)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(DatasetError::io(&path, e)),
        }
    }

    /// The book of instance `i`: its file, else the book the generator
    /// writes for it, rendered from the domain.
    pub fn book(
        &self,
        renderer: &Renderer,
        setting: &Setting,
        i: usize,
        instance: &InstanceLine,
    ) -> Result<String, DatasetError> {
        match self.book_file(setting, i)? {
            Some(book) => Ok(book),
            None => self.rendered_book(renderer, setting, instance),
        }
    }

    /// The book the generator writes for `instance`, rendered from the
    /// domain (for datasets whose book files are missing).
    pub fn render_book(
        &self,
        renderer: &Renderer,
        instance: &InstanceLine,
    ) -> Result<String, TaskError> {
        render_book(renderer, &self.domain, instance)
    }

    fn rendered_book(
        &self,
        renderer: &Renderer,
        setting: &Setting,
        instance: &InstanceLine,
    ) -> Result<String, DatasetError> {
        self.render_book(renderer, instance)
            .map_err(|e| DatasetError::Instance {
                path: self.file(setting),
                message: e.to_string(),
            })
    }

    /// The instances of a setting, read a line at a time.
    pub fn stream(&self, setting: &Setting) -> Result<stream::InstanceReader, DatasetError> {
        stream::InstanceReader::open(&self.file(setting))
    }

    /// Calls `each(position, task)` for the instances at `positions`
    /// (ascending) of the setting's file, in order, reading the file a
    /// line at a time (so only the task in hand is in memory), until
    /// `each` returns `false`. Each task has its book file, else (unless
    /// `require_books`, which leaves the instance out) the book rendered
    /// from the domain.
    pub fn for_each_task(
        &self,
        renderer: &Renderer,
        setting: &Setting,
        positions: &[usize],
        require_books: bool,
        mut each: impl FnMut(usize, Task) -> bool,
    ) -> Result<(), DatasetError> {
        let mut wanted = positions.iter().copied().peekable();
        let mut reader = self.stream(setting)?;
        while let Some(&next) = wanted.peek() {
            let Some(read) = reader.next_instance()? else {
                break;
            };
            if read.position < next {
                continue;
            }
            wanted.next();
            let position = read.position;
            let Some(task) = self.task_of(renderer, setting, read, require_books)? else {
                continue;
            };
            if !each(position, task) {
                break;
            }
        }
        Ok(())
    }

    /// The task of an instance read from the setting's file: with its
    /// book file, else (unless `require_books`: `None`) the book rendered
    /// from the domain.
    pub fn task_of(
        &self,
        renderer: &Renderer,
        setting: &Setting,
        read: stream::Read,
        require_books: bool,
    ) -> Result<Option<Task>, DatasetError> {
        let book = match self.book_file(setting, read.position)? {
            Some(book) => book,
            None if require_books => return Ok(None),
            None => self.rendered_book(renderer, setting, &read.instance)?,
        };
        self.task(renderer, setting, read.instance, &book).map(Some)
    }

    /// The task eval plays for an instance of the setting with its book:
    /// the system prompt with the book, and the judge.
    pub fn task(
        &self,
        renderer: &Renderer,
        setting: &Setting,
        instance: InstanceLine,
        book: &str,
    ) -> Result<Task, DatasetError> {
        let fail = |message: String| DatasetError::Instance {
            path: self.file(setting),
            message,
        };
        let system_prompt = protocol::system_prompt(renderer, &self.domain, &instance, book)
            .map_err(|e| fail(e.to_string()))?;
        let judge = Judge::new(&self.domain, &instance).map_err(|e| fail(e.to_string()))?;
        Ok(Task {
            instance,
            system_prompt,
            judge,
        })
    }
}

/// The settings that have an instance file in `dir`, in file-name order.
/// Only files named by KUMO's full name count.
pub fn settings_in(dir: &Path) -> Result<Vec<Setting>, DatasetError> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .and_then(|entries| {
            entries
                .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect()
        })
        .map_err(|e| DatasetError::io(dir, e))?;
    names.sort();
    Ok(names
        .iter()
        .filter_map(|n| n.strip_suffix(".jsonl"))
        .filter_map(|stem| {
            stem.parse::<Setting>()
                .ok()
                .filter(|s| s.to_string() == stem)
        })
        .filter(|s| crate::files::read::is_regular(&dir.join(s.file_name())))
        .collect())
}

/// The files of `dir` named like a setting's instance file that are not
/// read because they are not regular files (a FIFO, a device, a directory,
/// a dangling link), each as `` `PATH`: why ``: [`settings_in`] leaves
/// them out, and the readers name them.
pub fn unread_settings(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut unread: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".jsonl"))
                .and_then(|stem| {
                    stem.parse::<Setting>()
                        .ok()
                        .filter(|s| s.to_string() == stem)
                })
                .is_some()
        })
        .filter_map(|path| match crate::files::read::open(&path) {
            Ok(_) => None,
            Err(e) => Some(format!("`{}`: {e}", path.display())),
        })
        .collect();
    unread.sort();
    unread
}

/// Datasets opened under a root, each with its settings kept.
pub type Opened = Vec<(Dataset, Vec<Setting>)>;

/// The datasets under `root` (one directory each, in name order) that
/// have a setting `keep` keeps, each with its settings kept, and opened
/// with its domain. `domain` picks the directories: one of that name, or
/// those a domain of that name or path is for (its name, or KUMO's env
/// name of it: `medical` picks `MedicalEnv`), which it then judges. A
/// `domain` that names no directory and does not load is an error.
///
/// Also returns the setting files it did not read because they are not
/// regular files ([`unread_settings`]), for the caller to name.
pub fn open_all(
    registry: &Registry,
    root: &Path,
    domain: Option<&str>,
    keep: impl Fn(&Setting) -> bool,
) -> Result<(Opened, Vec<String>), DatasetError> {
    let given = domain.map(|spec| (spec, registry.load(spec).map(|(d, _)| d)));
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .and_then(|entries| entries.map(|e| e.map(|e| e.path())).collect())
        .map_err(|e| DatasetError::io(root, e))?;
    dirs.sort();
    let mut found = Vec::new();
    let mut unread = Vec::new();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        let name = name_of(dir);
        let spec = match &given {
            None => None,
            Some((spec, Ok(d)))
                if *spec == name
                    || d.name == name
                    || crate::domain::kumo_env_domain(&name) == Some(&d.name) =>
            {
                Some(*spec)
            }
            // A directory name that is no domain: the directory's own.
            Some((spec, Err(_))) if *spec == name => None,
            Some(_) => continue,
        };
        unread.extend(unread_settings(dir));
        let settings: Vec<Setting> = settings_in(dir)?.into_iter().filter(&keep).collect();
        if settings.is_empty() {
            continue;
        }
        found.push((Dataset::open(registry, dir, spec)?, settings));
    }
    if let Some((spec, Err(source))) = given
        && !dirs.iter().any(|d| name_of(d) == spec)
    {
        return Err(DatasetError::DomainSpec {
            spec: spec.to_string(),
            source,
        });
    }
    Ok((found, unread))
}

/// The domain recorded in `dir/manifest.json`, with the recorded hash of
/// its file (the compiled document has no file bytes; derived files name
/// the file's hash). `None` without a manifest, or with one that records
/// no domain; a manifest that cannot be read, is not JSON or records
/// something else as its domain is an error naming the file (a silent
/// fall-back to the directory's name could judge with the wrong domain).
fn recorded_domain(dir: &Path) -> Result<Option<Domain>, DatasetError> {
    let manifest = dir.join("manifest.json");
    let text = match crate::files::read::read_to_string(&manifest) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(DatasetError::io(&manifest, e)),
    };
    let broken = |message: String| DatasetError::Manifest {
        manifest: manifest.clone(),
        message,
    };
    let value = serde_json::from_str::<serde_json::Value>(&text)
        .map_err(|e| broken(format!("not JSON: {e}")))?;
    let Some(doc) = value
        .pointer("/domain/document")
        .or_else(|| value.get("domain"))
    else {
        return Ok(None);
    };
    let doc = serde_json::from_value::<DomainDoc>(doc.clone())
        .map_err(|e| broken(format!("its `domain` is not a domain document: {e}")))?;
    let name = manifest.display().to_string();
    let (mut domain, _) = compile(&name, &doc).map_err(|source| DatasetError::ManifestDomain {
        manifest: manifest.clone(),
        source,
    })?;
    if let Some(hash) = value.pointer("/domain/hash").and_then(|h| h.as_str()) {
        domain.source_hash = hash.to_string();
    }
    Ok(Some(domain))
}

fn name_of(dir: &Path) -> String {
    dir.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Every instance line of an instance file, in order.
pub fn read_instances(path: &Path) -> Result<Vec<InstanceLine>, DatasetError> {
    let text = crate::game::read_jsonl(path).map_err(|e| DatasetError::io(path, e))?;
    parse_instances(&text).map_err(|e| DatasetError::Line {
        path: path.to_path_buf(),
        line: e.line,
        message: e.message,
    })
}

/// Every `*.jsonl` file under `paths` (a file as given, a directory walked
/// in sorted order by [`crate::files::read::walk`]: links followed, each
/// directory entered once); a path that does not exist is an error.
pub fn jsonl_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, DatasetError> {
    let mut out = Vec::new();
    for p in paths {
        if !p.exists() {
            return Err(DatasetError::NotFound { path: p.clone() });
        }
        let found = crate::files::read::walk(
            p,
            |_| true,
            |name| Path::new(name).extension().is_some_and(|e| e == "jsonl"),
        )
        .map_err(|e| DatasetError::io(p, e))?;
        out.extend(found);
    }
    Ok(out)
}

/// Whether `file`, found under the directory `root`, lies in a folder a
/// dataset derives or keeps beside its instances (`sft/`, `knowledge_book/`,
/// `shards/`, the HF export `hf/`, hidden folders such as `.locks/`):
/// never an instance file, so a walk passes it by without a note.
fn derived_folder(root: &Path, file: &Path) -> bool {
    let Ok(inside) = file.strip_prefix(root) else {
        return false;
    };
    let folders: Vec<_> = inside.components().collect();
    folders[..folders.len().saturating_sub(1)].iter().any(|c| {
        let name = c.as_os_str().to_string_lossy();
        name.starts_with('.') || ["sft", "knowledge_book", "shards", "hf"].contains(&name.as_ref())
    })
}

/// The instances of one file: `<domain>/<setting>.jsonl`.
#[derive(Clone, Debug)]
pub struct InstanceSet {
    /// Name of the directory holding the file (KUMO: the env name).
    pub domain: String,
    /// File stem: `truth_num=T+action_num=A+valid_truth_num=V`.
    pub setting: String,
    pub instances: Vec<InstanceLine>,
    /// The directory holding the file (its `manifest.json` may name the
    /// domain).
    pub dir: Option<PathBuf>,
}

/// The instance files under `paths`, and the files inside directories
/// that were skipped as not instance files (a dataset's `sft/` lines,
/// say). Inside directories only files named like a setting count; a
/// file named explicitly must parse.
pub fn instance_sets(paths: &[PathBuf]) -> Result<(Vec<InstanceSet>, Vec<PathBuf>), DatasetError> {
    let mut sets = Vec::new();
    let mut skipped = Vec::new();
    for given in paths {
        let explicit = !given.is_dir();
        for file in jsonl_files(std::slice::from_ref(given))? {
            if !explicit && derived_folder(given, &file) {
                continue;
            }
            let setting = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if !explicit && setting.parse::<Setting>().is_err() {
                continue;
            }
            let instances = match read_instances(&file) {
                Ok(i) => i,
                Err(e @ DatasetError::Line { .. }) if explicit => return Err(e),
                Err(DatasetError::Line { .. }) => {
                    skipped.push(file);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let dir = file.parent().map(Path::to_path_buf);
            sets.push(InstanceSet {
                domain: dir.as_deref().map(name_of).unwrap_or_default(),
                setting,
                instances,
                dir,
            });
        }
    }
    Ok((sets, skipped))
}

/// The first of the `given` paths (`--instances`) that holds no instance
/// among `sets` (what [`instance_sets`] read from them): with it, every
/// answer would be left unchecked without a word.
pub fn path_without_instances<'a>(given: &'a [PathBuf], sets: &[InstanceSet]) -> Option<&'a Path> {
    given.iter().map(PathBuf::as_path).find(|given| {
        let from_given = |set: &InstanceSet| match set.dir.as_deref() {
            Some(dir) if given.is_file() => {
                Some(dir) == given.parent()
                    && given
                        .file_stem()
                        .is_some_and(|s| s.to_string_lossy() == set.setting)
            }
            Some(dir) => dir.starts_with(given),
            None => false,
        };
        !sets
            .iter()
            .filter(|set| from_given(set))
            .any(|set| !set.instances.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_manifest_is_an_error_naming_it_not_a_fall_back() {
        let root = tempfile::tempdir().unwrap();
        // The directory's name is a domain: a silent fall-back would load it.
        let dir = root.path().join("medical");
        std::fs::create_dir(&dir).unwrap();
        let registry = Registry::new(None);
        assert_eq!(
            Dataset::open(&registry, &dir, None).unwrap().domain().name,
            "medical",
            "no manifest: the directory's name"
        );
        std::fs::write(dir.join("manifest.json"), "{\"domain\": ").unwrap();
        let err = Dataset::open(&registry, &dir, None).unwrap_err();
        assert!(matches!(err, DatasetError::Manifest { .. }), "{err:?}");
        assert!(err.to_string().contains("manifest.json"), "{err}");
        std::fs::write(dir.join("manifest.json"), "{\"domain\": 3}").unwrap();
        let err = Dataset::open(&registry, &dir, None).unwrap_err();
        assert!(err.to_string().contains("not a domain document"), "{err}");
        // --domain decides without reading the manifest.
        assert!(Dataset::open(&registry, &dir, Some("medical")).is_ok());
    }
}
