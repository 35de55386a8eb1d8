//! The routes of `kumo-gen serve` (axum on tokio): OpenEnv's WebSocket
//! session `/ws`, its HTTP routes (`/reset`, `/step`, `/state`, `/health`,
//! `/metadata`, `/schema`), the task API (`/list_environments`,
//! `/{env}/splits`, `/{env}/tasks`, `/{env}/num_tasks`, `/{env}/task`,
//! `/{env}/task_range`), `/close` for an HTTP episode, and the page at `/`
//! and `/play`.
//!
//! Over HTTP an episode lives on the server between requests: `/reset`
//! answers with its `episode_id` (in the observation), which `/step`
//! (`{"action": {...}, "episode_id": ...}`), `/state?episode_id=...` and
//! `/close` name. HTTP errors are JSON, `{"detail", "code"}`, with
//! OpenEnv's codes and statuses: 400 bad JSON, 422 a bad value, 404 an
//! unknown episode or environment, 409 a step the episode cannot take,
//! 408 a body that did not arrive in time, 413 too large (read to its end
//! first, up to 16 times the limit, so the client hears it instead of a
//! reset), 401 no token, 403 another origin or (without a token) a `Host`
//! that is not this server's, 503 the session or connection limit.
//!
//! Here: the server's start and shutdown, the token, host and origin
//! checks, the HTTP episodes and the fixed documents; [`ws`] the
//! WebSocket session, [`tasks`] the task API; the listener is
//! [`super::listen`]. A step of a dense-reward episode runs on the search
//! pool ([`on_pool`]), never on the threads that answer requests.

mod tasks;
mod ws;

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::episode::{Play, Rewards, StepError};
use super::listen::{self, Limits};
use super::sessions::new_id;
use super::wire::{self, Code, Refusal, ResetArgs, StepArgs};
use super::{Service, page};

/// The shared state of every handler.
#[derive(Clone)]
struct App {
    service: Arc<Service>,
    /// Turns true when the server begins to stop.
    stop: watch::Receiver<bool>,
}

/// Listens on the configured address and serves until SIGINT or SIGTERM;
/// then tells open WebSocket sessions, waits for them (a few seconds at
/// most) and notes every episode left open.
pub async fn serve(
    service: Arc<Service>,
    ready: impl FnOnce(SocketAddr, &Service),
) -> Result<(), super::ServeError> {
    let bind = service.config.bind;
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .map_err(|source| super::ServeError::Listen { bind, source })?;
    // The handlers are in place before anyone hears the address, so a
    // signal sent as soon as the server is ready stops it cleanly.
    let stop_signal = StopSignal::install();
    ready(listener.local_addr()?, &service);
    let (stop_tx, stop_rx) = watch::channel(false);
    let app = App {
        service: service.clone(),
        stop: stop_rx.clone(),
    };
    let reaper = tokio::spawn(reap(service.clone(), stop_rx.clone()));
    let limits = Limits {
        max_connections: service.config.max_connections,
        request_timeout: service.config.request_timeout,
    };
    let accepting = tokio::spawn(listen::accept_loop(
        listener,
        router(app),
        limits,
        service.clone(),
        stop_rx,
    ));
    stop_signal.received().await;
    let _ = stop_tx.send(true);
    let _ = accepting.await;
    // WebSocket sessions close themselves on the signal; give them a
    // moment to say so, then report the HTTP episodes still open.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while service.sessions.open() > service.sessions.http_episodes()
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    reaper.abort();
    let open = service.sessions.open_http();
    service
        .counters
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .open_at_shutdown
        .extend(open);
    Ok(())
}

/// SIGINT and SIGTERM, listened for from the moment of `install`.
struct StopSignal {
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    terminate: Option<tokio::signal::unix::Signal>,
}

impl StopSignal {
    fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            StopSignal {
                interrupt: signal(SignalKind::interrupt()).ok(),
                terminate: signal(SignalKind::terminate()).ok(),
            }
        }
        #[cfg(not(unix))]
        {
            StopSignal {}
        }
    }

    async fn received(self) {
        #[cfg(unix)]
        {
            async fn next(signal: Option<tokio::signal::unix::Signal>) {
                match signal {
                    Some(mut signal) => {
                        signal.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                () = next(self.interrupt) => {}
                () = next(self.terminate) => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Drops idle HTTP episodes every few seconds.
async fn reap(service: Arc<Service>, mut stop: watch::Receiver<bool>) {
    let every =
        (service.config.idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            () = listen::stopping(&mut stop) => return,
        }
        let reaped = service.sessions.reap(service.config.idle_timeout);
        if reaped > 0 {
            service
                .counters
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .reaped += reaped;
        }
    }
}

fn router(app: App) -> Router {
    Router::new()
        .route("/", get(page::page))
        .route("/play", get(page::page))
        .route("/health", get(health))
        .route("/metadata", get(metadata))
        .route("/schema", get(schema))
        .route("/ws", get(ws::ws))
        .route("/reset", post(reset))
        .route("/step", post(step))
        .route("/state", get(state))
        .route("/close", post(close))
        .route("/list_environments", get(tasks::list_environments))
        .route("/{env}/splits", get(tasks::splits))
        .route("/{env}/tasks", post(tasks::tasks))
        .route("/{env}/num_tasks", post(tasks::num_tasks))
        .route("/{env}/task", post(tasks::task))
        .route("/{env}/task_range", post(tasks::task_range))
        .fallback(not_found)
        .with_state(app)
}

/// A JSON answer.
fn json_response(status: StatusCode, value: &Value) -> Response {
    let mut response = (status, value.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn ok(value: &Value) -> Response {
    json_response(StatusCode::OK, value)
}

/// An HTTP error with OpenEnv's code.
fn refused(refusal: &Refusal) -> Response {
    let status = match refusal.code {
        Code::InvalidJson => StatusCode::BAD_REQUEST,
        Code::UnknownType | Code::ValidationError => StatusCode::UNPROCESSABLE_ENTITY,
        Code::ExecutionError => StatusCode::CONFLICT,
        Code::CapacityReached => StatusCode::SERVICE_UNAVAILABLE,
        Code::SessionError => StatusCode::NOT_FOUND,
    };
    json_response(
        status,
        &json!({"detail": refusal.message, "code": refusal.code.as_str()}),
    )
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    json_response(status, &json!({"detail": message, "code": code}))
}

/// Whether a request's `Host` names this server as only a client on this
/// machine, or one that knows the server's address, would: a loopback
/// name (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`) or the bound
/// address (any address literal when bound to all of them). A web page
/// that rebinds its own DNS name to 127.0.0.1 sends its name.
fn host_is_ours(host: &str, bind: SocketAddr) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => host
            .rsplit_once(':')
            .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
            .map_or(host, |(name, _)| name),
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if name == "localhost" || name.ends_with(".localhost") {
        return true;
    }
    name.parse::<IpAddr>()
        .is_ok_and(|ip| ip.is_loopback() || ip == bind.ip() || bind.ip().is_unspecified())
}

/// Checks the origin, the host (without a token) and the token of a
/// request; `None` when it may go on.
fn guard(app: &App, headers: &HeaderMap) -> Option<Response> {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        let origin_host = origin
            .to_str()
            .ok()
            .and_then(|o| o.split_once("://"))
            .map(|(_, rest)| rest.trim_end_matches('/'));
        if host.is_none() || origin_host != host {
            return Some(error(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                "requests from another web origin are refused (this server sends no CORS headers)",
            ));
        }
    }
    if app.service.config.token.is_none()
        && let Some(host) = headers.get(header::HOST)
    {
        let host = host.to_str().unwrap_or_default();
        if !host_is_ours(host, app.service.config.bind) {
            return Some(error(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                &format!(
                    "this server has no token, so it answers only requests that name it by a loopback name or its address, not `{host}` (a web page's name pointed at this machine?); set {} to serve other names",
                    super::TOKEN_VAR
                ),
            ));
        }
    }
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok());
    if !app.service.authorized(authorization) {
        let mut response = error(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            &format!(
                "this server wants the token of its {} environment variable: send `Authorization: Bearer <token>` (or a URL with `user:<token>@`)",
                super::TOKEN_VAR
            ),
        );
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return Some(response);
    }
    None
}

/// A request's body as JSON (an empty body is `null`), within the size
/// limit and the request timeout.
async fn body_json(app: &App, request: Request) -> Result<Value, Response> {
    let limit = app.service.config.max_message_bytes;
    let timeout = app.service.config.request_timeout;
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let too_large = || {
        let mut response = error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "VALIDATION_ERROR",
            &format!("the request body is over {limit} bytes (--max-message-bytes)"),
        );
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        response
    };
    let drain = limit.saturating_mul(16).min(64 << 20);
    if declared.is_some_and(|n| n > drain as u64) {
        return Err(too_large());
    }
    let read = tokio::time::timeout(timeout, read_body(request.into_body(), limit, drain)).await;
    let bytes = match read {
        Err(_) => {
            let mut response = error(
                StatusCode::REQUEST_TIMEOUT,
                "VALIDATION_ERROR",
                &format!(
                    "the request body did not arrive within {} s (--request-timeout)",
                    timeout.as_secs()
                ),
            );
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return Err(response);
        }
        Ok(ReadBody::Over) => return Err(too_large()),
        Ok(ReadBody::Broken) => {
            return Err(error(
                StatusCode::BAD_REQUEST,
                "INVALID_JSON",
                "the request body could not be read",
            ));
        }
        Ok(ReadBody::Read(bytes)) => bytes,
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        refused(&Refusal::new(
            Code::InvalidJson,
            format!("Invalid JSON: {e}"),
        ))
    })
}

/// What [`read_body`] read.
enum ReadBody {
    Read(Vec<u8>),
    /// Over the limit (read on, discarded, up to the drain bound).
    Over,
    Broken,
}

/// Reads a body of at most `limit` bytes; past it, reads on and discards
/// up to `drain` bytes, so the client gets the refusal and not a reset.
async fn read_body(mut body: axum::body::Body, limit: usize, drain: usize) -> ReadBody {
    use axum::body::HttpBody as _;
    let mut bytes = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) =
        std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await
    {
        let Ok(frame) = frame else {
            return ReadBody::Broken;
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen = seen.saturating_add(data.len());
        if seen > drain {
            return ReadBody::Over;
        }
        if seen <= limit {
            bytes.extend_from_slice(&data);
        }
    }
    if seen > limit {
        ReadBody::Over
    } else {
        ReadBody::Read(bytes)
    }
}

/// The guard, then the body.
async fn checked_body(app: &App, request: Request) -> Result<Value, Response> {
    if let Some(refusal) = guard(app, request.headers()) {
        return Err(refusal);
    }
    body_json(app, request).await
}

async fn not_found() -> Response {
    error(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        "no such route; see docs/serve.md",
    )
}

async fn health() -> Response {
    ok(&json!({"status": "healthy"}))
}

async fn metadata(State(app): State<App>, headers: HeaderMap) -> Response {
    guard(&app, &headers).unwrap_or_else(|| ok(&wire::metadata()))
}

async fn schema(State(app): State<App>, headers: HeaderMap) -> Response {
    guard(&app, &headers).unwrap_or_else(|| ok(&wire::schema()))
}

// ---- HTTP episodes ----

async fn reset(State(app): State<App>, request: Request) -> Response {
    let body = match checked_body(&app, request).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let s = &app.service;
    let args = match ResetArgs::from_data(Some(&body)) {
        Ok(args) => args,
        Err(r) => return refused(&r),
    };
    let slot = match s.sessions.claim() {
        Ok(slot) => slot,
        Err(full) => return refused(&capacity(full)),
    };
    let id = match new_id() {
        Ok(id) => id,
        Err(e) => return refused(&no_random(e)),
    };
    match s.reset(&args, id, false) {
        Ok(play) => {
            let response = play.response(&s.catalog, None);
            s.sessions.insert(play, slot);
            ok(&response)
        }
        Err(r) => refused(&r),
    }
}

fn capacity(full: super::sessions::Full) -> Refusal {
    Refusal::new(
        Code::CapacityReached,
        format!(
            "the server has {} open sessions, its limit (--max-sessions {}); close a session or try again later",
            full.open, full.max
        ),
    )
}

fn no_random(e: getrandom::Error) -> Refusal {
    Refusal::new(
        Code::ExecutionError,
        format!("no random episode id: the operating system's random source failed: {e}"),
    )
}

fn unknown_episode(id: &str) -> Refusal {
    Refusal::new(
        Code::SessionError,
        format!("no open episode `{id}`: it ended, idled out or never was; POST /reset starts one"),
    )
}

/// The `episode_id` of a body.
fn episode_id(body: &Value) -> Result<String, Refusal> {
    match body.get("episode_id") {
        Some(Value::String(id)) => Ok(id.clone()),
        _ => Err(Refusal::invalid(
            "give `episode_id`: the id in the observation POST /reset answered with",
        )),
    }
}

async fn step(State(app): State<App>, request: Request) -> Response {
    let body = match checked_body(&app, request).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let s = &app.service;
    let (id, args) = match episode_id(&body)
        .and_then(|id| StepArgs::from_action(body.get("action")).map(|a| (id, a)))
    {
        Ok(found) => found,
        Err(r) => return refused(&r),
    };
    let Some(play) = s.sessions.get(&id) else {
        return refused(&unknown_episode(&id));
    };
    let service = s.clone();
    let take_step = move || {
        let mut play = lock(&play);
        let result = play
            .step(&service.catalog, &args.message, args.tokens)
            .map_err(step_refusal)
            .and_then(|response| {
                if play.is_done() {
                    service.record(&play)?;
                }
                Ok(response)
            });
        (result, play.is_done())
    };
    let dense = s
        .sessions
        .get(&id)
        .is_some_and(|p| p.try_lock().map_or(true, |p| p.rewards() == Rewards::Dense));
    let (result, done) = if dense {
        match on_pool(s, take_step).await {
            Ok(stepped) => stepped,
            Err(r) => return refused(&r),
        }
    } else {
        take_step()
    };
    if done {
        s.sessions.remove(&id);
    }
    match result {
        Ok(response) => ok(&response),
        Err(r) => refused(&r),
    }
}

/// Runs a step that may search (a dense reward) on the search pool: at
/// most `--threads` at once, on threads of their own, so the threads
/// that answer requests (`/health` among them) never wait on a search.
pub(super) async fn on_pool<T: Send + 'static>(
    service: &super::Service,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Refusal> {
    let failed = || Refusal::new(Code::ExecutionError, "the step could not be run");
    let _place = service.searches.acquire().await.map_err(|_| failed())?;
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| failed())
}

/// An HTTP episode, locked (a poisoned lock still holds the episode).
fn lock(play: &Mutex<Play>) -> std::sync::MutexGuard<'_, Play> {
    play.lock().unwrap_or_else(|e| e.into_inner())
}

fn step_refusal(e: StepError) -> Refusal {
    match e {
        StepError::Finished => Refusal::new(Code::ExecutionError, e.to_string()),
        StepError::NotOnMenu(_) => Refusal::invalid(e.to_string()),
        StepError::Reward(_) => Refusal::new(Code::ExecutionError, e.to_string()),
    }
}

async fn state(State(app): State<App>, request: Request) -> Response {
    if let Some(refusal) = guard(&app, request.headers()) {
        return refusal;
    }
    let s = &app.service;
    let id = request.uri().query().and_then(|q| {
        q.split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == "episode_id")
            .map(|(_, v)| v.to_string())
    });
    let Some(id) = id else {
        // OpenEnv's answer for no episode.
        return ok(&json!({"episode_id": null, "step_count": 0}));
    };
    let Some(play) = s.sessions.get(&id) else {
        return refused(&unknown_episode(&id));
    };
    if let Ok(play) = play.try_lock() {
        return ok(&play.state(&s.catalog));
    }
    // A step is searching: wait for it off the request threads.
    let service = s.clone();
    match tokio::task::spawn_blocking(move || lock(&play).state(&service.catalog)).await {
        Ok(state) => ok(&state),
        Err(_) => refused(&Refusal::new(
            Code::ExecutionError,
            "the state could not be read",
        )),
    }
}

async fn close(State(app): State<App>, request: Request) -> Response {
    let body = match checked_body(&app, request).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    match episode_id(&body) {
        Ok(id) if app.service.sessions.remove(&id) => ok(&json!({"closed": id})),
        Ok(id) => refused(&unknown_episode(&id)),
        Err(r) => refused(&r),
    }
}
