//! Sessions of a server: the one count of open sessions against the
//! limit, unguessable ids, and the table of episodes played over HTTP.
//!
//! - A WebSocket connection is a session for as long as it is open (its
//!   episode lives in the connection's task); an episode started over HTTP
//!   (`POST /reset`, the page) is a session until it ends or idles out.
//!   Both take a [`Slot`] from the same [`Sessions::claim`]; past
//!   `--max-sessions` a client gets OpenEnv's `CAPACITY_REACHED`.
//! - Ids are 128 random bits from the operating system, in hex: knowing
//!   one episode's id tells nothing of another's.
//! - Idle sessions are closed: a WebSocket that sends nothing for
//!   `--idle-timeout` is told so and closed by its own task (pings do not
//!   count: a client's keep-alive is not a player); HTTP episodes idle
//!   that long are dropped by [`Sessions::reap`], which the server runs
//!   every few seconds.
//!
//! Which lines people play, and the seats at them, live in [`super::seats`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::episode::Play;

/// The open sessions of a server.
pub struct Sessions {
    max: usize,
    open: Arc<AtomicUsize>,
    /// Episodes played over HTTP, by id, each holding its slot.
    http: Mutex<BTreeMap<String, Entry>>,
}

struct Entry {
    play: Arc<Mutex<Play>>,
    _slot: Slot,
}

/// One session's place in the count; freed when dropped.
pub struct Slot {
    open: Arc<AtomicUsize>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The limit is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full {
    pub open: usize,
    pub max: usize,
}

impl Sessions {
    pub fn new(max: usize) -> Sessions {
        Sessions {
            max,
            open: Arc::new(AtomicUsize::new(0)),
            http: Mutex::new(BTreeMap::new()),
        }
    }

    pub fn max(&self) -> usize {
        self.max
    }

    pub fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// A place for one more session, unless the limit is reached.
    pub fn claim(&self) -> Result<Slot, Full> {
        let mut now = self.open.load(Ordering::Acquire);
        loop {
            if now >= self.max {
                return Err(Full {
                    open: now,
                    max: self.max,
                });
            }
            match self
                .open
                .compare_exchange(now, now + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    return Ok(Slot {
                        open: self.open.clone(),
                    });
                }
                Err(seen) => now = seen,
            }
        }
    }

    /// Keeps an HTTP episode under its id, with its slot (freed when the
    /// episode leaves the table).
    pub fn insert(&self, play: Play, slot: Slot) -> Arc<Mutex<Play>> {
        let id = play.episode_id.clone();
        let play = Arc::new(Mutex::new(play));
        self.table().insert(
            id,
            Entry {
                play: play.clone(),
                _slot: slot,
            },
        );
        play
    }

    /// The HTTP episode of an id.
    pub fn get(&self, id: &str) -> Option<Arc<Mutex<Play>>> {
        self.table().get(id).map(|e| e.play.clone())
    }

    /// Drops an HTTP episode (finished, or closed by its client).
    pub fn remove(&self, id: &str) -> bool {
        self.table().remove(id).is_some()
    }

    /// Drops the HTTP episodes idle for longer than `idle`; returns how
    /// many.
    pub fn reap(&self, idle: Duration) -> usize {
        let now = Instant::now();
        let mut table = self.table();
        let before = table.len();
        table.retain(|_, e| {
            e.play
                .try_lock()
                .map_or(true, |p| now.duration_since(p.last_active) < idle)
        });
        before - table.len()
    }

    /// Every open HTTP episode's task id (the shutdown report), in id
    /// order.
    pub fn open_http(&self) -> Vec<String> {
        let table = self.table();
        let mut ids = Vec::new();
        for entry in table.values() {
            let p = entry.play.lock().unwrap_or_else(|e| e.into_inner());
            if !p.is_done() {
                ids.push(p.task_id.clone());
            }
        }
        ids
    }

    /// HTTP episodes open now.
    pub fn http_episodes(&self) -> usize {
        self.table().len()
    }

    fn table(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Entry>> {
        self.http.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// 128 random bits from the operating system, as 32 hex digits.
pub fn new_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
