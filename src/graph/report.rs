//! What the renderings of a domain graph show ([`GraphReport`]): the
//! graph, its components and Louvain communities, by truth name, built
//! once from the domain and a partition; `render` words and draws it,
//! `layout` places it.

use serde::Serialize;

use super::{DomainGraph, Partition};
use crate::domain::Domain;

/// Everything the renderings show, by truth name.
#[derive(Clone, Debug, Serialize)]
pub struct GraphReport {
    pub domain: String,
    pub title: String,
    pub nodes: Vec<String>,
    /// `[a, b, weight]`, `a` before `b` in file order, sorted.
    pub edges: Vec<(String, String, u32)>,
    pub components: Vec<Vec<String>>,
    pub communities: Vec<Vec<String>>,
    pub community_sizes: Vec<usize>,
    pub modularity: f64,
    pub seed: u64,
    pub runs: u32,
    #[serde(skip)]
    pub(super) edge_index: Vec<(usize, usize, u32)>,
    #[serde(skip)]
    pub(super) membership: Vec<usize>,
}

impl GraphReport {
    /// Builds the report of `domain`'s graph with the given partition.
    pub fn new(
        domain: &Domain,
        graph: &DomainGraph,
        partition: &Partition,
        seed: u64,
        runs: u32,
    ) -> Self {
        let name = |t: usize| domain.truths[t].clone();
        let names = |groups: &[Vec<usize>]| -> Vec<Vec<String>> {
            groups
                .iter()
                .map(|g| g.iter().map(|&t| name(t)).collect())
                .collect()
        };
        let edge_index = graph.edges();
        GraphReport {
            domain: domain.name.clone(),
            title: domain.title.clone(),
            nodes: domain.truths.clone(),
            edges: edge_index
                .iter()
                .map(|&(a, b, w)| (name(a), name(b), w))
                .collect(),
            components: names(&graph.components()),
            communities: names(&partition.communities),
            community_sizes: partition.sizes(),
            modularity: partition.modularity,
            seed,
            runs,
            edge_index,
            membership: partition.membership.clone(),
        }
    }
}
