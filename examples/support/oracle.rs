//! The examples' oracle: KUMO's recursion (`tests/reference.rs`, shared
//! with the tests and independent of `src/search`) built from a search
//! [`Problem`], for the side-by-side columns of `domain_sweep` and
//! `search_settings`.

use kumo_gen::search::Problem;

#[path = "../../tests/reference.rs"]
mod reference;
pub use reference::Reference;

/// KUMO's recursion on `problem`'s rule-out masks, canonical (actions
/// related to no truth left dropped), stopped after `max_nodes` nodes.
pub fn reference(problem: &Problem, max_nodes: u64) -> Reference {
    let rules = (0..problem.action_count())
        .map(|a| problem.states(a).to_vec())
        .collect();
    Reference::new(problem.truth_count(), rules)
        .canonical()
        .with_node_cap(max_nodes)
}
