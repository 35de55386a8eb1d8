//! The YAML loader's budgets as the user meets them: the node limit
//! (`--domain-max-nodes`, default serde-saphyr's 250 000) and a breach
//! reported as a sentence naming the limit and how to raise it, not as
//! `budget breached: Nodes { nodes: 250001 }`.

use super::diagnostic::{Diagnostic, Kind};

/// The YAML loader's default node limit (serde-saphyr's): enough for
/// every shipped domain many times over, small enough to stop an alias
/// bomb early.
pub const DEFAULT_YAML_NODES: usize = 250_000;

static YAML_NODES: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(DEFAULT_YAML_NODES);

/// Sets the node limit of every later domain load (`--domain-max-nodes`).
pub fn set_yaml_node_budget(nodes: usize) {
    YAML_NODES.store(nodes, std::sync::atomic::Ordering::Relaxed);
}

pub(super) fn yaml_node_budget() -> usize {
    YAML_NODES.load(std::sync::atomic::Ordering::Relaxed)
}

/// A loader budget the document went over, as a sentence naming the
/// budget and how to raise it (serde-saphyr says `budget breached:
/// Nodes { nodes: 250001 }`).
pub(super) fn budget_breached(file: &str, e: &serde_saphyr::Error) -> Option<Diagnostic> {
    let mut inner = e;
    while let serde_saphyr::Error::WithSnippet { error, .. }
    | serde_saphyr::Error::AliasError { error, .. } = inner
    {
        inner = error;
    }
    let serde_saphyr::Error::Budget { breach, .. } = inner else {
        return None;
    };
    use serde_saphyr::budget::BudgetBreach as B;
    let (message, help) = match breach {
        B::Nodes { .. } => (
            format!(
                "the file has more than {} YAML nodes (values, keys and list items), the domain loader's limit",
                yaml_node_budget()
            ),
            "if the domain is this large on purpose, raise the limit with `--domain-max-nodes N`; if it uses YAML aliases (`*name`), write it out plainly".to_string(),
        ),
        other => (
            format!("the file goes over a YAML loader limit ({})", budget_name(other)),
            "the document expands too far (aliases, anchors or nesting); write the domain out plainly".to_string(),
        ),
    };
    let mut d = Diagnostic::error(Kind::Syntax, file, "", message).with_help(help);
    if let Some(loc) = e.location() {
        d = d.at(loc.line() as u32, loc.column() as u32, None);
    }
    Some(d)
}

fn budget_name(breach: &serde_saphyr::budget::BudgetBreach) -> &'static str {
    use serde_saphyr::budget::BudgetBreach as B;
    match breach {
        B::Events { .. } => "parser events",
        B::Aliases { .. } => "aliases",
        B::Anchors { .. } => "anchors",
        B::Depth { .. } => "nesting depth",
        B::Documents { .. } => "documents",
        B::Nodes { .. } => "nodes",
        B::ScalarBytes { .. } => "scalar bytes",
        _ => "a limit",
    }
}
