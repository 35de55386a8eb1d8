//! Procedural task families (`kumo-gen family`): the compiled domains'
//! rule-outs re-derived here by independent evaluators that read the
//! hypotheses and probes from their names (not the family code), every
//! shipped family domain generating and labelling, determinism, merged
//! equivalent hypotheses, and bad parameters.

use std::collections::HashMap;

use kumo_gen::domain::{Domain, Registry};

use crate::common::{TestCommand, kumo_gen};

/// rules3: `both a < b and c is even`, `a + b > c`, `b > 4`, `a = c`, ...
fn eval_rule(rule: &str, t: [i64; 3]) -> bool {
    if let Some(both) = rule.strip_prefix("both ") {
        let (l, r) = both.split_once(" and ").unwrap();
        return eval_rule(l, t) && eval_rule(r, t);
    }
    if let Some((l, r)) = rule.split_once(" or ") {
        return eval_rule(l, t) || eval_rule(r, t);
    }
    if let Some((l, r)) = rule.split_once(" and ") {
        return eval_rule(l, t) && eval_rule(r, t);
    }
    let var = |s: &str| -> i64 {
        match s.trim() {
            "a" => t[0],
            "b" => t[1],
            "c" => t[2],
            n => n
                .parse()
                .unwrap_or_else(|_| panic!("term `{n}` in `{rule}`")),
        }
    };
    let sum = |s: &str| -> i64 { s.split('+').map(var).sum() };
    if let Some(x) = rule.strip_suffix(" is even") {
        return sum(x) % 2 == 0;
    }
    let parts: Vec<&str> = rule.split(" < ").collect();
    if parts.len() > 1 {
        return parts.windows(2).all(|w| sum(w[0]) < sum(w[1]));
    }
    if let Some((l, r)) = rule.split_once(" > ") {
        return sum(l) > sum(r);
    }
    if let Some((l, r)) = rule.split_once(" = ") {
        return sum(l) == sum(r);
    }
    panic!("unknown rule `{rule}`")
}

/// circuits: `(x1 AND x2) XOR NOT x3`, evaluated by a small recursive
/// descent parser (binary operators left to right, `NOT` binds tightest).
fn eval_circuit(expr: &str, x: &[bool]) -> bool {
    let spaced = expr.replace('(', " ( ").replace(')', " ) ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    fn operand(tokens: &[&str], i: &mut usize, x: &[bool]) -> bool {
        let token = tokens[*i];
        *i += 1;
        match token {
            "NOT" => !operand(tokens, i, x),
            "(" => {
                let v = expression(tokens, i, x);
                assert_eq!(tokens[*i], ")");
                *i += 1;
                v
            }
            input => x[input.strip_prefix('x').unwrap().parse::<usize>().unwrap() - 1],
        }
    }
    fn expression(tokens: &[&str], i: &mut usize, x: &[bool]) -> bool {
        let mut v = operand(tokens, i, x);
        while *i < tokens.len() && tokens[*i] != ")" {
            let op = tokens[*i];
            *i += 1;
            let r = operand(tokens, i, x);
            v = match op {
                "AND" => v && r,
                "OR" => v || r,
                "XOR" => v != r,
                "NAND" => !(v && r),
                other => panic!("operator {other}"),
            };
        }
        v
    }
    let mut i = 0;
    let v = expression(&tokens, &mut i, x);
    assert_eq!(i, tokens.len(), "{expr}");
    v
}

/// ciphers: `shift 3`, `affine 5x+2`, `Vigenère BD`, `substitution CADBE`
/// over an alphabet of `n` letters.
fn encrypt(key: &str, plain: &str, n: u32) -> String {
    let num = |c: char| c as u32 - 'A' as u32;
    let chr = |v: u32| char::from_u32('A' as u32 + v).unwrap();
    let (kind, arg) = key.split_once(' ').unwrap();
    plain
        .chars()
        .enumerate()
        .map(|(i, c)| {
            let p = num(c);
            chr(match kind {
                "shift" => (p + arg.parse::<u32>().unwrap()) % n,
                "affine" => {
                    let (a, b) = arg.split_once("x+").unwrap();
                    (a.parse::<u32>().unwrap() * p + b.parse::<u32>().unwrap()) % n
                }
                "Vigenère" => {
                    let k: Vec<char> = arg.chars().collect();
                    (p + num(k[i % k.len()])) % n
                }
                "substitution" => num(arg.chars().nth(p as usize).unwrap()),
                other => panic!("key kind {other}"),
            })
        })
        .collect()
}

/// Checks every state of every action of `domain`: it rules out exactly
/// the truths whose independent answer differs from the state's label.
pub(crate) fn check_rule_outs(domain: &Domain, answer: &dyn Fn(&str, &str) -> String) {
    for action in &domain.actions {
        let answers: HashMap<usize, String> = (0..domain.truths.len())
            .map(|t| (t, answer(&domain.truths[t], &action.name)))
            .collect();
        for state in &action.states {
            let label = state.label.to_string();
            for t in 0..domain.truths.len() {
                assert_eq!(
                    state.rules_out.contains(t),
                    answers[&t] != label,
                    "{}: `{}` on `{}` answers {}, state `{label}`",
                    domain.name,
                    domain.truths[t],
                    action.name,
                    answers[&t]
                );
            }
        }
        // Every truth's answer is a state of the probe.
        for a in (0..domain.truths.len()).map(|t| &answers[&t]) {
            assert!(action.state_named(a).is_some(), "{}: {a}", action.name);
        }
    }
}

fn shipped(name: &str) -> Domain {
    Registry::default().load(name).unwrap().0
}

#[test]
fn shipped_family_domains_rule_out_exactly_the_hypotheses_that_answer_otherwise() {
    check_rule_outs(&shipped("rules3"), &|rule, probe| {
        let nums: Vec<i64> = probe
            .trim_matches(|c| c == '(' || c == ')')
            .split(", ")
            .map(|s| s.parse().unwrap())
            .collect();
        let v = eval_rule(rule, [nums[0], nums[1], nums[2]]);
        if v { "True" } else { "False" }.to_string()
    });
    check_rule_outs(&shipped("circuits"), &|circuit, probe| {
        let bits: Vec<bool> = probe
            .strip_prefix("input ")
            .unwrap()
            .chars()
            .map(|c| c == '1')
            .collect();
        if eval_circuit(circuit, &bits) {
            "1"
        } else {
            "0"
        }
        .to_string()
    });
    check_rule_outs(&shipped("ciphers"), &|key, probe| {
        encrypt(key, probe.strip_prefix("encrypt ").unwrap(), 5)
    });
    // Merged: no two truths answer every probe alike.
    for name in ["rules3", "circuits", "ciphers"] {
        let d = shipped(name);
        let mut seen = HashMap::new();
        for t in 0..d.truths.len() {
            let column: Vec<usize> = d
                .actions
                .iter()
                .map(|a| {
                    a.states
                        .iter()
                        .position(|s| !s.rules_out.contains(t))
                        .unwrap()
                })
                .collect();
            if let Some(other) = seen.insert(column, t) {
                panic!(
                    "{name}: `{}` and `{}` are indistinguishable",
                    d.truths[other], d.truths[t]
                );
            }
        }
    }
}

#[test]
fn families_are_deterministic_and_the_shipped_files_are_current() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["rules3", "circuits", "ciphers"] {
        let path = tmp.path().join(format!("{name}.yaml"));
        TestCommand::new()
            .args(["family", name, "-o"])
            .arg(&path)
            .ok();
        let made = std::fs::read_to_string(&path).unwrap();
        let shipped =
            std::fs::read_to_string(crate::common::root().join(format!("domains/{name}.yaml")))
                .unwrap();
        assert!(
            made == shipped,
            "domains/{name}.yaml is not what `kumo-gen family {name}` writes"
        );
        // Another seed, another domain.
        TestCommand::new()
            .args(["family", name, "--seed", "1", "-o"])
            .arg(&path)
            .ok();
        assert_ne!(std::fs::read_to_string(&path).unwrap(), made, "{name}");
    }
}

/// A domain `family` writes is accepted by `validate` without a warning
/// (a rule named `c > 1 and b + c > a` once read as a list of two rules).
#[test]
fn family_output_validates_without_warnings() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["rules3", "circuits", "ciphers"] {
        for seed in ["0", "1"] {
            family_domain(tmp.path(), name, &["--seed", seed]);
        }
    }
}

#[test]
fn family_domains_generate_label_and_curve() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["rules3", "circuits", "ciphers"] {
        TestCommand::new()
            .args([
                "--domain",
                name,
                "--truths",
                "8",
                "--actions",
                "10",
                "-n",
                "40",
                "--out",
            ])
            .arg(tmp.path())
            .ok();
        let output = TestCommand::new()
            .args([
                "family",
                name,
                "--curve",
                "--json",
                "--curve-truths",
                "4,8",
                "--curve-n",
                "10",
            ])
            .run();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let rows: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let rows = rows.as_array().unwrap();
        assert_eq!(rows.len(), 2);
        for row in rows {
            let left = row["golden_remaining"].as_array().unwrap();
            assert_eq!(left[0], row["hypotheses"].as_f64().unwrap());
            assert_eq!(left.last().unwrap().as_f64(), Some(1.0), "{row}");
            assert!(left.windows(2).all(|w| w[0].as_f64() >= w[1].as_f64()));
            assert!(row["mean_expected_probes"].as_f64().unwrap() > 0.0);
        }
    }
}

#[test]
fn bad_family_parameters_exit_1_with_a_fix() {
    for args in [
        &["family", "nope", "-o", "x.yaml"][..],
        &["family", "rules3"],
    ] {
        TestCommand::new()
            .args(args)
            .expect_code(1)
            .stderr_contains("help");
    }
    // Out of their ranges whatever the family: refused as the flags are
    // read (exit 2), naming the range.
    for (args, range) in [
        (
            &["family", "rules3", "--hypotheses", "1", "-o", "x.yaml"][..],
            "2 to 5000",
        ),
        (
            &["family", "circuits", "--inputs", "40", "-o", "x.yaml"],
            "2 to 10",
        ),
        (
            &["family", "ciphers", "--alphabet", "2", "-o", "x.yaml"],
            "3 to 26",
        ),
    ] {
        TestCommand::new()
            .args(args)
            .expect_code(2)
            .stderr_contains(range);
    }
}

fn curve(args: &[&str]) -> std::process::Output {
    kumo_gen()
        .args(["family", "rules3", "--curve"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_curve_point_with_nothing_labelled_says_so_and_no_mean_is_negative_zero() {
    // 300 nodes label 4-hypothesis instances but no 24-hypothesis one.
    let budget = [
        "--curve-truths",
        "4,24",
        "--curve-n",
        "5",
        "--search-nodes",
        "300",
    ];
    let table = curve(&budget);
    let text = String::from_utf8_lossy(&table.stdout);
    assert_eq!(table.status.code(), Some(0), "{text}");
    assert!(!text.contains("-0.0"), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("24\t")).collect();
    assert_eq!(rows.len(), 1, "{text}");
    assert!(rows[0].contains("nothing labelled"), "{text}");
    assert!(
        text.contains("--search-nodes 300"),
        "the header names the budget: {text}"
    );

    let json = curve(&[&budget[..], &["--json"]].concat());
    let rows: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let (small, large) = (&rows[0], &rows[1]);
    assert!(small["labelled"].as_u64().unwrap() >= 1, "{small}");
    assert!(
        small["mean_expected_probes"].as_f64().unwrap() > 0.0,
        "{small}"
    );
    assert_eq!(large["labelled"], 0, "{large}");
    assert!(large["mean_expected_probes"].is_null(), "{large}");
}

#[test]
fn a_curve_with_no_labelled_point_exits_1_naming_the_budget_to_raise() {
    let output = curve(&[
        "--curve-truths",
        "24",
        "--curve-n",
        "3",
        "--search-nodes",
        "1",
    ]);
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(output.stdout.is_empty());
    assert!(
        said.contains("no instance of any curve point was labelled"),
        "{said}"
    );
    assert!(said.contains("raise `--search-nodes`"), "{said}");
}

#[test]
fn curve_actions_out_of_range_is_an_error_naming_the_valid_range() {
    // rules3 keeps its 40 probes.
    let output = curve(&["--curve-actions", "41", "--curve-n", "2"]);
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains("valid range is 1..=40"), "{said}");
    // 0 is refused whatever the domain, as the flags are read.
    let output = curve(&["--curve-actions", "0", "--curve-n", "2"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn curve_hypotheses_beyond_the_bound_are_refused_at_once() {
    let start = std::time::Instant::now();
    let output = curve(&["--curve-truths", "4,64"]);
    let said = String::from_utf8_lossy(&output.stderr);
    // Beyond the bound whatever the domain: refused as the flags are read.
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(said.contains("--curve-truths"), "{said}");
    assert!(said.contains("from 2 to 24"), "{said}");
    assert!(
        output.stdout.is_empty(),
        "refused before any point is computed"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
}

/// The domain `kumo-gen family NAME EXTRA..` writes, after `validate`
/// accepted it without a warning.
pub fn family_domain(dir: &std::path::Path, name: &str, extra: &[&str]) -> Domain {
    let path = dir.join(format!("{name}{}.yaml", extra.join("")));
    TestCommand::new()
        .args(["family", name])
        .args(extra)
        .arg("-o")
        .arg(&path)
        .ok();
    TestCommand::new()
        .arg("validate")
        .arg(&path)
        .ok()
        .stderr_lacks("warning");
    Registry::default().load(path.to_str().unwrap()).unwrap().0
}
