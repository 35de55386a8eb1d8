//! The search's input: one instance reduced to bitmasks.
//!
//! In: a [`Domain`] plus the instance's truths and actions (domain indices,
//! in instance order), or plain rule-out lists for tests. Out: a
//! self-contained [`Problem`] in which instance truth `i` is bit `i` and
//! every state of every instance action carries its exclusion mask `X_s`
//! restricted to the instance's truths, in the domain's state order.
//!
//! Restricting `X_s` to the instance's truths is exact: the search only
//! ever uses `X_s ∩ T` for `T` a subset of the instance's truths, and an
//! action's relatedness to such a `T` is the same either way. States are
//! kept even when they rule out nothing: their weight still enters the
//! probabilities of DESIGN.md "Optimal search".

use super::SearchError;
use crate::domain::Domain;

/// Widest instance the search accepts, in truths and in actions.
pub const MAX_WIDTH: usize = 128;

/// One instance, as the search sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    truths: usize,
    /// Per instance action, per state (domain order): the instance truths
    /// the state rules out, as a bitmask.
    actions: Vec<Vec<u128>>,
}

impl Problem {
    /// Builds the problem of an instance of `domain`. `truths` and
    /// `actions` are domain indices in instance order.
    pub fn new(domain: &Domain, truths: &[usize], actions: &[usize]) -> Result<Self, SearchError> {
        check_width(truths.len(), actions.len())?;
        let mut masks = Vec::with_capacity(actions.len());
        for &a in actions {
            let action = domain.actions.get(a).ok_or(SearchError::UnknownIndex {
                what: "action",
                index: a,
            })?;
            let states = action
                .states
                .iter()
                .map(|state| {
                    truths.iter().enumerate().fold(0u128, |mask, (bit, &t)| {
                        if state.rules_out.contains(t) {
                            mask | 1 << bit
                        } else {
                            mask
                        }
                    })
                })
                .collect();
            masks.push(states);
        }
        if let Some(&t) = truths.iter().find(|&&t| t >= domain.truths.len()) {
            return Err(SearchError::UnknownIndex {
                what: "truth",
                index: t,
            });
        }
        Ok(Problem {
            truths: truths.len(),
            actions: masks,
        })
    }

    /// Builds a problem from rule-out lists: `actions[a][s]` lists the
    /// instance truths (`0..truths`) that state `s` of action `a` rules out.
    pub fn from_rule_outs(truths: usize, actions: &[Vec<Vec<usize>>]) -> Result<Self, SearchError> {
        check_width(truths, actions.len())?;
        let mut masks = Vec::with_capacity(actions.len());
        for states in actions {
            let mut row = Vec::with_capacity(states.len());
            for rules_out in states {
                let mut mask = 0u128;
                for &t in rules_out {
                    if t >= truths {
                        return Err(SearchError::UnknownIndex {
                            what: "truth",
                            index: t,
                        });
                    }
                    mask |= 1 << t;
                }
                row.push(mask);
            }
            masks.push(row);
        }
        Ok(Problem {
            truths,
            actions: masks,
        })
    }

    /// Number of instance truths.
    pub fn truth_count(&self) -> usize {
        self.truths
    }

    /// Number of instance actions.
    pub fn action_count(&self) -> usize {
        self.actions.len()
    }

    /// Exclusion masks of action `a`'s states, in state order.
    pub fn states(&self, a: usize) -> &[u128] {
        &self.actions[a]
    }
}

fn check_width(truths: usize, actions: usize) -> Result<(), SearchError> {
    if truths > MAX_WIDTH || actions > MAX_WIDTH {
        return Err(SearchError::TooLarge { truths, actions });
    }
    Ok(())
}
