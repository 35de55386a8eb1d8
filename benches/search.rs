//! Optimal-search benchmarks on fixed inputs: KUMO's 50 hard MedicalEnv
//! instances (when ../shared/kumo-reference is present) and 200 sampled
//! medical instances at 12x16 and 20 at 20x24, labelled with a 1-thread
//! and a 2-thread pool. Per-instance figures come from
//! `cargo run --release --example search_figures`.
//!
//!     cargo bench --bench search

mod support;

use std::path::Path;

use divan::Bencher;
use kumo_gen::domain::{Domain, Registry};
use kumo_gen::search::{Problem, SearchBudget, Searcher};
use rayon::prelude::*;

fn main() {
    divan::main();
}

struct Case {
    problem: Problem,
    observed: Vec<Option<usize>>,
}

fn medical() -> Domain {
    Registry::new(None)
        .load("medical")
        .expect("shipped medical domain")
        .0
}

fn kumo_hard() -> Vec<Case> {
    let domain = medical();
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/kumo-reference/instances/MedicalEnv/truth_num=12+action_num=16+valid_truth_num=1.jsonl");
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let task = kumo_gen::game::task_from_json(&domain, &v).unwrap();
            let (truths, actions, observed) = (task.truths, task.actions, task.observed);
            Case {
                problem: Problem::new(&domain, &truths, &actions).unwrap(),
                observed: observed.into_iter().map(Some).collect(),
            }
        })
        .collect()
}

fn sampled(truths: usize, actions: usize, count: u64) -> Vec<Case> {
    let domain = medical();
    (0..count)
        .map(|seed| {
            let s = support::sample::sample(&domain, truths, actions, seed);
            assert!(s.truths.contains(&s.valid));
            Case {
                problem: Problem::new(&domain, &s.truths, &s.actions).unwrap(),
                observed: s.observed.into_iter().map(Some).collect(),
            }
        })
        .collect()
}

fn label_all(bencher: Bencher, cases: &[Case], threads: usize) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    bencher.bench(|| {
        pool.install(|| {
            cases
                .par_iter()
                .map_init(Searcher::new, |searcher, case| {
                    searcher
                        .label(&case.problem, &case.observed, SearchBudget::default())
                        .unwrap()
                        .expected_steps
                })
                .collect::<Vec<f64>>()
        })
    });
}

#[divan::bench(args = [1, 2], sample_count = 10)]
fn kumo_hard_medical_50(bencher: Bencher, threads: usize) {
    let cases = kumo_hard();
    label_all(bencher, &cases, threads);
}

#[divan::bench(args = [1, 2], sample_count = 10)]
fn sampled_medical_12x16_200(bencher: Bencher, threads: usize) {
    let cases = sampled(12, 16, 200);
    label_all(bencher, &cases, threads);
}

#[divan::bench(args = [1, 2], sample_count = 3)]
fn sampled_medical_20x24_20(bencher: Bencher, threads: usize) {
    let cases = sampled(20, 24, 20);
    label_all(bencher, &cases, threads);
}
