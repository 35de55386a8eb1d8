//! Splitting a domain into two disjoint sub-domains, in-domain (`-ind`)
//! and out-of-domain (`-ood`), for contamination experiments (KUMO's
//! MedicalINDEnv / MedicalOODEnv).
//!
//! In: a compiled [`Domain`] and [`SplitOptions`]. Out: a [`Split`] — two
//! [`DomainDoc`]s that pass [`crate::domain::compile()`], and a [`SplitReport`].
//!
//! The rule (DESIGN.md "Graph analysis and splits"):
//! 1. *Groups.* `components`: the connected components of the domain graph,
//!    ordered by size descending, then by first truth index, and assigned
//!    alternately to T1 (in-domain) and T2 (out-of-domain). `louvain`: the
//!    Louvain communities (best of several seeded runs), dealt to the sides
//!    in one of two ways: *balanced* (largest first, each to the side with
//!    fewer truths so far, T1 on ties) or *closure* (T1 grown around whole
//!    actions, see `closure`, capped at 1/2, 2/3 or all but 2 of the
//!    truths). Each resolution of [`RESOLUTIONS`] and each way gives a
//!    candidate; the valid candidate with the best score wins (first on
//!    ties): both halves big enough for KUMO's easy setting (4 truths, 6
//!    actions), then truth balance of at least 1 : 2, else at least 1 : 4,
//!    then the most actions on the poorer side, then truth balance. Balancing truths alone is not
//!    enough: in most KUMO domains an action relates to many truths, so a
//!    size-balanced split leaves T1 almost no action wholly inside it.
//! 2. *Fallback.* The component split falls back to Louvain when the largest
//!    component holds more than [`GIANT_COMPONENT_SHARE`] of the truths (the
//!    other side would get less than a fifth), when dealing alternately
//!    leaves the smaller half with less than [`MIN_COMPONENT_BALANCE`] of
//!    the larger's truths, or when a half would be invalid (fewer than 2
//!    truths or no action left). An unbalanced but valid component split is
//!    still used when no Louvain candidate scores better.
//! 3. *Actions.* An action goes to A1 when all its related truths lie in T1,
//!    else to A2; each state keeps only the rule-outs of its side's truths.
//!    An action whose restricted states no longer differ (fewer than 2
//!    distinct rule-out sets — in particular one related to no truth of its
//!    side) is dropped; a truth that restriction left ruled out by every
//!    state of an action loses those rule-outs (it could never be valid
//!    otherwise). Both are reported.
//! 4. *Cut.* Edges with ends on both sides, and actions related to truths
//!    on both sides (they land in A2 and lose their T1 rule-outs).
//!
//! Truths, actions and states keep the domain file's order.

use serde::Serialize;

use super::{DomainGraph, Louvain, order_groups};
use crate::domain::{Domain, DomainDoc, LoadError};

mod halves;
mod text;
use halves::{Halves, assemble, finish};

/// The component split falls back to Louvain when the largest component
/// holds more than this share of the truths.
pub const GIANT_COMPONENT_SHARE: f64 = 0.8;

/// The component split falls back to Louvain when its smaller half holds
/// fewer than this share of the larger half's truths.
pub const MIN_COMPONENT_BALANCE: f64 = 1.0 / 3.0;

/// Louvain resolutions tried in turn until both halves are valid.
pub const RESOLUTIONS: &[f64] = &[1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0];

/// How to form the groups of truths that are dealt to the two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SplitMethod {
    /// Connected components, falling back to Louvain (see the module docs).
    Components,
    /// Louvain communities.
    Louvain,
}

impl SplitMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            SplitMethod::Components => "components",
            SplitMethod::Louvain => "louvain",
        }
    }
}

/// Parameters of a split.
#[derive(Clone, Copy, Debug)]
pub struct SplitOptions {
    pub method: SplitMethod,
    /// Seed of the Louvain runs.
    pub seed: u64,
    /// Louvain runs per resolution; the best is kept. Fewer than `graph`
    /// uses (16 against 64): a split tries ten resolutions, and what matters
    /// is its halves, not the last digit of Q.
    pub runs: u32,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            method: SplitMethod::Components,
            seed: 0,
            runs: 16,
        }
    }
}

/// The two halves and what happened.
#[derive(Clone, Debug)]
pub struct Split {
    pub ind: DomainDoc,
    pub ood: DomainDoc,
    pub report: SplitReport,
}

/// Sizes, balance, cut and everything dropped; serialised for `--json`.
#[derive(Clone, Debug, Serialize)]
pub struct SplitReport {
    pub domain: String,
    pub requested: SplitMethod,
    pub method: SplitMethod,
    /// Why the component split was not used, when it was requested.
    pub fallback: Option<String>,
    pub seed: u64,
    /// Louvain resolution and modularity of the partition used, and how
    /// its communities were dealt.
    pub resolution: Option<f64>,
    pub assignment: Option<Assignment>,
    pub modularity: Option<f64>,
    /// The groups in the order they were dealt, with their side.
    pub groups: Vec<GroupReport>,
    pub ind: SideReport,
    pub ood: SideReport,
    pub cut: CutReport,
    /// Smaller side over larger side, for truths and for kept actions.
    pub truth_balance: f64,
    pub action_balance: f64,
}

/// One group of truths and the side it went to.
#[derive(Clone, Debug, Serialize)]
pub struct GroupReport {
    pub side: &'static str,
    pub truths: Vec<String>,
}

/// One half.
#[derive(Clone, Debug, Serialize)]
pub struct SideReport {
    /// The new domain's name, `<name>-ind` or `<name>-ood`.
    pub name: String,
    pub truths: Vec<String>,
    /// Actions kept, in file order.
    pub actions: Vec<String>,
    /// Actions assigned to this side but dropped, with the reason.
    pub dropped_actions: Vec<Dropped>,
    /// Rule-outs removed because a truth was ruled out by every state.
    pub dropped_rule_outs: Vec<DroppedRuleOut>,
    /// Truths of this side no kept state rules out (findable only by
    /// elimination; the loader warns about them).
    pub unruled_truths: Vec<String>,
}

/// An action dropped from a half.
#[derive(Clone, Debug, Serialize)]
pub struct Dropped {
    pub action: String,
    pub reason: String,
}

/// A truth whose rule-outs were removed from every state of an action.
#[derive(Clone, Debug, Serialize)]
pub struct DroppedRuleOut {
    pub action: String,
    pub truth: String,
}

/// What the split cuts.
#[derive(Clone, Debug, Serialize)]
pub struct CutReport {
    /// Graph edges with one end on each side, and their total weight.
    pub edges: usize,
    pub weight: u64,
    /// Actions related to truths on both sides (kept in A2, restricted).
    pub actions: Vec<String>,
}

/// Why a domain cannot be split.
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    #[error("cannot split domain `{domain}`: {reason}")]
    Infeasible { domain: String, reason: String },
    #[error(
        "the `{side}` half of domain `{domain}` does not validate (a bug in the splitter):\n{source}"
    )]
    Invalid {
        domain: String,
        side: &'static str,
        #[source]
        source: LoadError,
    },
}

/// Splits `domain` (see the module docs).
pub fn split(domain: &Domain, options: &SplitOptions) -> Result<Split, SplitError> {
    let graph = DomainGraph::build(domain);
    let n = domain.truths.len();
    let mut fallback = None;
    // A valid but unbalanced component split, kept in case Louvain does no
    // better.
    let mut unbalanced: Option<Halves> = None;
    if options.method == SplitMethod::Components {
        let components = graph.components();
        let largest = components.first().map_or(0, Vec::len);
        let share = largest as f64 / n.max(1) as f64;
        if share > GIANT_COMPONENT_SHARE {
            fallback = Some(format!(
                "the largest component holds {largest} of {n} {} ({:.0}% > {:.0}%)",
                domain.truth_plural,
                share * 100.0,
                GIANT_COMPONENT_SHARE * 100.0
            ));
        } else {
            let sides = alternate(&components, n);
            match assemble(domain, &graph, &components, &sides) {
                Ok(halves) if Score::of(&halves).truth_balance >= MIN_COMPONENT_BALANCE => {
                    return finish(domain, options, SplitMethod::Components, None, None, halves);
                }
                Ok(halves) => {
                    let (t1, t2) = (halves.sides[0].truths.len(), halves.sides[1].truths.len());
                    fallback = Some(format!(
                        "the component split is unbalanced ({t1} : {t2} {}; below 1 : 3)",
                        domain.truth_plural
                    ));
                    unbalanced = Some(halves);
                }
                Err(reason) => fallback = Some(format!("the component split {reason}")),
            }
        }
    }
    let louvain = Louvain::new(graph.adjacency());
    let adjacency = graph.adjacency();
    let mut best: Option<(Score, Halves, f64, f64, Assignment)> = None;
    let mut last_reason = String::new();
    for &gamma in RESOLUTIONS {
        let partition = louvain
            .clone()
            .resolution(gamma)
            .best_of(options.seed, options.runs);
        let groups = &partition.communities;
        let mut candidates = vec![(Assignment::Balanced, balance(groups, n))];
        for cap in [n.div_ceil(2), (2 * n).div_ceil(3), n.saturating_sub(2)] {
            candidates.push((Assignment::Closure, closure(domain, groups, cap)));
        }
        for (assignment, sides) in candidates {
            match assemble(domain, &graph, groups, &sides) {
                Ok(halves) => {
                    let score = Score::of(&halves);
                    if best.as_ref().is_none_or(|b| score > b.0) {
                        let q = super::modularity(&adjacency, &partition.membership);
                        best = Some((score, halves, gamma, q, assignment));
                    }
                }
                Err(reason) => {
                    last_reason = format!(
                        "the Louvain split {reason} even at resolution {gamma} ({} communities)",
                        groups.len()
                    );
                }
            }
        }
    }
    if let Some(halves) = unbalanced
        && best.as_ref().is_none_or(|b| Score::of(&halves) >= b.0)
    {
        return finish(domain, options, SplitMethod::Components, None, None, halves);
    }
    if let Some((_, halves, gamma, q, assignment)) = best {
        let mut split = finish(
            domain,
            options,
            SplitMethod::Louvain,
            Some(gamma),
            Some(q),
            halves,
        )?;
        split.report.fallback = fallback;
        split.report.assignment = Some(assignment);
        return Ok(split);
    }
    let reason = match fallback {
        Some(f) => format!("{f}, and {last_reason}"),
        None => last_reason,
    };
    Err(SplitError::Infeasible {
        domain: domain.name.clone(),
        reason: format!(
            "{reason}; the domain's actions tie its {} together too tightly to separate",
            domain.truth_plural
        ),
    })
}

/// How Louvain communities were dealt to the two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Assignment {
    /// Largest first, each to the side with fewer truths so far.
    Balanced,
    /// Grown around actions: T1 collects the communities of whole actions
    /// (see `closure`).
    Closure,
}

impl Assignment {
    pub fn as_str(self) -> &'static str {
        match self {
            Assignment::Balanced => "balanced",
            Assignment::Closure => "closure",
        }
    }
}

/// KUMO's easy setting: 4 truths, 6 actions per instance.
const PLAYABLE_TRUTHS: usize = 4;
const PLAYABLE_ACTIONS: usize = 6;

/// How good a candidate split is, compared lexicographically: whether both
/// halves can hold an instance of KUMO's easy setting (4 truths, 6
/// actions), the truth balance tier (2: at least 1 : 2, 1: at least 1 : 4,
/// else 0), then more actions on the poorer side, then better truth
/// balance.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
struct Score {
    playable: bool,
    tier: u8,
    poorer_actions: usize,
    truth_balance: f64,
}

impl Score {
    fn of(h: &Halves) -> Self {
        let (t1, t2) = (h.sides[0].truths.len(), h.sides[1].truths.len());
        let truth_balance = t1.min(t2) as f64 / t1.max(t2).max(1) as f64;
        let (a1, a2) = (h.sides[0].actions.len(), h.sides[1].actions.len());
        Score {
            playable: t1.min(t2) >= PLAYABLE_TRUTHS && a1.min(a2) >= PLAYABLE_ACTIONS,
            tier: if truth_balance >= 0.5 {
                2
            } else if truth_balance >= 0.25 {
                1
            } else {
                0
            },
            poorer_actions: h.sides[0].actions.len().min(h.sides[1].actions.len()),
            truth_balance,
        }
    }
}

/// Side of every truth, T1 grown around whole actions: repeatedly take the
/// action not yet inside T1 whose communities cost the fewest new truths
/// per action that T1 then contains (ties: more actions, then file order),
/// and add those communities, while T1 stays within `cap` truths. An action
/// goes to A1 only when all its related truths are in T1, so this is what
/// gives the in-domain half actions when most actions relate to many
/// truths.
fn closure(domain: &Domain, groups: &[Vec<usize>], cap: usize) -> Vec<bool> {
    let n = domain.truths.len();
    // Bit masks over truths: this runs for every candidate, so subsets are
    // word operations.
    let words = n.div_ceil(64);
    let mask = |truths: &mut dyn Iterator<Item = usize>| {
        let mut m = vec![0u64; words];
        for t in truths {
            m[t / 64] |= 1 << (t % 64);
        }
        m
    };
    let subset = |a: &[u64], b: &[u64]| a.iter().zip(b).all(|(x, y)| x & !y == 0);
    let mut group_of = vec![0; n];
    for (g, members) in groups.iter().enumerate() {
        for &t in members {
            group_of[t] = g;
        }
    }
    let group_masks: Vec<Vec<u64>> = groups
        .iter()
        .map(|g| mask(&mut g.iter().copied()))
        .collect();
    let related: Vec<(Vec<usize>, Vec<u64>)> = domain
        .actions
        .iter()
        .map(|a| {
            let list: Vec<usize> = a.related.iter().filter(|&t| t < n).collect();
            let m = mask(&mut list.iter().copied());
            (list, m)
        })
        .filter(|(list, _)| !list.is_empty())
        .collect();
    let contained = |t1: &[u64]| related.iter().filter(|(_, m)| subset(m, t1)).count();
    let mut t1 = vec![0u64; words];
    let mut size = 0;
    loop {
        let now = contained(&t1);
        // (cost, gain, truths to add) of the best action so far.
        let mut best: Option<(usize, usize, Vec<u64>)> = None;
        for (list, m) in &related {
            if subset(m, &t1) {
                continue;
            }
            let mut add: Vec<usize> = list
                .iter()
                .filter(|&&t| t1[t / 64] & (1 << (t % 64)) == 0)
                .map(|&t| group_of[t])
                .collect();
            add.sort_unstable();
            add.dedup();
            let cost: usize = add.iter().map(|&g| groups[g].len()).sum();
            if size + cost > cap {
                continue;
            }
            let mut next = t1.clone();
            for &g in &add {
                for (w, x) in next.iter_mut().zip(&group_masks[g]) {
                    *w |= x;
                }
            }
            let gain = contained(&next) - now;
            // cost / gain < best_cost / best_gain, exactly.
            let better = best.as_ref().is_none_or(|(bc, bg, _)| {
                cost * bg < bc * gain || (cost * bg == bc * gain && gain > *bg)
            });
            if better {
                best = Some((cost, gain, next));
            }
        }
        let Some((cost, _, next)) = best else { break };
        t1 = next;
        size += cost;
    }
    (0..n).map(|t| t1[t / 64] & (1 << (t % 64)) == 0).collect()
}

/// Side of every truth (false = T1, true = T2): groups dealt alternately.
fn alternate(groups: &[Vec<usize>], n: usize) -> Vec<bool> {
    let mut side = vec![false; n];
    for (g, group) in groups.iter().enumerate() {
        for &t in group {
            side[t] = g % 2 == 1;
        }
    }
    side
}

/// Side of every truth: each group to the side with fewer truths so far.
fn balance(groups: &[Vec<usize>], n: usize) -> Vec<bool> {
    let mut ordered = groups.to_vec();
    order_groups(&mut ordered);
    let mut side = vec![false; n];
    let mut sizes = [0usize; 2];
    for group in &ordered {
        let s = usize::from(sizes[1] < sizes[0]);
        sizes[s] += group.len();
        for &t in group {
            side[t] = s == 1;
        }
    }
    side
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Domain {
        Domain::from_yaml("t.yaml", text).unwrap().0
    }

    /// Two islands {A,B,C} and {D,E}, plus F isolated.
    const ISLANDS: &str = "name: isl\ntruths: [A, B, C, D, E, F]\nactions:\n\
        - name: ax\n  type: str\n  states:\n    p: [A]\n    q: [B, C]\n\
        - name: ay\n  type: str\n  states:\n    p: [C]\n    q: []\n\
        - name: az\n  type: str\n  states:\n    p: [D]\n    q: [E]\n\
        - name: aw\n  type: str\n  states:\n    p: []\n    q: []\n";

    #[test]
    fn components_go_alternately() {
        let d = load(ISLANDS);
        let s = split(&d, &SplitOptions::default()).unwrap();
        assert_eq!(s.report.method, SplitMethod::Components);
        // Order: {A,B,C} -> ind, {D,E} -> ood, {F} -> ind.
        assert_eq!(s.ind.truths, vec!["A", "B", "C", "F"]);
        assert_eq!(s.ood.truths, vec!["D", "E"]);
        assert_eq!(s.report.ind.actions, vec!["ax", "ay"]);
        assert_eq!(s.report.ood.actions, vec!["az"]);
        // `aw` relates to nothing: vacuously in A1, then dropped.
        assert_eq!(s.report.ind.dropped_actions.len(), 1);
        assert_eq!(s.report.ind.dropped_actions[0].action, "aw");
        assert_eq!(s.report.ind.unruled_truths, vec!["F"]);
        assert_eq!(s.report.cut.edges, 0);
        assert!(s.report.cut.actions.is_empty());
        assert_eq!(s.ind.name, "isl-ind");
    }

    #[test]
    fn a_giant_component_falls_back_to_louvain() {
        // Two 4-cliques joined by one action: one component.
        let text = "name: g\ntruths: [A, B, C, D, E, F, G, H]\nactions:\n\
            - name: a1\n  type: str\n  states:\n    p: [A, B]\n    q: [C, D]\n\
            - name: a2\n  type: str\n  states:\n    p: [A, C]\n    q: [B, D]\n\
            - name: b1\n  type: str\n  states:\n    p: [E, F]\n    q: [G, H]\n\
            - name: b2\n  type: str\n  states:\n    p: [E, G]\n    q: [F, H]\n\
            - name: bridge\n  type: str\n  states:\n    p: [D]\n    q: [E]\n";
        let d = load(text);
        let s = split(&d, &SplitOptions::default()).unwrap();
        assert_eq!(s.report.method, SplitMethod::Louvain);
        assert!(s.report.fallback.as_deref().unwrap().contains("8 of 8"));
        assert_eq!(s.ind.truths, vec!["A", "B", "C", "D"]);
        assert_eq!(s.ood.truths, vec!["E", "F", "G", "H"]);
        assert_eq!(s.report.cut.edges, 1);
        assert_eq!(s.report.cut.actions, vec!["bridge"]);
        // The bridge spans both sides: it goes to A2, keeping only E, and
        // then tells E apart from the rest, so it stays.
        assert_eq!(s.report.ood.actions, vec!["b1", "b2", "bridge"]);
        assert_eq!(s.report.truth_balance, 1.0);
    }

    #[test]
    fn an_unbalanced_component_split_falls_back() {
        // Components {A..G} (two triangles-ish tied by one action), {H, I},
        // {J}: dealt alternately that is 8 : 2.
        let text = "name: ub\ntruths: [A, B, C, D, E, F, G, H, I, J]\nactions:\n\
            - name: a1\n  type: str\n  states:\n    p: [A, B]\n    q: [C]\n\
            - name: a2\n  type: str\n  states:\n    p: [A]\n    q: [B, C]\n\
            - name: b1\n  type: str\n  states:\n    p: [D, E]\n    q: [F, G]\n\
            - name: b2\n  type: str\n  states:\n    p: [D, F]\n    q: [E, G]\n\
            - name: ab\n  type: str\n  states:\n    p: [C]\n    q: [D]\n\
            - name: h\n  type: str\n  states:\n    p: [H]\n    q: [I]\n\
            - name: j\n  type: str\n  states:\n    p: [J]\n    q: []\n";
        let s = split(&load(text), &SplitOptions::default()).unwrap();
        assert_eq!(s.report.method, SplitMethod::Louvain);
        let reason = s.report.fallback.clone().unwrap();
        assert!(reason.contains("unbalanced (8 : 2"), "{reason}");
        assert!(s.report.truth_balance >= 0.5, "{:?}", s.report);
    }

    #[test]
    fn an_unsplittable_domain_is_an_error() {
        let text = "name: u\ntruths: [A, B, C]\nactions:\n\
            - name: x\n  type: str\n  states:\n    p: [A]\n    q: [B, C]\n";
        let err = split(&load(text), &SplitOptions::default()).unwrap_err();
        assert!(err.to_string().contains("cannot split domain `u`"), "{err}");
    }
}
