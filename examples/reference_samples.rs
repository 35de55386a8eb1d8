//! Writes the shipped reference samples (`domains/reference-samples.tsv`,
//! read by `kumo_gen::difficulty::stored`): for every shipped domain and
//! each of `SHIPPED_SETTINGS` the domain can synthesize (valid 1, default
//! decimals, the shortcut guard on), the setting's 256-draw difficulty
//! reference sample, labelled under the default search budget.
//!
//!     cargo run --release --example reference_samples > domains/reference-samples.tsv
//!
//! Run it again after changing a shipped domain or synthesis (the
//! reference tests fail until then: a stale line is never used, but
//! every run of that setting pays for the sample again). Lines are
//! sorted, so the file diffs well. Prints per-setting timings to stderr.

use std::time::Instant;

use kumo_gen::difficulty::Reference;
use kumo_gen::difficulty::reference::reference_params;
use kumo_gen::difficulty::stored::{SHIPPED_SETTINGS, head, line};
use kumo_gen::domain::Registry;
use kumo_gen::synth::{Params, Synthesizer};

fn main() {
    let registry = Registry::new(None);
    let names: Vec<String> = match std::env::args().nth(1) {
        Some(list) => list.split(',').map(str::to_string).collect(),
        None => registry
            .all()
            .expect("the shipped domains load")
            .into_iter()
            .map(|(name, _)| name)
            .collect(),
    };
    let mut lines = Vec::new();
    for name in &names {
        let domain = registry.load(name).expect("a shipped domain").0;
        for (truths, actions) in SHIPPED_SETTINGS {
            let params = Params::new(truths, actions, 1);
            let Ok(synth) = Synthesizer::new(&domain, reference_params(&params)) else {
                continue;
            };
            let Ok(fingerprint) = synth.fingerprint() else {
                continue;
            };
            let started = Instant::now();
            let Ok(reference) = Reference::sample(&domain, &params) else {
                continue;
            };
            eprintln!(
                "{name} {truths}x{actions}: {:.2} s, {} unlabelled",
                started.elapsed().as_secs_f64(),
                reference.unlabelled
            );
            lines.push(line(&head(&domain, &params, fingerprint), &reference));
        }
    }
    lines.sort();
    for line in lines {
        println!("{line}");
    }
}
