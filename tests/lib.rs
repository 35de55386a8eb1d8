//! Integration tests, one file per feature (`autotests = false`: this is
//! the only test binary).

mod budget;
mod cli;
mod common;
mod conformance;
mod contamination;
mod dataset;
mod derived;
mod difficulty;
mod domain;
mod eval;
mod eval_inputs;
mod eval_players;
mod eval_protocol;
mod eval_retries;
mod family;
mod faults;
mod generate;
mod graph;
mod import;
mod propose;
mod readme;
mod reference;
mod regression;
mod render;
mod render_files;
mod report;
mod reruns;
mod robust;
mod score;
mod search;
mod search_exact;
mod split_parts;
