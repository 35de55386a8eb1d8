//! What a server serves: the datasets of `--data`, as OpenEnv
//! environments and splits, and the one rule that turns a `reset`'s
//! arguments into a line of a dataset.
//!
//! - An environment is a dataset directory (`OUT/<domain>/`, KUMO's
//!   `<Env>/`), named by the directory ([`crate::dataset::Dataset::name`],
//!   the name results are filed under). A `--data DIR` is a dataset
//!   directory itself, a root of them (eval's `--data`), or the root of a
//!   `--split` run (`OUT/<part>/<domain>/`), whose parts become splits.
//! - A split is one instance file: its setting's short name (`12x16`,
//!   `12x16v2`), after `<part>/` for a `--split` part (`test/12x16`). The
//!   full KUMO name (`truth_num=12+action_num=16+valid_truth_num=1`) is
//!   read too.
//! - A task is one line: `<env>/<split>/<index>`, `index` the line's
//!   position in its file (from 0; the `seed` of every line kumo-gen
//!   writes).
//!
//! The tasks eval plays ([`crate::dataset::Dataset::task`]: the system
//! prompt with the line's book file, else the book rendered as the
//! generator renders it) are built when played, from the line read again
//! by itself; a split keeps the few it built last. At start each file is
//! read a line at a time (every line checked) and only each line's seed
//! and place are kept (16 bytes a line), so a server's memory does not
//! grow with its datasets (docs/safety.md "Reading").

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::analysis::{AnalysisError, Analyst, Analysts, LiveGame};
use crate::dataset::{self, Dataset, DatasetError, Setting};
use crate::domain::Registry;
use crate::game::Task;
use crate::render::{RenderOptions, Renderer, Templates};
use crate::search::SearchBudget;

/// The datasets a server serves.
pub struct Catalog {
    pub envs: Vec<Environment>,
    /// Instance files not read because they are not regular files (a
    /// FIFO, a device), each `` `PATH`: why ``: the caller names them.
    pub unread: Vec<String>,
    templates: Templates,
    /// The next line of a `reset` that names none (round robin).
    next: AtomicUsize,
    /// The analysts of the lines dense episodes play (one memo per line,
    /// shared by its live episodes).
    analysts: Analysts<Pick>,
}

/// One dataset directory (or the parts of a `--split` run of one domain).
pub struct Environment {
    pub name: String,
    pub splits: Vec<Split>,
}

/// One instance file of an environment.
pub struct Split {
    pub name: String,
    pub setting: Setting,
    dataset: Dataset,
    /// Each line's seed and byte offset, in file order.
    lines: Vec<(u64, u64)>,
    /// The tasks built last, newest first (at most [`RECENT_TASKS`]).
    recent: Mutex<VecDeque<(usize, Arc<Task>)>>,
}

/// Tasks a split keeps built (a player resetting the same line, the
/// page's next line).
const RECENT_TASKS: usize = 16;

impl Split {
    /// Its lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The seed of line `index`.
    pub fn seed(&self, index: usize) -> u64 {
        self.lines[index].0
    }
}

/// A line of the catalog: environment, split and position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pick {
    pub env: usize,
    pub split: usize,
    pub index: usize,
}

/// What a `reset` names (every field optional; [`Catalog::pick`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    pub env: Option<String>,
    pub split: Option<String>,
    pub index: Option<u64>,
    pub seed: Option<u64>,
    pub task_id: Option<String>,
}

/// Why a `reset` names no line of the server (the client's request).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PickError {
    #[error(
        "task_id `{id}` is not `<env>/<split>/<index>` of this server (see GET /list_environments and POST /<env>/tasks)"
    )]
    TaskId { id: String },
    /// `known`: the server's environments, listed.
    #[error("no environment `{name}`; this server has {known}")]
    NoEnvironment { name: String, known: String },
    #[error("environment `{env}` has no split `{name}`; its splits are {known}")]
    NoSplit {
        env: String,
        name: String,
        known: String,
    },
    #[error(
        "index {index} is out of range: split `{split}` of `{env}` has {lines} line{} (index 0 to {})",
        if *lines == 1 { "" } else { "s" },
        lines.saturating_sub(1)
    )]
    OutOfRange {
        index: u64,
        split: String,
        env: String,
        lines: usize,
    },
}

impl Catalog {
    /// Reads every `--data` directory: its instance files (all lines, to
    /// count and check them), not yet its books.
    pub fn open(
        registry: &Registry,
        data: &[PathBuf],
        domain: Option<&str>,
        templates: Templates,
    ) -> Result<Catalog, DatasetError> {
        let mut envs: Vec<Environment> = Vec::new();
        let mut unread = Vec::new();
        for root in data {
            if !root.is_dir() {
                return Err(DatasetError::NotFound { path: root.clone() });
            }
            unread.extend(unread_below(root));
            for (part, dir) in dataset_dirs(root)? {
                let dataset = Dataset::open(registry, &dir, domain)?;
                let name = dataset.name();
                let env = match envs.iter().position(|e| e.name == name) {
                    Some(i) => i,
                    None => {
                        envs.push(Environment {
                            name: name.clone(),
                            splits: Vec::new(),
                        });
                        envs.len() - 1
                    }
                };
                for setting in dataset.settings()? {
                    let short = setting.short_name();
                    let split = match &part {
                        Some(part) => format!("{part}/{short}"),
                        None => short,
                    };
                    if envs[env].splits.iter().any(|s| s.name == split) {
                        return Err(DatasetError::Instance {
                            path: dataset.file(&setting),
                            message: format!(
                                "environment `{name}` already has a split `{split}` from another --data directory; serve each dataset of one name once"
                            ),
                        });
                    }
                    let mut reader = dataset.stream(&setting)?;
                    let mut lines = Vec::new();
                    while let Some(read) = reader.next_instance()? {
                        lines.push((read.instance.seed, read.offset));
                    }
                    envs[env].splits.push(Split {
                        name: split,
                        setting,
                        dataset: dataset.clone(),
                        lines,
                        recent: Mutex::new(VecDeque::new()),
                    });
                }
            }
        }
        envs.retain(|e| !e.splits.is_empty());
        if envs.is_empty() {
            let list = data
                .iter()
                .map(|d| format!("`{}`", d.display()))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(DatasetError::Instance {
                path: data.first().cloned().unwrap_or_default(),
                message: format!(
                    "no instance file (`truth_num=T+action_num=A+valid_truth_num=V.jsonl`) in {list} nor in the directories inside{}; give a dataset directory (kumo-gen's `OUT/<domain>`) or the `--out` of a generate run",
                    if unread.is_empty() {
                        String::new()
                    } else {
                        format!(" (not read: {})", unread.join("; "))
                    }
                ),
            });
        }
        Ok(Catalog {
            envs,
            unread,
            templates,
            next: AtomicUsize::new(0),
            analysts: Analysts::default(),
        })
    }

    pub fn env(&self, pick: Pick) -> &Environment {
        &self.envs[pick.env]
    }

    pub fn split(&self, pick: Pick) -> &Split {
        &self.envs[pick.env].splits[pick.split]
    }

    /// The domain of the line's dataset.
    pub fn domain(&self, pick: Pick) -> &crate::domain::Domain {
        self.split(pick).dataset.domain()
    }

    /// The seed of the line.
    pub fn seed(&self, pick: Pick) -> u64 {
        self.split(pick).seed(pick.index)
    }

    /// `<env>/<split>/<index>`.
    pub fn task_id(&self, pick: Pick) -> String {
        format!(
            "{}/{}/{}",
            self.env(pick).name,
            self.split(pick).name,
            pick.index
        )
    }

    /// The environment named `name`.
    pub fn env_index(&self, name: &str) -> Option<usize> {
        self.envs.iter().position(|e| e.name == name)
    }

    /// The split of environment `env` named `name` (its name, or the full
    /// KUMO setting name after the same part).
    pub fn split_index(&self, env: usize, name: &str) -> Option<usize> {
        let splits = &self.envs[env].splits;
        if let Some(i) = splits.iter().position(|s| s.name == name) {
            return Some(i);
        }
        let (part, setting) = match name.rsplit_once('/') {
            Some((part, setting)) => (Some(part), setting),
            None => (None, name),
        };
        let setting: Setting = setting.parse().ok()?;
        let wanted = match part {
            Some(part) => format!("{part}/{}", setting.short_name()),
            None => setting.short_name(),
        };
        splits.iter().position(|s| s.name == wanted)
    }

    /// The line a `reset` asks for:
    /// - `task_id` (`<env>/<split>/<index>`) names it whole;
    /// - else `env` (default: the first environment, or the one whose
    ///   split `split` names), `split` (default: the environment's first),
    ///   and `index`, or `seed` when `index` is absent (line `seed mod n`,
    ///   so any seed picks a line and the same seed the same line), or,
    ///   when neither is given, the next line in turn.
    pub fn pick(&self, selection: &Selection) -> Result<Pick, PickError> {
        if let Some(id) = &selection.task_id {
            let bad = || PickError::TaskId { id: id.clone() };
            let (rest, index) = id.rsplit_once('/').ok_or_else(bad)?;
            let (env, split) = rest.split_once('/').ok_or_else(bad)?;
            let index: u64 = index.parse().map_err(|_| bad())?;
            let env = self.env_index(env).ok_or_else(bad)?;
            let split = self.split_index(env, split).ok_or_else(bad)?;
            return self.at(env, split, index);
        }
        let env = match (&selection.env, &selection.split) {
            (Some(name), _) => self
                .env_index(name)
                .ok_or_else(|| PickError::NoEnvironment {
                    name: name.clone(),
                    known: self.env_names(),
                })?,
            (None, Some(split)) => (0..self.envs.len())
                .find(|&e| self.split_index(e, split).is_some())
                .unwrap_or(0),
            (None, None) => 0,
        };
        let split = match &selection.split {
            Some(name) => self
                .split_index(env, name)
                .ok_or_else(|| PickError::NoSplit {
                    env: self.envs[env].name.clone(),
                    name: name.clone(),
                    known: self.split_names(env),
                })?,
            None => 0,
        };
        let n = self.envs[env].splits[split].len();
        let index = match (selection.index, selection.seed) {
            (Some(index), _) => index,
            (None, Some(seed)) => seed % n.max(1) as u64,
            (None, None) => (self.next.fetch_add(1, Ordering::Relaxed) % n.max(1)) as u64,
        };
        self.at(env, split, index)
    }

    fn at(&self, env: usize, split: usize, index: u64) -> Result<Pick, PickError> {
        let s = &self.envs[env].splits[split];
        let n = s.len();
        if index >= n as u64 {
            return Err(PickError::OutOfRange {
                index,
                split: s.name.clone(),
                env: self.envs[env].name.clone(),
                lines: n,
            });
        }
        Ok(Pick {
            env,
            split,
            index: index as usize,
        })
    }

    /// The task eval plays for the line: one the split built last, else
    /// built from the line read again by itself (a line that changed
    /// since the server read the file is refused).
    pub fn task(&self, pick: Pick) -> Result<Arc<Task>, DatasetError> {
        let split = self.split(pick);
        let recent = || split.recent.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, task)) = recent().iter().find(|(i, _)| *i == pick.index) {
            return Ok(task.clone());
        }
        let renderer = Renderer::new(&self.templates, RenderOptions::default());
        let (seed, offset) = split.lines[pick.index];
        let file = split.dataset.file(&split.setting);
        let instance = dataset::stream::read_instance_at(&file, offset, pick.index + 1)?;
        if instance.seed != seed {
            return Err(DatasetError::Instance {
                path: file,
                message: format!(
                    "instance {} has seed {}, not {seed}: the file changed since the server read it; restart the server",
                    pick.index + 1,
                    instance.seed
                ),
            });
        }
        let book = split
            .dataset
            .book(&renderer, &split.setting, pick.index, &instance)?;
        let task = Arc::new(
            split
                .dataset
                .task(&renderer, &split.setting, instance, &book)?,
        );
        let mut kept = recent();
        kept.push_front((pick.index, task.clone()));
        kept.truncate(RECENT_TASKS);
        Ok(task)
    }

    /// The game of `task` (the line's) at its start, scored move by move
    /// (a dense-reward episode's), on the memo the line's live episodes
    /// share (the same rewards as a memo of its own:
    /// [`crate::analysis::live`]); the memo is freed with the line's last
    /// episode.
    pub fn live_game(&self, pick: Pick, task: &Task) -> Result<LiveGame, AnalysisError> {
        self.analysts.game(pick, || {
            let split = self.split(pick);
            Analyst::new(
                split.dataset.domain(),
                &task.instance,
                SearchBudget::default(),
            )
        })
    }

    /// Lines whose memo some live dense episode holds.
    pub fn lines_searched(&self) -> usize {
        self.analysts.in_play()
    }

    /// `GET /list_environments`.
    pub fn environments_json(&self) -> Value {
        Value::from(self.envs.iter().map(|e| e.name.clone()).collect::<Vec<_>>())
    }

    /// `GET /<env>/splits`: each split with its type (the `--split` part,
    /// else `test`: a dataset served for evaluation) and size.
    pub fn splits_json(&self, env: usize) -> Value {
        Value::from(
            self.envs[env]
                .splits
                .iter()
                .map(|s| {
                    let kind = s.name.rsplit_once('/').map_or("test", |(part, _)| part);
                    json!({"name": s.name, "type": kind, "num_tasks": s.len(), "setting": s.setting.to_string()})
                })
                .collect::<Vec<_>>(),
        )
    }

    /// One task as the task API lists it: what names it and the `reset`
    /// arguments that play it; nothing of the instance's content.
    pub fn task_json(&self, pick: Pick) -> Value {
        let split = self.split(pick);
        json!({
            "task_id": self.task_id(pick),
            "env": self.env(pick).name,
            "split": split.name,
            "index": pick.index,
            "seed": split.seed(pick.index),
            "setting": split.setting.to_string(),
            "reset": {"env": self.env(pick).name, "split": split.name, "index": pick.index},
        })
    }

    pub fn env_names(&self) -> String {
        names(self.envs.iter().map(|e| e.name.as_str()))
    }

    pub fn split_names(&self, env: usize) -> String {
        names(self.envs[env].splits.iter().map(|s| s.name.as_str()))
    }

    /// Lines in all splits.
    pub fn total_lines(&self) -> usize {
        self.envs
            .iter()
            .flat_map(|e| &e.splits)
            .map(Split::len)
            .sum()
    }
}

fn names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The dataset directories of a `--data` path, in name order, each with
/// its `--split` part: the path itself when it holds instance files; else
/// the directories inside that do; else, one level further, those inside
/// a part directory (`OUT/<part>/<domain>/`).
fn dataset_dirs(root: &Path) -> Result<Vec<(Option<String>, PathBuf)>, DatasetError> {
    if !dataset::settings_in(root)?.is_empty() {
        return Ok(vec![(None, root.to_path_buf())]);
    }
    let mut found = Vec::new();
    for dir in subdirs(root)? {
        if !dataset::settings_in(&dir)?.is_empty() {
            found.push((None, dir));
            continue;
        }
        let part = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for inner in subdirs(&dir)? {
            if !dataset::settings_in(&inner)?.is_empty() {
                found.push((Some(part.clone()), inner));
            }
        }
    }
    Ok(found)
}

/// The setting files [`dataset_dirs`] looks at (the root, the folders
/// inside, and theirs) that are not read because they are not regular
/// files.
fn unread_below(root: &Path) -> Vec<String> {
    let mut unread = dataset::unread_settings(root);
    for dir in subdirs(root).unwrap_or_default() {
        unread.extend(dataset::unread_settings(&dir));
        for inner in subdirs(&dir).unwrap_or_default() {
            unread.extend(dataset::unread_settings(&inner));
        }
    }
    unread
}

fn subdirs(dir: &Path) -> Result<Vec<PathBuf>, DatasetError> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .and_then(|entries| entries.map(|e| e.map(|e| e.path())).collect())
        .map_err(|e| DatasetError::Io {
            path: dir.to_path_buf(),
            source: e,
        })?;
    dirs.retain(|d| {
        d.is_dir()
            && !d
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            && !d.ends_with("knowledge_book")
    });
    dirs.sort();
    Ok(dirs)
}
