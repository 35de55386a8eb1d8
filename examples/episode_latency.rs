//! The episode-latency table of BENCHMARKS.md: line `i` of a setting's
//! dataset by `kumo_gen::pipeline::generate_range_lines` (what
//! `kumo_gen.instance(index=i)` and every Python adapter call), labelled,
//! in one process.
//!
//!     cargo run --release --example episode_latency -- DOMAIN TRUTHS ACTIONS [RANDOM] [INDEX..]
//!
//! For each INDEX (default 0, 1000, 1000000): the first call in the
//! process (which reads or builds the line index: cold when the cache
//! directory holds none, see docs/performance.md) and a second call for
//! the line after it (warm). Then RANDOM (default 2000) lines at random
//! indices below the largest INDEX, one call each: episodes per second
//! and the process's peak RSS. Run it twice with the same
//! `KUMO_GEN_CACHE` for the "index cached" figures, once with a fresh
//! directory for "cold".

use std::time::Instant;

use kumo_gen::domain::Registry;
use kumo_gen::pipeline::generate_range_lines;
use kumo_gen::search::SearchBudget;
use kumo_gen::synth::Params;
use rand::{RngExt, SeedableRng};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: episode_latency DOMAIN TRUTHS ACTIONS [RANDOM] [INDEX..]";
    let domain = Registry::new(None)
        .load(args.first().expect(usage))
        .expect("a domain")
        .0;
    let truths: usize = args.get(1).and_then(|a| a.parse().ok()).expect(usage);
    let actions: usize = args.get(2).and_then(|a| a.parse().ok()).expect(usage);
    let random: u64 = args.get(3).map_or(2000, |a| a.parse().expect(usage));
    let mut indices: Vec<u64> = args[4.min(args.len())..]
        .iter()
        .map(|a| a.parse().expect(usage))
        .collect();
    if indices.is_empty() {
        indices = vec![0, 1000, 1_000_000];
    }
    let params = Params::new(truths, actions, 1);
    let budget = Some(SearchBudget::default());
    let line = |i: u64| {
        let started = Instant::now();
        let lines = generate_range_lines(&domain, params.clone(), i..i + 1, budget, None, None)
            .expect("the setting synthesizes");
        assert_eq!(lines.len(), 1);
        started.elapsed().as_secs_f64()
    };
    println!("| index | first call s | next line s |");
    println!("| ---: | ---: | ---: |");
    for &i in &indices {
        let first = line(i);
        let next = line(i + 1);
        println!("| {i} | {first:.3} | {next:.4} |");
    }
    let top = indices.iter().copied().max().unwrap_or(0).max(1);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let started = Instant::now();
    for _ in 0..random {
        line(rng.random_range(0..top));
    }
    let seconds = started.elapsed().as_secs_f64();
    let rss = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.split_whitespace().nth(1).unwrap_or("?").to_string())
        })
        .unwrap_or_else(|| "?".into());
    println!(
        "\n{random} random lines below {top}: {seconds:.2} s, {:.0} episodes/s; peak RSS {rss} kB",
        random as f64 / seconds
    );
}
