//! The games behind the numbers: each result line with its instance,
//! trial by trial, reply by reply, as the report's replay viewer steps
//! through them (the book, each action, its observation, the candidates
//! left).
//!
//! In: result files and the [`Sources`] `score` used (instances and
//! domains), and a function giving an instance's book. Out: [`Replay`]s
//! and the [`Book`]s they point to, in result-file order. A line whose
//! instance or domain is unknown has no replay; the caller says how many.
//! Candidates are those of [`crate::game::ResolvedLine::candidates_after`]:
//! truths no observation seen so far rules out (a repeated or unknown
//! action rules out nothing new). With [`Sources::moves`] set, each reply
//! that names an action or truth of the game carries its
//! [`StepAnalysis`], from [`crate::analysis`] (the game's moves are
//! [`trial_moves`], as `kumo-gen moves` reads them): `V`, `Q`, regret,
//! and the optimal move(s) of the state it was made in.

use std::collections::HashMap;

use serde::Serialize;

use super::sample::{ReplayLimit, chosen};
use crate::analysis::Analyst;
use crate::analysis::files::trial_moves;
use crate::domain::Domain;
use crate::game::{InstanceLine, Judge, ResolvedLine};
use crate::results::{GameAnalysis, LineFacts, MoveAnalysis, ResultFile, Sources, TrialFacts};
use crate::search::State;

/// One knowledge book, shared by every replay of its instance.
#[derive(Clone, Debug, Serialize)]
pub struct Book {
    pub text: String,
}

/// One reply of a trial and what the player was shown.
#[derive(Clone, Debug, Serialize)]
pub struct ReplayStep {
    pub kind: StepKind,
    /// What the reply named (empty when unusable).
    pub said: String,
    /// The observation shown for a query (state label or value).
    pub observation: Option<String>,
    /// For an answer: whether the judge accepts it.
    pub correct: Option<bool>,
    /// Candidates left after this reply.
    pub candidates: Vec<String>,
    /// The move against the exact optimum (a reply naming an action or a
    /// truth of the game, when the moves were analysed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analysis: Option<StepAnalysis>,
}

/// What a reply was, as the page names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// It named one of the instance's actions.
    Query,
    /// It named one of the instance's truths.
    Answer,
    /// It named nothing of the game.
    Unknown,
    /// No parsable reply.
    Unusable,
}

/// One move against the exact optimum: the one per-move row
/// ([`MoveAnalysis`], shown as it serializes) and the state's optimal
/// moves.
#[derive(Clone, Debug, Serialize)]
pub struct StepAnalysis {
    #[serde(flatten)]
    pub played: MoveAnalysis,
    /// The optimal move(s) of the state: the actions of least `Q` (ties
    /// in instance order), or, where the optimal player answers, that
    /// answer (`best_is_answer`).
    pub best: Vec<String>,
    pub best_is_answer: bool,
}

/// One trial of a result line.
#[derive(Clone, Debug, Serialize)]
pub struct ReplayTrial {
    pub success: bool,
    pub steps: Vec<ReplayStep>,
    /// The game's total regret and efficiency, when analysed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regret: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<f64>,
}

/// One result line with its instance.
#[derive(Clone, Debug, Serialize)]
pub struct Replay {
    pub model: String,
    pub agent: String,
    pub domain: String,
    pub setting: String,
    pub seed: u64,
    /// Index into the page's books.
    pub book: usize,
    pub truths: Vec<String>,
    pub valid: Vec<String>,
    /// The optimal player's queries (the golden trajectory), when labelled.
    pub golden: Vec<String>,
    pub expected_steps: Option<f64>,
    /// A certified label's proven lower bound (`expected_steps` is then
    /// its upper bound, the golden trajectory's strategy's: docs/output.md
    /// "Certified labels"); `None` when exact or unlabelled.
    pub lower_bound: Option<f64>,
    pub trials: Vec<ReplayTrial>,
}

fn shown(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What the page replays: the replays, the books they use (one per
/// instance, first use first), notes for the user, and how many lines
/// could have been replayed (their instance and domain at hand).
#[derive(Clone, Debug, Default)]
pub struct Replays {
    pub replays: Vec<Replay>,
    pub books: Vec<Book>,
    pub notes: Vec<String>,
    pub replayable: usize,
}

/// The replays of the result lines `limit` picks ([`super::sample`]) whose
/// instance and domain are known, and how many lines had none. `book`
/// gives the text of an instance's book: its file in the dataset, else the
/// rendered one (`Err` leaves the line out with its message as a note).
pub fn replays(
    files: &[ResultFile],
    sources: &Sources,
    limit: ReplayLimit,
    mut book: impl FnMut(&ResultFile, &InstanceLine) -> Result<String, String>,
) -> Replays {
    let mut out = Vec::new();
    let mut books: Vec<Book> = Vec::new();
    let mut book_of: std::collections::BTreeMap<(String, String, u64), usize> = Default::default();
    let mut notes = Vec::new();
    let mut missing = 0usize;
    let mut replayable = 0usize;
    let picked = chosen(files, limit);
    for (file, marks) in files.iter().zip(&picked) {
        let (Some(set), Some(domain)) = (
            sources.instances(&file.key),
            sources.domains.get(&file.key.domain),
        ) else {
            missing += file.lines.len();
            continue;
        };
        let by_seed: HashMap<u64, &InstanceLine> =
            set.instances.iter().map(|i| (i.seed, i)).collect();
        for (line, &mark) in file.lines.iter().zip(marks) {
            let Some(&instance) = line.seed.and_then(|seed| by_seed.get(&seed)) else {
                missing += 1;
                continue;
            };
            replayable += 1;
            if !mark {
                continue;
            }
            let (Ok(resolved), Ok(judge)) =
                (instance.resolve(domain), Judge::new(domain, instance))
            else {
                missing += 1;
                continue;
            };
            let key = (set.domain.clone(), set.setting.clone(), instance.seed);
            let book_index = match book_of.get(&key) {
                Some(&i) => i,
                None => match book(file, instance) {
                    Ok(text) => {
                        books.push(Book { text });
                        book_of.insert(key, books.len() - 1);
                        books.len() - 1
                    }
                    Err(e) => {
                        notes.push(e);
                        missing += 1;
                        continue;
                    }
                },
            };
            let trials = replay_trials(line, instance, domain, &resolved, &judge, sources);
            let optimal = instance.optimal.clone().unwrap_or_default();
            let lower_bound = match optimal.steps() {
                Some(crate::game::Steps::Certified { lower, .. }) => Some(lower),
                _ => None,
            };
            out.push(Replay {
                model: file.key.model.clone(),
                agent: file.key.agent.clone(),
                domain: file.key.domain.clone(),
                setting: file.key.setting.clone(),
                seed: instance.seed,
                book: book_index,
                truths: instance.truths.clone(),
                valid: instance.valid_truths(),
                golden: optimal.golden_trajectory,
                lower_bound,
                expected_steps: optimal.expected_steps,
                trials,
            });
        }
    }
    if missing > 0 {
        notes.push(format!(
            "{missing} result line(s) have no replay: their instance or domain was not found (pass --instances DIR)"
        ));
    }
    Replays {
        replays: out,
        books,
        notes,
        replayable,
    }
}

/// The replays of every trial of a result line on its instance: each
/// reply's step with the candidates left after it, and, with
/// [`Sources::moves`], each move against the optimum.
fn replay_trials(
    line: &LineFacts,
    instance: &InstanceLine,
    domain: &Domain,
    resolved: &ResolvedLine,
    judge: &Judge,
    sources: &Sources,
) -> Vec<ReplayTrial> {
    let mut analyst = sources
        .moves
        .and_then(|budget| Analyst::new(domain, instance, budget).ok());
    // The optimal moves of each state met, once per line: trials of one
    // instance share states (the start, at least).
    let mut best_of: BestOf = HashMap::new();
    line.trials
        .iter()
        .map(|trial| {
            let (mut steps, queried) = replay_steps(trial, instance, judge);
            // Candidates after each step: after the queries so far.
            let lefts = resolved.candidates_after(domain, &queried);
            let mut seen = 0usize;
            for step in &mut steps {
                if step.kind == StepKind::Query {
                    seen += 1;
                }
                step.candidates = lefts[seen]
                    .iter()
                    .map(|&t| domain.truths[t].clone())
                    .collect();
            }
            let game = analyst
                .as_mut()
                .and_then(|a| analysed(a, &mut best_of, trial, &mut steps));
            ReplayTrial {
                success: trial
                    .predicted
                    .as_deref()
                    .is_some_and(|p| judge.evaluate(p)),
                steps,
                regret: game.as_ref().map(|g| g.total_regret),
                efficiency: game.as_ref().map(|g| g.efficiency),
            }
        })
        .collect()
}

/// The steps of a trial's replies, candidates not yet filled in, and the
/// positions of the actions it queried, in order.
fn replay_steps(
    trial: &TrialFacts,
    instance: &InstanceLine,
    judge: &Judge,
) -> (Vec<ReplayStep>, Vec<usize>) {
    let mut queried = Vec::new();
    let steps = trial
        .replies
        .iter()
        .map(|reply| {
            let step = |kind, said: &str| ReplayStep {
                kind,
                said: said.to_string(),
                observation: None,
                correct: None,
                candidates: Vec::new(),
                analysis: None,
            };
            let Some(said) = reply.as_deref() else {
                return step(StepKind::Unusable, "");
            };
            if let Some(pos) = instance.actions.iter().position(|a| a == said) {
                queried.push(pos);
                ReplayStep {
                    observation: instance.observation(said).map(shown),
                    ..step(StepKind::Query, said)
                }
            } else if instance.truths.iter().any(|t| t == said) {
                ReplayStep {
                    correct: Some(judge.evaluate(said)),
                    ..step(StepKind::Answer, said)
                }
            } else {
                step(StepKind::Unknown, said)
            }
        })
        .collect();
    (steps, queried)
}

/// Analyses `trial` on `analyst`'s instance and gives each step naming an
/// action or truth of the game its move's analysis (in order: those steps
/// are the game's moves). `None` when a value's search went over budget.
/// The optimal moves of a state ([`StepAnalysis::best`] and
/// `best_is_answer`) by state.
type BestOf = HashMap<State, (Vec<String>, bool)>;

fn analysed(
    analyst: &mut Analyst,
    best_of: &mut BestOf,
    trial: &TrialFacts,
    steps: &mut [ReplayStep],
) -> Option<GameAnalysis> {
    let game = analyst.game(&trial_moves(analyst, trial)).ok()?;
    let mut moves = game.moves.iter();
    for step in steps
        .iter_mut()
        .filter(|s| matches!(s.kind, StepKind::Query | StepKind::Answer))
    {
        let Some(m) = moves.next() else { break };
        step.analysis = Some(step_analysis(analyst, best_of, m)?);
    }
    Some(game)
}

fn step_analysis(
    analyst: &mut Analyst,
    best_of: &mut BestOf,
    m: &MoveAnalysis,
) -> Option<StepAnalysis> {
    let (best, best_is_answer) = match best_of.get(&m.before) {
        Some(known) => known.clone(),
        None => {
            let known = optimal_moves(analyst, m.before)?;
            best_of.insert(m.before, known.clone());
            known
        }
    };
    Some(StepAnalysis {
        played: m.clone(),
        best,
        best_is_answer,
    })
}

/// The optimal moves of `state`: the actions of least `Q`, or the golden
/// player's answer where it answers (`true`).
fn optimal_moves(analyst: &mut Analyst, state: State) -> Option<(Vec<String>, bool)> {
    let values = analyst.state_values(state).ok()?;
    Some(if values.is_base() {
        let answer = analyst.golden_answer(state);
        (
            answer
                .map(|t| analyst.truth_names()[t].clone())
                .into_iter()
                .collect(),
            true,
        )
    } else {
        (
            values
                .optimal
                .iter()
                .map(|&a| analyst.action_names()[a].clone())
                .collect(),
            false,
        )
    })
}
