//! Louvain community detection (Blondel, Guillaume, Lambiotte, Lefebvre
//! 2008), written here because petgraph has none.
//!
//! In: a weighted undirected graph as sorted adjacency lists. Out: a
//! [`Partition`] — communities ordered by size descending then first node,
//! and its modularity on the input graph.
//!
//! The algorithm, per level:
//! 1. *local moving*: visit the nodes in an order shuffled by the run's
//!    ChaCha8 stream; move each to the neighbouring community with the
//!    largest modularity gain `k_i,D − γ·Σtot_D·k_i / 2m` if that beats
//!    staying; repeat passes until a pass moves nothing;
//! 2. *aggregation*: each community becomes a node, internal weight a
//!    self-loop, weights between communities summed.
//!
//! Levels repeat until local moving moves nothing, then a last local-moving
//! phase on the original nodes, starting from the final partition, lets
//! single nodes leave a community the aggregation locked them into (it can
//! only raise Q). Ties keep the node where it is, then prefer the
//! neighbouring community met first in adjacency order, so a run is fully
//! determined by its seed. [`Louvain::best_of`] keeps the best of several
//! runs (first best on ties).
//!
//! Modularity with resolution γ: `Q = Σ_c [in_c / 2m − γ (tot_c / 2m)²]`,
//! where `in_c` sums `A_ij` over ordered pairs inside `c` and `tot_c` the
//! degrees; γ = 1 is the paper's equation 5.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// Upper bound on local-moving passes per level; each move strictly raises
/// Q, so this only guards against floating-point cycling.
const MAX_PASSES: usize = 1000;

/// A partition of the nodes into communities.
#[derive(Clone, Debug, PartialEq)]
pub struct Partition {
    /// Community index of every node (indices into `communities`).
    pub membership: Vec<usize>,
    /// Members of each community, ascending; ordered by size descending,
    /// then first member.
    pub communities: Vec<Vec<usize>>,
    /// Modularity (γ as given) of this partition on the input graph.
    pub modularity: f64,
    /// Aggregation levels the run went through.
    pub levels: usize,
    /// The seed stream (run index) that produced it.
    pub run: u32,
}

impl Partition {
    /// The partition given by `membership` (any community labels), with
    /// communities renumbered in the standard order.
    pub fn from_membership(membership: &[usize], modularity: f64) -> Self {
        let mut index = vec![usize::MAX; membership.len().max(1)];
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (node, &label) in membership.iter().enumerate() {
            if label >= index.len() {
                index.resize(label + 1, usize::MAX);
            }
            if index[label] == usize::MAX {
                index[label] = groups.len();
                groups.push(Vec::new());
            }
            groups[index[label]].push(node);
        }
        super::order_groups(&mut groups);
        let mut renumbered = vec![0; membership.len()];
        for (c, group) in groups.iter().enumerate() {
            for &node in group {
                renumbered[node] = c;
            }
        }
        Partition {
            membership: renumbered,
            communities: groups,
            modularity,
            levels: 0,
            run: 0,
        }
    }

    /// Community sizes, in community order.
    pub fn sizes(&self) -> Vec<usize> {
        self.communities.iter().map(Vec::len).collect()
    }
}

/// One level's graph: adjacency without self-loops plus a self-loop weight
/// per node (`A_ii`, i.e. twice the internal weight of an aggregated node).
#[derive(Clone, Debug)]
struct Level {
    adj: Vec<Vec<(usize, f64)>>,
    loops: Vec<f64>,
}

impl Level {
    fn degrees(&self) -> Vec<f64> {
        self.adj
            .iter()
            .zip(&self.loops)
            .map(|(list, &l)| list.iter().map(|&(_, w)| w).sum::<f64>() + l)
            .collect()
    }
}

/// A Louvain solver over one graph.
#[derive(Clone, Debug)]
pub struct Louvain {
    base: Level,
    resolution: f64,
}

impl Louvain {
    /// A solver for the graph with the given adjacency lists (symmetric,
    /// no self-loops, weights > 0), resolution 1.
    pub fn new(adjacency: Vec<Vec<(usize, f64)>>) -> Self {
        let n = adjacency.len();
        let mut adj = adjacency;
        for (i, list) in adj.iter_mut().enumerate() {
            list.retain(|&(j, w)| j != i && j < n && w > 0.0);
            list.sort_by_key(|&(j, _)| j);
        }
        Louvain {
            base: Level {
                adj,
                loops: vec![0.0; n],
            },
            resolution: 1.0,
        }
    }

    /// Sets the resolution γ (> 1 favours smaller communities).
    pub fn resolution(mut self, gamma: f64) -> Self {
        self.resolution = gamma;
        self
    }

    /// The best partition over `runs` runs (at least one), run `r` using
    /// ChaCha8 seeded with `seed` on stream `r`. Ties keep the earlier run.
    pub fn best_of(&self, seed: u64, runs: u32) -> Partition {
        let mut best = self.run(seed, 0);
        for r in 1..runs.max(1) {
            let p = self.run(seed, r);
            if p.modularity > best.modularity {
                best = p;
            }
        }
        best
    }

    /// One seeded run.
    pub fn run(&self, seed: u64, stream: u32) -> Partition {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(u64::from(stream));
        let n = self.base.adj.len();
        let two_m: f64 = self.base.degrees().iter().sum();
        if n == 0 || two_m == 0.0 {
            let membership: Vec<usize> = (0..n).collect();
            let mut p = Partition::from_membership(&membership, 0.0);
            p.run = stream;
            return p;
        }
        // membership[v] = node of the current level that holds original v.
        let mut membership: Vec<usize> = (0..n).collect();
        // The first level is the input graph itself (not copied).
        let mut aggregated: Option<Level> = None;
        let mut levels = 0;
        loop {
            let level = aggregated.as_ref().unwrap_or(&self.base);
            let (community, moved) = self.local_moving(level, None, two_m, &mut rng);
            if !moved {
                break;
            }
            levels += 1;
            let (next, relabel) = aggregate(level, &community);
            for m in &mut membership {
                *m = relabel[community[*m]];
            }
            let single = next.adj.len() == 1;
            aggregated = Some(next);
            if single {
                break;
            }
        }
        // Final refinement on the original nodes from the found partition.
        let (membership, _) = self.local_moving(&self.base, Some(membership), two_m, &mut rng);
        let q = modularity_with(&self.base.adj, &membership, self.resolution);
        let mut p = Partition::from_membership(&membership, q);
        p.levels = levels;
        p.run = stream;
        p
    }

    /// Local moving on `level`, starting from singletons or `start`.
    /// Returns the community of every node and whether any node moved.
    fn local_moving(
        &self,
        level: &Level,
        start: Option<Vec<usize>>,
        two_m: f64,
        rng: &mut ChaCha8Rng,
    ) -> (Vec<usize>, bool) {
        let n = level.adj.len();
        let k = level.degrees();
        let mut community: Vec<usize> = start.unwrap_or_else(|| (0..n).collect());
        let mut tot = vec![0.0f64; n];
        for (i, &c) in community.iter().enumerate() {
            tot[c] += k[i];
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(rng);
        // Weight from the current node to each community, and the
        // communities touched, in first-met order.
        let mut link = vec![0.0f64; n];
        let mut touched: Vec<usize> = Vec::new();
        let gamma = self.resolution;
        let mut moved_any = false;
        for _ in 0..MAX_PASSES {
            let mut moved = false;
            for &i in &order {
                let own = community[i];
                for &(j, w) in &level.adj[i] {
                    let c = community[j];
                    if link[c] == 0.0 {
                        touched.push(c);
                    }
                    link[c] += w;
                }
                tot[own] -= k[i];
                // Gain of joining community c, scaled by 2m:
                // k_i,c·2m − γ·tot_c·k_i (constant terms dropped).
                let gain = |c: usize, link_c: f64| link_c * two_m - gamma * tot[c] * k[i];
                let mut best = own;
                let mut best_gain = gain(own, link[own]);
                for &c in &touched {
                    let g = gain(c, link[c]);
                    if g > best_gain {
                        best = c;
                        best_gain = g;
                    }
                }
                tot[best] += k[i];
                if best != own {
                    community[i] = best;
                    moved = true;
                }
                for &c in &touched {
                    link[c] = 0.0;
                }
                touched.clear();
            }
            if !moved {
                break;
            }
            moved_any = true;
        }
        (community, moved_any)
    }
}

/// Builds the aggregated graph: one node per non-empty community, numbered
/// by first member. Returns it and the map community label -> new node.
fn aggregate(level: &Level, community: &[usize]) -> (Level, Vec<usize>) {
    let n = level.adj.len();
    let mut relabel = vec![usize::MAX; n];
    let mut count = 0;
    for &c in community {
        if relabel[c] == usize::MAX {
            relabel[c] = count;
            count += 1;
        }
    }
    let mut loops = vec![0.0f64; count];
    let mut adj: Vec<Vec<(usize, f64)>> = vec![Vec::new(); count];
    let mut acc = vec![0.0f64; count];
    let mut touched: Vec<usize> = Vec::new();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); count];
    for (i, &c) in community.iter().enumerate() {
        members[relabel[c]].push(i);
    }
    for (a, group) in members.iter().enumerate() {
        for &i in group {
            loops[a] += level.loops[i];
            for &(j, w) in &level.adj[i] {
                let b = relabel[community[j]];
                if b == a {
                    loops[a] += w;
                } else {
                    if acc[b] == 0.0 {
                        touched.push(b);
                    }
                    acc[b] += w;
                }
            }
        }
        touched.sort_unstable();
        for &b in &touched {
            adj[a].push((b, acc[b]));
            acc[b] = 0.0;
        }
        touched.clear();
    }
    (Level { adj, loops }, relabel)
}

/// Modularity (γ = 1, the paper's equation 5) of `membership` on the graph
/// given by symmetric adjacency lists without self-loops.
pub fn modularity(adjacency: &[Vec<(usize, f64)>], membership: &[usize]) -> f64 {
    modularity_with(adjacency, membership, 1.0)
}

fn modularity_with(adjacency: &[Vec<(usize, f64)>], membership: &[usize], gamma: f64) -> f64 {
    let labels = membership.iter().copied().max().map_or(0, |m| m + 1);
    let mut inside = vec![0.0f64; labels];
    let mut tot = vec![0.0f64; labels];
    let mut two_m = 0.0;
    for (i, list) in adjacency.iter().enumerate() {
        for &(j, w) in list {
            two_m += w;
            tot[membership[i]] += w;
            if membership[i] == membership[j] {
                inside[membership[i]] += w;
            }
        }
    }
    if two_m == 0.0 {
        return 0.0;
    }
    inside
        .iter()
        .zip(&tot)
        .map(|(&inn, &t)| inn / two_m - gamma * (t / two_m) * (t / two_m))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adjacency(n: usize, edges: &[(usize, usize, f64)]) -> Vec<Vec<(usize, f64)>> {
        let mut adj = vec![Vec::new(); n];
        for &(a, b, w) in edges {
            adj[a].push((b, w));
            adj[b].push((a, w));
        }
        adj
    }

    #[test]
    fn triangle_pair_modularity() {
        // Two triangles joined by one edge: Q = 5/14 for the natural split.
        let adj = adjacency(
            6,
            &[
                (0, 1, 1.0),
                (1, 2, 1.0),
                (0, 2, 1.0),
                (3, 4, 1.0),
                (4, 5, 1.0),
                (3, 5, 1.0),
                (2, 3, 1.0),
            ],
        );
        let q = modularity(&adj, &[0, 0, 0, 1, 1, 1]);
        assert!((q - 5.0 / 14.0).abs() < 1e-12);
        let p = Louvain::new(adj).best_of(7, 4);
        assert_eq!(p.communities, vec![vec![0, 1, 2], vec![3, 4, 5]]);
        assert!((p.modularity - 5.0 / 14.0).abs() < 1e-12);
    }

    #[test]
    fn no_edges_means_singletons_and_zero() {
        let p = Louvain::new(vec![Vec::new(); 3]).run(1, 0);
        assert_eq!(p.communities.len(), 3);
        assert_eq!(p.modularity, 0.0);
    }

    #[test]
    fn higher_resolution_splits_a_clique_pair_further() {
        let adj = adjacency(4, &[(0, 1, 1.0), (2, 3, 1.0), (1, 2, 1.0)]);
        let coarse = Louvain::new(adj.clone()).resolution(0.1).best_of(0, 4);
        let fine = Louvain::new(adj).resolution(1.0).best_of(0, 4);
        assert!(coarse.communities.len() < fine.communities.len());
    }
}
