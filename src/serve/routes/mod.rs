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
//! 413 too large, 401 no token, 403 another origin, 503 the session limit.
//!
//! Here: the listener and its shutdown, the token and origin checks, the
//! HTTP episodes and the fixed documents; [`ws`] the WebSocket session,
//! [`tasks`] the task API.

mod tasks;
mod ws;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::episode::StepError;
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
    ready(listener.local_addr()?, &service);
    let (stop_tx, stop_rx) = watch::channel(false);
    let app = App {
        service: service.clone(),
        stop: stop_rx.clone(),
    };
    let reaper = tokio::spawn(reap(service.clone(), stop_rx));
    let shutdown = async move {
        stop_signal().await;
        let _ = stop_tx.send(true);
    };
    axum::serve(listener, router(app))
        .with_graceful_shutdown(shutdown)
        .await?;
    // WebSocket sessions close themselves on the signal; give them a
    // moment to say so, then report the HTTP episodes still open.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while service.sessions.open() > service.sessions.open_http().1.len()
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    reaper.abort();
    let (_, open) = service.sessions.open_http();
    service
        .counters
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .open_at_shutdown
        .extend(open);
    Ok(())
}

async fn stop_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}

/// Returns once the server begins to stop.
async fn stopping(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|&stopping| stopping).await;
}

/// Drops idle HTTP episodes every few seconds.
async fn reap(service: Arc<Service>, mut stop: watch::Receiver<bool>) {
    let every =
        (service.config.idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            () = stopping(&mut stop) => return,
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

/// Checks the token and the origin of a request; `None` when it may go on.
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

/// A request's body as JSON (an empty body is `null`), within the limit.
async fn body_json(app: &App, request: Request) -> Result<Value, Response> {
    let limit = app.service.config.max_message_bytes;
    let bytes = axum::body::to_bytes(request.into_body(), limit)
        .await
        .map_err(|_| {
            error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "VALIDATION_ERROR",
                &format!("the request body is over {limit} bytes (--max-message-bytes)"),
            )
        })?;
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
    let (result, done) = {
        let mut play = play.lock().unwrap_or_else(|e| e.into_inner());
        let result = play
            .step(&s.catalog, &args.message, args.tokens)
            .map_err(step_refusal)
            .and_then(|response| {
                if play.is_done() {
                    s.record(&play)?;
                }
                Ok(response)
            });
        (result, play.is_done())
    };
    if done {
        s.sessions.remove(&id);
    }
    match result {
        Ok(response) => ok(&response),
        Err(r) => refused(&r),
    }
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
    match s.sessions.get(&id) {
        Some(play) => {
            let play = play.lock().unwrap_or_else(|e| e.into_inner());
            ok(&play.state(&s.catalog))
        }
        None => refused(&unknown_episode(&id)),
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
