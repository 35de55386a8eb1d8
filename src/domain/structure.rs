//! The structure signature of an instance: sorted degree sequences of
//! its truth–action bipartite graph (the paper's chi-square study). Domain
//! arithmetic on [`Action::related`], written once: the writers take it
//! from indices (the `structure` field of an instance line), `kumo-gen
//! stats` from an instance line's names ([`structure_signature_by_name`]);
//! one text form ([`StructureSignature`]'s `Display`).

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

/// The one text form of a signature, as `stats` and the report print it:
/// `T[3,2,1] A[2,2,2]`.
impl std::fmt::Display for StructureSignature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let join = |v: &[usize]| v.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        write!(
            f,
            "T[{}] A[{}]",
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
    let known = |indices: &[usize], len: usize| -> Vec<Option<usize>> {
        indices
            .iter()
            .filter(|&&i| i < len)
            .map(|&i| Some(i))
            .collect()
    };
    degrees(
        domain,
        &known(truths, domain.truths.len()),
        &known(actions, domain.actions.len()),
    )
}

/// The structure signature of an instance given by the names of its
/// truths and actions (an instance line's): a name the domain does not
/// have stays in the signature with degree 0.
pub fn structure_signature_by_name(
    domain: &Domain,
    truths: &[String],
    actions: &[String],
) -> StructureSignature {
    let truths: Vec<Option<usize>> = truths.iter().map(|t| domain.truth_index(t)).collect();
    let actions: Vec<Option<usize>> = actions.iter().map(|a| domain.action_index(a)).collect();
    degrees(domain, &truths, &actions)
}

/// The sorted degree sequences of the truth-action graph of `truths` and
/// `actions` (`None`: not in the domain, degree 0).
fn degrees(
    domain: &Domain,
    truths: &[Option<usize>],
    actions: &[Option<usize>],
) -> StructureSignature {
    let actions: Vec<Option<&Action>> = actions
        .iter()
        .map(|a| a.map(|a| &domain.actions[a]))
        .collect();
    let relates = |a: Option<&Action>, t: Option<usize>| match (a, t) {
        (Some(a), Some(t)) => a.related.contains(t),
        _ => false,
    };
    let mut truth_degrees: Vec<usize> = truths
        .iter()
        .map(|&t| actions.iter().filter(|&&a| relates(a, t)).count())
        .collect();
    let mut action_degrees: Vec<usize> = actions
        .iter()
        .map(|&a| truths.iter().filter(|&&t| relates(a, t)).count())
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
        assert_eq!(s.to_string(), "T[1,1,1] A[2,1]");
        let s = structure_signature(&d, &[0, 2], &[0, 1, 2]);
        assert_eq!(s.truth_degrees, vec![2, 0]);
        assert_eq!(s.action_degrees, vec![1, 1, 0]);
    }
}
