//! The page people play on (`/` and `/play`): one self-contained HTML file
//! (`page/index.html`, no script or style fetched from anywhere), embedded
//! in the binary. It is a client of the server's own HTTP routes like any
//! other (`/list_environments`, `/{env}/splits`, `/reset` with a
//! `participant`, `/step`, `/close`): it shows the system prompt (the
//! book) and each round's message exactly as the model gets them, offers
//! the actions and truths as numbered buttons (or typed: a number or a
//! name, as `play` reads them), and the server appends the finished game
//! as a `HumanAgent` line, as `play` does.

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;

/// The page's HTML.
pub const PAGE: &str = include_str!("page/index.html");

pub async fn page() -> Response {
    html(PAGE)
}

/// The page as a response: HTML under a content security policy that
/// lets it fetch nothing but the server's own routes.
fn html(text: &'static str) -> Response {
    let mut response = Response::new(Body::from(text));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}
