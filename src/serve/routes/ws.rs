//! OpenEnv's WebSocket session (`/ws`): one episode at a time per
//! connection, in the connection's own task, as OpenEnv keeps one
//! environment per connection; typed errors for every bad frame, the idle
//! timeout (counted from the last message: pings and pongs, which
//! openenv-core's client sends every few seconds, keep the connection,
//! not the session), the capacity error, and the word to open sessions
//! when the server stops. A dense episode's step runs on the search pool
//! ([`super::on_pool`]).

use axum::extract::State;
use axum::extract::ws::{Message as Frame, WebSocket, WebSocketUpgrade};
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::{Value, json};

use super::super::listen::stopping;
use super::{App, capacity, guard, no_random, on_pool, step_refusal};
use crate::serve::episode::{Play, Rewards};
use crate::serve::sessions::new_id;
use crate::serve::wire::{self, Code, Message, Refusal};

pub(super) async fn ws(
    State(app): State<App>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    if let Some(refusal) = guard(&app, &headers) {
        return refusal;
    }
    let limit = app.service.config.max_message_bytes;
    // Small buffers: a thousand mostly idle sessions must not each hold
    // tungstenite's default 128 KiB read buffer; every answer is flushed
    // at once, and a client that does not read is cut off at twice the
    // message limit instead of growing the server's memory.
    upgrade
        .max_message_size(limit)
        .max_frame_size(limit)
        .read_buffer_size(4096)
        .write_buffer_size(0)
        .max_write_buffer_size(limit.saturating_mul(2))
        .on_upgrade(move |socket| ws_session(app, socket))
}

async fn send(socket: &mut WebSocket, value: &Value) -> bool {
    socket
        .send(Frame::Text(value.to_string().into()))
        .await
        .is_ok()
}

/// One WebSocket session: one episode at a time, in the connection's
/// task, as OpenEnv keeps one environment per connection.
async fn ws_session(app: App, mut socket: WebSocket) {
    let s = app.service.clone();
    let _slot = match s.sessions.claim() {
        Ok(slot) => slot,
        Err(full) => {
            let mut message = capacity(full).to_ws();
            message["data"]["active_sessions"] = json!(full.open);
            message["data"]["max_sessions"] = json!(full.max);
            send(&mut socket, &message).await;
            let _ = socket.send(Frame::Close(None)).await;
            return;
        }
    };
    let mut play: Option<Play> = None;
    let mut stop = app.stop.clone();
    let idle = s.config.idle_timeout;
    let mut idle_at = tokio::time::Instant::now() + idle;
    loop {
        let received = tokio::select! {
            r = tokio::time::timeout_at(idle_at, socket.recv()) => r,
            () = stopping(&mut stop) => {
                if let Some(p) = play.as_ref().filter(|p| !p.is_done()) {
                    s.counters.lock().unwrap_or_else(|e| e.into_inner()).open_at_shutdown.push(p.task_id.clone());
                }
                let bye = Refusal::new(Code::SessionError, "the server is shutting down; an open episode is not recorded");
                send(&mut socket, &bye.to_ws()).await;
                break;
            }
        };
        let frame = match received {
            Err(_) => {
                let bye = Refusal::new(
                    Code::SessionError,
                    format!(
                        "the session sent nothing for {} s (--idle-timeout) and is closed",
                        idle.as_secs()
                    ),
                );
                send(&mut socket, &bye.to_ws()).await;
                break;
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                let why = Refusal::invalid(format!(
                    "the connection failed: {e} (messages are at most {} bytes: --max-message-bytes)",
                    s.config.max_message_bytes
                ));
                send(&mut socket, &why.to_ws()).await;
                break;
            }
            Ok(Some(Ok(frame))) => frame,
        };
        let text = match frame {
            Frame::Text(text) => text.to_string(),
            Frame::Binary(bytes) => match String::from_utf8(bytes.to_vec()) {
                Ok(text) => text,
                Err(_) => {
                    let bad = Refusal::new(Code::InvalidJson, "Invalid JSON: not UTF-8 text");
                    if !send(&mut socket, &bad.to_ws()).await {
                        break;
                    }
                    continue;
                }
            },
            Frame::Close(_) => break,
            Frame::Ping(_) | Frame::Pong(_) => continue,
        };
        idle_at = tokio::time::Instant::now() + idle;
        let reply = match wire::parse_message(&text) {
            Err(r) => r.to_ws(),
            Ok(Message::Close) => break,
            Ok(Message::Reset(args)) => match new_id()
                .map_err(no_random)
                .and_then(|id| s.reset(&args, id, true))
            {
                Ok(p) => {
                    let response = p.response(&s.catalog, None);
                    play = Some(p);
                    json!({"type": "observation", "data": response})
                }
                Err(r) => r.to_ws(),
            },
            Ok(Message::Step(args)) => match play.take() {
                None => {
                    Refusal::new(Code::ExecutionError, "no episode yet: send `reset` first").to_ws()
                }
                Some(mut p) => {
                    let dense = p.rewards() == Rewards::Dense;
                    let service = s.clone();
                    let take_step = move || {
                        let reply = match p.step(&service.catalog, &args.message, args.tokens) {
                            Ok(response) => match p.is_done().then(|| service.record(&p)) {
                                Some(Err(r)) => r.to_ws(),
                                _ => json!({"type": "observation", "data": response}),
                            },
                            Err(e) => step_refusal(e).to_ws(),
                        };
                        (p, reply)
                    };
                    let stepped = if dense {
                        on_pool(&s, take_step).await
                    } else {
                        Ok(take_step())
                    };
                    match stepped {
                        Ok((p, reply)) => {
                            play = Some(p);
                            reply
                        }
                        Err(r) => r.to_ws(),
                    }
                }
            },
            Ok(Message::State) => {
                let state = match &play {
                    Some(p) => p.state(&s.catalog),
                    None => json!({"episode_id": null, "step_count": 0}),
                };
                json!({"type": "state", "data": state})
            }
        };
        if !send(&mut socket, &reply).await {
            break;
        }
    }
    let _ = socket.send(Frame::Close(None)).await;
}
