//! The task API (OpenEnv's, ORS-compatible): `GET /list_environments`,
//! `GET /{env}/splits`, `POST /{env}/tasks`, `/num_tasks`, `/task`,
//! `/task_range`, over the catalog's environments and splits. A task names
//! its line and the `reset` arguments that play it, nothing of its content.

use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::{App, checked_body, error, guard, ok, refused};
use crate::serve::catalog::Pick;
use crate::serve::wire::Refusal;

fn env_of(app: &App, env: &str) -> Result<usize, Box<Response>> {
    app.service.catalog.env_index(env).ok_or_else(|| {
        Box::new(error(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            &format!(
                "no environment `{env}`; this server has {}",
                app.service.catalog.env_names()
            ),
        ))
    })
}

/// The environment, split and body of a task API request.
async fn task_request(
    app: &App,
    env: &str,
    request: Request,
) -> Result<(usize, usize, Value), Response> {
    let body = checked_body(app, request).await?;
    let env = env_of(app, env).map_err(|e| *e)?;
    let catalog = &app.service.catalog;
    let split = match body.get("split") {
        None | Some(Value::Null) => 0,
        Some(Value::String(name)) => catalog.split_index(env, name).ok_or_else(|| {
            error(
                StatusCode::BAD_REQUEST,
                "VALIDATION_ERROR",
                &format!(
                    "environment `{}` has no split `{name}`; its splits are {}",
                    catalog.envs[env].name,
                    catalog.split_names(env)
                ),
            )
        })?,
        Some(_) => {
            return Err(refused(&Refusal::invalid("`split` is a string")));
        }
    };
    Ok((env, split, body))
}

fn tasks_json(app: &App, env: usize, split: usize, range: std::ops::Range<usize>) -> Value {
    Value::from(
        range
            .map(|index| app.service.catalog.task_json(Pick { env, split, index }))
            .collect::<Vec<_>>(),
    )
}

pub(super) async fn list_environments(State(app): State<App>, headers: HeaderMap) -> Response {
    guard(&app, &headers).unwrap_or_else(|| ok(&app.service.catalog.environments_json()))
}

pub(super) async fn splits(
    State(app): State<App>,
    Path(env): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Some(refusal) = guard(&app, &headers) {
        return refusal;
    }
    match env_of(&app, &env) {
        Ok(e) => ok(&app.service.catalog.splits_json(e)),
        Err(response) => *response,
    }
}

pub(super) async fn tasks(
    State(app): State<App>,
    Path(env): Path<String>,
    request: Request,
) -> Response {
    match task_request(&app, &env, request).await {
        Ok((e, s, _)) => {
            let n = app.service.catalog.envs[e].splits[s].len();
            ok(&json!({"tasks": tasks_json(&app, e, s, 0..n), "env_name": env}))
        }
        Err(response) => response,
    }
}

pub(super) async fn num_tasks(
    State(app): State<App>,
    Path(env): Path<String>,
    request: Request,
) -> Response {
    match task_request(&app, &env, request).await {
        Ok((e, s, _)) => ok(&json!({"num_tasks": app.service.catalog.envs[e].splits[s].len()})),
        Err(response) => response,
    }
}

/// A whole number of a body, or an error naming it.
fn index_of(body: &Value, key: &str) -> Result<usize, Box<Response>> {
    body.get(key)
        .and_then(Value::as_u64)
        .map(|i| i as usize)
        .ok_or_else(|| {
            Box::new(error(
                StatusCode::BAD_REQUEST,
                "VALIDATION_ERROR",
                &format!("give `{key}`: a whole number, 0 or more"),
            ))
        })
}

fn out_of_range(what: &str, n: usize) -> Response {
    error(
        StatusCode::BAD_REQUEST,
        "VALIDATION_ERROR",
        &format!(
            "{what} is out of range: the split has {n} tasks (index 0 to {})",
            n.saturating_sub(1)
        ),
    )
}

pub(super) async fn task(
    State(app): State<App>,
    Path(env): Path<String>,
    request: Request,
) -> Response {
    let (e, s, body) = match task_request(&app, &env, request).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let n = app.service.catalog.envs[e].splits[s].len();
    match index_of(&body, "index") {
        Ok(index) if index < n => {
            ok(&json!({"task": app.service.catalog.task_json(Pick { env: e, split: s, index })}))
        }
        Ok(index) => out_of_range(&format!("index {index}"), n),
        Err(response) => *response,
    }
}

pub(super) async fn task_range(
    State(app): State<App>,
    Path(env): Path<String>,
    request: Request,
) -> Response {
    let (e, s, body) = match task_request(&app, &env, request).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let n = app.service.catalog.envs[e].splits[s].len();
    let start = match index_of(&body, "start") {
        Ok(start) => start,
        Err(response) => return *response,
    };
    let stop = match body.get("stop") {
        None | Some(Value::Null) => n,
        Some(_) => match index_of(&body, "stop") {
            Ok(stop) => stop.min(n),
            Err(response) => return *response,
        },
    };
    if start > n {
        return out_of_range(&format!("start {start}"), n);
    }
    ok(&json!({"tasks": tasks_json(&app, e, s, start..stop.max(start))}))
}
