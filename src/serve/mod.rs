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
//! - Access: loopback unless `--bind` says otherwise; a bearer token from
//!   [`TOKEN_VAR`] when set; no CORS headers, and requests a browser
//!   sends from another origin refused.
//! - Shutdown (SIGINT, SIGTERM): open WebSocket sessions are told and
//!   closed, and the open episodes are reported (they are not recorded,
//!   as `play` records no abandoned game).

pub mod catalog;
pub mod episode;
pub mod page;
pub mod results;
pub mod routes;
pub mod sessions;
pub mod wire;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use catalog::{Catalog, Pick};
use episode::{Play, Player, Rewards};
use results::Results;
use sessions::Sessions;
use wire::{Code, Refusal, ResetArgs};

/// The environment variable whose value, when set and not empty, every
/// request but `/health` and the page itself must bring as `Authorization:
/// Bearer <token>` (or as the password of HTTP Basic, which is how a URL's
/// `user:token@` reaches the server from clients that set no headers).
pub const TOKEN_VAR: &str = "KUMO_SERVE_TOKEN";

/// The model name of a `reset` that names none.
pub const DEFAULT_MODEL: &str = "openenv";

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
    /// Replies per episode at most (eval's `--max-steps`).
    pub max_steps: usize,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// The bearer token ([`TOKEN_VAR`]).
    pub token: Option<String>,
}

/// What a server did, for the CLI to print when it stops.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub episodes_recorded: usize,
    /// Task ids of the episodes open at shutdown (not recorded).
    pub open_at_shutdown: Vec<String>,
    pub reaped: usize,
}

/// Everything a request handler needs.
pub struct Service {
    pub catalog: Catalog,
    pub sessions: Sessions,
    pub results: Results,
    pub config: Config,
    pub counters: Mutex<Summary>,
}

impl Service {
    pub fn new(catalog: Catalog, config: Config) -> std::io::Result<Service> {
        Ok(Service {
            results: Results::open(&config.out)?,
            sessions: Sessions::new(config.max_sessions),
            catalog,
            config,
            counters: Mutex::new(Summary::default()),
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
        let pick = if args.next_unplayed {
            self.next_unplayed(args)?
        } else {
            self.catalog.pick(&args.selection)?
        };
        let task = self.catalog.task(pick).map_err(|e| {
            Refusal::new(
                Code::ExecutionError,
                format!("cannot build the episode: {e}"),
            )
        })?;
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
        Ok(Play::start(
            &self.catalog,
            pick,
            task,
            player,
            episode_id,
            self.config.max_steps,
            args.budget,
            args.messages,
            dense,
        ))
    }

    /// The first line of the split no person has a result for and no
    /// person is playing now (the page's "next unplayed").
    fn next_unplayed(&self, args: &ResetArgs) -> Result<Pick, Refusal> {
        let mut first = args.selection.clone();
        first.index = Some(0);
        first.seed = None;
        first.task_id = None;
        let start = self.catalog.pick(&first)?;
        let (playing, _) = self.sessions.open_http();
        let split = self.catalog.split(start);
        let dataset = &self.catalog.env(start).name;
        let setting = split.setting.to_string();
        (0..split.len())
            .map(|index| Pick { index, ..start })
            .find(|&pick| {
                !playing.contains(&pick)
                    && !self.results.played_by_people(
                        dataset,
                        &setting,
                        self.catalog.seed(pick),
                    )
            })
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
    /// Running, serving or syncing the results failed (exit 2).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl ServeError {
    /// Whether the user's request is the cause (an address in use or not
    /// available here), not the system.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            ServeError::Listen { source, .. } if matches!(
                source.kind(),
                std::io::ErrorKind::AddrInUse | std::io::ErrorKind::AddrNotAvailable
            )
        )
    }

    /// How to fix it, when there is advice.
    pub fn help(&self) -> Option<String> {
        self.is_input()
            .then(|| "choose another --port (0 picks a free one) or --bind address".into())
    }
}

/// Serves until SIGINT or SIGTERM. `ready` is told the bound address once
/// the server listens (the CLI prints it).
pub fn run(
    catalog: Catalog,
    config: Config,
    ready: impl FnOnce(SocketAddr, &Service),
) -> Result<Summary, ServeError> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if config.threads > 0 {
        builder.worker_threads(config.threads);
    }
    let runtime = builder.enable_all().build()?;
    let service = Arc::new(Service::new(catalog, config)?);
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
