//! Stage 6 of the pipeline: knowledge books, platform prompts and SFT
//! golden trajectories, from templates (DESIGN.md "Rendering").
//!
//! In: a [`TaskView`] — one instance seen through the domain's indices —
//! and, for SFT, the golden trajectory (instance action positions taken
//! before the prediction). Out: `String`s and `serde_json::Value`s, one
//! instance at a time, so a writer can stream any number of instances with
//! flat memory.
//!
//! - [`Templates`]: the minijinja environment, compiled once. The shipped
//!   `templates/*.j2` are embedded; `--templates-dir` overrides them by
//!   name. Undefined variables are errors (strict undefined), and every
//!   template is test-rendered when loaded so a typo fails up front.
//! - [`Renderer`]: one domain + templates + options; renders the book,
//!   the platform prompt and the SFT records of an instance.
//! - [`vocab`]: the canonical sentences. A book states each rule-out as
//!   one canonical sentence per (action, state); the book checker
//!   ([`check_book`]) re-derives them from the domain and the instance,
//!   requires each, and requires every line in the form of a claim (a
//!   rule, an index entry, the truth list, an item of a list of rules) to
//!   be one of them; prose is not a claim.
//! - [`check_kumo_book`]: a conservative co-occurrence heuristic for KUMO's
//!   own LLM-written books.
//! - [`protocol`]: KUMO's game messages (round instruction, observation
//!   message, answer tag and parser, the conversation KUMO keeps): the SFT
//!   records and `kumo-gen eval` both take their text from it.
//! - [`hf`]: Hugging Face export rows (one type per column) and the dataset
//!   card.
//!
//! Invariants: output depends only on the domain, the instance and the
//! templates (no hash-order iteration, no clock, no RNG). Truths and actions
//! appear in instance order, states in domain file order.
//!
//! Only [`Templates::load_dir`] reads files (the user's override
//! directory), like the domain registry does for domain files.

mod book;
mod check;
mod error;
pub mod hf;
mod kumo;
mod load;
mod options;
pub mod protocol;
mod sft;
mod task;
mod templates;
pub mod vocab;

pub use book::Renderer;
pub use check::{BookCheck, BookProblem, Claim, check_book, rule_list_parses};
pub use error::{LineMismatch, TaskError, TemplateError};
pub use kumo::{KumoBookCheck, check_kumo_book};
pub use options::{RenderOptions, SftBook};
pub use protocol::answer_tag;
pub use sft::{Rendered, replay_sft, with_certificate};
pub use task::{OwnedTask, TaskView};
pub use templates::{PROPOSE_TEMPLATE_NAMES, TEMPLATE_NAMES, Templates};
