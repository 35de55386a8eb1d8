//! kumo-gen: a task-generation compiler for KUMO-style interactive reasoning
//! benchmarks.
//!
//! The pipeline, one module per stage, data flowing one way (stage numbers
//! as in DESIGN.md "Pipeline"):
//!
//! - stage 1, [`domain`]: load and validate a YAML domain into a compiled
//!   [`domain::Domain`].
//! - stages 2-4, [`synth`]: sample truths, solve the selection problem
//!   with varisat, fill and dedup into [`synth::Instance`]s,
//!   deterministically per index.
//! - stage 5, [`search`]: exact optimal-search labels and golden
//!   trajectories.
//! - stage 6, [`render`]: knowledge books, platform prompts and SFT golden
//!   trajectories from templates, and the book checker.
//! - stage 7, [`pipeline`]: what we do to datasets: generate with its
//!   write engine ([`pipeline::write`]: resume, rebudget, shard draws,
//!   `merge`), label, secret seeds; [`dataset`] is what a dataset is on
//!   disk (setting names, the instance record, the manifest) and reading
//!   one; [`derived`] renders books, SFT records and the HF export from a
//!   finished dataset; [`files`] is how every writer writes safely (atomic
//!   files, locks, directories below a root, digests).
//!
//! Side tools on the same domain model live beside the stages:
//! [`graph`] (domain graph, Louvain communities, in-/out-of-domain splits;
//! instance structure signatures are [`domain::structure_signature`]),
//! [`contamination`] (keys of recorded instances, `--exclude`, `--split`,
//! `overlap`, capacity estimates),
//! [`difficulty`] (percentiles in a setting's reference sample, bands,
//! curricula),
//! [`import`] (KUMO's Python domain files to domain YAML),
//! [`game`] (the rules of one game and its task: the task, its system
//! prompt, one play-through driven reply by reply, KUMO's result format),
//! [`score`] (success rate and efficiency from trajectories),
//! [`analysis`] (every move of a trajectory against the exact optimum:
//! values, regret, preference pairs),
//! [`stats`] (chi-square: structure signature vs correctness),
//! [`report`] (the results as one self-contained HTML page: intervals,
//! players per domain, structure tests, replays),
//! [`eval`] (models over an OpenAI-compatible API, KUMO's protocol, and
//! the offline players), [`serve`] (eval's episodes over OpenEnv's HTTP
//! and WebSocket contract for trainers, and a page where people play
//! them), [`family`] (procedural task families compiled
//! into domains) and [`propose`] (new domains from a language model, repaired with the
//! validator's located messages).
//!
//! [`pipeline`] runs the main job end to end (`generate`, `merge`,
//! `label`, each from one value, reporting through one
//! [`progress::Progress`]; the command line only builds those values) and
//! the stages in memory for embedders (the Python package in `python/`):
//! dataset lines and eval's tasks without files; its [`pipeline::secret`]
//! keeps the private seed of `--seed random` and `verify`s a dataset
//! against it.
//! [`cache`] is the cross-process cache directory (a setting's line index,
//! reference samples not shipped). [`python_repr`] prints values as KUMO's Python does (used by the
//! importer, the game messages and `play`). [`cli`] is the
//! command line;
//! [`error`] the one error every command reports, which picks the exit
//! code.
pub mod analysis;
pub mod cache;
pub mod cli;
pub mod contamination;
pub mod dataset;
pub mod derived;
pub mod difficulty;
pub mod domain;
pub mod error;
pub mod eval;
pub mod family;
pub mod files;
pub mod flag_tables;
pub mod fnv;
pub mod game;
pub mod graph;
pub mod import;
pub mod pipeline;
pub mod progress;
pub mod propose;
pub mod python_repr;
pub mod render;
pub mod report;
pub mod results;
pub mod score;
pub mod search;
pub mod serve;
pub mod stats;
pub mod synth;
