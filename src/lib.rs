//! kumo-gen: a task-generation compiler for KUMO-style interactive reasoning
//! benchmarks.
//!
//! The pipeline, one module per stage, data flowing one way:
//!
//! 1. [`domain`]: load and validate a YAML domain into a compiled [`domain::Domain`].
//! 2. [`synth`]: sample truths, solve the selection problem with varisat,
//!    fill and dedup into [`synth::Instance`]s, deterministically per index.
//! 3. [`render`]: knowledge books, platform prompts and SFT golden trajectories
//!    from templates, and the book checker.
//! 4. [`output`]: write KUMO-compatible JSONL and `manifest.json`; shards,
//!    `merge` and resume.
//!
//! Side tools on the same domain model live beside the stages:
//! [`graph`] (domain graph, Louvain communities, in-/out-of-domain splits,
//! instance structure signatures).
pub mod cli;
pub mod domain;
pub mod graph;
pub mod import;
pub mod output;
pub mod render;
pub mod synth;
