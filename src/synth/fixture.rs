//! Test and benchmark helper: builds a compiled [`Domain`] from plain
//! values, without a YAML file.
//!
//! In: truth names and actions given as states with the truth indices they
//! rule out. Out: a `Domain` and its `DomainDoc`. The caller keeps the
//! domain invariants (see `crate::domain`); [`random`] makes domains that
//! keep them, for property tests.

use crate::domain::{
    Action, ActionDoc, ActionKind, Domain, DomainDoc, RangeStateDoc, State, StateLabel, StatesDoc,
    TruthSet,
};
use crate::fnv::fnv1a_hex;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One action: name, kind, and its states as (label, ruled-out truth
/// indices).
pub type ActionSpec = (String, ActionKind, Vec<(StateLabel, Vec<usize>)>);

/// The domain `name` with `truths` and `actions`.
pub fn build(name: &str, truths: &[String], actions: Vec<ActionSpec>) -> Domain {
    let n = truths.len();
    let mut compiled = Vec::new();
    let mut docs = Vec::new();
    for (action_name, kind, states) in actions {
        let mut related = TruthSet::with_capacity(n);
        let mut compiled_states = Vec::new();
        let mut named = Vec::new();
        let mut ranges = Vec::new();
        for (label, rules_out) in states {
            let set = TruthSet::from_indices(n, rules_out.iter().copied());
            related.union_with(&set);
            let names: Vec<String> = rules_out.iter().map(|&t| truths[t].clone()).collect();
            match &label {
                StateLabel::Named(l) => named.push((l.clone(), names)),
                StateLabel::Range { lo, hi } => ranges.push(RangeStateDoc {
                    range: [*lo, *hi],
                    rules_out: names,
                }),
            }
            compiled_states.push(State {
                label,
                rules_out: set,
            });
        }
        docs.push(ActionDoc {
            name: action_name.clone(),
            kind: kind.as_str().to_string(),
            unit: None,
            states: if kind.is_numeric() {
                StatesDoc::Ranges(ranges)
            } else {
                StatesDoc::Named(named)
            },
        });
        compiled.push(Action {
            name: action_name,
            kind,
            unit: None,
            states: compiled_states,
            related,
        });
    }
    let document = DomainDoc {
        name: name.to_string(),
        title: None,
        truth_noun: None,
        truth_plural: None,
        action_noun: None,
        action_plural: None,
        goal: None,
        case_sensitive_names: false,
        truths: truths.to_vec(),
        actions: docs,
    };
    let source_hash = fnv1a_hex(
        serde_json::to_string(&document)
            .unwrap_or_default()
            .as_bytes(),
    );
    Domain {
        name: name.to_string(),
        title: name.to_string(),
        truth_noun: "truth".into(),
        truth_plural: "truths".into(),
        action_noun: "action".into(),
        action_plural: "actions".into(),
        goal: "identify the truth".into(),
        quote_truths: crate::domain::truths_ambiguous_in_sentences(truths),
        truths: truths.to_vec(),
        actions: compiled,
        document,
        source_hash,
    }
}

/// The smallest domain: truths `a` and `b`, one action `test` whose state
/// `x` rules out `a` and `y` rules out `b`. Only two distinct instances
/// exist (either truth valid), so it exhausts at once.
pub fn two_truths_one_action() -> Domain {
    let names = vec!["a".to_string(), "b".to_string()];
    build(
        "tiny",
        &names,
        vec![(
            "test".into(),
            ActionKind::Str,
            vec![
                (StateLabel::Named("x".into()), vec![0]),
                (StateLabel::Named("y".into()), vec![1]),
            ],
        )],
    )
}

/// A random valid domain: `truths` truths, `actions` actions of 2..=4
/// states (about one in four numeric), each state ruling out each truth
/// with probability `density`; no truth is ruled out by every state of an
/// action.
pub fn random(seed: u64, truths: usize, actions: usize, density: f64) -> Domain {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let names: Vec<String> = (0..truths).map(|t| format!("T{t}")).collect();
    let specs = (0..actions)
        .map(|a| {
            let states = rng.random_range(2..=4u32) as usize;
            let kind = match rng.random_range(0..8u32) {
                0 => ActionKind::Float,
                1 => ActionKind::Int,
                _ => ActionKind::Str,
            };
            let mut sets: Vec<Vec<usize>> = (0..states)
                .map(|_| (0..truths).filter(|_| rng.random_bool(density)).collect())
                .collect();
            for t in 0..truths {
                if sets.iter().all(|s| s.contains(&t)) {
                    let last = sets.len() - 1;
                    sets[last].retain(|&x| x != t);
                }
            }
            let spec = sets
                .into_iter()
                .enumerate()
                .map(|(i, set)| {
                    let label = match kind {
                        ActionKind::Str => StateLabel::Named(format!("s{i}")),
                        ActionKind::Float => StateLabel::Range {
                            lo: i as f64 * 1.5,
                            hi: (i + 1) as f64 * 1.5,
                        },
                        ActionKind::Int => StateLabel::Range {
                            lo: (i * 10) as f64,
                            hi: (i * 10 + 10) as f64,
                        },
                    };
                    (label, set)
                })
                .collect();
            (format!("A{a}"), kind, spec)
        })
        .collect();
    build(&format!("random-{seed}"), &names, specs)
}
