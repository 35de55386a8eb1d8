//! Procedural task families: black boxes defined by code (WILT-style
//! hidden rules over integer triples, boolean circuits, ciphers), compiled
//! into ordinary domains so the whole pipeline — synthesis, exact labels,
//! books, SFT, eval, score — runs on them unchanged.
//!
//! In: a family name and its [`FamilyParams`]. Out: a [`DomainDoc`] and a
//! [`FamilyReport`]. Truths are the candidate hypotheses, actions the
//! probes, and the states of a probe are the box's possible answers to it;
//! observing an answer rules out exactly the hypotheses that would have
//! answered differently ([`compile`]). Hypotheses that answer every probe
//! identically cannot be told apart by any instance, so they are merged
//! into the first of them (the report counts them); probes every remaining
//! hypothesis answers alike show nothing and are dropped.
//!
//! Each family ([`rules3`], [`circuits`], [`ciphers`]) enumerates or samples
//! its hypotheses and probes from a seeded ChaCha8 stream and evaluates
//! them; everything is in a fixed order, so the same parameters give the
//! same bytes. A family's `--curve` (exact expected probes as the
//! hypotheses per instance grow) runs the pipeline on its domain:
//! [`crate::pipeline::family_curve`]. The family room stands below the
//! pipeline and never calls it.

pub mod ciphers;
pub mod circuits;
pub mod mechanics;
pub mod opponents;
pub mod programs;
pub mod puzzles;
pub mod rules3;
pub mod table;

use std::collections::HashMap;
use std::ops::RangeInclusive;

use crate::domain::{ActionDoc, DomainDoc, StatesDoc};

pub use table::{FAMILIES, Family};

/// Parameters shared by every family (family-specific ones have defaults
/// a family may ignore).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyParams {
    /// Hypotheses to draw (before merging equivalent ones).
    pub hypotheses: usize,
    /// Probes to draw.
    pub probes: usize,
    pub seed: u64,
    /// `rules3`: probe numbers lie in `0..=max_value`.
    pub max_value: u32,
    /// `circuits`: number of inputs.
    pub inputs: u32,
    /// `circuits`: gates per circuit at most.
    pub gates: u32,
    /// `ciphers`: alphabet size (letters from `A`).
    pub alphabet: u32,
    /// `ciphers`: plaintext length of a probe.
    pub length: u32,
    /// `programs`, `mechanics`, `puzzles`, `opponents`: draw the hard
    /// boxes of the family (each family's module says what that means).
    pub hard: bool,
}

impl Default for FamilyParams {
    fn default() -> Self {
        FamilyParams {
            hypotheses: 200,
            probes: 40,
            seed: 0,
            max_value: 9,
            inputs: 4,
            gates: 3,
            alphabet: 5,
            length: 2,
            hard: false,
        }
    }
}

/// A bad family name or parameter: what is wrong and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FamilyError {
    pub message: String,
    pub help: String,
}

impl FamilyError {
    pub(crate) fn new(message: impl Into<String>, help: impl Into<String>) -> Self {
        FamilyError {
            message: message.into(),
            help: help.into(),
        }
    }
}

/// A family's black box before compilation: hypotheses and probes, each
/// with a name, and every hypothesis's answer to every probe.
#[derive(Clone, Debug, PartialEq)]
pub struct BlackBox {
    pub domain_name: String,
    pub title: String,
    pub truth_noun: String,
    pub action_noun: String,
    pub goal: String,
    pub hypotheses: Vec<String>,
    pub probes: Vec<String>,
    /// `answers[p][h]`: what hypothesis `h` answers to probe `p`.
    pub answers: Vec<Vec<String>>,
}

/// What compiling did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FamilyReport {
    pub hypotheses_drawn: usize,
    /// Hypotheses merged into an earlier one that answers every probe the
    /// same: (merged, kept).
    pub merged: Vec<(String, String)>,
    /// Probes dropped because every kept hypothesis answers them alike.
    pub dropped_probes: Vec<String>,
    pub truths: usize,
    pub actions: usize,
}

impl FamilyReport {
    /// The line `kumo-gen family NAME -o PATH` prints for the domain it
    /// wrote to `path`.
    pub fn summary(&self, name: &str, path: &std::path::Path) -> String {
        format!(
            "{name}: {} hypotheses drawn, {} merged as equivalent, {} truths; {} probes kept, {} dropped (every truth answers them alike) -> {}",
            self.hypotheses_drawn,
            self.merged.len(),
            self.truths,
            self.actions,
            self.dropped_probes.len(),
            path.display()
        )
    }
}

/// The hypotheses a family may draw (`--hypotheses`).
pub const HYPOTHESES_RANGE: RangeInclusive<usize> = 2..=5000;
/// The probes a family may draw (`--probes`).
pub const PROBES_RANGE: RangeInclusive<usize> = 1..=2000;

/// Builds the domain of family `name`.
pub fn build(name: &str, params: &FamilyParams) -> Result<(DomainDoc, FamilyReport), FamilyError> {
    check_range("--hypotheses", params.hypotheses, HYPOTHESES_RANGE)?;
    check_range("--probes", params.probes, PROBES_RANGE)?;
    let family = table::find(name)?;
    compile(&(family.black_box)(params)?)
}

/// The default (hypotheses, probes) of a family, of its hard boxes when
/// `hard` (of an unknown name, the most common default; building it fails
/// naming the families).
pub fn default_counts(name: &str, hard: bool) -> (usize, usize) {
    table::find(name).map_or((200, 40), |f| {
        if hard {
            f.hard_counts
        } else {
            f.default_counts
        }
    })
}

/// The domain file of family `name` as `kumo-gen family -o` writes it: a
/// header naming the command that makes it, then the YAML. The text is
/// checked to load as a domain file (the loader's size and node budgets).
pub fn domain_file(
    name: &str,
    params: &FamilyParams,
) -> Result<(String, FamilyReport), FamilyError> {
    let (doc, report) = build(name, params)?;
    let yaml = doc.to_yaml();
    if let Err(e) = crate::domain::load_bytes(&format!("<{name}>"), yaml.as_bytes()) {
        return Err(FamilyError::new(
            e.to_string(),
            "the domain is too large for a domain file; draw fewer hypotheses or probes (--hypotheses, --probes)",
        ));
    }
    let family = table::find(name)?;
    let specific = (family.flags)(params);
    let header = format!(
        "# Generated by kumo-gen {} from the `{name}` family:\n# kumo-gen family {name} --hypotheses {} --probes {} --seed {}{specific}\n",
        env!("CARGO_PKG_VERSION"),
        params.hypotheses,
        params.probes,
        params.seed,
    );
    Ok((format!("{header}{yaml}"), report))
}

/// `value` within `lo..=hi`, else an error naming `flag`.
pub(crate) fn check_range(
    flag: &str,
    value: usize,
    range: RangeInclusive<usize>,
) -> Result<(), FamilyError> {
    let (lo, hi) = (*range.start(), *range.end());
    if range.contains(&value) {
        Ok(())
    } else {
        Err(FamilyError::new(
            format!("{flag} {value} is out of range"),
            format!("use {flag} from {lo} to {hi}"),
        ))
    }
}

/// Compiles a black box into a domain document (see the module docs).
pub fn compile(black_box: &BlackBox) -> Result<(DomainDoc, FamilyReport), FamilyError> {
    let BlackBox {
        hypotheses,
        probes,
        answers,
        ..
    } = black_box;
    let mut report = FamilyReport {
        hypotheses_drawn: hypotheses.len(),
        ..FamilyReport::default()
    };
    // Merge hypotheses with identical answer columns (keep the first).
    let mut first_with: HashMap<Vec<&str>, usize> = HashMap::new();
    let mut kept: Vec<usize> = Vec::new();
    for h in 0..hypotheses.len() {
        let column: Vec<&str> = answers.iter().map(|row| row[h].as_str()).collect();
        match first_with.get(&column) {
            Some(&k) => report
                .merged
                .push((hypotheses[h].clone(), hypotheses[k].clone())),
            None => {
                first_with.insert(column, h);
                kept.push(h);
            }
        }
    }
    if kept.len() < 2 {
        return Err(FamilyError::new(
            "the probes tell fewer than two hypotheses apart",
            "draw more hypotheses or more probes (--hypotheses, --probes)",
        ));
    }
    let mut actions = Vec::new();
    for (p, probe) in probes.iter().enumerate() {
        // Answers in order of first appearance over the kept hypotheses.
        let mut states: Vec<(String, Vec<String>)> = Vec::new();
        for &h in &kept {
            let answer = &answers[p][h];
            if !states.iter().any(|(a, _)| a == answer) {
                states.push((answer.clone(), Vec::new()));
            }
        }
        if states.len() < 2 {
            report.dropped_probes.push(probe.clone());
            continue;
        }
        for (answer, rules_out) in &mut states {
            *rules_out = kept
                .iter()
                .filter(|&&h| &answers[p][h] != answer)
                .map(|&h| hypotheses[h].clone())
                .collect();
        }
        actions.push(ActionDoc {
            name: probe.clone(),
            kind: "str".into(),
            unit: None,
            states: StatesDoc::Named(states),
        });
    }
    if actions.is_empty() {
        return Err(FamilyError::new(
            "no probe tells two hypotheses apart",
            "draw more probes (--probes) or more varied hypotheses",
        ));
    }
    report.truths = kept.len();
    report.actions = actions.len();
    let doc = DomainDoc {
        name: black_box.domain_name.clone(),
        title: Some(black_box.title.clone()),
        truth_noun: Some(black_box.truth_noun.clone()),
        truth_plural: None,
        action_noun: Some(black_box.action_noun.clone()),
        action_plural: None,
        goal: Some(black_box.goal.clone()),
        case_sensitive_names: false,
        truths: kept.iter().map(|&h| hypotheses[h].clone()).collect(),
        actions,
    };
    Ok((doc, report))
}

/// `k` distinct indices of `0..n` in increasing order, drawn from `rng`
/// (all of them when `k >= n`).
pub(crate) fn sample_indices(rng: &mut rand_chacha::ChaCha8Rng, n: usize, k: usize) -> Vec<usize> {
    use rand::RngExt;
    if k >= n {
        return (0..n).collect();
    }
    if n > 1 << 20 {
        // A large space (26 letters, 6 per plaintext): draw until `k`
        // distinct, never materialising the space.
        let mut chosen = std::collections::BTreeSet::new();
        while chosen.len() < k {
            chosen.insert(rng.random_range(0..n));
        }
        return chosen.into_iter().collect();
    }
    // Partial Fisher-Yates over the index list: deterministic per seed.
    let mut pool: Vec<usize> = (0..n).collect();
    for i in 0..k {
        let j = rng.random_range(i..n);
        pool.swap(i, j);
    }
    let mut chosen = pool[..k].to_vec();
    chosen.sort_unstable();
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy() -> BlackBox {
        BlackBox {
            domain_name: "toy".into(),
            title: "Toy".into(),
            truth_noun: "rule".into(),
            action_noun: "probe".into(),
            goal: "find the rule".into(),
            hypotheses: vec!["h0".into(), "h1".into(), "h2".into(), "h3".into()],
            probes: vec!["p0".into(), "p1".into(), "p2".into()],
            answers: vec![
                vec!["T".into(), "F".into(), "T".into(), "T".into()],
                vec!["1".into(), "1".into(), "1".into(), "1".into()],
                vec!["a".into(), "b".into(), "c".into(), "a".into()],
            ],
        }
    }

    #[test]
    fn merges_equivalent_hypotheses_and_drops_blind_probes() {
        let (doc, report) = compile(&toy()).unwrap();
        assert_eq!(doc.truths, ["h0", "h1", "h2"]);
        assert_eq!(report.merged, [("h3".to_string(), "h0".to_string())]);
        assert_eq!(report.dropped_probes, ["p1"]);
        let StatesDoc::Named(states) = &doc.actions[1].states else {
            panic!("named states");
        };
        // Answer `a` rules out exactly those answering otherwise.
        assert_eq!(
            states[0],
            ("a".to_string(), vec!["h1".to_string(), "h2".to_string()])
        );
        crate::domain::compile("toy.yaml", &doc).unwrap();
    }
}
