//! The report's per-move sections: how far each model's moves are from the
//! exact optimum, per model x domain x setting and by move position.
//!
//! In: the result files and the [`Sources`] `score` uses (with
//! [`Sources::moves`] set: instances at hand); [`score_with_moves`]
//! analyses every move once and gives both `score`'s [`Report`] and the
//! sections. Out: a [`MoveSection`]: a [`MoveRow`] per score
//! row with per-move figures, and per domain x setting a chart of regret by
//! move position; or why there is none.
//!
//! Every move is scored by [`crate::analysis`] (through
//! [`analyse_file`], the reader `score --moves` uses), so the page is no
//! second implementation. A row's `mean_regret`, `optimal_move_rate`,
//! `mean_efficiency` and `analysed_trials` are `score --moves`'s fields,
//! taken as they are; the counts beside them (moves, optimal moves,
//! redundant moves, answers, unproven answers and how many of those were
//! right) are summed here over the same games. Intervals (95%):
//! - mean regret and mean efficiency: percentile bootstrap of the mean
//!   over the instances' per-trial means (the numbers the row averages;
//!   [`bootstrap_mean`], seeded, so the page stays byte-identical). Regret
//!   is never below 0 and mostly 0 for a good player: a t interval would
//!   reach below 0.
//! - optimal-move rate: the Wilson score interval of the row's rate with
//!   n = the row's analysed moves (moves counted as independent, as the
//!   success interval counts trials).
//! - regret at move position k: the bootstrap of the mean over the games
//!   that made a k-th move (one move per game).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::files::analyse_file;
use crate::results::{FileAnalysis, GameAnalysis, GroupKey, MoveAnalysis, ResultFile, Sources};
use crate::score::interval::{Interval, bootstrap_mean, wilson};
use crate::score::{Report, Row};

/// One row of the per-move table.
#[derive(Clone, Debug, Serialize)]
pub struct MoveRow {
    pub model: String,
    pub agent: String,
    pub domain: String,
    pub setting: String,
    /// `score --moves`'s fields.
    pub analysed_trials: usize,
    pub mean_regret: f64,
    pub optimal_move_rate: f64,
    pub mean_efficiency: f64,
    /// Moves of the analysed trials (actions and answers).
    pub moves: usize,
    pub optimal_moves: usize,
    /// Actions that could rule out no candidate whatever they showed.
    pub redundant_moves: usize,
    pub answers: usize,
    /// Answers named while another candidate was left and the named one
    /// was not yet certified.
    pub unproven_answers: usize,
    /// Of those, the ones the judge accepted anyway (lucky guesses).
    pub unproven_correct: usize,
    pub regret_interval: Option<Interval>,
    pub optimal_move_interval: Option<Interval>,
    pub efficiency_interval: Option<Interval>,
}

/// The mean regret of the games' k-th move.
#[derive(Clone, Debug, Serialize)]
pub struct PositionPoint {
    /// The move's number, from 1.
    pub position: usize,
    /// Games that made a k-th move.
    pub games: usize,
    pub mean: f64,
    pub interval: Option<Interval>,
}

/// One player's regret by move position.
#[derive(Clone, Debug, Serialize)]
pub struct PositionSeries {
    pub model: String,
    pub agent: String,
    /// The player's number among all charts' players (in score's row
    /// order), so one player keeps one colour on every chart.
    pub player: usize,
    pub points: Vec<PositionPoint>,
}

/// The chart of one domain and setting.
#[derive(Clone, Debug, Serialize)]
pub struct PositionChart {
    pub domain: String,
    pub setting: String,
    pub series: Vec<PositionSeries>,
}

/// What the per-move sections show, or why they are absent.
#[derive(Clone, Debug)]
pub enum MoveSection {
    Analysed {
        rows: Vec<MoveRow>,
        charts: Vec<PositionChart>,
    },
    Missing(String),
}

/// Whether score row `row` averages the lines of files of group `key`
/// (its own group, its model's `all` row, its protocol's overall row).
fn covers(row: &Row, key: &GroupKey) -> bool {
    if row.domain == "all" && row.setting == "all" {
        if row.model == "all" {
            row.agent == crate::score::protocol_of(&key.agent)
        } else {
            row.model == key.model && row.agent == key.agent
        }
    } else {
        row.model == key.model
            && row.agent == key.agent
            && row.domain == key.domain
            && row.setting == key.setting
    }
}

/// The analysed games of one result line (its trials whose search stayed
/// within budget).
type LineGames<'a> = Vec<&'a GameAnalysis>;

fn line_mean(games: &LineGames, f: fn(&GameAnalysis) -> f64) -> f64 {
    // As `score` averages a line: the sum over its trials, then / trials.
    games.iter().map(|g| f(g)).sum::<f64>() / games.len() as f64
}

/// `score`'s report of `files` and the per-move sections over it, every
/// move analysed once (under [`Sources::moves`]; without it, as without
/// instances, the sections say why they are absent).
pub fn score_with_moves(files: &[ResultFile], sources: &Sources) -> (Report, MoveSection) {
    let Some(budget) = sources.moves else {
        return (
            crate::score::score(files, sources, None),
            MoveSection::Missing(
                "No instances were given (--instances DIR, as score --moves takes them): a move's value needs the instance it was played on."
                    .into(),
            ),
        );
    };
    let analyses: Vec<FileAnalysis> = files
        .iter()
        .map(|file| analyse_file(file, sources, budget, false))
        .collect();
    let report = crate::score::score(files, sources, Some(&analyses));
    let section = move_section(files, &analyses, &report);
    (report, section)
}

/// The per-move sections of `report` over `files` and their analyses
/// (`analyses[i]` of `files[i]`; their notes are `score`'s, already on
/// the page). Missing when no line could be analysed.
pub fn move_section(
    files: &[ResultFile],
    analyses: &[FileAnalysis],
    report: &Report,
) -> MoveSection {
    // Per file: its lines' analysed games.
    let analysed: Vec<(&GroupKey, Vec<LineGames>)> = files
        .iter()
        .zip(analyses)
        .map(|(file, analysis)| {
            let lines = analysis
                .lines
                .iter()
                .map(|l| l.games.iter().flatten().collect::<LineGames>())
                .filter(|games| !games.is_empty())
                .collect();
            (&file.key, lines)
        })
        .collect();
    let mut rows = Vec::new();
    for row in &report.rows {
        let (Some(trials), Some(regret), Some(rate), Some(efficiency)) = (
            row.analysed_trials,
            row.mean_regret,
            row.optimal_move_rate,
            row.mean_efficiency,
        ) else {
            continue;
        };
        let lines: Vec<&LineGames> = analysed
            .iter()
            .filter(|(key, _)| covers(row, key))
            .flat_map(|(_, lines)| lines)
            .collect();
        let games = || lines.iter().flat_map(|l| l.iter());
        let moves = || games().flat_map(|g| g.moves.iter());
        let count = |f: fn(&MoveAnalysis) -> bool| moves().filter(|m| f(m)).count();
        let move_count = moves().count();
        let per_line = |f: fn(&GameAnalysis) -> f64| -> Vec<f64> {
            lines.iter().map(|l| line_mean(l, f)).collect()
        };
        rows.push(MoveRow {
            model: row.model.clone(),
            agent: row.agent.clone(),
            domain: row.domain.clone(),
            setting: row.setting.clone(),
            analysed_trials: trials,
            mean_regret: regret,
            optimal_move_rate: rate,
            mean_efficiency: efficiency,
            moves: move_count,
            optimal_moves: count(|m| m.optimal),
            redundant_moves: count(|m| m.redundant),
            answers: count(|m| m.proven.is_some()),
            unproven_answers: count(|m| m.proven == Some(false)),
            unproven_correct: count(|m| m.proven == Some(false) && m.correct == Some(true)),
            regret_interval: bootstrap_mean(&per_line(|g| g.total_regret)),
            optimal_move_interval: wilson(rate, move_count),
            efficiency_interval: bootstrap_mean(&per_line(|g| g.efficiency)),
        });
    }
    if rows.is_empty() {
        return MoveSection::Missing(
            "No result line could be analysed move by move: no result file has its instances and domain at hand (see the notes)."
                .into(),
        );
    }
    MoveSection::Analysed {
        charts: charts(report, &analysed),
        rows,
    }
}

/// Per domain x setting (in score's row order), each player's regret by
/// move position.
fn charts(report: &Report, analysed: &[(&GroupKey, Vec<LineGames>)]) -> Vec<PositionChart> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut series: BTreeMap<(String, String), Vec<PositionSeries>> = BTreeMap::new();
    let mut players: Vec<(&str, &str)> = Vec::new();
    for row in report.rows.iter().filter(|r| r.analysed_trials.is_some()) {
        if row.domain == "all" || row.setting == "all" {
            continue;
        }
        let mut at: Vec<Vec<f64>> = Vec::new();
        for (_, lines) in analysed.iter().filter(|(key, _)| covers(row, key)) {
            for game in lines.iter().flatten() {
                for (k, m) in game.moves.iter().enumerate() {
                    if at.len() <= k {
                        at.resize_with(k + 1, Vec::new);
                    }
                    at[k].push(m.regret);
                }
            }
        }
        let points = at
            .iter()
            .enumerate()
            .map(|(k, values)| PositionPoint {
                position: k + 1,
                games: values.len(),
                mean: values.iter().sum::<f64>() / values.len() as f64,
                interval: bootstrap_mean(values),
            })
            .collect();
        let place = (row.domain.clone(), row.setting.clone());
        if !order.contains(&place) {
            order.push(place.clone());
        }
        let who = (row.model.as_str(), row.agent.as_str());
        let player = players.iter().position(|p| *p == who).unwrap_or_else(|| {
            players.push(who);
            players.len() - 1
        });
        series.entry(place).or_default().push(PositionSeries {
            model: row.model.clone(),
            agent: row.agent.clone(),
            player,
            points,
        });
    }
    order
        .into_iter()
        .map(|place| PositionChart {
            series: series.remove(&place).unwrap_or_default(),
            domain: place.0,
            setting: place.1,
        })
        .collect()
}
