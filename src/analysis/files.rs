//! Analysing result files: every trial of every line, against the
//! line's instance, read the way `score` reads them ([`crate::results`]'s
//! [`ResultFile`], its instance sets and domains in [`Sources`]).
//!
//! Lines are analysed in parallel (on the caller's rayon pool), one
//! [`Analyst`] (one memo) per line shared by its trials; the output keeps
//! the file's line order, so it does not depend on the thread count.

use rayon::prelude::*;
use serde_json::{Map, Value};

use super::{Analysed, Analyst};
use crate::results::{FileAnalysis, LineAnalysis, ResultFile, Said, Sources, TrialFacts};
use crate::search::SearchBudget;

/// The moves of a trial, as this instance reads its names (names of
/// neither a truth nor an action are left out).
pub fn trial_moves(analyst: &Analyst, trial: &TrialFacts) -> Vec<Said> {
    trial
        .said
        .iter()
        .filter_map(|name| analyst.said(name))
        .collect()
}

/// The move analyses of `files` (`[i]` of `files[i]`) under
/// [`Sources::moves`]'s budget, `None` without one: what `score --moves`
/// and the report score with ([`crate::score::score`]).
pub fn analyse_files(files: &[ResultFile], sources: &Sources) -> Option<Vec<FileAnalysis>> {
    sources.moves.map(|budget| {
        files
            .iter()
            .map(|file| analyse_file(file, sources, budget, false))
            .collect()
    })
}

/// Analyses every trial of `file` whose instance and domain `sources`
/// know; with `rows`, also formats each move as a row.
pub fn analyse_file(
    file: &ResultFile,
    sources: &Sources,
    budget: SearchBudget,
    rows: bool,
) -> FileAnalysis {
    let mut out = FileAnalysis::default();
    let Some(set) = sources.instances(&file.key) else {
        out.notes.push(format!(
            "{}: no instance file for domain `{}` setting `{}`; its moves are not analysed (pass --instances)",
            file.path, file.key.domain, file.key.setting
        ));
        return out;
    };
    let Some(domain) = sources.domains.get(&file.key.domain) else {
        out.notes.push(format!(
            "{}: no domain found for `{}`; its moves are not analysed (pass --domain)",
            file.path, file.key.domain
        ));
        return out;
    };
    let by_seed: std::collections::HashMap<u64, &crate::game::InstanceLine> =
        set.instances.iter().map(|i| (i.seed, i)).collect();
    let results: Vec<Result<LineAnalysis, String>> = file
        .lines
        .par_iter()
        .filter_map(|line| {
            let seed = line.seed?;
            let Some(instance) = by_seed.get(&seed) else {
                return Some(Err(format!(
                    "seed {seed} is not in the instance file; left out"
                )));
            };
            let mut analyst = match Analyst::new(domain, instance, budget) {
                Ok(a) => a,
                Err(e) => return Some(Err(format!("seed {seed}: {e}; left out"))),
            };
            let mut games = Vec::with_capacity(line.trials.len());
            let mut line_rows = Vec::new();
            for (trial_index, trial) in line.trials.iter().enumerate() {
                let said = trial_moves(&analyst, trial);
                let moves = analyst.moves(&said);
                // A game is totalled only when every value is exact; its
                // rows are written either way, a move over the budget
                // with what is proven of it (`analysis::bounded`).
                let game = analyst.game_of(&moves).ok();
                if rows {
                    let golden = game.as_ref().map(|g| g.golden_length);
                    for m in &moves {
                        line_rows.push(row(file, seed, trial_index, &analyst, m, golden));
                    }
                }
                games.push(game);
            }
            Some(Ok(LineAnalysis {
                seed,
                games,
                rows: line_rows,
            }))
        })
        .collect();
    let mut over_budget = 0usize;
    for r in results {
        match r {
            Ok(line) => {
                over_budget += line.games.iter().filter(|g| g.is_none()).count();
                out.lines.push(line);
            }
            Err(note) => out.notes.push(format!("{}: {note}", file.path)),
        }
    }
    if over_budget > 0 {
        out.notes.push(format!(
            "{}: {over_budget} trial(s) not totalled: a value's search went over its budget (their moves' rows give what is proven: `value_bounds`, `regret_bounds`, `unproven`)",
            file.path
        ));
    }
    out
}

fn row(
    file: &ResultFile,
    seed: u64,
    trial: usize,
    analyst: &Analyst,
    m: &Analysed,
    golden_length: Option<usize>,
) -> String {
    let mut object = Map::new();
    object.insert("model".into(), Value::from(file.key.model.as_str()));
    object.insert("agent".into(), Value::from(file.key.agent.as_str()));
    object.insert("domain".into(), Value::from(file.key.domain.as_str()));
    object.insert("setting".into(), Value::from(file.key.setting.as_str()));
    object.insert("seed".into(), Value::from(seed));
    object.insert("trial".into(), Value::from(trial));
    if let Value::Object(fields) = analyst.analysed_json(m) {
        object.extend(fields);
    }
    object.insert("golden_length".into(), Value::from(golden_length));
    serde_json::to_string(&Value::Object(object)).expect("rows serialize")
}
