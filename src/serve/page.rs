//! The page people play on (`/` and `/play`): one self-contained HTML file
//! (`page/index.html`, no script or style fetched from anywhere), embedded
//! in the binary. It is a client of the server's own HTTP routes like any
//! other (`/list_environments`, `/{env}/splits`, `/reset` with a
//! `participant`, `/step`, `/close`): it shows the system prompt (the
//! book) and each round's message exactly as the model gets them, offers
//! the actions and truths as numbered buttons (or typed: a number or a
//! name, as `play` reads them), and the server appends the finished game
//! as a `HumanAgent` line, as `play` does.

use axum::response::Response;

/// The page's HTML.
pub const PAGE: &str = include_str!("page/index.html");

pub async fn page() -> Response {
    super::routes::html(PAGE)
}
