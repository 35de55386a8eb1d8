//! Steps 3 and 4 of a split (see the parent module): from a truth
//! assignment to the two halves. Actions go to the side holding all their
//! related truths (else to A2), states keep only their side's rule-outs,
//! actions left without distinct states and rule-outs that would make a
//! truth never valid are dropped and reported, and the cut is measured.
//! [`assemble`] plans both halves (cheap, run for every candidate);
//! [`finish`] builds the winner's two domain documents, checks that both
//! compile and writes the report.

use std::collections::HashMap;

use super::{
    CutReport, Dropped, DroppedRuleOut, GroupReport, SideReport, Split, SplitError, SplitMethod,
    SplitOptions, SplitReport,
};
use crate::domain::{Domain, DomainDoc, StatesDoc, compile};
use crate::graph::{DomainGraph, order_groups};

/// Both halves as a plan: the documents are built only for the winner.
pub(super) struct Halves {
    /// Side of every truth (false = T1).
    pub(super) side_of: Vec<bool>,
    /// Per side, the kept actions and the truths whose rule-outs they lose.
    pub(super) kept: [Vec<(usize, Vec<usize>)>; 2],
    pub(super) sides: [SideReport; 2],
    pub(super) groups: Vec<GroupReport>,
    pub(super) cut: CutReport,
}

const SIDE_NAMES: [&str; 2] = ["ind", "ood"];

/// The truths every one of `sets` holds (none without a set).
fn in_every_set(sets: &[Vec<usize>]) -> Vec<usize> {
    sets.first()
        .map(|first| {
            first
                .iter()
                .copied()
                .filter(|t| sets.iter().all(|set| set.contains(t)))
                .collect()
        })
        .unwrap_or_default()
}

/// One half (`s`: 0 = ind, 1 = ood): its truths, the actions kept (each
/// with the truths every one of its states rules out, whose rule-outs it
/// loses) and dropped, and its report; an error when the half would have
/// fewer than 2 truths or no action.
#[allow(clippy::type_complexity)]
fn side(
    domain: &Domain,
    side_of: &[bool],
    s: usize,
    suffix: &str,
) -> Result<(Vec<(usize, Vec<usize>)>, SideReport), String> {
    let side_index = |t: usize| usize::from(side_of[t]);
    let in_side: Vec<bool> = (0..domain.truths.len())
        .map(|t| side_index(t) == s)
        .collect();
    let truths: Vec<String> = domain
        .truths
        .iter()
        .enumerate()
        .filter(|&(t, _)| in_side[t])
        .map(|(_, name)| name.clone())
        .collect();
    // Kept actions with the truths whose rule-outs they lose.
    let mut kept: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut report = SideReport {
        name: format!("{}-{suffix}", domain.name),
        truths,
        actions: Vec::new(),
        dropped_actions: Vec::new(),
        dropped_rule_outs: Vec::new(),
        unruled_truths: Vec::new(),
    };
    let mut ruled = vec![false; domain.truths.len()];
    for (a, action) in domain.actions.iter().enumerate() {
        let to_a1 = action.related.iter().all(|t| side_index(t) == 0);
        if usize::from(!to_a1) != s {
            continue;
        }
        // Rule-out sets of the restricted states, as truth-index lists.
        let mut sets: Vec<Vec<usize>> = action
            .states
            .iter()
            .map(|st| st.rules_out.iter().filter(|&t| in_side[t]).collect())
            .collect();
        let everywhere = in_every_set(&sets);
        for &t in &everywhere {
            report.dropped_rule_outs.push(DroppedRuleOut {
                action: action.name.clone(),
                truth: domain.truths[t].clone(),
            });
            for set in &mut sets {
                set.retain(|&u| u != t);
            }
        }
        let mut distinct = sets.clone();
        distinct.sort();
        distinct.dedup();
        if distinct.len() < 2 {
            let reason = if sets.iter().all(Vec::is_empty) {
                format!("it relates to no {} of this side", domain.truth_noun)
            } else {
                "its states no longer tell any truths apart".to_string()
            };
            report.dropped_actions.push(Dropped {
                action: action.name.clone(),
                reason,
            });
            continue;
        }
        for set in &sets {
            for &t in set {
                ruled[t] = true;
            }
        }
        report.actions.push(action.name.clone());
        kept.push((a, everywhere));
    }
    report.unruled_truths = (0..domain.truths.len())
        .filter(|&t| in_side[t] && !ruled[t])
        .map(|t| domain.truths[t].clone())
        .collect();
    let count = report.truths.len();
    if count < 2 {
        return Err(format!(
            "leaves the `{suffix}` half with {count} {}; a domain needs at least 2",
            if count == 1 {
                &domain.truth_noun
            } else {
                &domain.truth_plural
            }
        ));
    }
    if kept.is_empty() {
        return Err(format!(
            "leaves the `{suffix}` half without an {}",
            domain.action_noun
        ));
    }
    Ok((kept, report))
}

/// The edges, weight and actions the cut between the halves crosses.
fn cut_report(domain: &Domain, graph: &DomainGraph, side_of: &[bool]) -> CutReport {
    let side_index = |t: usize| usize::from(side_of[t]);
    let mut cut = CutReport {
        edges: 0,
        weight: 0,
        actions: Vec::new(),
    };
    for (a, b, w) in graph.edges() {
        if side_of[a] != side_of[b] {
            cut.edges += 1;
            cut.weight += u64::from(w);
        }
    }
    for action in &domain.actions {
        let mut seen = [false; 2];
        for t in action.related.iter() {
            seen[side_index(t)] = true;
        }
        if seen[0] && seen[1] {
            cut.actions.push(action.name.clone());
        }
    }
    cut
}

/// Builds both halves for a truth assignment, or says why a half would be
/// invalid.
pub(super) fn assemble(
    domain: &Domain,
    graph: &DomainGraph,
    groups: &[Vec<usize>],
    side_of: &[bool],
) -> Result<Halves, String> {
    let side_index = |t: usize| usize::from(side_of[t]);
    let mut kept_sides: Vec<Vec<(usize, Vec<usize>)>> = Vec::new();
    let mut reports: Vec<SideReport> = Vec::new();
    for (s, suffix) in SIDE_NAMES.iter().enumerate() {
        let (kept, report) = side(domain, side_of, s, suffix)?;
        kept_sides.push(kept);
        reports.push(report);
    }
    let cut = cut_report(domain, graph, side_of);
    let mut ordered = groups.to_vec();
    order_groups(&mut ordered);
    let groups = ordered
        .iter()
        .map(|g| GroupReport {
            side: SIDE_NAMES[side_index(g[0])],
            truths: g.iter().map(|&t| domain.truths[t].clone()).collect(),
        })
        .collect();
    let ood_kept = kept_sides.pop().expect("two halves");
    let ind_kept = kept_sides.pop().expect("two halves");
    let ood = reports.pop().expect("two halves");
    let ind = reports.pop().expect("two halves");
    Ok(Halves {
        side_of: side_of.to_vec(),
        kept: [ind_kept, ood_kept],
        sides: [ind, ood],
        groups,
        cut,
    })
}

/// The domain document of side `s` (0 = ind, 1 = ood) of a plan.
fn materialise(domain: &Domain, halves: &Halves, s: usize) -> DomainDoc {
    let doc = &domain.document;
    let suffix = SIDE_NAMES[s];
    let index: HashMap<&str, usize> = domain
        .truths
        .iter()
        .enumerate()
        .map(|(t, name)| (name.as_str(), t))
        .collect();
    let in_side = |t: usize| usize::from(halves.side_of[t]) == s;
    let title = doc.title.clone().unwrap_or_else(|| domain.title.clone());
    let actions = halves.kept[s]
        .iter()
        .map(|(a, lost)| {
            let mut action = doc.actions[*a].clone();
            let keep = |name: &String| {
                index
                    .get(name.as_str())
                    .is_some_and(|&t| in_side(t) && !lost.contains(&t))
            };
            match &mut action.states {
                StatesDoc::Named(pairs) => {
                    for (_, names) in pairs.iter_mut() {
                        names.retain(keep);
                    }
                }
                StatesDoc::Ranges(ranges) => {
                    for range in ranges.iter_mut() {
                        range.rules_out.retain(keep);
                    }
                }
            }
            action
        })
        .collect();
    DomainDoc {
        name: format!("{}-{suffix}", domain.name),
        title: Some(format!(
            "{title} ({} split)",
            if s == 0 { "in-domain" } else { "out-of-domain" }
        )),
        truths: halves.sides[s].truths.clone(),
        actions,
        ..doc.clone()
    }
}

/// Validates both halves and builds the report.
pub(super) fn finish(
    domain: &Domain,
    options: &SplitOptions,
    method: SplitMethod,
    resolution: Option<f64>,
    modularity: Option<f64>,
    halves: Halves,
) -> Result<Split, SplitError> {
    let ind_doc = materialise(domain, &halves, 0);
    let ood_doc = materialise(domain, &halves, 1);
    let Halves {
        sides: [ind, ood],
        groups,
        cut,
        ..
    } = halves;
    for (side, doc) in [("ind", &ind_doc), ("ood", &ood_doc)] {
        compile(&format!("{}.yaml", doc.name), doc).map_err(|source| SplitError::Invalid {
            domain: domain.name.clone(),
            side,
            source,
        })?;
    }
    let ratio = |a: usize, b: usize| {
        if a.max(b) == 0 {
            1.0
        } else {
            a.min(b) as f64 / a.max(b) as f64
        }
    };
    let report = SplitReport {
        domain: domain.name.clone(),
        requested: options.method,
        method,
        fallback: None,
        seed: options.seed,
        resolution,
        assignment: None,
        modularity,
        groups,
        truth_balance: ratio(ind.truths.len(), ood.truths.len()),
        action_balance: ratio(ind.actions.len(), ood.actions.len()),
        ind,
        ood,
        cut,
    };
    Ok(Split {
        ind: ind_doc,
        ood: ood_doc,
        report,
    })
}
