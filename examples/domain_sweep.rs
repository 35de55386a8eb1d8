//! The per-domain labelling table of BENCHMARKS.md: for every shipped
//! domain, the first COUNT instances `kumo-gen --domain D --truths 12
//! --actions 16 -n COUNT` writes (seed 0; a domain with fewer truths or
//! actions at its largest setting: all its truths and actions, fewer when
//! that does not synthesize), each labelled once on one thread, timed, and
//! projected to 5 000 instances on two threads.
//!
//!     cargo run --release --example domain_sweep -- COUNT [DOMAIN,..]
//!
//! Prints one Markdown row per domain: setting, instances, labelled, the
//! time they took in all (search only, one thread), the projection to
//! 5 000 on two threads (`5000 / COUNT * total / 2`), the slowest instance,
//! and, with `REFERENCE=NODES`, the ratio of this search's time to that of
//! KUMO's recursion as DESIGN.md states it (`tests/reference.rs`,
//! an independent solver, stopped after NODES nodes per instance; values
//! equal bit for bit or the example panics). A last row sums the
//! projections. Rows are sorted slowest first.

use std::time::Instant;

use kumo_gen::domain::Registry;
use kumo_gen::search::{Problem, SearchBudget, Searcher};
use kumo_gen::synth::{Dedup, Params, Stats, Synthesizer};

#[path = "../tests/reference.rs"]
mod reference;
use reference::Reference;

/// KUMO's recursion on `problem`'s rule-out masks, canonical (actions
/// related to no truth left dropped), stopped after `max_nodes` nodes.
fn reference(problem: &Problem, max_nodes: u64) -> Reference {
    let rules = (0..problem.action_count())
        .map(|a| problem.states(a).to_vec())
        .collect();
    Reference::new(problem.truth_count(), rules)
        .canonical()
        .with_node_cap(max_nodes)
}

struct Row {
    name: String,
    setting: String,
    n: usize,
    labelled: usize,
    total_s: f64,
    slowest_ms: f64,
    ratio: Option<f64>,
}

impl Row {
    fn projected(&self) -> f64 {
        self.total_s / self.n.max(1) as f64 * 5000.0 / 2.0
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: domain_sweep COUNT [DOMAIN,..]";
    let count: u64 = args.first().and_then(|c| c.parse().ok()).expect(usage);
    let registry = Registry::new(None);
    let names: Vec<String> = match args.get(1) {
        Some(list) => list.split(',').map(str::to_string).collect(),
        None => registry
            .all()
            .expect("the shipped domains load")
            .into_iter()
            .map(|(name, _)| name)
            .collect(),
    };
    let reference_nodes: Option<u64> = std::env::var("REFERENCE")
        .ok()
        .map(|n| n.parse().expect("REFERENCE is a number of nodes"));
    let mut searcher = Searcher::new();
    let mut rows = Vec::new();
    for name in &names {
        let domain = registry.load(name).expect("a shipped domain").0;
        let actions = domain.actions.len().min(16);
        let Some(((t, a), instances)) = (2..=domain.truths.len().min(12)).rev().find_map(|t| {
            let synth = Synthesizer::new(&domain, Params::new(t, actions, 1)).ok()?;
            let made = synth
                .generate(0..count, &mut Dedup::new(), &mut Stats::default())
                .ok()?;
            Some(((t, actions), made))
        }) else {
            eprintln!("{name}: no setting synthesizes; skipped");
            continue;
        };
        let mut row = Row {
            name: name.clone(),
            setting: format!("{t}x{a}"),
            n: instances.len(),
            labelled: 0,
            total_s: 0.0,
            slowest_ms: 0.0,
            ratio: None,
        };
        let mut reference_s = 0.0;
        for instance in &instances {
            let problem =
                Problem::new(&domain, &instance.truths, &instance.actions).expect("instance fits");
            let observed: Vec<Option<usize>> = instance
                .observations
                .iter()
                .map(|o| Some(o.state))
                .collect();
            let start = Instant::now();
            let result = searcher.label(&problem, &observed, SearchBudget::default());
            let elapsed = start.elapsed().as_secs_f64();
            row.total_s += elapsed;
            row.slowest_ms = row.slowest_ms.max(elapsed * 1e3);
            row.labelled += usize::from(result.is_ok());
            if let Some(max_nodes) = reference_nodes {
                let start = Instant::now();
                let value = reference(&problem, max_nodes).root_value();
                reference_s += start.elapsed().as_secs_f64();
                if let (Some(v), Ok(label)) = (value, &result) {
                    assert_eq!(
                        v.to_bits(),
                        label.expected_steps.to_bits(),
                        "{name} seed {}: reference {v}, search {}",
                        instance.index,
                        label.expected_steps
                    );
                }
            }
        }
        if reference_nodes.is_some() {
            row.ratio = Some(row.total_s / reference_s.max(1e-9));
        }
        eprintln!(
            "{name} {}: {:.3} s, projected {:.1} s",
            row.setting,
            row.total_s,
            row.projected()
        );
        rows.push(row);
    }
    rows.sort_by(|x, y| y.projected().total_cmp(&x.projected()));
    println!(
        "| domain | setting | n | labelled | total s (1 thread) | projected 5000 s (2 threads) | slowest ms | time / reference |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for row in &rows {
        let ratio = row.ratio.map_or("-".to_string(), |r| format!("{r:.2}"));
        println!(
            "| {} | {} | {} | {} | {:.3} | {:.1} | {:.1} | {ratio} |",
            row.name,
            row.setting,
            row.n,
            row.labelled,
            row.total_s,
            row.projected(),
            row.slowest_ms
        );
    }
    let all: f64 = rows.iter().map(Row::projected).sum();
    println!("| all {} domains | | | | | {all:.1} | | |", rows.len());
}
