//! `kumo-gen serve` against clients that would starve or misuse it
//! (issue 55): budgets a line cannot bear, an open bind without a token,
//! a web page through a rebound DNS name, idle and slow connections past
//! the cap, oversize bodies, pings that would keep a session, two people
//! dealt at once, and `/health` while dense searches run.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{TestCommand, generate_tiny};
use crate::serve::{agent, post, serve_tiny, start, stop};

/// `host:port` of a server's URL.
fn address(url: &str) -> String {
    url.trim_start_matches("http://").to_string()
}

/// One raw HTTP/1.1 request; the status line and the rest as read until
/// the server closes or `wait` passes.
fn raw(url: &str, request: &str, wait: Duration) -> String {
    let mut stream = TcpStream::connect(address(url)).unwrap();
    stream.set_read_timeout(Some(wait)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

fn get_with_host(url: &str, path: &str, host: &str, token: Option<&str>) -> String {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    raw(
        url,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{auth}Connection: close\r\n\r\n"),
        Duration::from_secs(10),
    )
}

#[test]
fn a_budget_the_line_cannot_bear_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    generate_tiny(&data, 2, &[]).ok();
    let (child, url, _stdout) = start(&[
        "--data".as_ref(),
        data.as_os_str(),
        "--out".as_ref(),
        dir.path().join("results").as_os_str(),
        "--max-steps".as_ref(),
        "1".as_ref(),
    ]);
    // Three truths: a budget of 3 names every truth in turn and wins
    // without an action (eval refuses it too); 2 is over --max-steps 1.
    for (budget, why) in [(3, "at least the 3 truths"), (2, "over the 1 replies")] {
        let (status, refused) = post(
            &format!("{url}/reset"),
            &json!({"index": 0, "budget": budget}),
        );
        assert_eq!(status, 422, "{refused}");
        let detail = refused["detail"].as_str().unwrap();
        assert!(
            detail.contains(why) && detail.contains("give 1 or fewer"),
            "{detail}"
        );
    }
    let (status, _) = post(&format!("{url}/reset"), &json!({"budget": 1_000_000}));
    assert_eq!(status, 422);
    let (status, ok) = post(&format!("{url}/reset"), &json!({"index": 0, "budget": 1}));
    assert_eq!(status, 200, "{ok}");
    let (code, stderr) = stop(child);
    assert_eq!(code, 0, "{stderr}");

    for bad in ["0", "10001"] {
        TestCommand::new()
            .arg("serve")
            .arg("--data")
            .arg(&data)
            .arg("--out")
            .arg(dir.path().join("r2"))
            .args(["--max-steps", bad])
            .expect_code(2)
            .stderr_contains("--max-steps");
    }
}

#[test]
fn an_open_bind_needs_a_token_and_a_short_token_is_noted() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    generate_tiny(&data, 2, &[]).ok();
    let serve = |out: &str| {
        let mut command = TestCommand::new();
        command
            .arg("serve")
            .arg("--data")
            .arg(&data)
            .arg("--out")
            .arg(dir.path().join(out))
            .args(["--port", "0"]);
        command
    };
    serve("a")
        .args(["--bind", "0.0.0.0"])
        .env_remove("KUMO_SERVE_TOKEN")
        .expect_code(1)
        .stderr_contains("no KUMO_SERVE_TOKEN is set")
        .stderr_contains("openssl rand -hex 16");

    let (child, url, _stdout) = start(&[
        "--data".as_ref(),
        data.as_os_str(),
        "--out".as_ref(),
        dir.path().join("b").as_os_str(),
        "--bind".as_ref(),
        "0.0.0.0".as_ref(),
        "--insecure-no-token".as_ref(),
    ]);
    // Bound to every address: an address literal names it, a DNS name not.
    let port = url.rsplit(':').next().unwrap();
    let answer = get_with_host(
        &url,
        "/list_environments",
        &format!("127.0.0.1:{port}"),
        None,
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let (code, stderr) = stop(child);
    assert_eq!(code, 0);
    assert!(
        stderr.contains("warning: --insecure-no-token: anyone who can reach 0.0.0.0"),
        "{stderr}"
    );

    let mut command = TestCommand::new();
    command
        .arg("serve")
        .arg("--data")
        .arg(&data)
        .arg("--out")
        .arg(dir.path().join("c"))
        .args(["--port", "0"])
        .env("KUMO_SERVE_TOKEN", "abc");
    let child = command.spawn();
    std::thread::sleep(Duration::from_millis(300));
    let (_, stderr) = stop(child);
    assert!(
        stderr.contains("note: the token of KUMO_SERVE_TOKEN is 3 characters"),
        "{stderr}"
    );
    assert!(stderr.contains("note: open files: limit"), "{stderr}");
}

#[test]
fn a_web_page_cannot_drive_the_server_through_a_rebound_name() {
    let dir = tempfile::tempdir().unwrap();
    let (child, url, _stdout) = serve_tiny(dir.path(), 2);
    let port = url.rsplit(':').next().unwrap().to_string();
    // The attacker's page: its own name, rebound to 127.0.0.1, in Host
    // and Origin alike.
    let evil = format!("rebind.evil.example:{port}");
    for path in ["/list_environments", "/schema", "/medical/splits"] {
        let answer = get_with_host(&url, path, &evil, None);
        assert!(answer.starts_with("HTTP/1.1 403"), "{path}: {answer}");
        assert!(answer.contains("loopback name or its address"), "{answer}");
    }
    let reset = raw(
        &url,
        &format!(
            "POST /reset HTTP/1.1\r\nHost: {evil}\r\nOrigin: http://{evil}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
        ),
        Duration::from_secs(10),
    );
    assert!(reset.starts_with("HTTP/1.1 403"), "{reset}");
    let upgrade = raw(
        &url,
        &format!(
            "GET /ws HTTP/1.1\r\nHost: {evil}\r\nOrigin: http://{evil}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        ),
        Duration::from_secs(2),
    );
    assert!(upgrade.starts_with("HTTP/1.1 403"), "{upgrade}");
    // Names of this machine are served.
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        "play.localhost".to_string(),
    ] {
        let answer = get_with_host(&url, "/list_environments", &host, None);
        assert!(answer.starts_with("HTTP/1.1 200"), "{host}: {answer}");
    }
    let (code, _) = stop(child);
    assert_eq!(code, 0);

    // With a token, any name that brings it is served (the page has not).
    let data = dir.path().join("data");
    let mut command = TestCommand::new();
    command
        .arg("serve")
        .arg("--data")
        .arg(&data)
        .arg("--out")
        .arg(dir.path().join("r2"))
        .args(["--port", "0"])
        .env("KUMO_SERVE_TOKEN", "a-token-of-twenty-chars");
    let mut child = command.spawn();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    let url = first
        .split_whitespace()
        .nth(1)
        .unwrap()
        .trim_end_matches('/');
    let with = get_with_host(
        url,
        "/list_environments",
        "trainer.example",
        Some("a-token-of-twenty-chars"),
    );
    assert!(with.starts_with("HTTP/1.1 200"), "{with}");
    let without = get_with_host(url, "/list_environments", "trainer.example", None);
    assert!(without.starts_with("HTTP/1.1 401"), "{without}");
    stop(child);
}

#[test]
fn idle_and_slow_connections_are_cut_off_and_the_cap_holds() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    generate_tiny(&data, 2, &[]).ok();
    let (child, url, _stdout) = start(&[
        "--data".as_ref(),
        data.as_os_str(),
        "--out".as_ref(),
        dir.path().join("results").as_os_str(),
        "--request-timeout".as_ref(),
        "1".as_ref(),
        "--max-connections".as_ref(),
        "8".as_ref(),
    ]);
    // Eight sockets that send nothing, or half a request, fill the cap.
    let mut idle: Vec<TcpStream> = (0..8)
        .map(|i| {
            let mut s = TcpStream::connect(address(&url)).unwrap();
            if i % 2 == 1 {
                s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    .unwrap();
            }
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    // The ninth is told at once, not queued.
    let started = Instant::now();
    let full = raw(
        &url,
        "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        Duration::from_secs(5),
    );
    assert!(full.starts_with("HTTP/1.1 503"), "{full}");
    assert!(full.contains("CAPACITY_REACHED"), "{full}");
    assert!(started.elapsed() < Duration::from_secs(1));
    // Within the timeout the idle and half-sent ones are closed, and the
    // server answers again.
    for s in &mut idle {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 64];
        let n = s.read(&mut buf).unwrap_or(0);
        assert_eq!(n, 0, "{}", String::from_utf8_lossy(&buf[..n]));
    }
    let health = raw(
        &url,
        "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        Duration::from_secs(5),
    );
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    // A body that does not come: 408 within the timeout.
    let started = Instant::now();
    let slow = raw(
        &url,
        "POST /reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{",
        Duration::from_secs(5),
    );
    assert!(slow.starts_with("HTTP/1.1 408"), "{slow}");
    assert!(started.elapsed() < Duration::from_secs(3));
    let (code, stderr) = stop(child);
    assert_eq!(code, 0);
    assert!(
        stderr.contains("connection refused: 8 open, the limit (--max-connections)"),
        "{stderr}"
    );
}

#[test]
fn an_oversize_body_is_answered_413_not_reset() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    generate_tiny(&data, 2, &[]).ok();
    let (child, url, _stdout) = start(&[
        "--data".as_ref(),
        data.as_os_str(),
        "--out".as_ref(),
        dir.path().join("results").as_os_str(),
        "--max-message-bytes".as_ref(),
        "1024".as_ref(),
    ]);
    let body = format!("{{\"model\": \"{}\"}}", "x".repeat(200_000));
    let mut stream = TcpStream::connect(address(&url)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(
            format!(
                "POST /reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        )
        .unwrap();
    stream
        .write_all(body.as_bytes())
        .expect("the whole body is read");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("no reset");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("--max-message-bytes"), "{answer}");
    stop(child);
}

#[test]
fn two_people_dealt_at_once_never_get_the_same_line() {
    let dir = tempfile::tempdir().unwrap();
    let (child, url, _stdout) = serve_tiny(dir.path(), 12);
    let dealt: Vec<(u16, Value)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..24)
            .map(|i| {
                let url = &url;
                scope.spawn(move || {
                    post(
                        &format!("{url}/reset"),
                        &json!({"participant": format!("p{i}"), "next_unplayed": true}),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut lines: Vec<String> = dealt
        .iter()
        .filter(|(status, _)| *status == 200)
        .map(|(_, r)| r["observation"]["task_id"].as_str().unwrap().to_string())
        .collect();
    let started = lines.len();
    lines.sort();
    lines.dedup();
    assert_eq!((started, lines.len()), (12, 12), "{dealt:?}");
    assert!(
        dealt
            .iter()
            .filter(|(status, _)| *status != 200)
            .all(|(status, r)| *status == 409
                && r["detail"].as_str().unwrap().contains("every line"))
    );
    stop(child);
}

#[test]
fn pings_do_not_keep_an_idle_websocket_session() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    generate_tiny(&data, 2, &[]).ok();
    let (child, url, _stdout) = start(&[
        "--data".as_ref(),
        data.as_os_str(),
        "--out".as_ref(),
        dir.path().join("results").as_os_str(),
        "--idle-timeout".as_ref(),
        "1".as_ref(),
    ]);
    let ws_url = format!("{}/ws", url.replace("http://", "ws://"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (told, after) = runtime.block_on(async move {
        use futures_util::{SinkExt, StreamExt};
        use tokio_tungstenite::tungstenite::Message;
        let (mut ws, _) = tokio_tungstenite::connect_async(ws_url).await.unwrap();
        ws.send(Message::Text(
            json!({"type": "reset", "data": {"index": 0}}).to_string().into(),
        ))
        .await
        .unwrap();
        let _reset = ws.next().await.unwrap().unwrap();
        let started = Instant::now();
        // A keep-alive ping every 200 ms, as openenv-core's client sends
        // them: the session still idles out.
        loop {
            tokio::select! {
                frame = ws.next() => {
                    match frame {
                        Some(Ok(Message::Text(text))) => {
                            return (serde_json::from_str::<Value>(&text).unwrap(), started.elapsed());
                        }
                        Some(Ok(_)) => {}
                        other => panic!("closed without a word: {other:?}"),
                    }
                }
                () = tokio::time::sleep(Duration::from_millis(200)) => {
                    ws.send(Message::Ping(vec![1u8].into())).await.unwrap();
                }
            }
            assert!(started.elapsed() < Duration::from_secs(5), "never idled out");
        }
    });
    assert_eq!(told["data"]["code"], "SESSION_ERROR", "{told}");
    assert!(told["data"]["message"].as_str().unwrap().contains("idle"));
    assert!(after < Duration::from_secs(3), "{after:?}");
    stop(child);
}

#[test]
fn health_answers_while_dense_searches_run() {
    // A car-identification 16x20 line whose first dense step searches for
    // seconds (line 3 of seed 0); eight episodes of it start at once.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    TestCommand::new()
        .args(["--domain", "car-identification", "--truths", "16"])
        .args(["--actions", "20", "-n", "4", "--no-labels"])
        .args(["--books", "none", "--no-sft", "--out"])
        .arg(&data)
        .ok();
    let (child, url, _stdout) = start(&[
        "--data".as_ref(),
        data.as_os_str(),
        "--out".as_ref(),
        dir.path().join("results").as_os_str(),
    ]);
    let lines = crate::common::json_lines(
        &data
            .join("car-identification")
            .join("truth_num=16+action_num=20+valid_truth_num=1.jsonl"),
    );
    let action = lines[3]["actions"][0].as_str().unwrap().to_string();
    let ids: Vec<String> = (0..8)
        .map(|_| {
            let (status, reset) = post(
                &format!("{url}/reset"),
                &json!({"index": 3, "reward": "dense"}),
            );
            assert_eq!(status, 200, "{reset}");
            reset["observation"]["episode_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let (rewards, slowest) = std::thread::scope(|scope| {
        let steps: Vec<_> = ids
            .iter()
            .map(|id| {
                let (url, action) = (&url, &action);
                scope.spawn(move || {
                    let (status, step) = post(
                        &format!("{url}/step"),
                        &json!({"episode_id": id, "action": {"message": format!("<ANSWER> {action} </ANSWER>")}}),
                    );
                    assert_eq!(status, 200, "{step}");
                    step["reward"].as_f64().unwrap()
                })
            })
            .collect();
        let mut slowest = Duration::ZERO;
        while !steps.iter().all(|s| s.is_finished()) {
            let asked = Instant::now();
            let mut answer = agent().get(format!("{url}/health")).call().unwrap();
            assert_eq!(answer.status(), 200);
            let _ = answer.body_mut().read_to_string();
            slowest = slowest.max(asked.elapsed());
            std::thread::sleep(Duration::from_millis(10));
        }
        let rewards: Vec<f64> = steps.into_iter().map(|s| s.join().unwrap()).collect();
        (rewards, slowest)
    });
    // One memo for the line: the same reward for every episode.
    assert!(
        rewards.iter().all(|r| r.to_bits() == rewards[0].to_bits()),
        "{rewards:?}"
    );
    // 50 ms on an idle machine (BENCHMARKS.md); loose here for a busy one.
    assert!(
        slowest < Duration::from_millis(500),
        "/health took {slowest:?}"
    );
    stop(child);
}

#[test]
fn served_repeats_are_trials_in_score_stats_moves_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    TestCommand::new()
        .args([
            "--domain",
            "medical",
            "--truths",
            "4",
            "--actions",
            "6",
            "-n",
            "3",
        ])
        .args(["--no-sft", "--out"])
        .arg(&data)
        .ok();
    let out = dir.path().join("results");
    let (child, url, _stdout) = start(&[
        "--data".as_ref(),
        data.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    let lines = crate::common::json_lines(
        &data
            .join("medical")
            .join("truth_num=4+action_num=6+valid_truth_num=1.jsonl"),
    );
    // Each line played three times (a GRPO group): two right, one wrong.
    for (index, line) in lines.iter().enumerate() {
        let wrong = line["truths"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| **t != line["valid_truth"])
            .unwrap()
            .clone();
        for k in 0..3 {
            let (_, reset) = post(
                &format!("{url}/reset"),
                &json!({"index": index, "model": "m"}),
            );
            let id = reset["observation"]["episode_id"].clone();
            let answer = if k < 2 { &line["valid_truth"] } else { &wrong };
            for name in [&line["actions"][k], answer] {
                let (status, _) = post(
                    &format!("{url}/step"),
                    &json!({"episode_id": id, "action": {"message": format!("<ANSWER> {} </ANSWER>", name.as_str().unwrap())}}),
                );
                assert_eq!(status, 200);
            }
        }
    }
    let (code, stderr) = stop(child);
    assert!(
        code == 0 && stderr.contains("9 episodes recorded"),
        "{stderr}"
    );
    let results = out.join(
        "m/VanillaAgent/medical/truth_num=4+action_num=6+valid_truth_num=1/eval_times=1.jsonl",
    );
    let written = crate::common::json_lines(&results);
    assert_eq!(written.len(), 9);
    assert!(
        written
            .iter()
            .all(|l| l["episode_id"].as_str().is_some_and(|e| e.len() == 32))
    );

    let score = TestCommand::new().arg("score").arg(&out).arg("--json").ok();
    let rows = score.stdout_json();
    let row = &rows[0];
    assert_eq!(
        (row["instances"].as_u64(), row["trials"].as_u64()),
        (Some(3), Some(9)),
        "{rows}"
    );
    assert!(
        !score.stderr_text().contains("left out"),
        "{}",
        score.stderr_text()
    );
    let moves = TestCommand::new()
        .arg("moves")
        .arg("--instances")
        .arg(&data)
        .arg(&out)
        .ok();
    let games: std::collections::BTreeSet<(u64, u64)> = moves
        .stdout_text()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| (r["seed"].as_u64().unwrap(), r["trial"].as_u64().unwrap()))
        .collect();
    assert_eq!(games.len(), 9);
    let stats = TestCommand::new()
        .arg("stats")
        .arg("--instances")
        .arg(&data)
        .arg(&out)
        .ok();
    stats.stdout_contains("m: 3 instances");
    let report = dir.path().join("report");
    TestCommand::new()
        .arg("report")
        .arg("--instances")
        .arg(&data)
        .arg(&out)
        .arg("--out")
        .arg(&report)
        .ok();
    let page = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(page.contains(r#"data-key="trials" data-value="9""#));
}
