//! kumo-gen: a task-generation compiler for KUMO-style interactive reasoning
//! benchmarks.
//!
//! The pipeline, one module per stage, data flowing one way:
//!
//! 1. [`domain`]: load and validate a YAML domain into a compiled [`domain::Domain`].
//!
//! Side tools on the same domain model live beside the stages:
//! [`graph`] (domain graph, Louvain communities, in-/out-of-domain splits,
//! instance structure signatures).
pub mod cli;
pub mod domain;
pub mod graph;
pub mod import;
