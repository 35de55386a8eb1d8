//! The structure signature of an instance: sorted degree sequences of
//! its truth–action bipartite graph (the paper's chi-square study). Domain
//! arithmetic on [`Action::related`], used by the writers (the
//! `structure` field of an instance line). `kumo-gen stats` computes the
//! same degrees from an instance line by name (`crate::stats`).

use super::{Action, Domain};

/// Sorted degree sequences of an instance's truth–action bipartite graph:
/// an edge joins truth `t` and action `a` of the instance when `t` is
/// related to `a` (some state of `a` rules `t` out). Both sequences are
/// sorted descending. Two instances with the same signature have
/// bipartite graphs that cannot be told apart by degrees alone; the stats
/// command tabulates correctness against it (the paper's chi-square study).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct StructureSignature {
    /// For each truth of the instance, how many of its actions relate to it.
    pub truth_degrees: Vec<usize>,
    /// For each action of the instance, how many of its truths it relates to.
    pub action_degrees: Vec<usize>,
}

impl StructureSignature {
    /// A compact, stable key such as `t3,2,1|a2,2,2`, for tables.
    pub fn key(&self) -> String {
        let join = |v: &[usize]| v.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        format!(
            "t{}|a{}",
            join(&self.truth_degrees),
            join(&self.action_degrees)
        )
    }
}

/// The structure signature of an instance given by the indices of its
/// truths and actions in `domain` (out-of-range indices are ignored).
pub fn structure_signature(
    domain: &Domain,
    truths: &[usize],
    actions: &[usize],
) -> StructureSignature {
    let actions: Vec<&Action> = actions
        .iter()
        .filter_map(|&a| domain.actions.get(a))
        .collect();
    let truths: Vec<usize> = truths
        .iter()
        .copied()
        .filter(|&t| t < domain.truths.len())
        .collect();
    let mut truth_degrees: Vec<usize> = truths
        .iter()
        .map(|&t| actions.iter().filter(|a| a.related.contains(t)).count())
        .collect();
    let mut action_degrees: Vec<usize> = actions
        .iter()
        .map(|a| truths.iter().filter(|&&t| a.related.contains(t)).count())
        .collect();
    truth_degrees.sort_unstable_by(|a, b| b.cmp(a));
    action_degrees.sort_unstable_by(|a, b| b.cmp(a));
    StructureSignature {
        truth_degrees,
        action_degrees,
    }
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
    fn signature_counts_related_pairs() {
        let d = tiny();
        let s = structure_signature(&d, &[0, 1, 3], &[0, 2]);
        assert_eq!(s.truth_degrees, vec![1, 1, 1]);
        assert_eq!(s.action_degrees, vec![2, 1]);
        assert_eq!(s.key(), "t1,1,1|a2,1");
        let s = structure_signature(&d, &[0, 2], &[0, 1, 2]);
        assert_eq!(s.truth_degrees, vec![2, 0]);
        assert_eq!(s.action_degrees, vec![1, 1, 0]);
    }
}
