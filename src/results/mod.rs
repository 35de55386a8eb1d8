//! What a results directory is on disk, and reading and writing one: the
//! counterpart of [`crate::dataset`] for what players did.
//!
//! - [`write`]: where a result file goes (`<out>/<model>/<agent>/<domain>/<setting>/eval_times=K.jsonl`,
//!   [`result_path`]) and opening one to append to and resume
//!   ([`open_results`]); `eval`, `play` and `serve` write through it.
//! - [`read`]: a result file in KUMO's format (and ours) parsed into what
//!   each trial did ([`ResultFile`], [`TrialFacts`]); [`files`] reads
//!   result and oracle files and the domains of instance sets;
//!   [`sources`]: what a reader may consult besides them ([`Sources`]).
//!   `score`, `stats`, `moves`, `analysis` and `report` read through it.
//! - [`moves`]: what an analysis of results is ([`MoveAnalysis`], the one
//!   per-move row, and the game, line and file totals), made by
//!   [`crate::analysis`] and read by `score`, `report` and `moves`.

pub mod files;
pub mod moves;
pub mod read;
pub mod sources;
pub mod write;

pub use files::{ScoreFileError, domains_by_name, read_oracle, read_result_files};
pub use moves::{FileAnalysis, GameAnalysis, LineAnalysis, MoveAnalysis, Said};
pub use read::{GroupKey, LineFacts, ReadError, ResultFile, TrialFacts, parse_result_file};
pub use sources::{OracleEntry, Sources};
pub use write::{
    READABLE_LEN, ResultsError, legacy_results_dir, open_results, path_component, result_path,
    results_folder_problem,
};
