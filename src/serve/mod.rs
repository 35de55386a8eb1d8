//! Side tool `serve`: episodes as a service, for trainers that run
//! environments on servers (OpenEnv's contract) and for people on a
//! browser page (human baselines). A face like the CLI: the rules of the
//! game are [`crate::game`]'s and the play loop is eval's
//! [`crate::game::session::Session`]; here are only sessions and
//! presentation.
//!
//! In: the datasets of `--data` ([`catalog`]), a [`Config`]. Out: HTTP and
//! WebSocket answers ([`routes`], shapes in [`wire`], the page in
//! [`page`]), and a result line in KUMO's format under `--out` for every
//! finished episode ([`results`]).
//!
//! - One episode is one catalog line played as eval plays it
//!   ([`episode`]): the same system prompt, book and messages, replies
//!   parsed as eval parses them; a person's menu choices as `play` reads
//!   them. Nothing a player must not know (the valid truth, unobserved
//!   outcomes, labels) is in an observation or the state before the end.
//! - Sessions ([`sessions`]): a WebSocket connection or an HTTP episode
//!   each take one place of `--max-sessions`; idle ones are closed after
//!   `--idle-timeout`; messages are bounded by `--max-message-bytes`.
//! - Connections ([`listen`]): at most `--max-connections` (and what the
//!   open-files limit allows), each request's headers and body within
//!   `--request-timeout`, an idle keep-alive connection closed after it,
//!   a client that reads nothing of an answer cut off after it.
//! - Work: a step costs its reply ([`crate::game::session`]); the dense
//!   rewards' searches run on a pool of `--threads` (at most that many at
//!   once), never on the threads that answer requests.
//! - Access: loopback unless `--bind` says otherwise, and then only with
//!   a bearer token from [`TOKEN_VAR`] (or `--insecure-no-token`, loudly
//!   warned); without a token a request must name the server by a
//!   loopback name or its bound address (`Host`), so a web page cannot
//!   reach it through a DNS name rebound to 127.0.0.1; no CORS headers,
//!   and requests a browser sends from another origin refused.
//! - One server per `--out`: a lock file there refuses a second.
//! - Shutdown (SIGINT, SIGTERM): open WebSocket sessions are told and
//!   closed, and the open episodes are reported (they are not recorded,
//!   as `play` records no abandoned game).

pub mod catalog;
pub mod episode;
pub mod listen;
pub mod page;
pub mod predict;
pub mod results;
pub mod routes;
pub mod seats;
pub mod sessions;
pub mod wire;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::game::session::Session;
use catalog::Catalog;
use episode::{Game, Play, Player, Rewards};
pub use listen::Notice;
use results::Results;
use seats::{Seat, Seats};
use sessions::Sessions;
use wire::{Code, Refusal, ResetArgs};

/// The environment variable whose value, when set and not empty, every
/// request but `/health` and the page itself must bring as `Authorization:
/// Bearer <token>` (or as the password of HTTP Basic, which is how a URL's
/// `user:token@` reaches the server from clients that set no headers).
pub const TOKEN_VAR: &str = "KUMO_SERVE_TOKEN";

/// The model name of a `reset` that names none.
pub const DEFAULT_MODEL: &str = "openenv";

/// A token shorter than this gets a note at start: 16 random characters
/// (`openssl rand -hex 16` gives 32) resist guessing over the network.
pub const SHORT_TOKEN: usize = 16;

/// How a server runs.
#[derive(Clone, Debug)]
pub struct Config {
    pub bind: SocketAddr,
    /// Results root (`--out`): nothing is written outside it.
    pub out: PathBuf,
    /// Open sessions at most (WebSocket connections and HTTP episodes).
    pub max_sessions: usize,
    /// A session that sends nothing this long is closed.
    pub idle_timeout: Duration,
    /// Largest request body or WebSocket message.
    pub max_message_bytes: usize,
    /// Replies per episode at most (eval's `--max-steps`; 1 to
    /// [`crate::game::MAX_REPLIES`]); a `budget` is at most this too.
    pub max_steps: usize,
    /// Worker threads (0: one per core); also the searches of dense
    /// rewards run at once, on a pool of their own.
    pub threads: usize,
    /// The bearer token ([`TOKEN_VAR`]).
    pub token: Option<String>,
    /// Open connections at most (WebSocket sessions included); lowered
    /// to what the open-files limit allows.
    pub max_connections: usize,
    /// A request's headers and its body must each arrive within this; a
    /// keep-alive connection idle this long is closed; a client that
    /// reads nothing of an answer this long is cut off.
    pub request_timeout: Duration,
    /// Serve a non-loopback `bind` without a token (refused otherwise).
    pub insecure_no_token: bool,
}

impl Config {
    /// Refuses a configuration that would let anyone on the network play
    /// (and write results) unasked: a non-loopback `bind` without a token,
    /// unless `insecure_no_token`.
    pub fn check(&self) -> Result<(), ServeError> {
        if self.token.is_none() && !self.bind.ip().is_loopback() && !self.insecure_no_token {
            return Err(ServeError::NoToken { bind: self.bind });
        }
        if !(1..=crate::game::MAX_REPLIES).contains(&self.max_steps) {
            return Err(ServeError::MaxSteps {
                max_steps: self.max_steps,
            });
        }
        Ok(())
    }

    /// What the operator should hear at start: a short token, a server
    /// open to the network without one.
    pub fn notices(&self) -> Vec<Notice> {
        let mut notices = Vec::new();
        if let Some(token) = &self.token
            && token.chars().count() < SHORT_TOKEN
        {
            notices.push(Notice::ShortToken {
                chars: token.chars().count(),
            });
        }
        if self.token.is_none() && !self.bind.ip().is_loopback() {
            notices.push(Notice::OpenWithoutToken { bind: self.bind });
        }
        notices
    }

    /// The searches of dense rewards run at once.
    pub fn search_threads(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        }
    }
}

/// What a server did, for the CLI to print when it stops.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub episodes_recorded: usize,
    /// Task ids of the episodes open at shutdown (not recorded).
    pub open_at_shutdown: Vec<String>,
    pub reaped: usize,
}

/// How a server tells its operator what happened (the CLI prints it).
pub type Notices = Box<dyn Fn(&Notice) + Send + Sync>;

/// Everything a request handler needs.
pub struct Service {
    pub catalog: Catalog,
    pub sessions: Sessions,
    pub results: Results,
    pub config: Config,
    pub counters: Mutex<Summary>,
    /// The lines people play now.
    pub seats: Seats,
    /// Places on the search pool (dense rewards).
    pub searches: tokio::sync::Semaphore,
    pub notices: Notices,
}

impl Service {
    /// The service of a catalog: opens (and locks) the results root.
    pub fn new(catalog: Catalog, config: Config, notices: Notices) -> Result<Service, ServeError> {
        Ok(Service {
            results: Results::open(&config.out)?,
            sessions: Sessions::new(config.max_sessions),
            searches: tokio::sync::Semaphore::new(config.search_threads()),
            catalog,
            config,
            counters: Mutex::new(Summary::default()),
            seats: Seats::default(),
            notices,
        })
    }

    /// Starts the episode a `reset` asks for, named `id` (the server's
    /// unguessable id; a WebSocket client's own `episode_id` replaces it
    /// when `client_names` is set).
    pub fn reset(&self, args: &ResetArgs, id: String, client_names: bool) -> Result<Play, Refusal> {
        let player = match (&args.participant, &args.model) {
            (Some(p), _) => Player::Person(p.clone()),
            (None, Some(m)) => Player::Model(m.clone()),
            (None, None) => Player::Model(DEFAULT_MODEL.to_string()),
        };
        let seat = match (&player, args.next_unplayed) {
            (_, true) => Some(self.next_unplayed(args)?),
            (Player::Person(_), false) => Some(self.seats.sit(self.catalog.pick(&args.selection)?)),
            (Player::Model(_), false) => None,
        };
        let pick = match &seat {
            Some(seat) => seat.pick(),
            None => self.catalog.pick(&args.selection)?,
        };
        let task = self.catalog.task(pick).map_err(|e| {
            Refusal::new(
                Code::ExecutionError,
                format!("cannot build the episode: {e}"),
            )
        })?;
        if let Some(budget) = args.budget {
            crate::game::check_budget(budget, task.instance.truths.len(), self.config.max_steps)
                .map_err(|e| {
                    Refusal::invalid(format!(
                        "`budget` {budget} cannot be played on `{}`: {e}; give {} or fewer",
                        self.catalog.task_id(pick),
                        crate::game::largest_budget(
                            task.instance.truths.len(),
                            self.config.max_steps
                        )
                        .max(1)
                    ))
                })?;
        }
        let dense = match args.rewards {
            Rewards::Outcome => None,
            Rewards::Dense => Some(self.catalog.live_game(pick, &task).map_err(|e| {
                Refusal::new(
                    Code::ExecutionError,
                    format!("cannot score the episode's moves (reward \"dense\"): {e}"),
                )
            })?),
        };
        let episode_id = match (&args.episode_id, client_names) {
            (Some(own), true) => own.clone(),
            _ => id,
        };
        let game = match (args.protocol, args.budget) {
            (Some(rules), _) => {
                let domain = self.catalog.domain(pick);
                let game =
                    crate::game::predict::PredictGame::new(task, domain, rules, player.name())
                        .map_err(|e| {
                            Refusal::invalid(format!(
                                "`protocol` cannot be played on `{}`: {e}",
                                self.catalog.task_id(pick)
                            ))
                        })?;
                Game::Predict(Box::new(game))
            }
            (None, Some(b)) => Game::Kumo(Box::new(Session::budgeted(task, player.name(), b))),
            (None, None) => Game::Kumo(Box::new(Session::new(
                task,
                player.name(),
                self.config.max_steps,
            ))),
        };
        let mut play = Play::start(
            &self.catalog,
            pick,
            game,
            player,
            episode_id,
            args.messages,
            dense,
        );
        play.seat = seat;
        Ok(play)
    }

    /// A seat at the first line of the split no person has a result for
    /// and no person is playing now (the page's "next unplayed"), dealt
    /// under one lock ([`Seats::deal`]).
    fn next_unplayed(&self, args: &ResetArgs) -> Result<Seat, Refusal> {
        let mut first = args.selection.clone();
        first.index = Some(0);
        first.seed = None;
        first.task_id = None;
        let start = self.catalog.pick(&first)?;
        let split = self.catalog.split(start);
        let dataset = &self.catalog.env(start).name;
        let setting = split.setting.to_string();
        self.seats
            .deal(
                (0..split.len()).map(|index| catalog::Pick { index, ..start }),
                |pick| {
                    self.results
                        .played_by_people(dataset, &setting, self.catalog.seed(pick))
                },
            )
            .ok_or_else(|| {
                Refusal::new(
                    Code::ExecutionError,
                    format!(
                        "every line of split `{}` of `{dataset}` has been played by someone (or is being played)",
                        split.name
                    ),
                )
            })
    }

    /// Writes a finished episode's result line (once: the caller drops or
    /// resets the episode after).
    pub fn record(&self, play: &Play) -> Result<(), Refusal> {
        let Some((place, line)) = play.result(&self.catalog) else {
            return Ok(());
        };
        let person = matches!(play.player, Player::Person(_));
        self.results.append(&place, &line, person).map_err(|e| {
            Refusal::new(
                Code::ExecutionError,
                format!("the episode ended but its result line could not be written: {e}"),
            )
        })?;
        self.counters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .episodes_recorded += 1;
        Ok(())
    }

    /// Whether a request's headers carry the token (always, without one).
    pub fn authorized(&self, authorization: Option<&str>) -> bool {
        let Some(token) = &self.config.token else {
            return true;
        };
        let Some(given) = authorization.map(str::trim) else {
            return false;
        };
        let presented = if let Some(bearer) = strip_prefix_ignore_case(given, "bearer ") {
            bearer.trim().to_string()
        } else if let Some(basic) = strip_prefix_ignore_case(given, "basic ") {
            use base64::Engine as _;
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(basic.trim())
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .unwrap_or_default();
            decoded
                .split_once(':')
                .map(|(_, password)| password.to_string())
                .unwrap_or_default()
        } else {
            return false;
        };
        constant_time_eq(presented.as_bytes(), token.as_bytes())
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// Compares without stopping at the first difference, so the time taken
/// tells nothing of the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, &x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i % b.len().max(1)).copied().unwrap_or(0));
    }
    diff == 0
}

/// Why the server cannot start or stopped badly.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The configured address cannot be listened on (exit 1 when the
    /// address is taken or not this machine's: the user's choice; exit 2
    /// otherwise).
    #[error("cannot listen on {}:{}: {source}", bind.ip(), bind.port())]
    Listen {
        bind: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// A non-loopback address without a token (exit 1).
    #[error(
        "--bind {} lets other machines play and write results, and no {TOKEN_VAR} is set",
        bind.ip()
    )]
    NoToken { bind: SocketAddr },
    /// `--max-steps` out of range (exit 1).
    #[error("--max-steps {max_steps} is not 1 to {}", crate::game::MAX_REPLIES)]
    MaxSteps { max_steps: usize },
    /// Another server writes to the same `--out` (exit 1).
    #[error("another `kumo-gen serve` writes its results to `{}` (it holds `{}`)", out.display(), lock.display())]
    OutLocked { out: PathBuf, lock: PathBuf },
    /// Running, serving or syncing the results failed (exit 2).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl ServeError {
    /// Whether the user's request is the cause (an address in use or not
    /// available here), not the system.
    pub fn is_input(&self) -> bool {
        match self {
            ServeError::Listen { source, .. } => matches!(
                source.kind(),
                std::io::ErrorKind::AddrInUse | std::io::ErrorKind::AddrNotAvailable
            ),
            ServeError::NoToken { .. }
            | ServeError::MaxSteps { .. }
            | ServeError::OutLocked { .. } => true,
            ServeError::Io(_) => false,
        }
    }

    /// How to fix it, when there is advice.
    pub fn help(&self) -> Option<String> {
        match self {
            ServeError::Listen { .. } if self.is_input() => {
                Some("choose another --port (0 picks a free one) or --bind address".into())
            }
            ServeError::NoToken { .. } => Some(format!(
                "set a token, e.g. `{TOKEN_VAR}=$(openssl rand -hex 16)`, or keep the default --bind 127.0.0.1 and reach it through an SSH tunnel (--insecure-no-token serves without one, to anyone who can reach the port)"
            )),
            ServeError::MaxSteps { .. } => Some(format!(
                "give --max-steps from 1 to {}",
                crate::game::MAX_REPLIES
            )),
            ServeError::OutLocked { .. } => Some(
                "give each server its own --out (score and stats read several roots), or stop the other server first".into(),
            ),
            _ => None,
        }
    }
}

/// Serves until SIGINT or SIGTERM. `notices` hears what the operator
/// should (at start: the open-files limit, a short token; while serving:
/// failed accepts, refused connections); `ready` is told the bound
/// address once the server listens (the CLI prints it).
pub fn run(
    catalog: Catalog,
    mut config: Config,
    notices: Notices,
    ready: impl FnOnce(SocketAddr, &Service),
) -> Result<Summary, ServeError> {
    config.check()?;
    for notice in config.notices() {
        notices(&notice);
    }
    let files = listen::raise_open_files(config.max_connections);
    if let Some(files) = &files {
        config.max_connections = files.connections;
        notices(&Notice::OpenFiles(files.clone()));
    }
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if config.threads > 0 {
        builder.worker_threads(config.threads);
    }
    let runtime = builder.enable_all().build()?;
    let service = Arc::new(Service::new(catalog, config, notices)?);
    runtime.block_on(routes::serve(service.clone(), ready))?;
    // The runtime's tasks (closed sessions) are done or dropped here.
    drop(runtime);
    service.results.sync_all()?;
    let summary = service
        .counters
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(!constant_time_eq(b"", b"a"));
        assert_eq!(strip_prefix_ignore_case("Bearer x", "bearer "), Some("x"));
        assert_eq!(strip_prefix_ignore_case("Be", "bearer "), None);
    }
}
