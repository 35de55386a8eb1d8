//! The result files of a server: every finished episode appended as one
//! line in KUMO's result format under `--out`, at the path eval (models)
//! and `play` (people) use:
//! `<out>/<player>/<agent>/<dataset>/<setting>/eval_times=1.jsonl`.
//!
//! Files are opened once with [`crate::results::open_results`] (the
//! folders created below `--out` only, a symbolic link refused, a trailing
//! partial line cut off, the file locked against a second writer) and
//! kept open; each line is written whole with one `write_all`. A person's
//! line is synced at once (a campaign's results are precious and few); a
//! model's lines are synced when the server stops (a crash loses at most
//! the lines the system had not flushed, never a line in half: a partial
//! line is cut off when the file is next opened).
//!
//! Also the record of which lines people have played, for the page's
//! "next unplayed" (read at start line by line, each line and file under
//! the bounds of every user's file: [`crate::files::read::lines`]).
//!
//! One server per root: [`Results::open`] takes the lock `<out>/.serve.lock`
//! ([`crate::files::FileLock::exclusive`]) for the server's life, so a
//! second server on the same `--out` is refused at start instead of
//! losing the ends of its episodes to the first one's file locks.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::episode::ResultPlace;
use crate::game::ResultLine;
use crate::results::ResultsError;

/// The open result files of a server.
pub struct Results {
    root: PathBuf,
    _lock: crate::files::FileLock,
    files: Mutex<BTreeMap<PathBuf, File>>,
    /// `(dataset, setting, seed)` of every person's result line under the
    /// root (read at start, then added to as lines are written).
    played: Mutex<BTreeSet<(String, String, u64)>>,
    /// The files under the root not read at start, and why (a FIFO, a
    /// device, a line over the cap): the caller names them.
    skipped: Vec<String>,
}

impl Results {
    /// The results root (`--out`, created if missing), locked for this
    /// server; reads which lines people have played.
    pub fn open(root: &Path) -> Result<Results, super::ServeError> {
        std::fs::create_dir_all(root).map_err(|e| {
            super::ServeError::Io(io::Error::new(
                e.kind(),
                format!("cannot make the results folder `{}`: {e}", root.display()),
            ))
        })?;
        let guarded = root.join("serve");
        let lock = crate::files::FileLock::exclusive(&guarded).map_err(|e| match e {
            crate::files::FileError::Busy { .. } => super::ServeError::OutLocked {
                out: root.to_path_buf(),
                lock: crate::files::lock_path(&guarded),
            },
            other => super::ServeError::Io(io::Error::other(other.to_string())),
        })?;
        let (played, skipped) = people_played(root);
        Ok(Results {
            root: root.to_path_buf(),
            _lock: lock,
            files: Mutex::new(BTreeMap::new()),
            played: Mutex::new(played),
            skipped,
        })
    }

    /// The result files under the root not read at start, each with why.
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file of a place below the root.
    pub fn path(&self, place: &ResultPlace) -> PathBuf {
        crate::results::result_path(
            &self.root,
            &place.player,
            &place.agent,
            &place.dataset,
            &place.setting,
            1,
        )
    }

    /// Appends a line (synced at once when `sync`); returns its file.
    pub fn append(
        &self,
        place: &ResultPlace,
        line: &ResultLine,
        sync: bool,
    ) -> Result<PathBuf, ResultsError> {
        let path = self.path(place);
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if !files.contains_key(&path) {
            let (file, _) = crate::results::open_results(&self.root, &path)?;
            files.insert(path.clone(), file);
        }
        let file = files.get_mut(&path).expect("just inserted");
        let io = |source| ResultsError::Io {
            path: path.clone(),
            source,
        };
        file.write_all(line.to_jsonl().as_bytes()).map_err(io)?;
        if sync {
            file.sync_data().map_err(io)?;
        }
        if crate::game::is_human(&place.agent) {
            self.played
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert((place.dataset.clone(), place.setting.clone(), line.seed));
        }
        Ok(path)
    }

    /// Whether some person has a result line for the instance.
    pub fn played_by_people(&self, dataset: &str, setting: &str, seed: u64) -> bool {
        self.played
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&(dataset.to_string(), setting.to_string(), seed))
    }

    /// Syncs every open file (at shutdown).
    pub fn sync_all(&self) -> io::Result<()> {
        let files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        for file in files.values() {
            file.sync_data()?;
        }
        Ok(())
    }
}

/// The one field the scan reads of a result line.
#[derive(serde::Deserialize)]
struct SeedOnly {
    seed: Option<u64>,
}

/// The instances people played: every line of
/// `<root>/<player>/HumanAgent*/<dataset>/<setting>/*.jsonl`, read by the
/// rule of user files (a FIFO or a device is never opened, a line is at
/// most the line cap); files not read are returned with why (lines that
/// are no result lines are skipped: they are `score`'s to report).
fn people_played(root: &Path) -> (BTreeSet<(String, String, u64)>, Vec<String>) {
    let mut played = BTreeSet::new();
    let mut skipped = Vec::new();
    let dirs = |p: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(p)
            .map(|it| {
                it.filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default()
    };
    for player in dirs(root) {
        for agent in dirs(&player) {
            let is_human = agent
                .file_name()
                .is_some_and(|n| crate::game::is_human(&n.to_string_lossy()));
            if !is_human {
                continue;
            }
            for dataset in dirs(&agent) {
                for setting in dirs(&dataset) {
                    let name = |p: &Path| {
                        p.file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default()
                    };
                    let Ok(entries) = std::fs::read_dir(&setting) else {
                        continue;
                    };
                    for file in entries.filter_map(Result::ok).map(|e| e.path()) {
                        let read = crate::files::read::lines(&file).and_then(|mut lines| {
                            let mut line = Vec::new();
                            while lines.next_line(&mut line)? {
                                let seed = serde_json::from_slice::<SeedOnly>(&line)
                                    .ok()
                                    .and_then(|l| l.seed);
                                if let Some(seed) = seed {
                                    played.insert((name(&dataset), name(&setting), seed));
                                }
                            }
                            Ok(())
                        });
                        if let Err(e) = read {
                            skipped.push(format!("`{}`: {e}", file.display()));
                        }
                    }
                }
            }
        }
    }
    (played, skipped)
}
