//! A game being played, scored reply by reply against the exact optimum:
//! where the Python `Moves` (and through it `Env(dense=True)` and the
//! framework adapters) and `kumo-gen serve`'s dense rewards keep the
//! state of one episode and the memo of its line.
//!
//! In: the instance's [`Analyst`] and the names the player's replies
//! named, one at a time. Out: each move's [`MoveAnalysis`] and its
//! [`dense_reward`](super::dense_reward); the values of the state the
//! game is in.
//!
//! The memo is the line's, not the episode's: a [`LiveGame`] shares its
//! analyst (behind a mutex) with every other game of the same line that
//! [`Analysts`] handed out while one of them lives, so a group of
//! episodes of one line (a GRPO group) searches it once, and it is freed
//! with the last of them. Sharing changes no reward: a value is the
//! exact optimum of its state, computed with the reference's float
//! operations in the reference's order, so it is the same float whatever
//! the memo searched before (DESIGN.md "Optimal search"; the test
//! `a_shared_memo_gives_every_game_the_fresh_memos_floats` checks it
//! bit for bit).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use super::{Analyst, dense_reward};
use crate::results::MoveAnalysis;
use crate::search::{SearchError, State, StateValues};

/// One reply scored ([`LiveGame::reward`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Scored {
    /// The values of the state the reply answered.
    pub before: StateValues,
    /// The move (`None`: the reply named nothing of the instance).
    pub analysed: Option<MoveAnalysis>,
    /// Its dense reward ([`dense_reward`]).
    pub reward: f64,
}

/// One instance's game in progress.
pub struct LiveGame {
    line: Arc<Line>,
    state: State,
    steps: usize,
}

/// A line's analyst, shared by its games, and its start (known without
/// the lock, which a search may hold for seconds).
struct Line {
    root: State,
    analyst: Mutex<Analyst>,
}

impl Line {
    fn new(analyst: Analyst) -> Arc<Line> {
        Arc::new(Line {
            root: analyst.root(),
            analyst: Mutex::new(analyst),
        })
    }
}

impl LiveGame {
    /// The game of `analyst`'s instance, at its start, on a memo of its
    /// own.
    pub fn new(analyst: Analyst) -> LiveGame {
        LiveGame::on(Line::new(analyst))
    }

    fn on(line: Arc<Line>) -> LiveGame {
        LiveGame {
            state: line.root,
            line,
            steps: 0,
        }
    }

    /// The instance's analyst (names, golden length, JSON rows), locked:
    /// drop it before the next call on the game.
    pub fn analyst(&self) -> MutexGuard<'_, Analyst> {
        lock(&self.line.analyst)
    }

    /// Where the game stands (candidates and actions left).
    pub fn state(&self) -> State {
        self.state
    }

    /// Every action's `Q` at the current state and the optimal set.
    pub fn state_values(&mut self) -> Result<StateValues, SearchError> {
        let state = self.state;
        self.analyst().state_values(state)
    }

    /// Scores the reply naming `name` (a truth of the instance, else an
    /// action, as a trial reads it) and applies it; `None` for a name of
    /// neither (the state is unchanged: a parse error).
    pub fn step(&mut self, name: &str) -> Result<Option<MoveAnalysis>, SearchError> {
        let (analysed, next) = {
            let mut analyst = self.analyst();
            let Some(said) = analyst.said(name) else {
                return Ok(None);
            };
            analyst.step(self.state, self.steps, said)?
        };
        self.state = next;
        self.steps += 1;
        Ok(Some(analysed))
    }

    /// Scores one reply of an episode: the values of the state it
    /// answered (every `Q`, the optimal actions), [`LiveGame::step`]'s
    /// move (`None` for a reply naming nothing, `None` passed as `name`)
    /// and its dense reward. The same floats whatever the memo saw
    /// before (the module doc).
    pub fn reward(&mut self, name: Option<&str>) -> Result<Scored, SearchError> {
        let before = self.state_values()?;
        let analysed = match name {
            Some(name) => self.step(name)?,
            None => None,
        };
        let reward = dense_reward(analysed.as_ref());
        Ok(Scored {
            before,
            analysed,
            reward,
        })
    }

    /// [`LiveGame::step`]'s move and its dense reward, without the
    /// values of every action of the state ([`LiveGame::reward`]'s
    /// `before`): a server's per-turn reward, a few times cheaper, the
    /// same floats.
    pub fn step_reward(
        &mut self,
        name: Option<&str>,
    ) -> Result<(Option<MoveAnalysis>, f64), SearchError> {
        let analysed = match name {
            Some(name) => self.step(name)?,
            None => None,
        };
        let reward = dense_reward(analysed.as_ref());
        Ok((analysed, reward))
    }

    /// Back to the start of the game; the memo is kept.
    pub fn restart(&mut self) {
        self.state = self.line.root;
        self.steps = 0;
    }
}

fn lock(analyst: &Mutex<Analyst>) -> MutexGuard<'_, Analyst> {
    analyst.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The analysts of the lines being played, one per line (`K` names a
/// line: a server's catalog position, a domain hash and line text), held
/// only by the games that use them: the table keeps none alive, so the
/// memos in memory are those of the lines some live game plays, each
/// once, and a line no game plays any more costs nothing.
pub struct Analysts<K> {
    table: Mutex<Table<K>>,
}

struct Table<K> {
    lines: BTreeMap<K, Weak<Line>>,
    /// The size at which the lines no game plays are forgotten: twice
    /// the table after the last sweep (so the table is at most twice the
    /// lines in play, plus 16, and a sweep is amortised).
    sweep_at: usize,
}

impl<K: Ord> Default for Analysts<K> {
    fn default() -> Self {
        Analysts {
            table: Mutex::new(Table {
                lines: BTreeMap::new(),
                sweep_at: 16,
            }),
        }
    }
}

impl<K: Ord> Analysts<K> {
    /// A game at the start of line `key`, on the line's analyst when a
    /// live game has one, else on a new one from `make` (never waits on a
    /// search of the line).
    pub fn game<E>(
        &self,
        key: K,
        make: impl FnOnce() -> Result<Analyst, E>,
    ) -> Result<LiveGame, E> {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(line) = table.lines.get(&key).and_then(Weak::upgrade) {
            return Ok(LiveGame::on(line));
        }
        let line = Line::new(make()?);
        if table.lines.len() >= table.sweep_at {
            table.lines.retain(|_, weak| weak.strong_count() > 0);
            table.sweep_at = (2 * table.lines.len()).max(16);
        }
        table.lines.insert(key, Arc::downgrade(&line));
        Ok(LiveGame::on(line))
    }

    /// The lines some live game plays now.
    pub fn in_play(&self) -> usize {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .lines
            .values()
            .filter(|w| w.strong_count() > 0)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Registry;
    use crate::game::InstanceLine;
    use crate::search::SearchBudget;

    /// A medical 4x6 line (`kumo-gen --domain medical --truths 4 --actions 6
    /// -n 1`): which line does not matter here, only that games of it share
    /// one analyst.
    const LINE: &str = r#"{"truths":["Rheumatoid Arthritis","Hepatitis B","Bacterial Infection","Multiple Sclerosis"],"actions":["Hepatitis B Surface Antigen (HBsAg) Test","Brain MRI","Complete Blood Count (CBC)","Blood Culture","Rheumatoid Factor Test","Erythrocyte Sedimentation Rate (ESR)"],"observations":{"Hepatitis B Surface Antigen (HBsAg) Test":"negative","Brain MRI":"normal","Complete Blood Count (CBC)":"anemia","Blood Culture":"bacterial_growth","Rheumatoid Factor Test":"negative","Erythrocyte Sedimentation Rate (ESR)":71.93},"seed":0,"valid_truth":"Bacterial Infection","structure":{"truth_degrees":[3,2,1,1],"action_degrees":[2,1,1,1,1,1]},"optimal":{"expected_steps":1.3333333332666666,"first_action":"Brain MRI","golden_actions":3,"golden_trajectory":["Brain MRI","Hepatitis B Surface Antigen (HBsAg) Test","Rheumatoid Factor Test"],"golden_answer":"Bacterial Infection","exact":true},"difficulty":{"expected_steps":1.3333333332666666,"golden_length":3,"consistent_at_answer":1,"percentile":63.0859375}}"#;

    #[test]
    fn the_games_of_one_line_share_its_analyst_while_one_lives() {
        let domain = Registry::new(None).load("medical").unwrap().0;
        let line: InstanceLine = serde_json::from_str(LINE).unwrap();
        let table = Analysts::default();
        let make = || Analyst::new(&domain, &line, SearchBudget::default());
        let a = table.game(0, make).unwrap();
        let b = table.game(0, make).unwrap();
        assert!(Arc::ptr_eq(&a.line, &b.line));
        assert_eq!(table.in_play(), 1);
        drop((a, b));
        assert_eq!(table.in_play(), 0);
        // Lines played one after another: the table forgets the dead.
        for key in 0..40 {
            let game = table.game(key, make).unwrap();
            drop(game);
        }
        let size = table.table.lock().unwrap().lines.len();
        assert!(size <= 16, "{size}");
    }
}
