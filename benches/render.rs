//! Rendering throughput: books, prompts and SFT records as JSON lines (plus
//! the book check the main command does) for 5000 hard (12 x 16)
//! instances of the shipped medical domain, on a 1-thread and a 2-thread pool.

use kumo_gen::domain::Domain;
use kumo_gen::render::{OwnedTask, RenderOptions, Renderer, Templates, check_book};
use kumo_gen::synth::{Params, Synthesizer};
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

/// The first `n` synthesized hard instances of the shipped medical domain,
/// each with a near-optimal trajectory (the search is its own stage;
/// rendering cost does not depend on how the trajectory was found).
fn instances(d: &Domain, n: u64) -> Vec<(OwnedTask, Vec<usize>)> {
    let synth = Synthesizer::new(d, Params::new(12, 16, 1)).expect("feasible");
    (0..n)
        .map(|i| {
            let task = OwnedTask::from_instance(&synth.candidate(i).expect("instance").instance);
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
