//! Side tool `score`: success rate, action counts and relative action count of players
//! from their trajectories in KUMO's result format.
//!
//! In: parsed [`ResultFile`]s, and optionally the instances they were played
//! on (with a domain to judge answers) and optimal labels. Out: [`Row`]s per
//! model x agent x domain x setting, per model overall and overall.
//!
//! Definitions (KUMO's, see [`crate::game`] for the trial rules):
//! - *success*: KUMO's `evaluate_answer` (the predicted truth is a truth of
//!   the instance no observation of the instance rules out), checked here
//!   when the instance and domain are at hand; otherwise the trial's
//!   recorded `successful` field is trusted. [`Row::success_from`] says which.
//! - *actions*: KUMO's count `len(actions)`: every reply is one entry, a
//!   prediction adds a second (`{"predicted_truth"}`), repeated actions count
//!   each time, a parse error's `null` counts once.
//! - per line, averages over its trials (sum / trials, as `main.py`); per
//!   row, the mean of the line averages. On KUMO's files this reproduces the
//!   mean of their `average_correct`, `average_actions`,
//!   `average_parse_error` and `average_tokens` exactly.
//! - *optimal steps* (`optimal_steps`): the mean over the labelled lines of
//!   `E`, the optimal player's expected queries (KUMO's Algorithm 3: each
//!   outcome weighted by the candidates it leaves); *optimal actions*
//!   (`optimal_actions`): `optimal_steps + 2`, the same in KUMO's count
//!   (its queries, the truth, the `predicted_truth` entry; KUMO's
//!   `search.py` records its oracle the same way): on the scale of
//!   `mean_actions`.
//! - *golden mean actions* (`golden_mean_actions`): the mean over the lines
//!   with a golden trajectory of its length + 2: what the golden player
//!   (the optimal policy played on each instance's own observations, as
//!   `eval --player golden` plays) counts on these instances, on the same
//!   scale. It is not `optimal_actions`: `E` weights each outcome by the
//!   candidates it leaves, not by how often the instances show it, so the
//!   golden player's own mean is usually larger (docs/output.md "What the
//!   labels mean").
//! - *relative action count*: (model - optimal) / optimal with optimal =
//!   `optimal_actions`, KUMO's measure, kept for comparability with KUMO's
//!   tables (the golden player itself scores above 0 on it). Over a row it
//!   is the ratio of means over the labelled lines, which stays defined
//!   when `E = 0` (instances the book alone solves). `None` ("n/a")
//!   without labels.
//!   A certified label (`optimal.exact: false`, docs/output.md) proves
//!   only `lower <= E <= upper`, so a row with certified lines has an
//!   interval instead of a point: [`Row::relative_action_count`] against
//!   the upper ends (the least relative count the labels allow) and
//!   [`Row::relative_action_count_max`] against the lower ends (the most);
//!   `optimal_steps` and `optimal_actions` are then the upper means and
//!   [`Row::optimal_steps_min`] the lower; [`Row::certified`] says how
//!   many lines are certified. A row of exact lines is unchanged.
//! - the budgeted protocol (trials that record a `budget`):
//!   *budget accuracy*, the success rate of such trials (solved within the
//!   budget), and *mean turns solved*, the mean replies of the successful
//!   trials (under either protocol). Both `None` where they do not apply.
//! - *repeats* (WILT's wasted probes): queries of an action the trial had
//!   already queried; it shows nothing new. Per line the mean over its
//!   trials, per row the mean of the lines, like the other counts.
//!
//! File-system access is in `files` (result and oracle files, and the
//! domains of the instance sets [`crate::dataset`] reads); the rest works
//! on what it returns.

pub mod axis;
mod curve;
pub mod interval;
pub mod predict;
mod render;

pub use curve::{Curve, curves, mean_curve, render_curve_svg};
pub use render::{render_json, render_prediction_svg, render_svg, render_svg_with, render_table};

use std::collections::BTreeMap;

use serde::Serialize;

use crate::dataset::Setting;
use crate::game::{InstanceLine, Judge, Steps};
use crate::results::{FileAnalysis, GameAnalysis, GroupKey, ResultFile, Sources, TrialFacts};

/// Where a row's success figures come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SuccessFrom {
    /// Judged here against the instances and the domain.
    Checked,
    /// The result files' own `successful` fields.
    Recorded,
    /// Some lines each way.
    Mixed,
}

/// One row of the report.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub model: String,
    pub agent: String,
    pub domain: String,
    pub setting: String,
    pub instances: usize,
    pub trials: usize,
    pub success_rate: f64,
    /// KUMO's count, `len(actions)`.
    pub mean_actions: f64,
    /// `(actions - (E + 2)) / (E + 2)` over the labelled lines: exact when
    /// `certified` is 0, else the least the certified intervals allow
    /// (against their upper ends).
    pub relative_action_count: Option<f64>,
    /// With certified lines: the most relative action count the labels
    /// allow (against the certified lower ends); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_action_count_max: Option<f64>,
    pub parse_error_rate: f64,
    pub mean_tokens: f64,
    /// Actions queried before the prediction (KUMO's count without the two
    /// prediction entries and a parse error's `null`).
    pub mean_queries: f64,
    /// Queries of an action already queried in the same trial (WILT's
    /// wasted probes), per trial.
    pub mean_repeats: f64,
    /// Success rate within the turn budget, when every trial of the row
    /// was played under the budgeted protocol.
    pub budget_accuracy: Option<f64>,
    /// Mean replies (turns) of the successful trials; `None` without one.
    pub mean_turns_solved: Option<f64>,
    /// Mean optimal expected steps `E` over the labelled lines (queries
    /// only; with certified lines: the mean of exact values and certified
    /// upper bounds, the upper end of the row's interval).
    pub optimal_steps: Option<f64>,
    /// With certified lines: the mean of exact values and certified lower
    /// bounds (the lower end); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optimal_steps_min: Option<f64>,
    /// `optimal_steps + 2`: optimal play in KUMO's count, the scale of
    /// `mean_actions` and of the relative action count (with certified
    /// lines the upper end; `optimal_steps_min + 2` the lower).
    pub optimal_actions: Option<f64>,
    /// The golden player's own mean in KUMO's count on the lines with a
    /// golden trajectory (its length + 2).
    pub golden_mean_actions: Option<f64>,
    /// Lines with an optimal label.
    pub labelled: usize,
    /// Of those, lines whose label is certified, not exact; absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub certified: usize,
    pub success_from: SuccessFrom,
    /// With `--moves`: the mean per trial of the game's total regret (the
    /// expected actions its moves wasted against the optimum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_regret: Option<f64>,
    /// With `--moves`: the mean over trials of each game's optimal moves'
    /// share of its moves (0 for a game without a move).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optimal_move_rate: Option<f64>,
    /// With `--moves`: the mean per trial of `min(1, golden / actions)^2`
    /// (0 without a proven answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_efficiency: Option<f64>,
    /// With `--moves`: trials whose moves were analysed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analysed_trials: Option<usize>,
    /// Under the explore-then-predict protocol: accuracy on held-out
    /// inputs beside the golden explorer's exact accuracy ([`predict`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction: Option<predict::PredictionScore>,
}

/// Scores of one line (instance): what a [`Row`] averages, kept so that
/// intervals ([`interval`]) are computed from the same numbers.
#[derive(Clone, Debug)]
pub struct LineScore {
    pub trials: usize,
    /// Per trial means over the line's trials.
    pub success: f64,
    pub actions: f64,
    pub queries: f64,
    pub repeats: f64,
    /// Whether every trial of the line recorded a budget.
    pub budgeted: bool,
    /// Turns of the line's successful trials, and how many they are.
    pub solved_turns: usize,
    pub solved: usize,
    pub parse_errors: f64,
    pub tokens: f64,
    /// What the label of the line's instance proves about its optimal
    /// expected steps `E` (exact, or a certified interval), if labelled.
    pub optimal: Option<Steps>,
    /// The golden trajectory's actions on the line's instance, if labelled.
    pub golden: Option<usize>,
    pub checked: bool,
    /// Per-move figures of the line's analysed trials (`--moves`).
    pub moves: Option<MoveScore>,
    /// Explore-then-predict figures, when every trial was played so.
    pub prediction: Option<predict::LinePrediction>,
}

/// The line's per-move figures: means over its analysed trials.
#[derive(Clone, Copy, Debug)]
pub struct MoveScore {
    pub regret: f64,
    pub optimal_rate: f64,
    pub efficiency: f64,
    pub trials: usize,
}

impl MoveScore {
    fn of(games: &[Option<GameAnalysis>]) -> Option<MoveScore> {
        let done: Vec<&GameAnalysis> = games.iter().flatten().collect();
        if done.is_empty() {
            return None;
        }
        let n = done.len() as f64;
        Some(MoveScore {
            regret: done.iter().map(|g| g.total_regret).sum::<f64>() / n,
            optimal_rate: done.iter().map(|g| g.optimal_move_rate()).sum::<f64>() / n,
            efficiency: done.iter().map(|g| g.efficiency).sum::<f64>() / n,
            trials: done.len(),
        })
    }
}

/// The report: rows, the line scores of each row (same order), and notes
/// worth the user's attention.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub rows: Vec<Row>,
    /// `lines[i]` are the line scores `rows[i]` averages.
    pub lines: Vec<Vec<LineScore>>,
    pub notes: Vec<String>,
}

/// Scores result files. Rows come per group in sorted order, then one
/// `all`/`all` row per model with more than one group, then an `all` row
/// per protocol (`all`: KUMO's, `all-budget=N`) that more than one model
/// was played under. `analyses[i]`, when given, is the move analysis of
/// `files[i]` (`score --moves`, the report: [`crate::analysis::files::analyse_files`]);
/// each row then carries its per-move figures.
pub fn score(files: &[ResultFile], sources: &Sources, analyses: Option<&[FileAnalysis]>) -> Report {
    let mut notes = Vec::new();
    let mut groups: BTreeMap<GroupKey, Vec<LineScore>> = BTreeMap::new();
    for (index, file) in files.iter().enumerate() {
        let mut lines = score_file(file, sources, &mut notes);
        if let Some(analysed) = analyses.and_then(|a| a.get(index)) {
            notes.extend(analysed.notes.iter().cloned());
            let by_seed: BTreeMap<u64, Option<MoveScore>> = analysed
                .lines
                .iter()
                .map(|l| (l.seed, MoveScore::of(&l.games)))
                .collect();
            for (line, facts) in lines.iter_mut().zip(&file.lines) {
                line.moves = facts.seed.and_then(|s| by_seed.get(&s).copied().flatten());
            }
        }
        groups.entry(file.key.clone()).or_default().extend(lines);
    }
    let mut keys: Vec<&GroupKey> = groups.keys().collect();
    keys.sort_by_key(|k| order_key(k));
    let mut rows: Vec<Row> = Vec::new();
    let mut row_lines: Vec<Vec<LineScore>> = Vec::new();
    for k in keys {
        rows.push(row(k.clone(), &groups[k]));
        row_lines.push(groups[k].clone());
    }
    let mut models: BTreeMap<(String, String), Vec<LineScore>> = BTreeMap::new();
    let mut group_count: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (k, lines) in &groups {
        let id = (k.model.clone(), k.agent.clone());
        models
            .entry(id.clone())
            .or_default()
            .extend(lines.iter().cloned());
        *group_count.entry(id).or_default() += 1;
    }
    for ((model, agent), lines) in &models {
        if group_count[&(model.clone(), agent.clone())] > 1 {
            rows.push(row(
                GroupKey {
                    model: model.clone(),
                    agent: agent.clone(),
                    domain: "all".into(),
                    setting: "all".into(),
                },
                lines,
            ));
            row_lines.push(lines.clone());
        }
    }
    // One overall row per protocol: KUMO's and each budget are scored
    // differently (a budgeted trial goes on after a wrong answer), so their
    // lines are never averaged together.
    let mut protocols: BTreeMap<String, (usize, Vec<LineScore>)> = BTreeMap::new();
    for ((_, agent), lines) in &models {
        let entry = protocols.entry(protocol_of(agent)).or_default();
        entry.0 += 1;
        entry.1.extend(lines.iter().cloned());
    }
    for (agent, (pairs, lines)) in &protocols {
        if *pairs > 1 {
            rows.push(row(
                GroupKey {
                    model: "all".into(),
                    agent: agent.clone(),
                    domain: "all".into(),
                    setting: "all".into(),
                },
                lines,
            ));
            row_lines.push(lines.clone());
        }
    }
    Report {
        rows,
        lines: row_lines,
        notes,
    }
}

/// The agent of an overall row: `all` for KUMO's protocol, `all-budget=N`
/// for the budgeted one with `N` turns (agents named `...-budget=N`, as
/// `eval --budget N` names them).
pub(crate) fn protocol_of(agent: &str) -> String {
    if let Some((_, setting)) = agent.rsplit_once("-predict=") {
        return format!("all-predict={setting}");
    }
    match agent.rsplit_once("-budget=") {
        Some((_, turns)) if !turns.is_empty() && turns.bytes().all(|b| b.is_ascii_digit()) => {
            format!("all-budget={turns}")
        }
        _ => "all".into(),
    }
}

/// Sort order of groups: model, agent, domain, then settings by their
/// numbers (`4x6` before `12x16`).
pub(crate) fn order_key(
    k: &GroupKey,
) -> (String, String, String, (u8, usize, usize, usize, String)) {
    let setting = match k.setting.parse::<Setting>() {
        Ok(s) => (0, s.truths, s.actions, s.valid, String::new()),
        Err(_) => (1, 0, 0, 0, k.setting.clone()),
    };
    (k.model.clone(), k.agent.clone(), k.domain.clone(), setting)
}

fn score_file(file: &ResultFile, sources: &Sources, notes: &mut Vec<String>) -> Vec<LineScore> {
    let set = sources.instances(&file.key);
    let domain = sources.domains.get(&file.key.domain);
    let (mut disagree, mut unjudged, mut unmatched) = (0usize, 0usize, 0usize);
    let mut out = Vec::with_capacity(file.lines.len());
    for line in &file.lines {
        let instance = line
            .seed
            .and_then(|seed| set.and_then(|s| s.instances.iter().find(|i| i.seed == seed)));
        let judge = match (instance, domain) {
            (Some(inst), Some(d)) => match Judge::new(d, inst) {
                Ok(j) => {
                    if !j.unmatched.is_empty() {
                        unmatched += 1;
                    }
                    Some(j)
                }
                Err(e) => {
                    notes.push(format!("{}: {e}; using recorded success", file.path));
                    None
                }
            },
            _ => None,
        };
        let k = line.trials.len();
        let mut wins = 0u64;
        let (mut solved, mut solved_turns) = (0usize, 0usize);
        let prediction = predict::line_prediction(line, instance, domain);
        for t in &line.trials {
            let win = match &judge {
                // The protocol's own verdict: every test predicted right.
                Some(_) if t.prediction.is_some() => t.recorded_success.unwrap_or(false),
                Some(j) => {
                    let w = t.predicted.as_deref().is_some_and(|p| j.evaluate(p));
                    if t.recorded_success.is_some_and(|r| r != w) {
                        disagree += 1;
                    }
                    w
                }
                None => {
                    if t.recorded_success.is_none() {
                        unjudged += 1;
                    }
                    t.recorded_success.unwrap_or(false)
                }
            };
            wins += u64::from(win);
            if win {
                solved += 1;
                solved_turns += t.turns;
            }
        }
        let div = k.max(1) as f64;
        let sum = |f: fn(&TrialFacts) -> f64| line.trials.iter().map(f).sum::<f64>() / div;
        // An oracle file (KUMO's) holds exact values only.
        let optimal = line.seed.and_then(|seed| {
            instance
                .and_then(InstanceLine::steps)
                .or_else(|| sources.oracle_steps(&file.key, seed).map(Steps::Exact))
        });
        out.push(LineScore {
            trials: k,
            success: wins as f64 / div,
            actions: line.trials.iter().map(|t| t.kumo_actions).sum::<usize>() as f64 / div,
            queries: line.trials.iter().map(|t| t.queries).sum::<usize>() as f64 / div,
            repeats: line.trials.iter().map(|t| t.repeats).sum::<usize>() as f64 / div,
            budgeted: !line.trials.is_empty() && line.trials.iter().all(|t| t.budget.is_some()),
            solved_turns,
            solved,
            parse_errors: line.trials.iter().filter(|t| t.parse_error).count() as f64 / div,
            tokens: sum(|t| t.tokens),
            optimal,
            golden: instance.and_then(InstanceLine::golden_length),
            checked: judge.is_some(),
            moves: None,
            prediction,
        });
    }
    if disagree > 0 {
        notes.push(format!(
            "{}: {disagree} trial(s) whose recorded `successful` differs from the check against the instance",
            file.path
        ));
    }
    if unjudged > 0 {
        notes.push(format!(
            "{}: {unjudged} trial(s) without instance or `successful` field count as failures",
            file.path
        ));
    }
    if unmatched > 0 {
        notes.push(format!(
            "{}: {unmatched} instance(s) have observations matching no state of the domain (is it the right domain?)",
            file.path
        ));
    }
    out
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The upper (`upper`) or lower end of a labelled line's `E`: its exact
/// value either way, or its certified bound.
pub(crate) fn end(line: &LineScore, upper: bool) -> f64 {
    line.optimal.map_or(0.0, |s| {
        let (lo, hi) = s.interval();
        if upper { hi } else { lo }
    })
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for v in values {
        sum += v;
        n += 1;
    }
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// The mean over the lines with per-move figures of `f` of them, `None`
/// without one (the figures of a line are already means over its trials).
fn moves_mean(lines: &[LineScore], f: fn(&MoveScore) -> f64) -> Option<f64> {
    let scored: Vec<&MoveScore> = lines.iter().filter_map(|l| l.moves.as_ref()).collect();
    (!scored.is_empty()).then(|| mean(scored.iter().map(|m| f(m))))
}

fn row(key: GroupKey, lines: &[LineScore]) -> Row {
    let labelled: Vec<&LineScore> = lines.iter().filter(|l| l.optimal.is_some()).collect();
    let certified = labelled
        .iter()
        .filter(|l| l.optimal.is_some_and(|s| !s.is_exact()))
        .count();
    let (relative, optimal_steps) = if labelled.is_empty() {
        (None, None)
    } else {
        let (upper, lower) = interval::relative_ends(&labelled);
        let steps = mean(labelled.iter().map(|l| end(l, true)));
        let steps_min = mean(labelled.iter().map(|l| end(l, false)));
        (
            Some((upper, (certified > 0).then_some(lower))),
            Some((steps, (certified > 0).then_some(steps_min))),
        )
    };
    let checked = lines.iter().filter(|l| l.checked).count();
    let prediction = predict::row_prediction(&key.agent, lines);
    Row {
        prediction,
        model: key.model,
        agent: key.agent,
        domain: key.domain,
        setting: key.setting,
        instances: lines.len(),
        trials: lines.iter().map(|l| l.trials).sum(),
        success_rate: mean(lines.iter().map(|l| l.success)),
        mean_actions: mean(lines.iter().map(|l| l.actions)),
        relative_action_count: relative.map(|r| r.0),
        relative_action_count_max: relative.and_then(|r| r.1),
        parse_error_rate: mean(lines.iter().map(|l| l.parse_errors)),
        mean_tokens: mean(lines.iter().map(|l| l.tokens)),
        mean_queries: mean(lines.iter().map(|l| l.queries)),
        mean_repeats: mean(lines.iter().map(|l| l.repeats)),
        budget_accuracy: (!lines.is_empty() && lines.iter().all(|l| l.budgeted))
            .then(|| mean(lines.iter().map(|l| l.success))),
        mean_turns_solved: {
            let solved: usize = lines.iter().map(|l| l.solved).sum();
            (solved > 0)
                .then(|| lines.iter().map(|l| l.solved_turns).sum::<usize>() as f64 / solved as f64)
        },
        optimal_steps: optimal_steps.map(|s| s.0),
        optimal_steps_min: optimal_steps.and_then(|s| s.1),
        optimal_actions: optimal_steps.map(|s| s.0 + 2.0),
        golden_mean_actions: {
            let golden: Vec<usize> = lines.iter().filter_map(|l| l.golden).collect();
            (!golden.is_empty()).then(|| mean(golden.iter().map(|&g| g as f64 + 2.0)))
        },
        labelled: labelled.len(),
        certified,
        mean_regret: moves_mean(lines, |m| m.regret),
        optimal_move_rate: moves_mean(lines, |m| m.optimal_rate),
        mean_efficiency: moves_mean(lines, |m| m.efficiency),
        analysed_trials: lines
            .iter()
            .any(|l| l.moves.is_some())
            .then(|| lines.iter().filter_map(|l| l.moves).map(|m| m.trials).sum()),
        success_from: if checked == lines.len() && checked > 0 {
            SuccessFrom::Checked
        } else if checked == 0 {
            SuccessFrom::Recorded
        } else {
            SuccessFrom::Mixed
        },
    }
}
