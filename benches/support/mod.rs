//! Shared inputs of the benchmarks.

pub mod sample;
