//! Writes sampled medical instances as KUMO-format JSONL lines (no
//! labels), to time `kumo-gen label` end to end until the generator
//! lands:
//!
//!     cargo run --release --example sample_instances -- 5000 12 16 > hard.jsonl
//!     kumo-gen label --domain medical --threads 2 --instances hard.jsonl -o labelled.jsonl

#[path = "../benches/support/sample.rs"]
mod sample;

use std::io::Write;

use kumo_gen::domain::Registry;
use serde_json::{Map, Value, json};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .expect("usage: sample_instances COUNT TRUTHS ACTIONS")
        })
        .collect();
    let [count, truths, actions] = args[..] else {
        panic!("usage: sample_instances COUNT TRUTHS ACTIONS");
    };
    let domain = Registry::new(None)
        .load("medical")
        .expect("shipped medical domain")
        .0;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for seed in 0..count {
        let s = sample::sample(&domain, truths, actions, seed as u64);
        let mut observations = Map::new();
        for (&a, &state) in s.actions.iter().zip(&s.observed) {
            let action = &domain.actions[a];
            let value = match action.states[state].label.range() {
                None => Value::from(action.states[state].label.to_string()),
                // A value that reads back as this state (first containing range).
                Some((lo, hi)) => [(lo + hi) / 2.0, lo, hi]
                    .into_iter()
                    .find(|&v| action.state_containing(v) == Some(state))
                    .map(Value::from)
                    .expect("a value inside the state's range"),
            };
            observations.insert(action.name.clone(), value);
        }
        let line = json!({
            "truths": s.truths.iter().map(|&t| domain.truths[t].as_str()).collect::<Vec<_>>(),
            "actions": s.actions.iter().map(|&a| domain.actions[a].name.as_str()).collect::<Vec<_>>(),
            "observations": observations,
            "seed": seed,
            "valid_truth": domain.truths[s.valid],
        });
        writeln!(out, "{line}").expect("write to stdout");
    }
}
