//! Rendering throughput: books, prompts and SFT records as JSON lines (plus
//! the book check the main command does) for 5000 hard (12 x 16)
//! instances of the shipped medical domain, on a 1-thread and a 2-thread pool.

use kumo_gen::domain::Domain;
use kumo_gen::render::{OwnedTask, RenderOptions, Renderer, Templates, check_book};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

fn main() {
    divan::main();
}

fn domain() -> Domain {
    kumo_gen::domain::Registry::default()
        .load("medical")
        .expect("the shipped medical domain")
        .0
}

/// Random consistent instances with a greedy golden trajectory (the
/// generator and the search are other stages; rendering cost does not
/// depend on how the instance was found).
fn instances(d: &Domain, n: usize) -> Vec<(OwnedTask, Vec<usize>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    (0..n)
        .map(|seed| {
            let mut truths: Vec<usize> = (0..d.truths.len()).collect();
            truths.shuffle(&mut rng);
            truths.truncate(12);
            let valid = truths[rng.random_range(0..12)];
            let mut actions: Vec<usize> = (0..d.actions.len()).collect();
            actions.shuffle(&mut rng);
            actions.truncate(16);
            let mut task = OwnedTask {
                truths,
                valid: vec![valid],
                seed: seed as u64,
                ..OwnedTask::default()
            };
            for &a in &actions {
                let action = &d.actions[a];
                let ok: Vec<usize> = (0..action.states.len())
                    .filter(|&s| !action.states[s].rules_out.contains(valid))
                    .collect();
                let s = ok[rng.random_range(0..ok.len())];
                task.actions.push(a);
                task.observed.push(s);
                task.values.push(
                    action.states[s]
                        .label
                        .range()
                        .map(|(lo, hi)| ((lo + hi) * 50.0).round() / 100.0),
                );
            }
            let golden = greedy(d, &task);
            (task, golden)
        })
        .collect()
}

/// A near-optimal trajectory: repeatedly take the untaken action with the
/// smallest expected number of remaining truths (weights as in the search),
/// until one truth remains or a remaining truth is related to no untaken
/// action.
fn greedy(d: &Domain, task: &OwnedTask) -> Vec<usize> {
    let mut remaining = task.truths.clone();
    let mut taken = vec![false; task.actions.len()];
    let mut golden = Vec::new();
    loop {
        let related = |t: usize, p: usize| d.actions[task.actions[p]].related.contains(t);
        let open: Vec<usize> = (0..task.actions.len()).filter(|&p| !taken[p]).collect();
        if remaining.len() <= 1
            || remaining
                .iter()
                .any(|&t| !open.iter().any(|&p| related(t, p)))
        {
            return golden;
        }
        let expected = |p: usize| {
            let states = &d.actions[task.actions[p]].states;
            let left: Vec<f64> = states
                .iter()
                .map(|s| {
                    remaining
                        .iter()
                        .filter(|&&t| !s.rules_out.contains(t))
                        .count() as f64
                })
                .collect();
            let total: f64 = left.iter().sum::<f64>() + 1e-9;
            left.iter().map(|w| w * w / total).sum::<f64>()
        };
        let best = open
            .iter()
            .copied()
            .min_by(|&a, &b| expected(a).total_cmp(&expected(b)))
            .expect("an open action");
        taken[best] = true;
        golden.push(best);
        let state = &d.actions[task.actions[best]].states[task.observed[best]];
        remaining.retain(|&t| !state.rules_out.contains(t));
    }
}

#[divan::bench(sample_count = 5)]
fn books_only_1_thread(bencher: divan::Bencher) {
    let d = domain();
    let tasks = instances(&d, 5000);
    let templates = Templates::shipped().expect("templates");
    let renderer = Renderer::new(&templates, RenderOptions::default());
    bencher.bench_local(|| {
        tasks
            .iter()
            .map(|(task, _)| renderer.book(&task.view(&d)).expect("book").len())
            .sum::<usize>()
    });
}

#[divan::bench(sample_count = 5)]
fn check_only_1_thread(bencher: divan::Bencher) {
    let d = domain();
    let tasks = instances(&d, 5000);
    let templates = Templates::shipped().expect("templates");
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let books: Vec<String> = tasks
        .iter()
        .map(|(task, _)| renderer.book(&task.view(&d)).expect("book"))
        .collect();
    bencher.bench_local(|| {
        tasks
            .iter()
            .zip(&books)
            .filter(|((task, _), book)| check_book(book, &task.view(&d)).is_ok())
            .count()
    });
}

#[divan::bench(args = [1, 2], sample_count = 5)]
fn render_5000_hard(bencher: divan::Bencher, threads: usize) {
    let d = domain();
    let tasks = instances(&d, 5000);
    let templates = Templates::shipped().expect("templates");
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool");
    bencher.bench_local(|| {
        pool.install(|| {
            tasks
                .par_iter()
                .map(|(task, golden)| {
                    let view = task.view(&d);
                    let out = renderer.render(&view, golden).expect("render");
                    assert!(check_book(&out.book, &view).is_ok());
                    out.book.len()
                        + out.prompt.len()
                        + out.sft.len()
                        + out.steps.iter().map(String::len).sum::<usize>()
                })
                .sum::<usize>()
        })
    });
}
