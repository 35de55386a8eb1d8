//! `kumo-gen eval` against a misbehaving loopback server (`tests/eval.rs`):
//! 429 and 500 are retried and play goes on; a hanging server times out,
//! nothing half-played is written, and a resume finishes the run.

use std::sync::Arc;

use serde_json::Value;

use crate::common::json_lines;
use crate::eval::{Answer, eval_cmd, golden, result_file, score, serve};

#[test]
fn retries_429_and_500_then_plays_on() {
    let server = serve(Arc::new(|body: &Value, n| match n % 3 {
        0 => Answer::Reply(429, r#"{"error": "slow down"}"#.into()),
        1 => Answer::Reply(500, "oops".into()),
        _ => golden(body),
    }));
    let tmp = tempfile::tempdir().unwrap();
    let output = eval_cmd(
        &server.base,
        tmp.path(),
        &["--concurrency", "1", "--retries", "3"],
    )
    .run();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    // 3 instances x 2 trials x (golden + 1) replies, each after 2 retries.
    let replies = 2 * ((2 + 1) + (3 + 1) + (3 + 1));
    assert!(
        stdout.contains(&format!("requests retried: {}", 2 * replies)),
        "{stdout}"
    );
    let row = score(tmp.path());
    assert_eq!(row["success_rate"], 1.0);
    assert_eq!(row["parse_error_rate"], 0.0);
}

#[test]
fn hanging_server_times_out_writes_nothing_and_resume_finishes() {
    let server = serve(Arc::new(|_: &Value, _| Answer::Hang));
    let tmp = tempfile::tempdir().unwrap();
    let output = eval_cmd(
        &server.base,
        tmp.path(),
        &["--timeout", "0.2", "--retries", "1", "--concurrency", "3"],
    )
    .run();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stdout.contains("0 played, 0 already done (skipped), 3 unfinished"),
        "{stdout}"
    );
    assert!(stderr.contains("timed out"), "{stderr}");
    assert!(stdout.contains("requests retried: 3"), "{stdout}");
    let file = result_file(tmp.path());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "");

    // The first request hangs, the rest succeed: the run survives it.
    let server = serve(Arc::new(
        |body: &Value, n| {
            if n == 0 { Answer::Hang } else { golden(body) }
        },
    ));
    let output = eval_cmd(
        &server.base,
        tmp.path(),
        &["--timeout", "0.5", "--retries", "2"],
    )
    .run();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(json_lines(&file).len(), 3);
    assert_eq!(score(tmp.path())["success_rate"], 1.0);
}
