//! Side tool `stats`: does a player's correctness depend on an instance's
//! structure? Chi-square test of independence and Cramér's V, per model.
//!
//! In: for each instance a player met, its [`StructureSignature`] and
//! whether the player was correct (majority of its K trials, as the paper).
//! Out: a [`Test`] per model: the contingency table's size, chi-square,
//! degrees of freedom, p-value (statrs' chi-squared survival function) and
//! Cramér's V — or a refusal with the reason.
//!
//! The signature: the sorted degree sequences of the instance's truth-action
//! bipartite graph (a truth and an action of the instance are linked when
//! some state of the action rules the truth out), from the instance line by
//! name ([`crate::domain::structure_signature_by_name`]: a truth or action
//! the domain lacks has degree 0); the writers' `structure` field holds the
//! same degrees.
//!
//! Sparseness rule (Cochran's, the usual one for chi-square): refuse when
//! the table has fewer than 2 rows or columns, when any expected count is
//! below 1, or when more than 20% of the cells expect fewer than 5. Rare
//! signatures can be pooled into one `other` row (`min_count`) so that a
//! table of many distinct signatures becomes testable; the pooling is
//! reported.

use std::collections::BTreeMap;

use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF};

use crate::domain::{Domain, StructureSignature, structure_signature_by_name};
use crate::game::{InstanceLine, Judge};
use crate::results::{ResultFile, Sources};

/// The signature of an instance in its domain; truths or actions unknown to
/// the domain have degree 0.
pub(crate) fn signature(domain: &Domain, instance: &InstanceLine) -> StructureSignature {
    structure_signature_by_name(domain, &instance.truths, &instance.actions)
}

/// The outcome of one test.
#[derive(Clone, Debug, Serialize)]
pub struct Test {
    pub model: String,
    pub instances: usize,
    pub correct: usize,
    /// Distinct signatures before pooling.
    pub signatures: usize,
    /// Rows x columns of the table tested.
    pub rows: usize,
    pub columns: usize,
    /// Signatures pooled into the `other` row.
    pub pooled: usize,
    pub chi_square: Option<f64>,
    pub dof: Option<usize>,
    pub p_value: Option<f64>,
    pub cramers_v: Option<f64>,
    /// Why the test was refused, if it was.
    pub refused: Option<String>,
    /// The contingency table tested: per row its signature (or `other`),
    /// instances correct and incorrect; for the report's plot.
    #[serde(skip)]
    pub table: Vec<(String, [usize; 2])>,
}

impl Test {
    /// The test as `kumo-gen stats` prints it: a line of counts, then the
    /// statistics or why the test was refused; each line ends in a
    /// newline.
    pub fn text(&self) -> String {
        let mut text = format!(
            "{}: {} instances ({} correct by majority), {} signatures{}, table {}x{}\n",
            self.model,
            self.instances,
            self.correct,
            self.signatures,
            if self.pooled > 0 {
                format!(" ({} pooled into `other`)", self.pooled)
            } else {
                String::new()
            },
            self.rows,
            self.columns
        );
        match (
            &self.refused,
            self.chi_square,
            self.dof,
            self.p_value,
            self.cramers_v,
        ) {
            (Some(reason), ..) => text.push_str(&format!("  refused: {reason}\n")),
            (None, Some(chi), Some(dof), p, Some(v)) => text.push_str(&format!(
                "  chi-square {chi:.4}, dof {dof}, p {}, Cramér's V {v:.4}\n",
                p.map_or("n/a".to_string(), |p| format!("{p:.4e}"))
            )),
            _ => {}
        }
        text
    }
}

/// Tests independence of signature and correctness for one model.
/// `min_count` > 0 pools signatures seen fewer times into one row.
pub fn test(model: &str, data: &[(StructureSignature, bool)], min_count: usize) -> Test {
    let mut counts: BTreeMap<&StructureSignature, [usize; 2]> = BTreeMap::new();
    for (sig, correct) in data {
        counts.entry(sig).or_default()[usize::from(!*correct)] += 1;
    }
    let signatures = counts.len();
    let mut table: Vec<[usize; 2]> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    let mut other = [0usize; 2];
    let mut pooled = 0;
    for (sig, c) in &counts {
        if c[0] + c[1] < min_count {
            other[0] += c[0];
            other[1] += c[1];
            pooled += 1;
        } else {
            table.push(*c);
            labels.push(sig.to_string());
        }
    }
    if pooled > 0 {
        table.push(other);
        labels.push("other".into());
    }
    let correct = data.iter().filter(|(_, c)| *c).count();
    let mut t = Test {
        model: model.to_string(),
        instances: data.len(),
        correct,
        signatures,
        rows: table.len(),
        columns: 2,
        pooled,
        chi_square: None,
        dof: None,
        p_value: None,
        cramers_v: None,
        refused: None,
        table: labels.into_iter().zip(table.iter().copied()).collect(),
    };
    // Columns that are all zero carry no information.
    let col_sums = [correct, data.len() - correct];
    let columns: Vec<usize> = (0..2).filter(|&c| col_sums[c] > 0).collect();
    t.columns = columns.len();
    if data.is_empty() {
        t.refused = Some("no instances".into());
        return t;
    }
    if t.columns < 2 {
        t.refused = Some(format!(
            "no variation in correctness: all {} instances {}",
            data.len(),
            if correct == 0 { "incorrect" } else { "correct" }
        ));
        return t;
    }
    if t.rows < 2 {
        t.refused = Some("only one signature row: nothing to compare".into());
        return t;
    }
    let n = data.len() as f64;
    let row_sums: Vec<f64> = table.iter().map(|r| (r[0] + r[1]) as f64).collect();
    let (mut chi, mut small, mut tiny) = (0.0, 0usize, 0usize);
    for (r, row) in table.iter().enumerate() {
        for c in 0..2 {
            let expected = row_sums[r] * col_sums[c] as f64 / n;
            if expected < 5.0 {
                small += 1;
            }
            if expected < 1.0 {
                tiny += 1;
            }
            chi += (row[c] as f64 - expected).powi(2) / expected;
        }
    }
    let cells = t.rows * 2;
    if tiny > 0 || small * 5 > cells {
        t.refused = Some(format!(
            "table too sparse: {small} of {cells} cells expect fewer than 5 instances{} \
             (chi-square needs at most 20% below 5 and none below 1); \
             more instances, or pool rare signatures with --pool N",
            if tiny > 0 {
                format!(", {tiny} fewer than 1")
            } else {
                String::new()
            }
        ));
        return t;
    }
    let dof = t.rows - 1;
    t.chi_square = Some(chi);
    t.dof = Some(dof);
    t.p_value = ChiSquared::new(dof as f64).ok().map(|d| d.sf(chi));
    t.cramers_v = Some((chi / n).sqrt()); // min(r, c) - 1 = 1 with two columns
    t
}

/// The (signature, correct) pairs of every result line with a matching
/// instance, per model: correct when most of the line's trials name a
/// truth the instance's judge accepts.
pub struct Observed {
    pub per_model: BTreeMap<String, Vec<(StructureSignature, bool)>>,
    /// Result lines without a matching instance, left out.
    pub unmatched: usize,
}

/// Why result lines cannot be paired with their instances (the user's
/// files or flags).
#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    /// A result file's domain that no `--domain` or dataset names.
    #[error("no domain for `{domain}` (give --domain NAME|PATH)")]
    NoDomain { domain: String },
    /// An instance that does not fit its domain.
    #[error("{file}: {source}")]
    Mismatch {
        file: String,
        #[source]
        source: crate::render::LineMismatch,
    },
}

/// Pairs each result line of `files` with its instance in `sources`,
/// judged by the domain of its result domain name in `domains`. A file
/// whose domain is unknown, or an instance that does not fit its domain,
/// is an error (the message says which).
pub fn observe(
    files: &[ResultFile],
    sources: &Sources,
    domains: &BTreeMap<String, Domain>,
) -> Result<Observed, ObserveError> {
    let mut observed = Observed {
        per_model: BTreeMap::new(),
        unmatched: 0,
    };
    for file in files {
        let Some(domain) = domains.get(&file.key.domain) else {
            return Err(ObserveError::NoDomain {
                domain: file.key.domain.clone(),
            });
        };
        let set = sources.instances(&file.key);
        for line in &file.lines {
            let inst = line
                .seed
                .and_then(|s| set.and_then(|set| set.instances.iter().find(|i| i.seed == s)));
            let Some(inst) = inst else {
                observed.unmatched += 1;
                continue;
            };
            let judge = Judge::new(domain, inst).map_err(|source| ObserveError::Mismatch {
                file: file.path.clone(),
                source,
            })?;
            let wins = line
                .trials
                .iter()
                .filter(|t| t.predicted.as_deref().is_some_and(|p| judge.evaluate(p)))
                .count();
            let correct = 2 * wins > line.trials.len();
            observed
                .per_model
                .entry(file.key.model.clone())
                .or_default()
                .push((signature(domain, inst), correct));
        }
    }
    Ok(observed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(k: usize) -> StructureSignature {
        StructureSignature {
            truth_degrees: vec![k],
            action_degrees: vec![k],
        }
    }

    #[test]
    fn known_two_by_two_table() {
        // [[20, 10], [10, 20]]: chi2 = 60 * (400 - 100)^2 / (30^4) = 6.6667
        let mut data = Vec::new();
        data.extend(std::iter::repeat_n((sig(1), true), 20));
        data.extend(std::iter::repeat_n((sig(1), false), 10));
        data.extend(std::iter::repeat_n((sig(2), true), 10));
        data.extend(std::iter::repeat_n((sig(2), false), 20));
        let t = test("m", &data, 0);
        assert!(t.refused.is_none());
        let chi = t.chi_square.unwrap();
        assert!((chi - 20.0 / 3.0).abs() < 1e-12);
        assert_eq!(t.dof, Some(1));
        // sf of chi2(1) at 6.6667 = 0.009823
        assert!((t.p_value.unwrap() - 0.009823).abs() < 1e-5);
        assert!((t.cramers_v.unwrap() - (chi / 60.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn refuses_sparse_tables_and_pools_rare_rows() {
        let data: Vec<_> = (0..10).map(|i| (sig(i), i % 2 == 0)).collect();
        let t = test("m", &data, 0);
        assert!(t.refused.unwrap().contains("too sparse"));
        let all: Vec<_> = (0..10).map(|i| (sig(i), true)).collect();
        assert!(test("m", &all, 0).refused.unwrap().contains("no variation"));
        let t = test("m", &data, 3);
        assert_eq!(t.pooled, 10);
        assert!(t.refused.unwrap().contains("one signature row"));
    }
}
