//! Side tool: the domain graph, its connected components and Louvain
//! communities, and splits into in-domain / out-of-domain sub-domains (the
//! per-instance structure signature is domain arithmetic:
//! `crate::domain::structure_signature`).
//!
//! In: a compiled [`Domain`]. Out: a [`DomainGraph`] (petgraph), a
//! [`Partition`] of its truths, a [`split::Split`] (two domain documents
//! and a report). No file-system access: the CLI renders and writes.
//!
//! **Co-occurrence.** Truths are the nodes, one per truth, node index =
//! truth index in file order. Two truths *co-occur* in an action when both
//! are *related* to it, i.e. each is ruled out by some state of that action
//! (not necessarily the same state): `t, u ∈ related(a)`, where `related(a)`
//! is the union of the action's rule-out sets (DESIGN.md "Optimal search").
//! The edge weight is the number of actions in which the two co-occur. This
//! is the relation the split rule needs: every action's related truths lie
//! in one connected component, so a split by components loses no action.
//! No self-loops; a truth related to no action (or only to actions related
//! to it alone) is an isolated node.
//!
//! **Modularity** is the paper's equation 5, Newman's weighted modularity
//! `Q = 1/(2m) Σ_ij [A_ij − k_i k_j / (2m)] δ(c_i, c_j)` with `A_ij` the
//! edge weights, `k_i = Σ_j A_ij` and `2m = Σ_i k_i`; `Q = 0` for a graph
//! without edges.
//!
//! Determinism: adjacency is kept in ascending node order, communities and
//! components are ordered by a stated rule, and the only randomness
//! (Louvain's node visiting order) comes from a ChaCha8 stream seeded by the
//! caller. No hash-map iteration reaches a result.

mod layout;
pub mod louvain;
pub mod render;
pub mod report;
pub mod split;

use petgraph::graph::{NodeIndex, UnGraph};
use petgraph::unionfind::UnionFind;
use petgraph::visit::EdgeRef;

use crate::domain::Domain;

pub use louvain::{Louvain, Partition, modularity};

/// Louvain runs for the reported communities; the best partition is kept.
/// Measured on the shipped domains against networkx's
/// `louvain_communities` (best of 20 seeds): with 64 runs the worst ratio
/// over seeds 0..3 was 0.995; with 16 runs one small low-Q domain fell to
/// 0.965.
pub const LOUVAIN_RUNS: u32 = 64;

/// The co-occurrence graph of a domain's truths.
#[derive(Clone, Debug)]
pub struct DomainGraph {
    /// Node weight: the truth index; edge weight: how many actions link the
    /// two truths. Node `i` is truth `i`.
    pub graph: UnGraph<usize, u32>,
}

impl DomainGraph {
    /// Builds the graph of `domain` (see the module docs for the edge rule).
    pub fn build(domain: &Domain) -> Self {
        let n = domain.truths.len();
        // Every co-occurring pair once per action, sorted, then counted:
        // the edge order is fixed and memory follows the pairs, not n².
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        for action in &domain.actions {
            let related: Vec<usize> = action.related.iter().filter(|&t| t < n).collect();
            for (i, &a) in related.iter().enumerate() {
                pairs.extend(related[i + 1..].iter().map(|&b| (a, b)));
            }
        }
        pairs.sort_unstable();
        let mut graph = UnGraph::with_capacity(n, 0);
        for t in 0..n {
            graph.add_node(t);
        }
        for run in pairs.chunk_by(|x, y| x == y) {
            let (a, b) = run[0];
            let weight = u32::try_from(run.len()).unwrap_or(u32::MAX);
            graph.add_edge(NodeIndex::new(a), NodeIndex::new(b), weight);
        }
        DomainGraph { graph }
    }

    /// Number of nodes (truths).
    pub fn node_count(&self) -> usize {
        self.graph.node_count()
    }

    /// Number of edges (co-occurring pairs).
    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }

    /// Edges as `(a, b, weight)` with `a < b`, sorted by `(a, b)`.
    pub fn edges(&self) -> Vec<(usize, usize, u32)> {
        let mut edges: Vec<(usize, usize, u32)> = self
            .graph
            .edge_references()
            .map(|e| {
                let (a, b) = (e.source().index(), e.target().index());
                (a.min(b), a.max(b), *e.weight())
            })
            .collect();
        edges.sort_unstable();
        edges
    }

    /// Weighted degree of every node, `k_i`.
    pub fn degrees(&self) -> Vec<u64> {
        let mut k = vec![0u64; self.node_count()];
        for (a, b, w) in self.edges() {
            k[a] += u64::from(w);
            k[b] += u64::from(w);
        }
        k
    }

    /// Connected components, each sorted ascending, ordered by size
    /// descending then by first truth index. Isolated truths are singleton
    /// components.
    pub fn components(&self) -> Vec<Vec<usize>> {
        let n = self.node_count();
        let mut uf = UnionFind::<usize>::new(n);
        for (a, b, _) in self.edges() {
            uf.union(a, b);
        }
        let labels = uf.into_labeling();
        // Group by representative, in order of first member.
        let mut group_of = vec![usize::MAX; n];
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (t, &root) in labels.iter().enumerate() {
            if group_of[root] == usize::MAX {
                group_of[root] = groups.len();
                groups.push(Vec::new());
            }
            groups[group_of[root]].push(t);
        }
        order_groups(&mut groups);
        groups
    }

    /// The graph as a weighted adjacency for [`Louvain`].
    pub fn adjacency(&self) -> Vec<Vec<(usize, f64)>> {
        let mut adj = vec![Vec::new(); self.node_count()];
        for (a, b, w) in self.edges() {
            adj[a].push((b, f64::from(w)));
            adj[b].push((a, f64::from(w)));
        }
        for list in &mut adj {
            list.sort_by_key(|&(j, _)| j);
        }
        adj
    }

    /// Louvain communities of the graph: the best of `runs` seeded runs.
    pub fn communities(&self, seed: u64, runs: u32) -> Partition {
        Louvain::new(self.adjacency()).best_of(seed, runs)
    }
}

/// Sorts groups (each sorted ascending first) by size descending, then by
/// first member: the order used for components and communities.
pub fn order_groups(groups: &mut [Vec<usize>]) {
    for g in groups.iter_mut() {
        g.sort_unstable();
    }
    groups.sort_by(|a, b| {
        b.len()
            .cmp(&a.len())
            .then_with(|| a.first().cmp(&b.first()))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Domain {
        let text = "name: t\ntruths: [A, B, C, D, E]\nactions:\n\
            - name: x\n  type: str\n  states:\n    p: [A]\n    q: [B]\n\
            - name: y\n  type: str\n  states:\n    p: [A, B]\n    q: []\n\
            - name: z\n  type: str\n  states:\n    p: [D]\n    q: []\n";
        Domain::from_yaml("t.yaml", text).unwrap().0
    }

    #[test]
    fn co_occurrence_counts_actions() {
        let g = DomainGraph::build(&tiny());
        // x and y both relate A and B; z relates D alone.
        assert_eq!(g.edges(), vec![(0, 1, 2)]);
        assert_eq!(g.components(), vec![vec![0, 1], vec![2], vec![3], vec![4]]);
        assert_eq!(g.degrees(), vec![2, 2, 0, 0, 0]);
    }
}
