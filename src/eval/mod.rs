//! Side tool `eval`: play models over an OpenAI-compatible chat API on a
//! generated dataset, KUMO's VanillaAgent way, and write KUMO-format results.
//!
//! In: [`Suite`]s (one per domain and setting: the instances chosen,
//! where their tasks come from, the domain to judge answers, the result
//! file) and a [`RunConfig`].
//! Out: result lines appended to each suite's file, and a [`Summary`].
//!
//! - Replies: the API ([`client`]), or an offline player ([`players`]:
//!   golden, random, guess) that needs no server.
//! - Protocol: [`crate::game::protocol`] (messages, Python-style printing,
//!   parsing); each trial is one [`crate::game::session::Session`], the
//!   loop `play`, the offline players and the Python `Env` run too (trial
//!   rules and counting: [`crate::game::Episode`]).
//! - Concurrency: `concurrency` worker threads take whole instances (all K
//!   trials) from a shared queue; one writer thread appends lines in
//!   completion order (the scorer does not depend on line order).
//! - Memory: a suite holds each chosen instance's position and seed; the
//!   tasks (prompt and book) are made in file order by one reader thread
//!   ([`TaskSource`]) a few ahead of the workers, so a run's memory does
//!   not grow with the dataset (docs/safety.md "Reading").
//! - A result line longer than the line cap that `score` and `report`
//!   read ([`crate::files::read::Limits`]) is not written: the run stops
//!   with [`ResultsError::LineTooLong`].
//! - Durability and resume: a line is written whole with one `write_all`
//!   and `sync_data` after its instance's K trials; on start, a trailing
//!   partial line left by a crash is cut off and the seeds already present
//!   are skipped, so nothing is written twice.
//! - An instance whose API calls still fail after the retries is not
//!   written (it is not the model's fault); the run reports it and a rerun
//!   resumes it. Fatal API answers (401/403/404) stop the run.

pub mod client;
pub mod players;
pub mod predict;
pub mod subset;
mod suites;

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use crate::domain::Domain;
use crate::game::session::Session;
use crate::game::{ResultLine, Task, Trial};
pub use crate::game::{budget_rule, render_book};
use crate::results::{ResultsError, open_results};
use client::{CallError, Client, ClientConfig};
use players::Player;
pub use suites::{DatasetTasks, Picks};

/// Where a suite's tasks come from: made one at a time, in file order,
/// when they are about to be played.
pub trait TaskSource: Send + Sync {
    /// Calls `each(task)` for the instances at `positions` (ascending) of
    /// the suite's file, in order, until `each` returns `false`.
    fn for_each(
        &self,
        positions: &[usize],
        each: &mut dyn FnMut(Task) -> bool,
    ) -> Result<(), crate::dataset::DatasetError>;
}

/// The instances of one domain and setting, and where their results go.
pub struct Suite {
    pub domain: Domain,
    /// The dataset's directory name for the domain (used in result paths).
    pub domain_dir: String,
    pub setting: String,
    /// The instances to play: position in the file and seed, ascending.
    pub chosen: Vec<(usize, u64)>,
    /// Makes their tasks.
    pub source: Box<dyn TaskSource>,
    /// The results root (`--out`): nothing is written outside it.
    pub root: PathBuf,
    /// The result file, below `root` ([`crate::results::result_path`]).
    pub out: PathBuf,
}

/// How to run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub client: ClientConfig,
    /// Trials per instance (KUMO's `eval_times`).
    pub trials: usize,
    pub concurrency: usize,
    /// Replies per trial at most (KUMO's `max_steps`).
    pub max_steps: usize,
    /// Seeds the backoff jitter, and an offline player's random choices
    /// (trial `k` plays with seed `seed + k`).
    pub seed: u64,
    /// An offline player replies instead of the API ([`players`]); the
    /// client is then never called.
    pub player: Option<Player>,
    /// The budgeted protocol with this many turns (replies) instead of
    /// KUMO's ([`crate::game::Episode::budgeted`]); `max_steps` is then
    /// unused.
    pub budget: Option<usize>,
    /// The explore-then-predict protocol with these rules instead of
    /// KUMO's ([`crate::game::predict`]); `max_steps` and `budget` are
    /// then unused.
    pub predict: Option<crate::game::predict::PredictRules>,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub played: usize,
    pub skipped: usize,
    pub unfinished: usize,
    pub trials: usize,
    pub successes: usize,
    pub parse_errors: usize,
    pub tokens: u64,
    pub retried: u64,
    /// Why instances were left unfinished (first few).
    pub failures: Vec<String>,
    /// Set when the API refused the run (bad key, model or URL).
    pub fatal: Option<String>,
    /// Set when a task could not be made (the dataset changed or became
    /// unreadable while the run played it).
    pub unreadable: Option<String>,
}

impl Summary {
    /// What `eval` prints after a run: by an offline player (`offline`)
    /// or a model called `name`, results in `outs`.
    pub fn describe(&self, offline: bool, name: &str, outs: &[&std::path::Path]) -> String {
        let rate = |n: usize| {
            if self.trials == 0 {
                "n/a".to_string()
            } else {
                format!("{:.3}", n as f64 / self.trials as f64)
            }
        };
        let mut text = format!(
            "eval: {} `{name}`, {} file(s)\n  instances: {} played, {} already done (skipped), {} unfinished\n  \
             trials: {}, success rate {}, parse errors {} ({})\n  tokens: {}\n  requests retried: {}\n",
            if offline { "player" } else { "model" },
            outs.len(),
            self.played,
            self.skipped,
            self.unfinished,
            self.trials,
            rate(self.successes),
            self.parse_errors,
            rate(self.parse_errors),
            self.tokens,
            self.retried
        );
        for out in outs {
            text.push_str(&format!("  results: {}\n", out.display()));
        }
        text
    }
}

/// Plays one instance K times. A transport failure abandons the instance.
fn play_instance(
    client: &mut Client,
    config: &RunConfig,
    suite: &Suite,
    task: &Arc<Task>,
    retried: &mut u64,
) -> Result<ResultLine, CallError> {
    let instance = &task.instance;
    let mut trials: Vec<Trial> = Vec::with_capacity(config.trials);
    for k in 0..config.trials {
        let seed = config.seed.wrapping_add(k as u64);
        trials.push(match config.predict {
            Some(rules) => predict::play_trial(client, config, suite, task, rules, seed, retried)?,
            None => play_trial(client, config, suite, task, seed, retried)?,
        });
    }
    let mut line = ResultLine::new(instance.seed, trials);
    line.model = Some(config.client.model.clone());
    line.agent = Some(match &config.predict {
        Some(rules) => crate::game::Agent::Model.predict_name(rules),
        None => crate::game::Agent::Model.name(config.budget),
    });
    line.domain = Some(suite.domain_dir.clone());
    line.setting = Some(suite.setting.clone());
    Ok(line)
}

/// One trial under KUMO's protocol (or the budgeted one).
fn play_trial(
    client: &mut Client,
    config: &RunConfig,
    suite: &Suite,
    task: &Arc<Task>,
    seed: u64,
    retried: &mut u64,
) -> Result<Trial, CallError> {
    let model = &config.client.model;
    let mut session = match config.budget {
        None => Session::new(Arc::clone(task), model, config.max_steps),
        Some(budget) => Session::budgeted(Arc::clone(task), model, budget),
    };
    while let Some(messages) = session.request() {
        let messages = messages.as_slice();
        let reply = match config.player {
            None => client.complete(messages)?,
            Some(player) => {
                let r = player
                    .reply(&suite.domain, &task.instance, messages, seed)
                    .map_err(|e| CallError::Fatal(e.to_string()))?;
                client::Reply {
                    text: Some(r.text),
                    tokens: r.input_tokens + r.output_tokens,
                    retried: 0,
                }
            }
        };
        *retried += u64::from(reply.retried);
        session
            .respond(reply.text.as_deref(), reply.tokens)
            .expect("a session with a request takes a reply");
    }
    Ok(session.trial())
}

enum Done {
    Line(usize, Box<ResultLine>, u64),
    Failed(String, u64),
    Fatal(String),
    Unreadable(String),
}

/// Runs every pending instance of every suite. `progress` is told of each
/// finished instance (of the stage the caller started).
pub fn run(
    suites: &[Suite],
    config: &RunConfig,
    progress: &dyn crate::progress::Progress,
) -> Result<Summary, ResultsError> {
    let mut summary = Summary::default();
    let mut files = Vec::with_capacity(suites.len());
    // Per suite, the chosen instances not played yet.
    let mut pending: Vec<Vec<(usize, u64)>> = Vec::with_capacity(suites.len());
    for suite in suites {
        let (file, done) = open_results(&suite.root, &suite.out)?;
        files.push(file);
        let left: Vec<(usize, u64)> = suite
            .chosen
            .iter()
            .copied()
            .filter(|(_, seed)| !done.contains(seed))
            .collect();
        summary.skipped += suite.chosen.len() - left.len();
        pending.push(left);
    }
    let total: usize = pending.iter().map(Vec::len).sum();
    let stop = AtomicBool::new(false);
    let workers = config.concurrency.clamp(1, total.max(1));
    // Bounded too: workers wait while the writer (which syncs every line)
    // catches up, instead of piling finished lines up in memory.
    let (tx, rx) = mpsc::sync_channel::<Done>(2 * workers);
    // A few tasks ahead of the workers, never the whole dataset.
    let (task_tx, task_rx) = mpsc::sync_channel::<(usize, Arc<Task>)>(2 * workers);
    let task_rx = Arc::new(Mutex::new(task_rx));
    let line_cap = crate::files::read::Limits::current().line;
    let mut io_error: Option<ResultsError> = None;
    std::thread::scope(|scope| {
        {
            let (tx, stop, pending) = (tx.clone(), &stop, &pending);
            scope.spawn(move || {
                for (s, left) in pending.iter().enumerate() {
                    if left.is_empty() {
                        continue;
                    }
                    let positions: Vec<usize> = left.iter().map(|&(p, _)| p).collect();
                    let mut at = 0;
                    let mut changed = None;
                    let made = suites[s].source.for_each(&positions, &mut |task| {
                        let expected = left.get(at).map(|&(_, seed)| seed);
                        at += 1;
                        if expected != Some(task.instance.seed) {
                            changed = Some(task.instance.seed);
                            return false;
                        }
                        !stop.load(Ordering::Relaxed) && task_tx.send((s, Arc::new(task))).is_ok()
                    });
                    let failed = match (made, changed) {
                        (Err(e), _) => Some(e.to_string()),
                        (Ok(()), Some(seed)) => Some(format!(
                            "`{}/{}.jsonl` changed while it was played (seed {seed} where another was read); run the same command again",
                            suites[s].domain_dir, suites[s].setting
                        )),
                        (Ok(()), None) => None,
                    };
                    if let Some(why) = failed {
                        stop.store(true, Ordering::Relaxed);
                        let _ = tx.send(Done::Unreadable(why));
                        return;
                    }
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                }
            });
        }
        for w in 0..workers {
            let tx = tx.clone();
            let (stop, task_rx) = (&stop, Arc::clone(&task_rx));
            scope.spawn(move || {
                let mut client =
                    Client::new(config.client.clone(), config.seed, w as u64, progress);
                loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let next = task_rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok((s, task)) = next else { break };
                    let suite = &suites[s];
                    let mut retried = 0;
                    let done = match play_instance(&mut client, config, suite, &task, &mut retried)
                    {
                        Ok(line) => Done::Line(s, Box::new(line), retried),
                        Err(CallError::Fatal(why)) => {
                            stop.store(true, Ordering::Relaxed);
                            Done::Fatal(why)
                        }
                        Err(e @ CallError::Gave { attempts, .. }) => Done::Failed(
                            format!("{} seed {}: {e}", suite.out.display(), task.instance.seed),
                            retried + u64::from(attempts.saturating_sub(1)),
                        ),
                    };
                    if tx.send(done).is_err() {
                        break;
                    }
                }
            });
        }
        // The workers hold the only receivers now: when they stop, the
        // reader's next send fails and it stops too.
        drop(task_rx);
        drop(tx);
        let mut finished = 0;
        for done in rx {
            match done {
                Done::Line(s, line, retried) => {
                    summary.retried += retried;
                    if io_error.is_none() {
                        let text = line.to_jsonl();
                        if text.len() as u64 > line_cap + 1 {
                            stop.store(true, Ordering::Relaxed);
                            io_error = Some(ResultsError::LineTooLong {
                                path: suites[s].out.clone(),
                                seed: line.seed,
                                bytes: text.len() as u64 - 1,
                                limit: line_cap,
                            });
                            continue;
                        }
                        let written = files[s]
                            .write_all(text.as_bytes())
                            .and_then(|()| files[s].sync_data());
                        if let Err(source) = written {
                            stop.store(true, Ordering::Relaxed);
                            io_error = Some(ResultsError::Io {
                                path: suites[s].out.clone(),
                                source,
                            });
                            continue;
                        }
                    }
                    summary.played += 1;
                    for t in &line.trajectories {
                        summary.trials += 1;
                        summary.successes += usize::from(t.successful);
                        summary.parse_errors += usize::from(t.parse_error);
                        summary.tokens += t.consumed_tokens;
                    }
                }
                Done::Failed(why, retried) => {
                    summary.retried += retried;
                    summary.unfinished += 1;
                    if summary.failures.len() < 5 {
                        summary.failures.push(why);
                    }
                }
                Done::Fatal(why) => {
                    if summary.fatal.is_none() {
                        summary.fatal = Some(why);
                    }
                }
                Done::Unreadable(why) => {
                    summary.unreadable = Some(why);
                    continue;
                }
            }
            finished += 1;
            progress.grow_to(total as u64);
            progress.position(finished as u64);
        }
    });
    if let Some(e) = io_error {
        return Err(e);
    }
    let accounted = summary.played + summary.unfinished;
    if accounted < total {
        summary.unfinished = total - summary.played;
    }
    Ok(summary)
}
