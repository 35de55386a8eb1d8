use kumo_gen::search::{Problem, SearchBudget, Searcher};
use serde_json::Value;
use std::time::Instant;

fn main() {
    let dom: Value =
        serde_json::from_str(&std::fs::read_to_string("/tmp/kumo-scratch/medical.json").unwrap())
            .unwrap();
    let truths: Vec<String> = dom["truths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let actions = dom["actions"].as_array().unwrap();
    let oracle: Vec<Value> =
        std::fs::read_to_string("/work/shared/kumo-reference/oracle-medical.jsonl")
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let args: Vec<String> = std::env::args().collect();
    let setting = args
        .get(1)
        .map(|s| s.as_str())
        .unwrap_or("truth_num=12+action_num=16+valid_truth_num=1");
    let path = format!("/work/shared/kumo-reference/instances/MedicalEnv/{setting}.jsonl");
    let mut searcher = Searcher::new();
    let mut times = vec![];
    let mut bad = 0;
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let inst: Value = serde_json::from_str(line).unwrap();
        let it: Vec<&str> = inst["truths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let ia: Vec<&str> = inst["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let _ = &truths;
        let mut rows = vec![];
        for a in &ia {
            let act = actions.iter().find(|x| x["name"] == *a).unwrap();
            let st: Vec<Vec<usize>> = act["states"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    s["rules_out"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter_map(|t| it.iter().position(|x| *x == t.as_str().unwrap()))
                        .collect()
                })
                .collect();
            rows.push(st);
        }
        let p = Problem::from_rule_outs(it.len(), &rows).unwrap();
        let seed = inst["seed"].as_u64().unwrap();
        let start = Instant::now();
        let (v, memo) = searcher
            .expected_steps(&p, SearchBudget::UNLIMITED)
            .unwrap();
        let dt = start.elapsed();
        times.push(dt.as_secs_f64());
        let want = oracle
            .iter()
            .find(|o| {
                o["seed"].as_u64() == Some(seed)
                    && o["truth_num"].as_u64() == Some(it.len() as u64)
                    && o["action_num"].as_u64() == Some(ia.len() as u64)
            })
            .unwrap()["expected_steps"]
            .as_f64()
            .unwrap();
        let ok = (v - want).abs() <= 1e-9;
        if !ok {
            bad += 1;
        }
        println!(
            "seed {seed:3} E={v:.12} want={want:.12} {} memo={memo:8} t={:.3}ms",
            if ok { "ok" } else { "MISMATCH" },
            dt.as_secs_f64() * 1e3
        );
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = times.len();
    println!(
        "bad={bad} median={:.3}ms p90={:.3}ms max={:.3}ms total={:.3}ms",
        times[n / 2] * 1e3,
        times[n * 9 / 10] * 1e3,
        times[n - 1] * 1e3,
        times.iter().sum::<f64>() * 1e3
    );
}
