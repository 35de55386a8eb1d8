//! Side tool `report`: one self-contained HTML page of evaluation results
//! (`kumo-gen report RESULTS... -o DIR` writes `DIR/index.html`).
//!
//! In: the result files and the [`Sources`] `score` reads (the same
//! loader), the score [`crate::score::Report`] itself, and optionally the
//! structure tests of [`crate::stats`], the per-move analytics of
//! [`crate::analysis`] ([`moves`]) and the books of the instances.
//! Out: a [`Page`] (everything the page shows, as values) and its HTML
//! ([`render_html`]).
//!
//! Every number of the table is a field of `score`'s rows, taken as is
//! (the page's `data-value`s print them as `score --json` does); the
//! intervals come from [`crate::score::interval`] over the line scores the
//! rows average. The page is a pure function of its inputs: no clock, no
//! absolute paths beyond those given, maps ordered, so the same inputs
//! give the same bytes. It needs no network: CSS and script are embedded
//! (`assets/`), pictures are inline SVG drawn here (`figures`), data for
//! the replay viewer is one JSON island (`replay`), each move of it with
//! its value, regret and the optimal moves of its state from
//! [`crate::analysis`].
//!
//! The page stays small at any size of evaluation (docs/report.md
//! "Size"): the table, charts and per-move figures summarise every line,
//! the replays are a sample ([`sample`]: 20 lines per model, domain and
//! setting by default, `--replays N|all`) and the structure section one
//! bounded chart per model; the page says what it left out and how to get
//! it.

mod cells;
mod figures;
mod html;
mod moves;
mod moves_page;
mod replay;
mod sample;

pub use html::render_html;
pub use moves::{
    MoveRow, MoveSection, PositionChart, PositionPoint, PositionSeries, move_section,
    score_with_moves,
};
pub use replay::{Book, Replay, ReplayStep, ReplayTrial, Replays, StepAnalysis, StepKind, replays};
pub use sample::ReplayLimit;

use serde::Serialize;

use crate::score::interval::{RowIntervals, row_intervals};
use crate::score::{Curve, Row};
use crate::stats::Test;

/// One row of the results table: `score`'s row and its intervals.
#[derive(Clone, Debug, Serialize)]
pub struct TableRow {
    #[serde(flatten)]
    pub row: Row,
    pub intervals: RowIntervals,
}

/// What the structure section shows: the per-model tests, or why there
/// are none.
#[derive(Clone, Debug)]
pub enum Structure {
    Tests { tests: Vec<Test>, pool: usize },
    Missing(String),
}

/// Everything the page shows.
#[derive(Clone, Debug)]
pub struct Page {
    pub title: String,
    /// The result files read, as given (paths relative to where the
    /// command ran, so the page does not depend on the machine).
    pub inputs: Vec<String>,
    pub rows: Vec<TableRow>,
    pub notes: Vec<String>,
    pub curves: Vec<Curve>,
    pub structure: Structure,
    /// The per-move sections ([`moves`]), or why they are absent.
    pub moves: MoveSection,
    pub replays: Vec<Replay>,
    pub books: Vec<Book>,
    /// How many lines the page replays at most per group, and how many
    /// lines could have been replayed (instance and domain at hand).
    pub replay_limit: ReplayLimit,
    pub replayable: usize,
}

/// The table rows of a score report: each row with its intervals.
pub fn table_rows(report: &crate::score::Report) -> Vec<TableRow> {
    report
        .rows
        .iter()
        .zip(&report.lines)
        .map(|(row, lines)| TableRow {
            row: row.clone(),
            intervals: row_intervals(lines),
        })
        .collect()
}
