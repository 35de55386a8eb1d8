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
//! time they took in all (search only, one thread, wall; and the CPU time
//! of the thread, which a loaded machine does not inflate), the projection to
//! 5 000 on two threads (`5000 / COUNT * total / 2`), the slowest instance,
//! this search's node expansions, and, with `REFERENCE=NODES`, the nodes
//! the reference expanded and the ratio of this search's time to that of
//! KUMO's recursion as DESIGN.md states it (`tests/reference.rs`,
//! an independent solver, stopped after NODES nodes per instance; values
//! equal bit for bit or the example panics). A last row sums the
//! projections. Rows are sorted slowest first. `PER_INSTANCE=1` also
//! prints each instance's time, node expansions and value to stderr.

use std::time::Instant;

use kumo_gen::domain::Registry;
use kumo_gen::search::{Problem, SearchBudget, Searcher};
use kumo_gen::synth::{Dedup, Params, Stats, Synthesizer};

#[path = "support/oracle.rs"]
mod oracle;
use oracle::reference;

struct Row {
    name: String,
    setting: String,
    n: usize,
    labelled: usize,
    total_s: f64,
    /// CPU time of the searches (this thread's, in clock ticks).
    cpu_s: f64,
    slowest_ms: f64,
    /// Node expansions of this search, all instances.
    nodes: u64,
    /// Nodes the reference recursion expanded, all instances.
    reference_nodes: u64,
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
    let per_instance = std::env::var_os("PER_INSTANCE").is_some();
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
            cpu_s: 0.0,
            slowest_ms: 0.0,
            nodes: 0,
            reference_nodes: 0,
            ratio: None,
        };
        let mut reference_s = 0.0;
        let mut reference_cpu_s = 0.0;
        for instance in &instances {
            let problem =
                Problem::new(&domain, &instance.truths, &instance.actions).expect("instance fits");
            let observed: Vec<Option<usize>> = instance
                .observations
                .iter()
                .map(|o| Some(o.state))
                .collect();
            let cpu = thread_cpu_s();
            let start = Instant::now();
            let result = searcher.label(&problem, &observed, SearchBudget::default());
            let elapsed = start.elapsed().as_secs_f64();
            row.cpu_s += thread_cpu_s() - cpu;
            row.total_s += elapsed;
            row.slowest_ms = row.slowest_ms.max(elapsed * 1e3);
            row.labelled += usize::from(result.is_ok());
            row.nodes += result.as_ref().map_or(0, |label| label.nodes);
            if per_instance {
                eprintln!(
                    "{name} seed {}: {:.3} ms, {} nodes, E {}",
                    instance.index,
                    elapsed * 1e3,
                    result.as_ref().map_or(0, |label| label.nodes),
                    result
                        .as_ref()
                        .map_or(f64::NAN, |label| label.expected_steps)
                );
            }
            if let Some(max_nodes) = reference_nodes {
                let cpu = thread_cpu_s();
                let start = Instant::now();
                let mut reference = reference(&problem, max_nodes);
                let value = reference.root_value();
                reference_s += start.elapsed().as_secs_f64();
                reference_cpu_s += thread_cpu_s() - cpu;
                row.reference_nodes += reference.nodes;
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
            // Wall times of the two, interleaved instance by instance so a
            // changing load hits both alike (CPU ticks of 10 ms are too
            // coarse for domains of a few milliseconds; both are printed).
            row.ratio = Some(row.total_s / reference_s.max(1e-9));
            eprintln!("{name}: reference cpu {reference_cpu_s:.2} s");
        }
        eprintln!(
            "{name} {}: {:.3} s, cpu {:.2} s, projected {:.1} s, {} nodes, reference {} nodes, ratio {:?}",
            row.setting,
            row.total_s,
            row.cpu_s,
            row.projected(),
            row.nodes,
            row.reference_nodes,
            row.ratio
        );
        rows.push(row);
    }
    rows.sort_by(|x, y| y.projected().total_cmp(&x.projected()));
    println!(
        "| domain | setting | n | labelled | total s (1 thread) | projected 5000 s (2 threads) | cpu s | slowest ms | nodes | reference nodes | time / reference |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in &rows {
        let (reference_nodes, ratio) = match row.ratio {
            Some(r) => (row.reference_nodes.to_string(), format!("{r:.2}")),
            None => ("-".to_string(), "-".to_string()),
        };
        println!(
            "| {} | {} | {} | {} | {:.3} | {:.1} | {:.2} | {:.1} | {} | {reference_nodes} | {ratio} |",
            row.name,
            row.setting,
            row.n,
            row.labelled,
            row.total_s,
            row.projected(),
            row.cpu_s,
            row.slowest_ms,
            row.nodes
        );
    }
    let all: f64 = rows.iter().map(Row::projected).sum();
    let cpu: f64 = rows.iter().map(|row| row.cpu_s).sum();
    println!(
        "| all {} domains | | | | | {all:.1} | {cpu:.2} | | | | |",
        rows.len()
    );
}

/// CPU time this thread has used, in seconds (user and system, from
/// `/proc/thread-self/stat`, in clock ticks of 10 ms: sums over many
/// instances are accurate, single instances are not); 0 where unreadable.
fn thread_cpu_s() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/thread-self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces) in parentheses.
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return 0.0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    match (ticks(11), ticks(12)) {
        (Some(user), Some(system)) => (user + system) / 100.0,
        _ => 0.0,
    }
}
