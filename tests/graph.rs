//! Domain graphs, Louvain communities and splits: modularity against an
//! independent formula, known structure, determinism, split invariants on
//! every shipped domain, and the `graph` / `split` commands.

use kumo_gen::domain::structure_signature;
use kumo_gen::domain::{ActionDoc, Domain, DomainDoc, Registry, ShippedDomain, StatesDoc, compile};
use kumo_gen::graph::split::{SplitError, SplitMethod, SplitOptions, split};
use kumo_gen::graph::{DomainGraph, Louvain};
use proptest::prelude::*;

use crate::common::{TestCommand, root};

fn load(text: &str) -> Domain {
    Domain::from_yaml("test.yaml", text).unwrap().0
}

fn tiny() -> Domain {
    let text = std::fs::read_to_string(root().join("tests/fixtures/ok/tiny.yaml")).unwrap();
    load(&text)
}

/// Every shipped domain plus the fixtures, compiled.
fn all_domains() -> Vec<Domain> {
    let mut out = vec![tiny(), load(&two_cliques(5))];
    for shipped in ShippedDomain::all() {
        out.push(Registry::default().load(shipped.name).unwrap().0);
    }
    out
}

/// A domain whose graph is two `k`-cliques joined by one edge: inside each
/// clique one action relates every truth; a bridge action relates the last
/// truth of the first clique and the first of the second.
fn two_cliques(k: usize) -> String {
    let left: Vec<String> = (0..k).map(|i| format!("L{i}")).collect();
    let right: Vec<String> = (0..k).map(|i| format!("R{i}")).collect();
    let mut s = format!(
        "name: cliques\ntruths: [{}, {}]\nactions:\n",
        left.join(", "),
        right.join(", ")
    );
    for (name, side) in [("left", &left), ("right", &right)] {
        for i in 0..k {
            // One state rules out truth i, the other the rest of the clique.
            let rest: Vec<&str> = side
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, t)| t.as_str())
                .collect();
            s.push_str(&format!(
                "  - name: {name}{i}\n    type: str\n    states:\n      a: [{}]\n      b: [{}]\n",
                side[i],
                rest.join(", ")
            ));
        }
    }
    s.push_str(&format!(
        "  - name: bridge\n    type: str\n    states:\n      a: [L{}]\n      b: [R0]\n",
        k - 1
    ));
    s
}

/// Newman's weighted modularity straight from its definition, on a dense
/// adjacency built here from the actions' related sets.
fn plain_modularity(domain: &Domain, membership: &[usize]) -> f64 {
    let n = domain.truths.len();
    let mut a = vec![vec![0.0f64; n]; n];
    for action in &domain.actions {
        for (i, row) in a.iter_mut().enumerate() {
            for (j, cell) in row.iter_mut().enumerate() {
                if i != j && action.related.contains(i) && action.related.contains(j) {
                    *cell += 1.0;
                }
            }
        }
    }
    let k: Vec<f64> = a.iter().map(|row| row.iter().sum()).collect();
    let two_m: f64 = k.iter().sum();
    if two_m == 0.0 {
        return 0.0;
    }
    let mut q = 0.0;
    for i in 0..n {
        for j in 0..n {
            if membership[i] == membership[j] {
                q += a[i][j] - k[i] * k[j] / two_m;
            }
        }
    }
    q / two_m
}

#[test]
fn modularity_equals_the_plain_formula() {
    for domain in all_domains() {
        let graph = DomainGraph::build(&domain);
        let p = graph.communities(3, 4);
        let plain = plain_modularity(&domain, &p.membership);
        assert!(
            (p.modularity - plain).abs() < 1e-9,
            "{}: {} vs {plain}",
            domain.name,
            p.modularity
        );
        // Communities partition the truths.
        let mut all: Vec<usize> = p.communities.concat();
        all.sort_unstable();
        assert_eq!(all, (0..domain.truths.len()).collect::<Vec<_>>());
        assert!(p.modularity > -0.5 && p.modularity < 1.0);
    }
}

#[test]
fn louvain_finds_two_joined_cliques() {
    let domain = load(&two_cliques(5));
    let graph = DomainGraph::build(&domain);
    assert_eq!(graph.components().len(), 1);
    for seed in 0..5 {
        let p = graph.communities(seed, 1);
        assert_eq!(
            p.communities,
            vec![(0..5).collect::<Vec<_>>(), (5..10).collect()]
        );
        // Q of two 5-cliques (weight 4 per edge: every action of a side
        // relates the whole clique... of that side) joined by a weight-1 edge.
        assert!((p.modularity - plain_modularity(&domain, &p.membership)).abs() < 1e-12);
        assert!(p.modularity > 0.45);
    }
}

#[test]
fn louvain_is_deterministic_per_seed() {
    for domain in all_domains() {
        let graph = DomainGraph::build(&domain);
        assert_eq!(graph.communities(11, 8), graph.communities(11, 8));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// On random weighted graphs Louvain's Q is the formula's Q of its own
    /// partition, never below the all-singletons partition, and a run is a
    /// function of its seed.
    #[test]
    fn louvain_on_random_graphs(
        n in 1usize..24,
        edges in proptest::collection::vec((0usize..24, 0usize..24, 1u32..5), 0..80),
        seed in any::<u64>(),
    ) {
        let mut w = vec![vec![0.0f64; n]; n];
        for &(a, b, x) in &edges {
            let (a, b) = (a % n, b % n);
            if a != b {
                w[a][b] += f64::from(x);
                w[b][a] += f64::from(x);
            }
        }
        let adj: Vec<Vec<(usize, f64)>> = w
            .iter()
            .map(|row| row.iter().enumerate().filter(|&(_, &x)| x > 0.0).map(|(j, &x)| (j, x)).collect())
            .collect();
        let louvain = Louvain::new(adj.clone());
        let p = louvain.run(seed, 0);
        prop_assert_eq!(&p, &louvain.run(seed, 0));
        let k: Vec<f64> = w.iter().map(|r| r.iter().sum()).collect();
        let two_m: f64 = k.iter().sum();
        let q_of = |m: &[usize]| -> f64 {
            if two_m == 0.0 { return 0.0; }
            let mut q = 0.0;
            for i in 0..n { for j in 0..n { if m[i] == m[j] { q += w[i][j] - k[i] * k[j] / two_m; } } }
            q / two_m
        };
        prop_assert!((p.modularity - q_of(&p.membership)).abs() < 1e-9);
        let singletons: Vec<usize> = (0..n).collect();
        prop_assert!(p.modularity >= q_of(&singletons) - 1e-12);
    }
}

#[test]
fn structure_signature_of_an_instance() {
    let d = tiny();
    // Fuse, Switch with Continuity check and Voltage.
    let s = structure_signature(&d, &[0, 2], &[0, 1]);
    assert_eq!(s.truth_degrees, vec![2, 1]);
    assert_eq!(s.action_degrees, vec![2, 1]);
}

/// The split invariants: disjoint truths covering the domain, the action
/// rule, rule-outs only of the own side, both halves compile and load.
/// Returns the method the split used.
fn check_split(domain: &Domain, method: SplitMethod) -> SplitMethod {
    let options = SplitOptions {
        method,
        ..SplitOptions::default()
    };
    let s = match split(domain, &options) {
        Ok(s) => s,
        Err(e) => panic!("{}: {e}", domain.name),
    };
    let t1: Vec<&String> = s.ind.truths.iter().collect();
    let t2: Vec<&String> = s.ood.truths.iter().collect();
    assert!(
        t1.iter().all(|t| !t2.contains(t)),
        "{}: overlap",
        domain.name
    );
    assert_eq!(t1.len() + t2.len(), domain.truths.len());
    let in_t1 = |t: usize| s.ind.truths.contains(&domain.truths[t]);
    for (half, is_ind) in [(&s.ind, true), (&s.ood, false)] {
        for action in &half.actions {
            let a = &domain.actions[domain.action_index(&action.name).unwrap()];
            let all_in_t1 = a.related.iter().all(in_t1);
            assert_eq!(
                all_in_t1, is_ind,
                "{}: action rule for `{}`",
                domain.name, a.name
            );
        }
        let (compiled, _) = compile(&format!("{}.yaml", half.name), half)
            .unwrap_or_else(|e| panic!("{}: {e}", half.name));
        for action in &compiled.actions {
            assert!(action.related.len() <= compiled.truths.len());
        }
        // The file written and read back loads through the registry.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(format!("{}.yaml", half.name)),
            half.to_yaml(),
        )
        .unwrap();
        let (loaded, _) = Registry::new(Some(dir.path().to_path_buf()))
            .load(&half.name)
            .unwrap_or_else(|e| panic!("{}: {e}", half.name));
        assert_eq!(loaded.truths, half.truths);
        assert_eq!(loaded.actions.len(), half.actions.len());
    }
    // Every action is kept on its side or reported dropped.
    let kept = s.ind.actions.len() + s.ood.actions.len();
    let dropped = s.report.ind.dropped_actions.len() + s.report.ood.dropped_actions.len();
    assert_eq!(kept + dropped, domain.actions.len(), "{}", domain.name);
    s.report.method
}

#[test]
fn splits_of_every_domain_hold_the_invariants() {
    let mut checked = 0;
    for domain in all_domains() {
        // A domain whose every action relates every pair of truths (the
        // `ciphers` family: each key answers almost every probe its own
        // way) has a complete truth graph: no split exists, and `split`
        // says so.
        let related = |a: &kumo_gen::domain::Action| a.related.len();
        if domain
            .actions
            .iter()
            .all(|a| related(a) == domain.truths.len())
        {
            let err = split(&domain, &SplitOptions::default())
                .unwrap_err()
                .to_string();
            assert!(err.contains("too tightly"), "{}: {err}", domain.name);
            checked += 1;
            continue;
        }
        // When components fall back to Louvain, `--method louvain` gives
        // the same split: check it only when it differs.
        if check_split(&domain, SplitMethod::Components) == SplitMethod::Components {
            check_split(&domain, SplitMethod::Louvain);
        }
        checked += 1;
    }
    assert!(checked >= 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random small domains: a split either holds the invariants (and both
    /// halves compile) or is reported infeasible; it never panics and never
    /// produces an invalid half.
    #[test]
    fn splits_of_random_domains(
        n in 3usize..12,
        actions in proptest::collection::vec(proptest::collection::vec(any::<u16>(), 2..4), 1..9),
        louvain in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let truths: Vec<String> = (0..n).map(|t| format!("T{t}")).collect();
        let doc = DomainDoc {
            name: "rand".into(),
            title: None,
            truth_noun: None,
            truth_plural: None,
            action_noun: None,
            action_plural: None,
            goal: None,
            case_sensitive_names: false,
            truths: truths.clone(),
            actions: actions
                .iter()
                .enumerate()
                .map(|(a, states)| ActionDoc {
                    name: format!("A{a}"),
                    kind: "str".into(),
                    unit: None,
                    states: StatesDoc::Named(
                        states
                            .iter()
                            .enumerate()
                            .map(|(i, &bits)| {
                                let names = (0..n).filter(|&t| bits & (1 << t) != 0).map(|t| truths[t].clone()).collect();
                                (format!("s{i}"), names)
                            })
                            .collect(),
                    ),
                })
                .collect(),
        };
        let compiled = compile("rand.yaml", &doc);
        prop_assume!(compiled.is_ok());
        let domain = compiled.unwrap().0;
        let method = if louvain { SplitMethod::Louvain } else { SplitMethod::Components };
        match split(&domain, &SplitOptions { method, seed, runs: 2 }) {
            Ok(s) => {
                prop_assert_eq!(s.ind.truths.len() + s.ood.truths.len(), n);
                prop_assert!(s.ind.truths.iter().all(|t| !s.ood.truths.contains(t)));
                for (half, is_ind) in [(&s.ind, true), (&s.ood, false)] {
                    prop_assert!(compile("half.yaml", half).is_ok());
                    for action in &half.actions {
                        let a = &domain.actions[domain.action_index(&action.name).unwrap()];
                        let all_in_t1 = a.related.iter().all(|t| s.ind.truths.contains(&domain.truths[t]));
                        prop_assert_eq!(all_in_t1, is_ind);
                    }
                }
            }
            Err(SplitError::Infeasible { .. }) => {}
            Err(e) => prop_assert!(false, "{}", e),
        }
    }
}

#[test]
fn cli_graph_formats() {
    let out = TestCommand::new()
        .args([
            "graph",
            "--domain",
            "tests/fixtures/ok/tiny.yaml",
            "--format",
            "json",
        ])
        .ok()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["nodes"].as_array().unwrap().len(), 4);
    for key in ["edges", "components", "communities", "modularity"] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    // Continuity check relates Fuse, Relay and Lamp; Voltage Fuse and
    // Switch; Clicks only Relay (no edge).
    assert_eq!(
        v["edges"],
        serde_json::json!([
            ["Fuse", "Relay", 1],
            ["Fuse", "Switch", 1],
            ["Fuse", "Lamp", 1],
            ["Relay", "Lamp", 1]
        ])
    );
    TestCommand::new()
        .args(["graph", "--domain", "tests/fixtures/ok/tiny.yaml"])
        .ok()
        .stdout_contains("nodes        4")
        .stdout_contains("modularity");
    TestCommand::new()
        .args([
            "graph",
            "--domain",
            "tests/fixtures/ok/tiny.yaml",
            "--format",
            "dot",
        ])
        .ok()
        .stdout_starts_with("graph \"tiny\" {")
        .stdout_contains("\"Fuse\" -- \"Relay\"");
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("tiny.svg");
    TestCommand::new()
        .args([
            "graph",
            "--domain",
            "tests/fixtures/ok/tiny.yaml",
            "--format",
            "svg",
            "-o",
        ])
        .arg(&svg)
        .ok()
        .stdout_is("");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    for truth in ["Fuse", "Relay", "Switch", "Lamp"] {
        assert!(text.contains(&format!(">{truth}</text>")), "{truth} label");
    }
    assert!(text.trim_end().ends_with("</svg>"));
    // No temp files left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    TestCommand::new()
        .args(["graph", "--domain", "no-such-domain"])
        .expect_code(1);
}

#[test]
fn cli_graph_output_is_byte_identical_across_runs() {
    let run = || {
        TestCommand::new()
            .args([
                "graph",
                "--domain",
                "tests/fixtures/ok/tiny.yaml",
                "--format",
                "svg",
                "--seed",
                "5",
            ])
            .ok()
            .stdout
            .clone()
    };
    assert_eq!(run(), run());
}

#[test]
fn cli_split_writes_two_valid_domains() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cliques.yaml");
    std::fs::write(&path, two_cliques(4)).unwrap();
    let out_dir = dir.path().join("out");
    TestCommand::new()
        .args(["split", "--domain"])
        .arg(&path)
        .arg("--out-dir")
        .arg(&out_dir)
        .ok()
        .stdout_contains("method     louvain")
        .stdout_contains("fallback   components requested")
        .stdout_contains("cut        1 edges (weight 1), 1 actions span both sides");
    for half in ["cliques-ind", "cliques-ood"] {
        TestCommand::new()
            .arg("validate")
            .arg(out_dir.join(format!("{half}.yaml")))
            .ok();
    }
    let json = TestCommand::new()
        .args(["split", "--json", "--method", "louvain", "--domain"])
        .arg(&path)
        .arg("--out-dir")
        .arg(&out_dir)
        .ok()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["method"], "louvain");
    assert_eq!(
        v["ind"]["truths"],
        serde_json::json!(["L0", "L1", "L2", "L3"])
    );
    assert_eq!(
        v["ood"]["truths"],
        serde_json::json!(["R0", "R1", "R2", "R3"])
    );
    assert_eq!(v["truth_balance"], 1.0);
    assert_eq!(v["files"].as_array().unwrap().len(), 2);
    // An unsplittable domain is bad input: one action ties all truths.
    let tied = dir.path().join("tied.yaml");
    std::fs::write(
        &tied,
        "name: tied\ntruths: [A, B, C]\nactions:\n  - name: x\n    type: str\n    states:\n      p: [A]\n      q: [B, C]\n",
    )
    .unwrap();
    TestCommand::new()
        .args(["split", "--domain"])
        .arg(&tied)
        .arg("--out-dir")
        .arg(dir.path().join("none"))
        .expect_code(1)
        .stderr_contains("cannot split domain `tied`");
    assert!(!dir.path().join("none").exists());
}

/// The halves of a shipped domain generate instances with the main command
/// at KUMO's easy setting.
#[test]
fn split_halves_generate() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("split");
    TestCommand::new()
        .args(["split", "--domain", "medical", "--out-dir"])
        .arg(&out_dir)
        .ok()
        .stdout_contains("method     components");
    for half in ["medical-ind", "medical-ood"] {
        TestCommand::new()
            .args(["generate", "--domain"])
            .arg(out_dir.join(format!("{half}.yaml")))
            .args([
                "--truths",
                "4",
                "--actions",
                "6",
                "-n",
                "3",
                "--threads",
                "1",
            ])
            .arg("--out")
            .arg(dir.path().join("generated"))
            .ok();
        let lines = std::fs::read_to_string(
            dir.path()
                .join("generated")
                .join(half)
                .join("truth_num=4+action_num=6+valid_truth_num=1.jsonl"),
        )
        .unwrap();
        assert_eq!(lines.lines().count(), 3, "{half}");
    }
}
