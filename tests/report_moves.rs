//! The report's per-move sections: the table holds the numbers of
//! `score --moves --json` (compared cell by cell), its counts and intervals
//! are recomputed here from `kumo-gen moves`' rows, the golden player's
//! moves cost nothing, and every replayed move carries the regret that
//! `kumo-gen moves` gives it.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::common::{TestCommand, json_lines};
use crate::report::{Cells, report, results, table_rows_of, wilson};

fn score_moves_json(root: &Path) -> (Vec<Value>, String) {
    let ran = TestCommand::new()
        .arg("score")
        .arg(root.join("results"))
        .arg("--instances")
        .arg(root.join("data"))
        .args(["--moves", "--json"])
        .ok();
    (
        serde_json::from_slice(&ran.stdout).unwrap(),
        String::from_utf8(ran.stdout.clone()).unwrap(),
    )
}

fn moves_rows(root: &Path) -> Vec<Value> {
    let out = root.join("moves.jsonl");
    TestCommand::new()
        .arg("moves")
        .arg(root.join("results"))
        .arg("--instances")
        .arg(root.join("data"))
        .arg("-o")
        .arg(&out)
        .ok();
    json_lines(&out)
}

fn cell<'a>(cells: &'a Cells, key: &str) -> &'a (String, String, Option<String>, Option<String>) {
    cells.iter().find(|c| c.0 == key).unwrap()
}

fn group(v: &Value) -> (String, String, String, String) {
    let s = |k: &str| v[k].as_str().unwrap().to_string();
    (s("model"), s("agent"), s("domain"), s("setting"))
}

/// What the table counts, recomputed from `kumo-gen moves` rows of one
/// group: moves, optimal, redundant, answers, unproven, unproven and
/// right, the sum of regrets, and the per-seed regret sums.
#[derive(Default)]
struct Counts {
    moves: usize,
    optimal: usize,
    redundant: usize,
    answers: usize,
    unproven: usize,
    unproven_correct: usize,
    regret: f64,
}

#[test]
fn the_moves_section_holds_score_moves_json_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    results(tmp.path());
    let html = report(tmp.path(), &tmp.path().join("page"));
    let (rows, json_text) = score_moves_json(tmp.path());
    let table = table_rows_of(&html, "moves");
    let analysed: Vec<&Value> = rows
        .iter()
        .filter(|r| r["mean_regret"].is_number())
        .collect();
    assert_eq!(
        table.len(),
        analysed.len(),
        "one row per analysed score row"
    );
    let mut counts: BTreeMap<(String, String, String, String), Counts> = BTreeMap::new();
    for m in moves_rows(tmp.path()) {
        let c = counts.entry(group(&m)).or_default();
        c.moves += 1;
        c.optimal += usize::from(m["optimal"] == true);
        c.redundant += usize::from(m["redundant"] == true);
        c.answers += usize::from(!m["answer"].is_null());
        c.unproven += usize::from(m["proven"] == false);
        c.unproven_correct += usize::from(m["proven"] == false && m["correct"] == true);
        c.regret += m["regret"].as_f64().unwrap();
    }
    let mut compared = 0;
    for (cells, row) in table.iter().zip(&analysed) {
        let key = |k: &str| cell(cells, k).1.clone();
        assert_eq!(
            (key("model"), key("agent"), key("domain"), key("setting")),
            group(row),
            "rows in score's order"
        );
        // score --moves --json's numbers, exactly as it prints them.
        for k in ["mean_regret", "optimal_move_rate", "mean_efficiency"] {
            let value = key(k);
            assert!(
                json_text.contains(&format!("\"{k}\": {value},"))
                    || json_text.contains(&format!("\"{k}\": {value}\n")),
                "{k} {value} not in score --moves --json"
            );
            assert!((value.parse::<f64>().unwrap() - row[k].as_f64().unwrap()).abs() < 1e-12);
            compared += 1;
        }
        assert_eq!(key("analysed_trials"), row["analysed_trials"].to_string());
        let trials = row["analysed_trials"].as_f64().unwrap();
        let moves: usize = key("moves").parse().unwrap();
        // Wilson with n = moves around score's rate.
        let rate = row["optimal_move_rate"].as_f64().unwrap();
        let (_, _, low, high) = cell(cells, "optimal_move_rate");
        let (l, h) = wilson(rate, moves as f64);
        assert!((low.as_ref().unwrap().parse::<f64>().unwrap() - l).abs() < 1e-12);
        assert!((high.as_ref().unwrap().parse::<f64>().unwrap() - h).abs() < 1e-12);
        // The regret's bootstrap interval holds its mean and never goes
        // below 0.
        let regret = row["mean_regret"].as_f64().unwrap();
        let (_, _, low, high) = cell(cells, "mean_regret");
        let (l, h): (f64, f64) = (
            low.as_ref().unwrap().parse().unwrap(),
            high.as_ref().unwrap().parse().unwrap(),
        );
        assert!(
            0.0 <= l && l <= regret + 1e-12 && regret <= h + 1e-12,
            "{row}"
        );
        if row["domain"] == "all" {
            continue;
        }
        // A group's counts are those of its `moves` rows; its mean regret
        // is their sum over its trials (every line has the same trials).
        let c = &counts[&group(row)];
        let expect = [
            ("moves", c.moves),
            ("optimal_moves", c.optimal),
            ("redundant_moves", c.redundant),
            ("answers", c.answers),
            ("unproven_answers", c.unproven),
            ("unproven_correct", c.unproven_correct),
        ];
        for (k, v) in expect {
            assert_eq!(key(k), v.to_string(), "{k} of {row}");
        }
        assert!((c.regret / trials - regret).abs() < 1e-9, "{row}");
    }
    assert!(compared >= 3 * 8, "{compared}");
    // The golden player never wastes an action nor guesses; random does.
    let row_of = |model: &str| {
        table
            .iter()
            .find(|c| cell(c, "model").1 == model && cell(c, "domain").1 != "all")
            .unwrap()
    };
    let golden = row_of("golden");
    assert_eq!(cell(golden, "mean_regret").1, "0.0");
    assert_eq!(
        (
            cell(golden, "mean_regret").2.as_deref(),
            cell(golden, "mean_regret").3.as_deref()
        ),
        (Some("0.0"), Some("0.0"))
    );
    assert_eq!(cell(golden, "optimal_move_rate").1, "1.0");
    assert_eq!(cell(golden, "unproven_answers").1, "0");
    let random = row_of("random");
    assert!(cell(random, "mean_regret").1.parse::<f64>().unwrap() > 0.0);
    let guess = row_of("guess");
    assert!(cell(guess, "unproven_answers").1.parse::<usize>().unwrap() > 0);
    // A chart of regret by move position per domain and setting, with the
    // optimal player's line.
    assert!(html.contains("medical 4x4: regret by move position"));
    assert!(html.contains("medical 5x5: regret by move position"));
    assert!(html.contains("optimal player (regret 0 on every move)"));
}

/// A move of `kumo-gen moves`: its group, seed, trial and step.
type MoveKey = (String, String, String, String, u64, u64, u64);

#[test]
fn every_replayed_move_carries_its_regret_and_the_optimal_moves() {
    let tmp = tempfile::tempdir().unwrap();
    results(tmp.path());
    let html = report(tmp.path(), &tmp.path().join("page"));
    let start = html
        .find(r#"<script type="application/json" id="replay-data">"#)
        .unwrap();
    let json = &html[html[start..].find('>').unwrap() + start + 1..];
    let json = &json[..json.find("</script>").unwrap()];
    let data: Value = serde_json::from_str(json).unwrap();
    let mut by_move: BTreeMap<MoveKey, Value> = BTreeMap::new();
    for m in moves_rows(tmp.path()) {
        let (model, agent, domain, setting) = group(&m);
        let at = |k: &str| m[k].as_u64().unwrap();
        by_move.insert(
            (
                model,
                agent,
                domain,
                setting,
                at("seed"),
                at("trial"),
                at("step"),
            ),
            m,
        );
    }
    let mut checked = 0;
    for r in data["replays"].as_array().unwrap() {
        let (model, agent, domain, setting) = group(r);
        for (t, trial) in r["trials"].as_array().unwrap().iter().enumerate() {
            let analysed: Vec<&Value> = trial["steps"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["kind"] == "query" || s["kind"] == "answer")
                .collect();
            let mut total = 0.0;
            for (step, s) in analysed.iter().enumerate() {
                let a = &s["analysis"];
                let key = (
                    model.clone(),
                    agent.clone(),
                    domain.clone(),
                    setting.clone(),
                    r["seed"].as_u64().unwrap(),
                    t as u64,
                    step as u64,
                );
                let m = &by_move[&key];
                for k in ["value", "q", "regret"] {
                    assert_eq!(a[k], m[k], "{k} of {key:?}");
                }
                assert_eq!(a["optimal"], m["optimal"]);
                assert_eq!(a["proven"], m["proven"]);
                total += a["regret"].as_f64().unwrap();
                // The optimal moves of the state: an action move is optimal
                // exactly when it is one of them.
                let best: Vec<&str> = a["best"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b.as_str().unwrap())
                    .collect();
                assert!(!best.is_empty(), "{key:?}");
                if s["kind"] == "query" && a["repeated"] == false {
                    assert_eq!(
                        a["optimal"] == true,
                        best.contains(&s["said"].as_str().unwrap()),
                        "{key:?}"
                    );
                }
                if model == "golden" {
                    assert_eq!(a["regret"], 0.0);
                    assert_eq!(a["optimal"], true);
                }
                checked += 1;
            }
            assert!((trial["regret"].as_f64().unwrap() - total).abs() < 1e-9);
        }
    }
    assert!(checked > 200, "{checked}");
}
