//! What several commands' flags share: the error of a value clap's own
//! parsers cannot check, `--threads` and its worker pool, the search
//! budget of the labels ([`BudgetFlags`]) and the parsers of counts.

use std::io;

use crate::search::SearchBudget;

/// A command-line value clap's own parsers cannot check: the message says
/// what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadValue(pub String);

impl std::fmt::Display for BadValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadValue {}

/// Most worker threads `--threads` accepts.
pub const MAX_THREADS: usize = 1024;

/// `--threads N`: 0 (one per core) to [`MAX_THREADS`].
pub fn parse_threads(text: &str) -> Result<usize, BadValue> {
    let n: usize = text
        .trim()
        .parse()
        .map_err(|_| BadValue(format!("`{text}` is not a number of threads")))?;
    if n > MAX_THREADS {
        return Err(BadValue(format!(
            "{n} threads is more than {MAX_THREADS}; use 0 for one per core"
        )));
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

/// `--search-budget` and `--search-nodes`: the search budget of the labels,
/// as generate, curriculum, label and merge take it.
#[derive(clap::Args, Clone, Debug)]
pub struct BudgetFlags {
    /// Most memo entries one instance's optimal search may store; an
    /// instance over it is left unlabelled (`"optimal": {"unlabelled":
    /// "budget exceeded"}`). The table takes up to 48 bytes per entry up to
    /// 64 truths + actions in all, 64 up to 128, 96 beyond.
    #[arg(long, default_value_t = SearchBudget::DEFAULT_MAX_MEMO_ENTRIES, value_name = "ENTRIES", value_parser = parse_entries)]
    pub search_budget: usize,
    /// Most nodes one instance's optimal search may expand (its time budget,
    /// counted in work so that the output is the same on every machine); an
    /// instance over it is left unlabelled like one over `--search-budget`.
    #[arg(long, default_value_t = SearchBudget::DEFAULT_MAX_NODES, value_name = "NODES", value_parser = parse_nodes)]
    pub search_nodes: u64,
}

impl BudgetFlags {
    /// The budget these flags give (no time limit).
    pub fn budget(&self) -> SearchBudget {
        SearchBudget::new(self.search_budget, self.search_nodes)
    }
}

/// `--search-budget ENTRIES`: a memo budget of at least 1 entry (the same
/// check in every command that labels).
pub fn parse_entries(text: &str) -> Result<usize, BadValue> {
    parse_at_least_one(text, "memo entries")
}

/// `--search-nodes N`: at least 1 node expansion.
pub fn parse_nodes(text: &str) -> Result<u64, BadValue> {
    parse_at_least_one(text, "nodes")
}

/// `--domain-max-nodes N`: at least 1 YAML node.
pub fn parse_yaml_nodes(text: &str) -> Result<usize, BadValue> {
    parse_at_least_one(text, "YAML nodes")
}

fn parse_at_least_one<N: std::str::FromStr + PartialOrd + From<u8>>(
    text: &str,
    what: &str,
) -> Result<N, BadValue> {
    match text.parse::<N>() {
        Ok(n) if n >= N::from(1) => Ok(n),
        _ => Err(BadValue(format!(
            "expected a number of {what} of at least 1, not `{text}`"
        ))),
    }
}
