//! What several commands' flags share: the error of a value clap's own
//! parsers cannot check, `--threads` and its worker pool ([`PoolFlags`]),
//! `--templates-dir` ([`TemplatesFlags`]), the search budget of the labels
//! ([`BudgetFlags`]) and the parsers of counts.

use std::io;
use std::path::PathBuf;

use crate::render::{TemplateError, Templates};
use crate::search::SearchBudget;

/// A command-line value clap's own parsers cannot check, by kind; the
/// message says what was expected (a refused value is shown cut to 40
/// characters where it may be long).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BadValue {
    #[error("`{0}` is not a number of threads")]
    NotThreads(String),
    #[error("{0} threads is more than {MAX_THREADS}; use 0 for one per core")]
    TooManyThreads(usize),
    #[error("expected a number of {what} {range}, not `{shown}`")]
    Count {
        what: String,
        range: String,
        shown: String,
    },
    #[error("expected a positive number of seconds up to {MAX_TIMEOUT_SECS}, not `{0}`")]
    Timeout(String),
    #[error("expected a temperature from 0 to 2, not `{0}`")]
    Temperature(String),
    #[error("expected a finite number of at least 0, not `{0}`")]
    Bound(String),
    #[error(transparent)]
    ApiBase(#[from] crate::eval::client::EndpointError),
    #[error("`{shown}` is not a number of instances up to {max}")]
    NotInstances { shown: String, max: u64 },
    #[error("`-n 0` asks for no instances; ask for at least one, e.g. `-n 100`")]
    NoInstances,
    #[error(
        "{n} instances is more than {max} (the dedup keys of every instance stay in memory, about 100 bytes each); split the job into several settings or seeds"
    )]
    TooManyInstances { n: u64, max: u64 },
    #[error("expected a seed (0 to 2^64-1) or `random`, not `{0}`")]
    Seed(String),
}

/// Most worker threads `--threads` accepts.
pub const MAX_THREADS: usize = 1024;

/// `--threads N`: 0 (one per core) to [`MAX_THREADS`].
pub fn parse_threads(text: &str) -> Result<usize, BadValue> {
    let n: usize = text
        .trim()
        .parse()
        .map_err(|_| BadValue::NotThreads(text.to_string()))?;
    if n > MAX_THREADS {
        return Err(BadValue::TooManyThreads(n));
    }
    Ok(n)
}

/// Builds the rayon pool of `--threads`.
pub fn pool(threads: usize) -> io::Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(io::Error::other)
}

/// `--threads N`: the worker threads of a command that works in parallel
/// (its output never depends on them). A command words the help for its
/// own work with `mut_arg("threads", ...)`.
#[derive(clap::Args, Clone, Debug)]
pub struct PoolFlags {
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = parse_threads)]
    pub threads: usize,
}

impl PoolFlags {
    /// The rayon pool of these threads.
    pub fn pool(&self) -> io::Result<rayon::ThreadPool> {
        pool(self.threads)
    }
}

/// `--templates-dir DIR`: the templates that render knowledge books and
/// prompts (generate, merge, curriculum, eval, play, serve, pairs).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct TemplatesFlags {
    /// Directory of templates that override the shipped ones by name:
    /// `book.j2` (knowledge books, also those rendered for a missing book
    /// file), `prompt.j2` (the platform prompt), `symbolic.j2`,
    /// `rationale.j2` (SFT records).
    #[arg(long, value_name = "DIR")]
    pub templates_dir: Option<PathBuf>,
}

impl TemplatesFlags {
    /// The shipped templates, overridden by `--templates-dir`'s.
    pub fn templates(&self) -> Result<Templates, TemplateError> {
        Templates::resolve(self.templates_dir.as_deref())
    }
}

/// `--search-budget` and `--search-nodes`: the search budget of the labels,
/// as generate, curriculum, label and merge take it.
#[derive(clap::Args, Clone, Debug)]
pub struct BudgetFlags {
    /// Most memo entries one instance's exact search may store; an
    /// instance over it gets a certified label (`"exact": false`, the
    /// proven `lower_bound` and an upper bound), or with `--exact-only`
    /// is left unlabelled (`"optimal": {"unlabelled": "budget
    /// exceeded"}`). The table takes up to 48 bytes per entry up to 64
    /// truths + actions in all, 64 up to 128, 96 beyond.
    #[arg(long, default_value_t = SearchBudget::DEFAULT_MAX_MEMO_ENTRIES, value_name = "ENTRIES", value_parser = parse_entries)]
    pub search_budget: usize,
    /// Most nodes one instance's exact search may expand (its time budget,
    /// counted in work so that the output is the same on every machine);
    /// an instance over it is certified like one over `--search-budget`.
    /// Default: 50000000 for games of at most 16 actions (KUMO's
    /// settings), 1000000 beyond.
    #[arg(long, value_name = "NODES", value_parser = parse_nodes)]
    pub search_nodes: Option<u64>,
    /// Leave an instance whose exact search runs over budget unlabelled
    /// instead of certifying it: every label written is exact.
    #[arg(long)]
    pub exact_only: bool,
}

impl BudgetFlags {
    /// The budget these flags give (no time limit).
    pub fn budget(&self) -> SearchBudget {
        SearchBudget {
            certify: !self.exact_only,
            ..SearchBudget::with_nodes(self.search_budget, self.search_nodes)
        }
    }
}

/// `--search-budget ENTRIES`: a memo budget of at least 1 entry (the same
/// check in every command that labels).
pub fn parse_entries(text: &str) -> Result<usize, BadValue> {
    parse_count(text, "memo entries", 1, usize::MAX as u64).map(|n| n as usize)
}

/// `--search-nodes N`: at least 1 node expansion.
pub fn parse_nodes(text: &str) -> Result<u64, BadValue> {
    parse_count(text, "nodes", 1, u64::MAX)
}

/// `--domain-max-nodes N`: at least 1 YAML node.
pub fn parse_yaml_nodes(text: &str) -> Result<usize, BadValue> {
    parse_count(text, "YAML nodes", 1, usize::MAX as u64).map(|n| n as usize)
}

/// A whole number from `min` to `max` (`what` names it in the refusal:
/// `expected a number of repair rounds from 0 to 100, not `x``).
pub fn parse_count(text: &str, what: &str, min: u64, max: u64) -> Result<u64, BadValue> {
    let range = if max >= usize::MAX as u64 {
        format!("of at least {min}")
    } else {
        format!("from {min} to {max}")
    };
    match text.trim().parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(BadValue::Count {
            what: what.to_string(),
            range,
            shown: shown(text),
        }),
    }
}

/// Most seconds `--timeout` accepts (a day).
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// `--timeout SECS`: a positive number of seconds up to a day.
pub fn parse_timeout(text: &str) -> Result<f64, BadValue> {
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= MAX_TIMEOUT_SECS => Ok(s),
        _ => Err(BadValue::Timeout(shown(text))),
    }
}

/// `--temperature X`: a number from 0 to 2 (what OpenAI-compatible APIs
/// accept).
pub fn parse_temperature(text: &str) -> Result<f64, BadValue> {
    match text.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && (0.0..=2.0).contains(&t) => Ok(t),
        _ => Err(BadValue::Temperature(shown(text))),
    }
}

/// A finite number of at least 0 (a difficulty bound).
pub fn parse_bound(text: &str) -> Result<f64, BadValue> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(BadValue::Bound(shown(text))),
    }
}

/// The first 40 characters of a refused value (a refusal never echoes a
/// megabyte of argument).
fn shown(text: &str) -> String {
    let mut s: String = text.chars().take(40).collect();
    if s.len() < text.len() {
        s.push_str("...");
    }
    s
}

/// Most retries `--retries` accepts.
pub const MAX_RETRIES: u32 = 100;

/// `--retries N`: 0 to [`MAX_RETRIES`].
pub fn parse_retries(text: &str) -> Result<u32, BadValue> {
    parse_count(text, "retries", 0, MAX_RETRIES as u64).map(|n| n as u32)
}

/// A parser of a whole number in `range` (`what` names it in the refusal).
pub fn in_range(
    what: &'static str,
    range: std::ops::RangeInclusive<usize>,
) -> impl Fn(&str) -> Result<usize, BadValue> + Clone + Send + Sync + 'static {
    move |text| {
        parse_count(text, what, *range.start() as u64, *range.end() as u64).map(|n| n as usize)
    }
}

/// `--api-base URL`: a URL the client can call (`http://host:port/v1`).
pub fn parse_api_base(text: &str) -> Result<String, BadValue> {
    crate::eval::client::parse_api_base(text)
        .map(|_| text.to_string())
        .map_err(BadValue::from)
}

/// The domain file `spec` names (`--domain d.yaml`, or a name that
/// resolves to a file of `--domains-dir`), as an input no output may
/// replace; a shipped domain is none.
pub fn domain_input(
    registry: &crate::domain::Registry,
    flag: &str,
    spec: &str,
) -> Option<crate::files::target::Input> {
    match registry.resolve(spec) {
        Ok(crate::domain::DomainSource::File(path)) => {
            Some(crate::files::target::Input::file(flag, path))
        }
        _ => None,
    }
}

/// `--templates-dir DIR` as an input: every file in it is read.
pub fn templates_input(flags: &TemplatesFlags) -> Option<crate::files::target::Input> {
    flags
        .templates_dir
        .as_ref()
        .map(|dir| crate::files::target::Input::tree("--templates-dir", dir))
}

/// Refuses writing `target` (`flag`) over, or inside, what the command
/// reads ([`crate::files::target::check`]): the user's input (exit 1),
/// before anything is written.
pub fn refuse_over_inputs(
    flag: &str,
    target: &std::path::Path,
    written: crate::files::target::Written,
    inputs: &[crate::files::target::Input],
) -> Result<(), crate::error::Error> {
    refuse_within(flag, target, target, written, inputs)
}

/// [`refuse_over_inputs`] of `target`, a place the command writes inside
/// the flag's value `given` (`--out OUT` fills `OUT/<domain>`).
pub fn refuse_within(
    flag: &str,
    given: &std::path::Path,
    target: &std::path::Path,
    written: crate::files::target::Written,
    inputs: &[crate::files::target::Input],
) -> Result<(), crate::error::Error> {
    crate::files::target::check_within(flag, given, target, written, inputs)
        .map_err(|e| crate::error::Error::input_with_help(e.to_string(), e.help()))
}

/// Refuses to write `output` (`flag`) over the domain file `spec` names:
/// the command would destroy its own input.
pub fn refuse_overwriting_domain(
    registry: &crate::domain::Registry,
    spec: &str,
    output: &std::path::Path,
    flag: &str,
) -> Result<(), crate::error::Error> {
    let inputs: Vec<_> = domain_input(registry, "--domain", spec)
        .into_iter()
        .collect();
    refuse_over_inputs(flag, output, crate::files::target::Written::File, &inputs)
}

/// Refuses an output directory flag (`--out`, `--out-dir`) that names a
/// file, or a path below a file, before anything is written (exit 2,
/// usage), or has a symbolic link on the way whose target does not exist
/// (exit 1: the user's file system); [`crate::files::target::out_dir_problem`]
/// says which and words it.
pub fn check_out_dir(path: &std::path::Path, flag: &str) -> Result<(), crate::error::Error> {
    use crate::files::target::OutDirProblem;
    match crate::files::target::out_dir_problem(path, flag) {
        None => Ok(()),
        Some(OutDirProblem::DanglingLink { message, help }) => {
            Err(crate::error::Error::input_with_help(message, help))
        }
        Some(OutDirProblem::NotADirectory { message, help }) => Err(crate::error::Error::Usage {
            message,
            help: Some(help),
        }),
    }
}
