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
//! "next unplayed".

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
    files: Mutex<BTreeMap<PathBuf, File>>,
    /// `(dataset, setting, seed)` of every person's result line under the
    /// root (read at start, then added to as lines are written).
    played: Mutex<BTreeSet<(String, String, u64)>>,
}

impl Results {
    /// The results root (`--out`, created if missing); reads which lines
    /// people have played.
    pub fn open(root: &Path) -> io::Result<Results> {
        std::fs::create_dir_all(root)?;
        let played = people_played(root);
        Ok(Results {
            root: root.to_path_buf(),
            files: Mutex::new(BTreeMap::new()),
            played: Mutex::new(played),
        })
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

/// The instances people played: every line of
/// `<root>/<player>/HumanAgent*/<dataset>/<setting>/*.jsonl` (unreadable
/// files and lines are skipped: they are `score`'s to report).
fn people_played(root: &Path) -> BTreeSet<(String, String, u64)> {
    let mut played = BTreeSet::new();
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
                        let Ok(text) = std::fs::read_to_string(&file) else {
                            continue;
                        };
                        for line in text.lines() {
                            let seed = serde_json::from_str::<serde_json::Value>(line)
                                .ok()
                                .and_then(|v| v.get("seed").and_then(|s| s.as_u64()));
                            if let Some(seed) = seed {
                                played.insert((name(&dataset), name(&setting), seed));
                            }
                        }
                    }
                }
            }
        }
    }
    played
}
