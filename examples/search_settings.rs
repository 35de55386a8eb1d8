//! Per-instance figures of the optimal search at large settings on the
//! instances `kumo-gen` itself writes, for BENCHMARKS.md: for each domain
//! and setting, the first COUNT instances of `kumo-gen --domain D --truths
//! T --actions A -n COUNT` (seed 0), each labelled once on one thread under
//! the default budget (memo entries and search nodes, so which instances
//! get a label is the same on every machine).
//!
//!     cargo run --release --example search_settings -- COUNT DOMAIN[,DOMAIN..] TxA[,TxA..]
//!
//! Prints one Markdown row per domain and setting: instances, how many got
//! a label, median / p90 / max milliseconds over all of them (an
//! unlabelled instance counts with the time it took to exhaust the
//! budget), and median / max search nodes. With `PER_INSTANCE` set, one
//! line per instance goes to stderr; `SEARCH_NODES=N` and `SEARCH_MEMO=N`
//! replace the default node and memo budgets, and `SEEDS=3,19` labels only
//! those instances (for studying the hard tail).
//!
//! With `REFERENCE=NODES`, each instance is also solved by KUMO's recursion
//! as DESIGN.md states it ([`Reference`]: a plain memo on `(T, A)` and the
//! early stop of a sum at the best so far), stopped after NODES nodes: an
//! independent solver timed side by side. A second row per setting gives
//! how many it finished, its median / p90 / max milliseconds (an
//! unfinished one counts with the time it took to reach the cap) and how
//! many of the values both finished are equal bit for bit (a difference
//! panics).

use std::time::Instant;

use kumo_gen::domain::Registry;
use kumo_gen::search::{Problem, SearchBudget, SearchError, Searcher};
use kumo_gen::synth::{Dedup, Params, Stats, Synthesizer};

#[path = "support/oracle.rs"]
mod oracle;
use oracle::reference;

/// The median / p90 / max columns of a row, from milliseconds.
fn times(ms: &mut [f64]) -> String {
    ms.sort_by(f64::total_cmp);
    let (median, p90, max) = (quantile(ms, 0.5), quantile(ms, 0.9), quantile(ms, 1.0));
    format!("{median:.1} | {p90:.1} | {max:.1}")
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    sorted[((n as f64 * q).ceil() as usize).clamp(1, n) - 1]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: search_settings COUNT DOMAIN[,DOMAIN..] TxA[,TxA..]";
    let count: u64 = args.first().and_then(|c| c.parse().ok()).expect(usage);
    let domains: Vec<&str> = args.get(1).expect(usage).split(',').collect();
    let settings: Vec<(usize, usize)> = args
        .get(2)
        .expect(usage)
        .split(',')
        .map(|s| {
            let (t, a) = s.split_once('x').expect("settings look like 28x36");
            (t.parse().expect(usage), a.parse().expect(usage))
        })
        .collect();
    let per_instance = std::env::var_os("PER_INSTANCE").is_some();
    let budget = SearchBudget {
        max_nodes: std::env::var("SEARCH_NODES")
            .ok()
            .map(|n| n.parse().expect("SEARCH_NODES is a number"))
            .unwrap_or(SearchBudget::DEFAULT_MAX_NODES),
        max_memo_entries: std::env::var("SEARCH_MEMO")
            .ok()
            .map(|n| n.parse().expect("SEARCH_MEMO is a number"))
            .unwrap_or(SearchBudget::DEFAULT_MAX_MEMO_ENTRIES),
        ..SearchBudget::default()
    };
    let only: Option<Vec<u64>> = std::env::var("SEEDS").ok().map(|s| {
        s.split(',')
            .map(|n| n.parse().expect("SEEDS is a list of numbers"))
            .collect()
    });
    let reference_nodes: Option<u64> = std::env::var("REFERENCE")
        .ok()
        .map(|n| n.parse().expect("REFERENCE is a number of nodes"));
    let registry = Registry::new(None);
    let mut searcher = Searcher::new();
    println!(
        "| domain | setting | n | exact | certified | gap mean % | gap max % | median ms | p90 ms | max ms | nodes median | nodes max |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for name in &domains {
        let domain = registry.load(name).expect("a shipped domain").0;
        for &(t, a) in &settings {
            let synth = Synthesizer::new(&domain, Params::new(t, a, 1)).expect("valid setting");
            let instances = synth
                .generate(0..count, &mut Dedup::new(), &mut Stats::default())
                .expect("the setting can be synthesized");
            let mut ms = Vec::new();
            let mut nodes = Vec::new();
            let mut labelled = 0;
            let (mut ref_ms, mut ref_finished, mut ref_equal) = (Vec::new(), 0, 0);
            let mut ref_contained = 0;
            let (mut certified_count, mut gaps) = (0, Vec::new());
            for instance in &instances {
                if only.as_ref().is_some_and(|o| !o.contains(&instance.index)) {
                    continue;
                }
                let problem = Problem::new(&domain, &instance.truths, &instance.actions)
                    .expect("instance fits");
                let observed: Vec<Option<usize>> = instance
                    .observations
                    .iter()
                    .map(|o| Some(o.state))
                    .collect();
                let start = Instant::now();
                let result = searcher.label(&problem, &observed, budget);
                let elapsed = start.elapsed().as_secs_f64() * 1e3;
                let ours = result
                    .as_ref()
                    .ok()
                    .filter(|label| label.is_exact())
                    .map(|label| label.expected_steps);
                let certified = result
                    .as_ref()
                    .ok()
                    .filter(|label| !label.is_exact())
                    .map(|label| label.interval());
                if let Some(max_nodes) = reference_nodes {
                    let start = Instant::now();
                    let mut reference = reference(&problem, max_nodes);
                    let value = reference.root_value();
                    let elapsed = start.elapsed().as_secs_f64() * 1e3;
                    ref_ms.push(elapsed);
                    if let Some(v) = value {
                        ref_finished += 1;
                        if let Some(e) = ours {
                            assert_eq!(
                                v.to_bits(),
                                e.to_bits(),
                                "{name} {t}x{a} seed {}: reference {v}, search {e}",
                                instance.index
                            );
                            ref_equal += 1;
                        }
                        if let Some((lo, hi)) = certified {
                            assert!(
                                lo <= v && v <= hi,
                                "{name} {t}x{a} seed {}: reference {v} outside [{lo}, {hi}]",
                                instance.index
                            );
                            ref_contained += 1;
                        }
                    }
                    if per_instance {
                        eprintln!(
                            "{name} {t}x{a} seed {} reference {elapsed:.3} ms {} nodes {}",
                            instance.index,
                            reference.nodes.min(max_nodes),
                            value.map_or("over the cap".to_string(), |v| format!("E={v}"))
                        );
                    }
                }
                let (work, what) = match result {
                    Ok(label) if label.is_exact() => {
                        labelled += 1;
                        (
                            label.nodes,
                            format!("E={} memo {}", label.expected_steps, label.memo_entries),
                        )
                    }
                    Ok(label) => {
                        certified_count += 1;
                        gaps.push(label.relative_gap());
                        let (lo, hi) = label.interval();
                        (
                            label.nodes,
                            format!(
                                "certified [{lo}, {hi}] gap {:.2} % memo {}",
                                label.relative_gap() * 100.0,
                                label.memo_entries
                            ),
                        )
                    }
                    Err(SearchError::BudgetExceeded { nodes, .. }) => {
                        (nodes, "budget exceeded".to_string())
                    }
                    Err(other) => panic!("{other}"),
                };
                if per_instance {
                    eprintln!(
                        "{name} {t}x{a} seed {} {elapsed:.3} ms {work} nodes {what}",
                        instance.index
                    );
                }
                ms.push(elapsed);
                nodes.push(work as f64);
            }
            nodes.sort_by(f64::total_cmp);
            let gap_mean = gaps.iter().sum::<f64>() / gaps.len().max(1) as f64;
            let gap_max = gaps.iter().copied().fold(0.0, f64::max);
            println!(
                "| {name} | {t}x{a} | {} | {labelled} | {certified_count} | {:.2} | {:.2} | {} | {} | {} |",
                ms.len(),
                gap_mean * 100.0,
                gap_max * 100.0,
                times(&mut ms),
                quantile(&nodes, 0.5),
                quantile(&nodes, 1.0),
            );
            if reference_nodes.is_some() {
                println!(
                    "| {name} (reference) | {t}x{a} | {} | {ref_finished} | {ref_contained} contain it | | | {} | {ref_equal} equal | |",
                    ref_ms.len(),
                    times(&mut ref_ms),
                );
            }
        }
    }
}
