//! Side tool `eval`: play models over an OpenAI-compatible chat API on a
//! generated dataset, KUMO's VanillaAgent way, and write KUMO-format results.
//!
//! In: [`Suite`]s (one per domain and setting: the instances with their
//! system prompts, the domain to judge answers, the result file) and a
//! [`RunConfig`].
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
//! - Durability and resume: a line is written whole with one `write_all`
//!   and `sync_data` after its instance's K trials; on start, a trailing
//!   partial line left by a crash is cut off and the seeds already present
//!   are skipped, so nothing is written twice.
//! - An instance whose API calls still fail after the retries is not
//!   written (it is not the model's fault); the run reports it and a rerun
//!   resumes it. Fatal API answers (401/403/404) stop the run.

pub mod client;
pub mod players;
pub mod subset;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::domain::Domain;
use crate::game::session::Session;
use crate::game::{ResultLine, Task, Trial};
pub use crate::game::{budget_rule, render_book};
use crate::results::{ResultsError, open_results};
use client::{CallError, Client, ClientConfig};
use players::Player;

/// KUMO's agent name, used in result paths.
pub const AGENT: &str = "VanillaAgent";

/// The instances of one domain and setting, and where their results go.
pub struct Suite {
    pub domain: Domain,
    /// The dataset's directory name for the domain (used in result paths).
    pub domain_dir: String,
    pub setting: String,
    pub tasks: Vec<Arc<Task>>,
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
}

/// The agent folder of a results path: KUMO's `VanillaAgent`, or
/// `VanillaAgent-budget=N` under the budgeted protocol, so the two
/// protocols never share a results file and `score` gives each its rows.
pub fn agent_name(budget: Option<usize>) -> String {
    match budget {
        None => AGENT.to_string(),
        Some(n) => format!("{AGENT}-budget={n}"),
    }
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
    for _ in 0..config.trials {
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
                    let seed = config.seed.wrapping_add(trials.len() as u64);
                    let r = player
                        .reply(&suite.domain, instance, messages, seed)
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
        trials.push(session.trial());
    }
    let mut line = ResultLine::new(instance.seed, trials);
    line.model = Some(config.client.model.clone());
    line.agent = Some(agent_name(config.budget));
    line.domain = Some(suite.domain_dir.clone());
    line.setting = Some(suite.setting.clone());
    Ok(line)
}

enum Done {
    Line(usize, Box<ResultLine>, u64),
    Failed(String, u64),
    Fatal(String),
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
    let mut jobs: Vec<(usize, usize)> = Vec::new();
    for (s, suite) in suites.iter().enumerate() {
        let (file, done) = open_results(&suite.root, &suite.out)?;
        files.push(file);
        for (t, task) in suite.tasks.iter().enumerate() {
            if done.contains(&task.instance.seed) {
                summary.skipped += 1;
            } else {
                jobs.push((s, t));
            }
        }
    }
    let total = jobs.len();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Done>();
    let workers = config.concurrency.clamp(1, total.max(1));
    let mut io_error: Option<ResultsError> = None;
    std::thread::scope(|scope| {
        for w in 0..workers {
            let tx = tx.clone();
            let (next, stop, jobs) = (&next, &stop, &jobs);
            scope.spawn(move || {
                let mut client =
                    Client::new(config.client.clone(), config.seed, w as u64, progress);
                loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(s, t)) = jobs.get(i) else { break };
                    let (suite, task) = (&suites[s], &suites[s].tasks[t]);
                    let mut retried = 0;
                    let done = match play_instance(&mut client, config, suite, task, &mut retried) {
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
        drop(tx);
        let mut finished = 0;
        for done in rx {
            match done {
                Done::Line(s, line, retried) => {
                    summary.retried += retried;
                    if io_error.is_none() {
                        let written = files[s]
                            .write_all(line.to_jsonl().as_bytes())
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
