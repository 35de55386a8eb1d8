//! The Bayes-optimal predictor of the explore-then-predict protocol and
//! the exact reference it gives (docs/black-boxes.md "The exact best
//! explorer").
//!
//! With a uniform prior over the instance's truths still consistent with
//! what was observed, the Bayes prediction of an input is the output most
//! of them give (ties: the first state in domain order); it is right for
//! exactly those truths. [`ranked_outputs`] orders every output that way
//! (the offline players' attempts go down it); [`golden_reference`] is the
//! exact accuracy the golden explorer (the exact labels' optimal policy,
//! its first `T` probes) reaches with it, averaged over the valid truth
//! and every held-out input: the value `kumo-gen family NAME --explorer`
//! reports as `golden_accuracy`, computed per played instance so that
//! `score` can put each player beside it.

use crate::domain::Domain;
use crate::search::{Problem, SearchBudget, Searcher};

/// The truths of `truths` (domain indices) that no shown `(action, state)`
/// rules out.
pub fn candidates(domain: &Domain, truths: &[usize], shown: &[(usize, usize)]) -> Vec<usize> {
    truths
        .iter()
        .copied()
        .filter(|&t| {
            shown
                .iter()
                .all(|&(a, s)| !domain.actions[a].states[s].rules_out.contains(t))
        })
        .collect()
}

/// Every state of `action`, the Bayes prediction first: by how many of
/// `candidates` show it (most first), ties in state order. A candidate
/// shows the first state that does not rule it out.
pub fn ranked_outputs(domain: &Domain, candidates: &[usize], action: usize) -> Vec<usize> {
    let states = &domain.actions[action].states;
    let mut count = vec![0usize; states.len()];
    for &t in candidates {
        if let Some(s) = states.iter().position(|s| !s.rules_out.contains(t)) {
            count[s] += 1;
        }
    }
    let mut order: Vec<usize> = (0..states.len()).collect();
    order.sort_by_key(|&s| (std::cmp::Reverse(count[s]), s));
    order
}

/// The exact accuracy of the golden explorer after `turns` probes on an
/// instance of `truths` and `actions` (domain indices), averaged over the
/// valid truth (uniform) and every domain action outside `actions`; `None`
/// when no action is held out, when the instance is too wide to label, or
/// a truth's golden trajectory cannot be labelled.
pub fn golden_reference(
    domain: &Domain,
    truths: &[usize],
    actions: &[usize],
    turns: usize,
) -> Option<f64> {
    let held: Vec<usize> = (0..domain.actions.len())
        .filter(|a| !actions.contains(a))
        .collect();
    if held.is_empty() || truths.is_empty() {
        return None;
    }
    let shows = |a: usize, t: usize| {
        domain.actions[a]
            .states
            .iter()
            .position(|s| !s.rules_out.contains(t))
    };
    let problem = Problem::new(domain, truths, actions).ok()?;
    let budget = SearchBudget::with_nodes(SearchBudget::DEFAULT_MAX_MEMO_ENTRIES, None);
    let mut searcher = Searcher::new();
    let mut right = 0usize;
    for &valid in truths {
        let observed: Vec<Option<usize>> = actions.iter().map(|&a| shows(a, valid)).collect();
        let label = searcher.label(&problem, &observed, budget).ok()?;
        let shown: Vec<(usize, usize)> = label
            .golden_actions
            .iter()
            .take(turns)
            .filter_map(|&p| Some((actions[p], observed[p]?)))
            .collect();
        let left = candidates(domain, truths, &shown);
        for &x in &held {
            let predicted = ranked_outputs(domain, &left, x).first().copied();
            right += usize::from(predicted.is_some() && predicted == shows(x, valid));
        }
    }
    Some(right as f64 / (truths.len() * held.len()) as f64)
}
