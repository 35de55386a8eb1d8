//! Preference pairs for DPO-style trainers, from exact values.
//!
//! In: a [`Task`] (instance, system prompt, judge) and its domain.
//! Out: rows in TRL's preference layout: `prompt` (the conversation so
//! far, exactly the messages eval sends at that state), `chosen` and
//! `rejected` (one assistant message each), `chosen_q` and `rejected_q`,
//! with `value` (`V` of the state), `seed`, `step` and `path`.
//!
//! States come from paths through the game: the golden path (the optimal
//! policy against the instance's observations) and `random_paths` off-
//! policy paths (at each state a uniformly random action left that can
//! rule out a candidate, the random player's rule, drawn from a ChaCha8
//! stream seeded by (`seed`, instance seed, path number)). At each state
//! where an action is left:
//! - a state where the optimal player acts: `chosen` is the golden
//!   player's action (optimal, first in instance order among ties),
//!   `rejected` the action of largest `Q` (largest regret; the first in
//!   instance order among ties); no pair when every action is optimal,
//!   ties within 1e-9 counted as optimal ([`crate::search::is_tie`]): a
//!   pair never prefers one of two equal actions;
//! - a state where the optimal player answers (`V = 0`): `chosen` names
//!   the golden answer (the certified truth, `chosen_q = 0`), `rejected`
//!   the first action left (`Q = 1`: it cannot change the answer).
//!
//! The path then goes on with its own move (after the answer, it ends).
//! Rows are a function of the task, the seed and the options alone.
//!
//! [`SettingPairs`] writes the pairs of a dataset's setting file, read a
//! line at a time and made a batch at a time (`kumo-gen pairs`).

use std::io::{self, Write};
use std::sync::Arc;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde_json::{Value, json};

use super::{AnalysisError, Analyst};
use crate::dataset::{Dataset, DatasetError, Setting};
use crate::domain::Domain;
use crate::game::Task;
use crate::game::session::Session;
use crate::render::Renderer;
use crate::render::protocol::answer_tag;
use crate::search::SearchBudget;

/// What pairs to make.
#[derive(Clone, Debug)]
pub struct PairOptions {
    /// The seed of the off-policy paths.
    pub seed: u64,
    /// Off-policy (random-player) paths per instance.
    pub random_paths: usize,
    /// Pairs along the golden path too.
    pub golden: bool,
    /// The model name eval would use (it decides the system message's role).
    pub model: String,
    pub budget: SearchBudget,
}

/// What writing the pairs of a setting's instances needs: the instances
/// are read a line at a time and their pairs written a batch at a time,
/// in file order, so memory does not grow with the dataset.
pub struct SettingPairs<'a> {
    pub renderer: &'a Renderer<'a>,
    pub options: &'a PairOptions,
    /// Only the first this many instances of the file.
    pub limit: Option<usize>,
    /// Instances whose pairs are made at once, on `pool`.
    pub batch: usize,
    pub pool: &'a rayon::ThreadPool,
}

impl SettingPairs<'_> {
    /// Writes the pairs of `setting`'s instances in `data` to `w`, one
    /// JSON line each; an instance whose pairs cannot be made is left out
    /// and handed to `left_out`. Returns the pairs written and the
    /// instances left out.
    pub fn write<E: From<DatasetError> + From<io::Error>>(
        &self,
        data: &Dataset,
        setting: &Setting,
        w: &mut dyn Write,
        left_out: &mut dyn FnMut(&AnalysisError),
    ) -> Result<(usize, usize), E> {
        let (mut rows, mut skipped) = (0usize, 0usize);
        let mut reader = data.stream(setting)?;
        let mut tasks = Vec::with_capacity(self.batch);
        loop {
            let read = match self.limit {
                Some(limit) if reader.position() >= limit => None,
                _ => reader.next_instance()?,
            };
            let done = read.is_none();
            if let Some(read) = read {
                let task = data.task_of(self.renderer, setting, read, false)?;
                tasks.extend(task.map(Arc::new));
            }
            if tasks.len() < self.batch && !done {
                continue;
            }
            let domain = data.domain();
            let made: Vec<_> = self.pool.install(|| {
                tasks
                    .par_iter()
                    .map(|task| task_pairs(domain, task, self.options))
                    .collect()
            });
            tasks.clear();
            for pairs in made {
                match pairs {
                    Ok(pairs) => {
                        for row in &pairs {
                            w.write_all(row.as_bytes())?;
                            w.write_all(b"\n")?;
                        }
                        rows += pairs.len();
                    }
                    Err(e) => {
                        skipped += 1;
                        left_out(&e);
                    }
                }
            }
            if done {
                return Ok((rows, skipped));
            }
        }
    }
}

/// The pairs of one task, as JSON lines (no newline), in path order.
pub fn task_pairs(
    domain: &Domain,
    task: &Arc<Task>,
    options: &PairOptions,
) -> Result<Vec<String>, AnalysisError> {
    let mut analyst = Analyst::new(domain, &task.instance, options.budget)?;
    let mut out = Vec::new();
    if options.golden {
        path_pairs(&mut analyst, task, options, None, &mut out)?;
    }
    for path in 0..options.random_paths {
        let seed = [options.seed, task.instance.seed, path as u64]
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
                (h ^ x).wrapping_mul(0x0000_0100_0000_01b3)
            });
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        path_pairs(
            &mut analyst,
            task,
            options,
            Some((path, &mut rng)),
            &mut out,
        )?;
    }
    Ok(out)
}

fn path_pairs(
    analyst: &mut Analyst,
    task: &Arc<Task>,
    options: &PairOptions,
    mut random: Option<(usize, &mut ChaCha8Rng)>,
    out: &mut Vec<String>,
) -> Result<(), AnalysisError> {
    let path = match &random {
        None => "golden".to_string(),
        Some((k, _)) => format!("random-{k}"),
    };
    let max_steps = analyst.action_names().len() + 1;
    let mut session = Session::new(Arc::clone(task), &options.model, max_steps);
    let mut state = analyst.root();
    let mut step = 0usize;
    loop {
        let Some(prompt) = session.request() else {
            break;
        };
        let values = analyst.state_values(state)?;
        let answer = analyst.golden_answer(state);
        if values.is_base() {
            if let (Some(truth), Some(&(first, q))) = (answer, values.q.first()) {
                out.push(pair_row(
                    task,
                    &path,
                    step,
                    prompt,
                    values.value,
                    (&analyst.truth_names()[truth], values.value),
                    (&analyst.action_names()[first], q),
                ));
            }
            if let Some(truth) = answer {
                let _ = session.respond(Some(&answer_tag(&analyst.truth_names()[truth])), 0);
            }
            break;
        }
        let best = values
            .best
            .expect("a state that is no base case has an action");
        let worst = values
            .q
            .iter()
            .fold(None::<(usize, f64)>, |w, &(a, q)| match w {
                Some((_, wq)) if wq >= q => w,
                _ => Some((a, q)),
            })
            .expect("a state that is no base case has actions");
        let best_q = values.q_of(best).unwrap_or(values.value);
        if !crate::search::is_tie(worst.1, best_q) {
            out.push(pair_row(
                task,
                &path,
                step,
                prompt,
                values.value,
                (&analyst.action_names()[best], best_q),
                (&analyst.action_names()[worst.0], worst.1),
            ));
        }
        let taken = match &mut random {
            None => best,
            Some((_, rng)) => {
                let learning: Vec<usize> = values
                    .q
                    .iter()
                    .map(|&(a, _)| a)
                    .filter(|&a| analyst.values().can_learn(state, a))
                    .collect();
                learning[rng.random_range(0..learning.len())]
            }
        };
        let _ = session.respond(Some(&answer_tag(&analyst.action_names()[taken])), 0);
        let (_, next) = analyst.step(state, step, crate::results::Said::Action(taken))?;
        state = next;
        step += 1;
    }
    Ok(())
}

fn pair_row(
    task: &Task,
    path: &str,
    step: usize,
    prompt: Vec<Value>,
    value: f64,
    chosen: (&str, f64),
    rejected: (&str, f64),
) -> String {
    let message = |name: &str| json!([{"role": "assistant", "content": answer_tag(name)}]);
    let row = json!({
        "prompt": prompt,
        "chosen": message(chosen.0),
        "rejected": message(rejected.0),
        "chosen_q": chosen.1,
        "rejected_q": rejected.1,
        "value": value,
        "seed": task.instance.seed,
        "path": path,
        "step": step,
    });
    serde_json::to_string(&row).expect("pairs serialize")
}
