//! What an analysis of results is: every move of a trajectory against the
//! exact optimum ([`MoveAnalysis`], the one per-move row), a game's totals
//! ([`GameAnalysis`]), and those of a result line and file
//! ([`LineAnalysis`], [`FileAnalysis`]). [`crate::analysis`] makes them
//! (docs/analytics.md states every definition); `score`, `report`,
//! `moves` and `serve` read them.

use serde::Serialize;

use crate::search::State;

/// What one move of a player was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Said {
    /// Instance action `0..actions` (position in the instance).
    Action(usize),
    /// Instance truth (position in the instance).
    Answer(usize),
}

/// One analysed move: the one per-move row every reader shows (`kumo-gen
/// moves` and Python through `Analyst::move_json`, `score --moves`, the
/// report's replay steps, `serve`'s rewards). Serialized, it is what the
/// report's replay shows of a move (its values and flags; the move, the
/// states and the verdict are shown by the step around it).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MoveAnalysis {
    /// The move's number in the trajectory, from 0.
    #[serde(skip)]
    pub step: usize,
    #[serde(skip)]
    pub said: Said,
    /// The state before the move.
    #[serde(skip)]
    pub before: State,
    /// The candidates after it (the same as before for an answer).
    #[serde(skip)]
    pub candidates_after: u128,
    /// `V` before the move.
    pub value: f64,
    /// `Q` of the move (`V` for an answer).
    pub q: f64,
    /// `Q - V` (0 for an answer).
    pub regret: f64,
    pub optimal: bool,
    /// The action could rule out no candidate (or was taken before).
    pub redundant: bool,
    /// The action was taken before in this game.
    pub repeated: bool,
    /// An answer: proven (see the module doc).
    pub proven: Option<bool>,
    /// An answer: KUMO's `evaluate_answer`.
    #[serde(skip)]
    pub correct: Option<bool>,
}

/// One analysed game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameAnalysis {
    pub moves: Vec<MoveAnalysis>,
    pub total_regret: f64,
    pub optimal_moves: usize,
    /// Actions taken (repeats included), answers not.
    pub actions_taken: usize,
    /// Actions of the golden trajectory on this instance.
    pub golden_length: usize,
    /// The last answer was proven (and so correct).
    pub proven: bool,
    /// The last answer was correct.
    pub correct: bool,
    /// `min(1, golden / actions)^2` for a proven answer, else 0.
    pub efficiency: f64,
}

impl GameAnalysis {
    /// Optimal moves over moves; 0 for a game without a move (every
    /// reply unusable or naming nothing of the game: it made no optimal
    /// move, so it never ranks with a player that did).
    pub fn optimal_move_rate(&self) -> f64 {
        if self.moves.is_empty() {
            0.0
        } else {
            self.optimal_moves as f64 / self.moves.len() as f64
        }
    }
}

/// The analysis of one result line: its instance's games, one per trial
/// (`None` for a trial whose search went over budget).
#[derive(Clone, Debug)]
pub struct LineAnalysis {
    pub seed: u64,
    pub games: Vec<Option<GameAnalysis>>,
    /// The moves as `kumo-gen moves` rows (JSON objects, one per move), when
    /// asked for.
    pub rows: Vec<String>,
}

/// The analysis of one result file.
#[derive(Clone, Debug, Default)]
pub struct FileAnalysis {
    pub lines: Vec<LineAnalysis>,
    /// What could not be analysed, for the user (`file: ...`).
    pub notes: Vec<String>,
}
