//! The load test of `kumo-gen serve` (BENCHMARKS.md "serve"): starts the
//! server on loopback, holds `--sessions` WebSocket sessions open at once,
//! and plays `--episodes` whole episodes through them (each line's golden
//! trajectory, so every episode ends in a success), timing every `step`
//! from send to answer. Bounded in count and time (`--seconds`), loopback
//! only.
//!
//!     cargo build --release
//!     cargo run --release --example serve_load -- --data OUT/medical \
//!         --sessions 1000 --episodes 100000
//!
//! `--think-ms T` makes each session pause T ms before each step, as a
//! trainer's sessions wait for the model: the offered load is then
//! `sessions / T` steps per second, and the latency is the server's, not
//! a queue of every session's steps at once. Without it every session
//! steps as fast as it can (the throughput). `--reward dense` resets
//! every episode with `"reward": "dense"` (per-turn rewards, computed by
//! the server from the hidden game; the golden episode still ends on
//! 1.0), to compare the server's CPU per step with the default outcome.
//!
//! Prints the step latency (p50, p90, p99, max), episodes and steps per
//! second, and the server's resident memory after the first thousand
//! episodes and at the end (flat memory: the two are close), then stops
//! the server with SIGTERM and prints its report. Needs `ulimit -n` above
//! twice the sessions.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

struct Args {
    bin: PathBuf,
    data: PathBuf,
    sessions: usize,
    episodes: usize,
    seconds: u64,
    /// A session's pause before each step (a model thinking); 0: none.
    think_ms: u64,
    /// `reset`'s `reward`: `outcome` (the default) or `dense`.
    reward: String,
}

fn args() -> Result<Args, String> {
    let mut args = Args {
        bin: PathBuf::from("target/release/kumo-gen"),
        data: PathBuf::new(),
        sessions: 1000,
        episodes: 100_000,
        seconds: 600,
        think_ms: 0,
        reward: "outcome".to_string(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<usize>()
                .map_err(|_| format!("{flag}: not a number"))
        };
        match flag.as_str() {
            "--bin" => args.bin = value.clone().into(),
            "--data" => args.data = value.clone().into(),
            "--sessions" => args.sessions = number()?.clamp(1, 10_000),
            "--episodes" => args.episodes = number()?.clamp(1, 10_000_000),
            "--seconds" => args.seconds = number()?.clamp(1, 3600) as u64,
            "--think-ms" => args.think_ms = number()?.min(60_000) as u64,
            "--reward" if matches!(value.as_str(), "outcome" | "dense") => {
                args.reward = value.clone()
            }
            "--reward" => return Err("--reward is outcome or dense".into()),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if args.data.as_os_str().is_empty() {
        return Err(
            "give --data DIR: a dataset directory with labelled lines (OUT/<domain>)".into(),
        );
    }
    Ok(args)
}

/// The golden replies of every line of the dataset's first instance file.
fn golden_replies(dir: &std::path::Path) -> Result<(String, Vec<Vec<String>>), String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let file = files.first().ok_or("no instance file in --data")?;
    let stem = file.file_stem().unwrap_or_default().to_string_lossy();
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let mut lines = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let optimal = v
            .get("optimal")
            .ok_or("the lines need labels (`optimal`)")?;
        let mut replies: Vec<String> = optimal["golden_trajectory"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|a| format!("<ANSWER> {a} </ANSWER>"))
            .collect();
        let answer = optimal["golden_answer"]
            .as_str()
            .ok_or("no golden_answer")?;
        replies.push(format!("<ANSWER> {answer} </ANSWER>"));
        lines.push(replies);
    }
    // The split's name as the server names it: the setting's short form.
    let count = |key: &str| {
        stem.split('+')
            .find_map(|p| p.strip_prefix(key))
            .unwrap_or("0")
            .to_string()
    };
    let split = match count("valid_truth_num=").as_str() {
        "1" => format!("{}x{}", count("truth_num="), count("action_num=")),
        v => format!("{}x{}v{v}", count("truth_num="), count("action_num=")),
    };
    Ok((split, lines))
}

fn rss_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// The CPU time the process has used, in seconds (user + system).
fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // After the command name in parentheses: fields 14 and 15 (utime,
    // stime) are the 12th and 13th.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // The kernel's USER_HZ is 100 on Linux.
    (ticks(11) + ticks(12)) / 100.0
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[i]) / 1000.0
}

fn main() {
    let args = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("serve_load: {e}");
            std::process::exit(2);
        }
    };
    let (split, lines) = match golden_replies(&args.data) {
        Ok(found) => found,
        Err(e) => {
            eprintln!("serve_load: {e}");
            std::process::exit(2);
        }
    };
    let out = std::env::temp_dir().join(format!("kumo-serve-load-{}", std::process::id()));
    let mut server = Command::new(&args.bin)
        .args(["serve", "--port", "0", "--max-sessions"])
        .arg((args.sessions + 16).to_string())
        .arg("--data")
        .arg(&args.data)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            eprintln!("serve_load: cannot start {}: {e}", args.bin.display());
            std::process::exit(2);
        });
    let mut first = String::new();
    {
        use std::io::BufRead;
        let stdout = server.stdout.take().expect("piped");
        let _ = std::io::BufReader::new(stdout).read_line(&mut first);
    }
    let Some(url) = first.split_whitespace().nth(1) else {
        eprintln!("serve_load: the server did not start: {first}");
        let _ = server.kill();
        std::process::exit(2);
    };
    let ws_url = format!("{}ws", url.replacen("http://", "ws://", 1));
    let pid = server.id();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let lines = Arc::new(lines);
    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let started = Instant::now();
    let warm_rss = Arc::new(AtomicUsize::new(0));
    let cpu_start = Arc::new(AtomicUsize::new(0));
    let latencies: Vec<u32> = runtime.block_on(async {
        // Connect every session first: all are open at once.
        let mut sockets = Vec::with_capacity(args.sessions);
        for _ in 0..args.sessions {
            match tokio_tungstenite::connect_async(&ws_url).await {
                Ok((socket, _)) => sockets.push(socket),
                Err(e) => {
                    eprintln!("serve_load: connection {} failed: {e}", sockets.len() + 1);
                    break;
                }
            }
        }
        println!(
            "{} sessions open (server rss {:.1} MiB)",
            sockets.len(),
            rss_kib(pid, "VmRSS:") as f64 / 1024.0
        );
        cpu_start.store((cpu_seconds(pid) * 1e6) as usize, Ordering::Relaxed);
        let mut tasks = Vec::new();
        for mut socket in sockets {
            let (lines, next, done, failures, split, warm_rss) = (
                lines.clone(),
                next.clone(),
                done.clone(),
                failures.clone(),
                split.clone(),
                warm_rss.clone(),
            );
            let episodes = args.episodes;
            let reward_rule = args.reward.clone();
            let think = Duration::from_millis(args.think_ms);
            // Sessions start spread over one pause, as a trainer's do.
            let offset = think.mul_f64(tasks.len() as f64 / args.sessions as f64);
            tasks.push(tokio::spawn(async move {
                tokio::time::sleep(offset).await;
                let mut times = Vec::new();
                let ask = async |socket: &mut tokio_tungstenite::WebSocketStream<_>,
                                     message: Value|
                       -> Option<Value> {
                    socket.send(Message::text(message.to_string())).await.ok()?;
                    loop {
                        match socket.next().await? {
                            Ok(Message::Text(t)) => return serde_json::from_str(t.as_str()).ok(),
                            Ok(_) => continue,
                            Err(_) => return None,
                        }
                    }
                };
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= episodes || Instant::now() > deadline {
                        break;
                    }
                    let index = k % lines.len();
                    let reset = json!({"type": "reset", "data": {"split": split, "index": index, "model": "load", "reward": reward_rule}});
                    if ask(&mut socket, reset).await.is_none() {
                        failures.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                    let mut reward = None;
                    for reply in &lines[index] {
                        if !think.is_zero() {
                            tokio::time::sleep(think).await;
                        }
                        let t = Instant::now();
                        let answer = ask(&mut socket, json!({"type": "step", "data": {"message": reply}})).await;
                        times.push(t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
                        reward = answer.and_then(|a| a["data"]["reward"].as_f64());
                    }
                    if reward != Some(1.0) {
                        failures.fetch_add(1, Ordering::Relaxed);
                    }
                    if done.fetch_add(1, Ordering::Relaxed) + 1 == 1000 {
                        warm_rss.store(rss_kib(pid, "VmRSS:") as usize, Ordering::Relaxed);
                    }
                }
                let _ = socket.close(None).await;
                times
            }));
        }
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.unwrap_or_default());
        }
        all
    });
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds(pid) - cpu_start.load(Ordering::Relaxed) as f64 / 1e6;
    let end_rss = rss_kib(pid, "VmRSS:");
    let peak_rss = rss_kib(pid, "VmHWM:");
    let mut sorted = latencies;
    sorted.sort_unstable();
    let episodes = done.load(Ordering::Relaxed);
    println!(
        "{episodes} episodes, {} steps in {wall:.1} s: {:.0} episodes/s, {:.0} steps/s; failures {}",
        sorted.len(),
        episodes as f64 / wall,
        sorted.len() as f64 / wall,
        failures.load(Ordering::Relaxed)
    );
    println!(
        "server CPU: {cpu:.2} s for the episodes, {:.1} us per step (resets included)",
        cpu * 1e6 / sorted.len().max(1) as f64
    );
    println!(
        "step latency ms: p50 {:.3}, p90 {:.3}, p99 {:.3}, max {:.3}",
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.9),
        percentile(&sorted, 0.99),
        percentile(&sorted, 1.0)
    );
    println!(
        "server rss MiB: after 1000 episodes {:.1}, at the end {:.1}, peak {:.1}",
        warm_rss.load(Ordering::Relaxed) as f64 / 1024.0,
        end_rss as f64 / 1024.0,
        peak_rss as f64 / 1024.0
    );
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    if let Ok(output) = server.wait_with_output() {
        print!("server: {}", String::from_utf8_lossy(&output.stderr));
    }
    let _ = std::fs::remove_dir_all(&out);
}
