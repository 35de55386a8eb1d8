//! kumo-gen: a task-generation compiler for KUMO-style interactive reasoning
//! benchmarks.
//!
//! The pipeline, one module per stage, data flowing one way:
//!
//! 1. [`domain`]: load and validate a YAML domain into a compiled [`domain::Domain`].
//! 2. [`render`]: knowledge books, platform prompts and SFT golden trajectories
//!    from templates, and the book checker.
//!
//! Side tools on the same domain model live beside the stages.
pub mod cli;
pub mod domain;
pub mod import;
pub mod render;
