//! Synthesis throughput on the hard medical setting (12 truths, 16
//! actions): candidates + SAT + fill + dedup in memory, and the full
//! `generate` path writing JSONL, each with a 1-thread and a 2-thread pool.
//!
//!     cargo bench --bench synth
//!
//! The domain is the shipped `medical` (override with
//! `KUMO_GEN_BENCH_DOMAIN=NAME|PATH`).

use kumo_gen::domain::{Domain, Registry};
use kumo_gen::pipeline::write::{self, Job};
use kumo_gen::pipeline::{Books, Datasets, DerivedFiles, GenerateJob, Target};
use kumo_gen::render::{RenderOptions, Templates};
use kumo_gen::synth::{Dedup, Params, Stats, Synthesizer};

fn main() {
    divan::main();
}

fn medical() -> Domain {
    let spec = std::env::var("KUMO_GEN_BENCH_DOMAIN").unwrap_or_else(|_| "medical".into());
    match Registry::new(None).load(&spec) {
        Ok((domain, _)) => domain,
        Err(e) => panic!("benchmark domain `{spec}`: {e}"),
    }
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
}

fn synthesize(domain: &Domain, n: u64, threads: usize) -> usize {
    pool(threads).install(|| {
        let synth = Synthesizer::new(domain, Params::new(12, 16, 1)).expect("feasible");
        let mut seen = Dedup::new();
        let mut stats = Stats::default();
        synth
            .generate(0..n, &mut seen, &mut stats)
            .expect("feasible")
            .len()
    })
}

/// In-memory synthesis of 5000 hard medical instances.
#[divan::bench(args = [1, 2], sample_count = 10, sample_size = 1)]
fn synth_5000(bencher: divan::Bencher, threads: usize) {
    let domain = medical();
    bencher.bench(|| synthesize(&domain, 5000, threads));
}

/// In-memory synthesis of 100000 hard medical instances.
#[divan::bench(args = [2], sample_count = 3, sample_size = 1)]
fn synth_100000(bencher: divan::Bencher, threads: usize) {
    let domain = medical();
    bencher.bench(|| synthesize(&domain, 100_000, threads));
}

/// `generate` to a JSONL file (synthesis, rendering, writing, manifest).
#[divan::bench(args = [1, 2], sample_count = 10, sample_size = 1)]
fn generate_5000(bencher: divan::Bencher, threads: usize) {
    let domain = medical();
    let dir = tempfile::tempdir().expect("temp dir");
    let job = GenerateJob {
        domain,
        params: Params::new(12, 16, 1),
        n: 5000,
        out: dir.path().to_path_buf(),
        target: Target::Whole,
        labels: None,
        exclude: None,
        band: None,
        datasets: Datasets::One,
        derived: DerivedFiles {
            templates: Templates::resolve(None).expect("shipped templates"),
            render: RenderOptions::default(),
            books: Books::None,
            sft: false,
            steps: false,
            hf: false,
        },
        secret_seed: false,
        force: true,
    };
    let run = job.whole();
    bencher.bench(|| {
        let writer = Job {
            main: &job,
            params: &job.params,
            run: &run,
            first_draws: None,
            progress: &kumo_gen::progress::Quiet,
        };
        pool(threads).install(|| write::generate(&writer).expect("written").instances)
    });
}
