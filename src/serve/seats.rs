//! The lines people play ([`Seats`]): every episode of a person holds a
//! [`Seat`] at its line until it ends; the page's "next unplayed" deals
//! the first line nobody has played or holds a seat at, under one lock,
//! so two people starting at once never get the same line (docs/serve.md).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::catalog::Pick;

/// The lines people are playing now (HTTP or WebSocket), with how many
/// play each.
#[derive(Clone, Default)]
pub struct Seats {
    taken: Arc<Mutex<BTreeMap<Pick, usize>>>,
}

/// A person's place at a line, given up when the episode is dropped.
pub struct Seat {
    taken: Arc<Mutex<BTreeMap<Pick, usize>>>,
    pick: Pick,
}

impl Seats {
    /// A seat at `pick` (a line a person chose by number: others may
    /// play it too).
    pub fn sit(&self, pick: Pick) -> Seat {
        *self.lock().entry(pick).or_insert(0) += 1;
        Seat {
            taken: self.taken.clone(),
            pick,
        }
    }

    /// The first of `lines` nobody holds a seat at and `played` says
    /// nobody has played, with a seat at it: one lock around the choice
    /// and the seat, so two people dealt at once get two lines.
    pub fn deal(
        &self,
        lines: impl IntoIterator<Item = Pick>,
        played: impl Fn(Pick) -> bool,
    ) -> Option<Seat> {
        let mut taken = self.lock();
        let pick = lines
            .into_iter()
            .find(|p| !taken.contains_key(p) && !played(*p))?;
        taken.insert(pick, 1);
        Some(Seat {
            taken: self.taken.clone(),
            pick,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Pick, usize>> {
        self.taken.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Seat {
    pub fn pick(&self) -> Pick {
        self.pick
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = taken.get_mut(&self.pick) {
            *n -= 1;
            if *n == 0 {
                taken.remove(&self.pick);
            }
        }
    }
}
