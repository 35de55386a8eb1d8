//! A game being played, scored reply by reply against the exact optimum:
//! where the Python `Moves` (and through it `Env(dense=True)` and the
//! framework adapters) and `kumo-gen serve`'s dense rewards keep the
//! state and the memo of one episode.
//!
//! In: the instance's [`Analyst`] and the names the player's replies
//! named, one at a time. Out: each move's [`MoveAnalysis`] and its
//! [`dense_reward`](super::dense_reward); the values of the state the
//! game is in. The memo lives as long as the `LiveGame`, so replaying
//! the same instance (another episode after [`LiveGame::restart`]) costs
//! only the states not seen before.

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
    analyst: Analyst,
    state: State,
    steps: usize,
}

impl LiveGame {
    /// The game of `analyst`'s instance, at its start.
    pub fn new(analyst: Analyst) -> LiveGame {
        let state = analyst.root();
        LiveGame {
            analyst,
            state,
            steps: 0,
        }
    }

    /// The instance's analyst (names, golden length, JSON rows).
    pub fn analyst(&self) -> &Analyst {
        &self.analyst
    }

    /// The instance's analyst, to compute with (its memo is the game's).
    pub fn analyst_mut(&mut self) -> &mut Analyst {
        &mut self.analyst
    }

    /// Where the game stands (candidates and actions left).
    pub fn state(&self) -> State {
        self.state
    }

    /// Every action's `Q` at the current state and the optimal set.
    pub fn state_values(&mut self) -> Result<StateValues, SearchError> {
        let state = self.state;
        self.analyst.state_values(state)
    }

    /// Scores the reply naming `name` (a truth of the instance, else an
    /// action, as a trial reads it) and applies it; `None` for a name of
    /// neither (the state is unchanged: a parse error).
    pub fn step(&mut self, name: &str) -> Result<Option<MoveAnalysis>, SearchError> {
        let Some(said) = self.analyst.said(name) else {
            return Ok(None);
        };
        let (analysed, next) = self.analyst.step(self.state, self.steps, said)?;
        self.state = next;
        self.steps += 1;
        Ok(Some(analysed))
    }

    /// Scores one reply of an episode: the values of the state it
    /// answered (every `Q`, the optimal actions), [`LiveGame::step`]'s
    /// move (`None` for a reply naming nothing, `None` passed as `name`)
    /// and its dense reward. The same replies on a fresh game get the
    /// same floats bit for bit; a memo that saw other states first may
    /// move the last bit.
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
    /// `before`): a server's per-turn reward, a few times cheaper. The
    /// floats equal [`LiveGame::reward`]'s to 1e-12 (the memo sees
    /// fewer states, which can move the last bit).
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
        self.state = self.analyst.root();
        self.steps = 0;
    }
}
