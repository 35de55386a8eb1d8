//! Difficulty bands (`--min-expected`, `--max-expected`, `--min-golden`,
//! `--max-golden`, and the percentile bands of `curriculum`): instance
//! `i`'s own stream keeps drawing until a draw lands in the band, as it
//! does for UNSAT samples, duplicates and `--exclude` (DESIGN.md
//! "Instance synthesis"), so line `i` stays instance `i`.
//!
//! The rule every writer replays, with a band:
//!
//! > instance `i` is the first draw of stream `i` that is labelled, lies in
//! > the band, and whose key is neither excluded nor the key of an
//! > instance `j < i`.
//!
//! [`Banded::first`] is the first in-band draw of an index (what a shard
//! writes: it needs no other index), found in parallel; [`Banded::admit`]
//! then resolves keys in index order, a taken key retrying the stream and
//! settling on its next in-band draw. Every draw is labelled once under the
//! run's budget and the accepted draw's label is the line's label, so a
//! band costs one search per draw looked at (about `1 / share in band`
//! per line) and nothing else. Replaying instances `0..s` (per-index
//! access, `generate(start=s)`) therefore labels them: a band makes an
//! index's instance depend on the labels of the earlier ones.
//!
//! A band no instance of the setting's reference sample lands in is
//! refused before any drawing, naming the range the sample reaches.
//!
//! A certified label (DESIGN.md "Certified labels") proves only
//! `lower <= E <= upper`, so a draw is in a band only if its whole
//! interval is ([`Band::judge`]): `--min-expected` is met by the lower
//! bound, `--max-expected` by the upper one, and a percentile band by the
//! percentiles of both ends in the reference sample. A certified draw
//! whose interval crosses an edge of the band is redrawn like one outside
//! it, and counted apart ([`Stats::band_straddling`]), as are draws the
//! budget leaves unlabelled under `--exact-only`
//! ([`Stats::band_unlabelled`]): the run's summary line says how many of
//! each. An exact label is an interval of one point, judged as before.

use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::reference::{REFERENCE_SIZE, Reference};
use crate::search::{Label, SearchBudget, optimal_for_instance};
use crate::synth::{Candidate, Dedup, ErrorKind, Instance, Stats, SynthError, Synthesizer};

/// Draws one index may look at to find one in the band.
pub const MAX_BAND_DRAWS: u32 = 10_000;

/// A difficulty band: every bound is optional; expected steps and golden
/// length bounds are inclusive, the percentile band is `min <= p < max`
/// (`max` 100 includes 100).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Band {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_expected: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_expected: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_golden: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_golden: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_percentile: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_percentile: Option<f64>,
}

impl Band {
    /// `None` for a band without any bound (no band at all).
    pub fn some(self) -> Option<Band> {
        (self != Band::default()).then_some(self)
    }

    /// Whether a draw with these labels lies in the band (an exact
    /// label: see [`Band::judge`] for a certified one).
    pub fn admits(&self, expected_steps: f64, golden_length: usize, percentile: f64) -> bool {
        self.judge(
            (expected_steps, expected_steps),
            golden_length,
            (percentile, percentile),
        ) == Verdict::Inside
    }

    /// Where a draw whose label proves `steps.0 <= E <= steps.1` (a point
    /// when exact), with that golden length and the percentiles of both
    /// ends, lies: inside the band only if the whole interval is.
    pub fn judge(
        &self,
        steps: (f64, f64),
        golden_length: usize,
        percentiles: (f64, f64),
    ) -> Verdict {
        let below_max_percentile = |p: f64| {
            self.max_percentile
                .is_none_or(|m| p < m || (m >= 100.0 && p <= m))
        };
        let point_inside = |e: f64, p: f64| {
            self.min_expected.is_none_or(|m| e >= m)
                && self.max_expected.is_none_or(|m| e <= m)
                && self.min_percentile.is_none_or(|m| p >= m)
                && below_max_percentile(p)
        };
        let golden = self.min_golden.is_none_or(|m| golden_length >= m)
            && self.max_golden.is_none_or(|m| golden_length <= m);
        let (lower, upper) = steps;
        let (p_lower, p_upper) = percentiles;
        if golden && point_inside(lower, p_lower) && point_inside(upper, p_upper) {
            return Verdict::Inside;
        }
        // Some value of the interval could be in the band: none of its
        // ends is past a bound on the far side.
        let reachable = golden
            && self.min_expected.is_none_or(|m| upper >= m)
            && self.max_expected.is_none_or(|m| lower <= m)
            && self.min_percentile.is_none_or(|m| p_upper >= m)
            && below_max_percentile(p_lower);
        if reachable && lower < upper {
            Verdict::Straddles
        } else {
            Verdict::Outside
        }
    }

    /// The band as the flags that ask for it.
    pub fn flags(&self) -> String {
        let mut parts = Vec::new();
        let mut push = |flag: &str, value: Option<String>| {
            if let Some(v) = value {
                parts.push(format!("--{flag} {v}"));
            }
        };
        push("min-expected", self.min_expected.map(short));
        push("max-expected", self.max_expected.map(short));
        push("min-golden", self.min_golden.map(|v| v.to_string()));
        push("max-golden", self.max_golden.map(|v| v.to_string()));
        push("min-percentile", self.min_percentile.map(short));
        push("max-percentile", self.max_percentile.map(short));
        parts.join(" ")
    }

    /// Refuses bounds that are not numbers or cross each other.
    pub fn check(&self) -> Result<(), SynthError> {
        let invalid = |parameter, message: String| {
            Err(SynthError::new(
                ErrorKind::Invalid,
                parameter,
                message,
                "give each lower bound at most its upper bound, as finite numbers",
            ))
        };
        for (flag, v) in [
            ("--min-expected", self.min_expected),
            ("--max-expected", self.max_expected),
            ("--min-percentile", self.min_percentile),
            ("--max-percentile", self.max_percentile),
        ] {
            if v.is_some_and(|v| !v.is_finite() || v < 0.0) {
                return invalid(flag, format!("`{flag}` must be a finite number >= 0"));
            }
        }
        if let (Some(lo), Some(hi)) = (self.min_expected, self.max_expected)
            && lo > hi
        {
            return invalid(
                "--min-expected",
                format!(
                    "`--min-expected {}` is above `--max-expected {}`",
                    short(lo),
                    short(hi)
                ),
            );
        }
        if let (Some(lo), Some(hi)) = (self.min_golden, self.max_golden)
            && lo > hi
        {
            return invalid(
                "--min-golden",
                format!("`--min-golden {lo}` is above `--max-golden {hi}`"),
            );
        }
        if let (Some(lo), Some(hi)) = (self.min_percentile, self.max_percentile)
            && lo >= hi
        {
            return invalid(
                "--min-percentile",
                format!(
                    "`--min-percentile {}` is not below `--max-percentile {}`",
                    short(lo),
                    short(hi)
                ),
            );
        }
        Ok(())
    }
}

/// Where a labelled draw lies with respect to a band ([`Band::judge`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Its whole interval is in the band (an exact value: the value is).
    Inside,
    /// No value of its interval is.
    Outside,
    /// A certified interval with values both in and out of the band:
    /// where `E` lies is not proven, so the draw is not in the band.
    Straddles,
}

/// The synthesis of one setting restricted to a band.
pub struct Banded<'s, 'd> {
    synth: &'s Synthesizer<'d>,
    band: Band,
    budget: SearchBudget,
    reference: Arc<Reference>,
}

impl<'s, 'd> Banded<'s, 'd> {
    /// Checks `band` and that the setting's reference sample reaches it;
    /// draws are labelled under `budget`.
    pub fn new(
        synth: &'s Synthesizer<'d>,
        band: Band,
        budget: SearchBudget,
    ) -> Result<Self, SynthError> {
        band.check()?;
        let domain = synth.domain();
        let reference = Reference::cached(domain, synth.params())?;
        let inside = reference
            .labelled
            .iter()
            .filter(|&&(e, g)| band.admits(e, g, reference.percentile(e)))
            .count();
        if inside == 0 {
            return Err(unreachable_band(synth, &band, &reference));
        }
        Ok(Banded {
            synth,
            band,
            budget,
            reference,
        })
    }

    pub fn band(&self) -> Band {
        self.band
    }

    pub fn reference(&self) -> &Arc<Reference> {
        &self.reference
    }

    /// Where `label`'s interval lies with respect to the band.
    pub fn judge(&self, label: &Label) -> Verdict {
        let (lower, upper) = label.interval();
        self.band.judge(
            (lower, upper),
            label.golden_actions.len(),
            (
                self.reference.percentile(lower),
                self.reference.percentile(upper),
            ),
        )
    }

    /// Advances `candidate` to the first draw of its stream, from its
    /// current one on, that lies in the band; returns that draw's label.
    /// A draw rejected for a certified interval across the band's edge,
    /// or for having no label, is counted in the candidate's stats.
    pub fn settle(&self, candidate: &mut Candidate) -> Result<Label, SynthError> {
        let domain = self.synth.domain();
        let mut looked = 0;
        loop {
            match optimal_for_instance(domain, &candidate.instance, self.budget) {
                Ok(label) => match self.judge(&label) {
                    Verdict::Inside => return Ok(label),
                    Verdict::Straddles => candidate.stats.band_straddling += 1,
                    Verdict::Outside => {}
                },
                // Over the search budget with `--exact-only`: no label,
                // outside every band.
                Err(_) => candidate.stats.band_unlabelled += 1,
            }
            looked += 1;
            if looked >= MAX_BAND_DRAWS {
                return Err(too_rare(self.synth, &self.band, &self.reference, candidate));
            }
            self.synth.redraw(candidate)?;
        }
    }

    /// The first in-band draw of `index` and its label.
    pub fn first(&self, index: u64) -> Result<(Candidate, Label), SynthError> {
        let mut candidate = self.synth.candidate(index)?;
        let label = self.settle(&mut candidate)?;
        Ok((candidate, label))
    }

    /// [`Banded::first`] of `indices`, in parallel, in the order given.
    pub fn firsts(&self, indices: &[u64]) -> Result<Vec<(Candidate, Label)>, SynthError> {
        indices
            .par_iter()
            .with_min_len(1)
            .map(|&i| self.first(i))
            .collect()
    }

    /// Makes an in-band `candidate` the instance of its index: while its
    /// key is taken, the next in-band draw of its stream; then records
    /// the key. `label` follows the candidate.
    pub fn admit(
        &self,
        candidate: &mut Candidate,
        label: &mut Label,
        seen: &mut Dedup,
    ) -> Result<(), SynthError> {
        while seen.contains(&candidate.key) {
            self.synth.retry(candidate)?;
            *label = self.settle(candidate)?;
        }
        seen.insert(candidate.key.clone());
        Ok(())
    }

    /// Instances `range` in index order with their labels, deduplicated
    /// against `seen` (which holds every instance below `range.start`).
    pub fn generate(
        &self,
        range: std::ops::Range<u64>,
        seen: &mut Dedup,
        stats: &mut Stats,
    ) -> Result<Vec<(Instance, Label)>, SynthError> {
        let indices: Vec<u64> = range.collect();
        let mut out = Vec::with_capacity(indices.len());
        for (mut candidate, mut label) in self.firsts(&indices)? {
            self.admit(&mut candidate, &mut label, seen)?;
            stats.add(&candidate.stats);
            stats.instances += 1;
            out.push((candidate.instance, label));
        }
        Ok(out)
    }
}

/// What the reference sample reaches, for messages.
fn reach(reference: &Reference) -> String {
    match reference.reach() {
        Some(((e_lo, e_hi), (g_lo, g_hi))) => format!(
            "its {} labelled draws reach expected steps {e_lo:.4} to {e_hi:.4} and golden length {g_lo} to {g_hi}",
            reference.labelled.len()
        ),
        None => "none of its draws could be labelled".into(),
    }
}

fn setting(synth: &Synthesizer) -> String {
    let p = synth.params();
    format!(
        "domain `{}` with {} truths and {} actions",
        synth.domain().name,
        p.truths,
        p.actions
    )
}

fn band_parameter(band: &Band) -> &'static str {
    if band.min_expected.is_some() || band.max_expected.is_some() {
        "--min-expected"
    } else if band.min_golden.is_some() || band.max_golden.is_some() {
        "--min-golden"
    } else {
        "--min-percentile"
    }
}

fn unreachable_band(synth: &Synthesizer, band: &Band, reference: &Reference) -> SynthError {
    SynthError::new(
        ErrorKind::Infeasible,
        band_parameter(band),
        format!(
            "no draw of a {REFERENCE_SIZE}-instance sample of {} lands in the band `{}`: {}",
            setting(synth),
            band.flags(),
            reach(reference)
        ),
        "ask for a band inside that range, or change `--truths`/`--actions`",
    )
}

fn too_rare(
    synth: &Synthesizer,
    band: &Band,
    reference: &Reference,
    candidate: &Candidate,
) -> SynthError {
    SynthError::new(
        ErrorKind::Infeasible,
        band_parameter(band),
        format!(
            "{MAX_BAND_DRAWS} draws for instance {} of {} found none in the band `{}`; a {REFERENCE_SIZE}-instance sample: {}",
            candidate.instance.index,
            setting(synth),
            band.flags(),
            reach(reference)
        ),
        "widen the band, or lower `-n`",
    )
}

/// A bound as a person reads it: `2.5`, and `1e308` rather than its 309
/// digits.
pub fn short(v: f64) -> String {
    if v != 0.0 && !(1e-4..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certified_interval_is_inside_only_when_whole() {
        let band = Band {
            min_expected: Some(2.0),
            max_expected: Some(3.0),
            ..Band::default()
        };
        let judge = |lo: f64, hi: f64| band.judge((lo, hi), 1, (50.0, 50.0));
        assert_eq!(judge(2.5, 2.5), Verdict::Inside);
        assert_eq!(judge(2.0, 3.0), Verdict::Inside);
        assert_eq!(judge(3.5, 3.5), Verdict::Outside);
        // Exact values judge as `admits` always did.
        assert!(band.admits(2.5, 1, 50.0) && !band.admits(1.9, 1, 50.0));
        // Across either edge: not proven inside, and not outside either.
        assert_eq!(judge(1.9, 2.1), Verdict::Straddles);
        assert_eq!(judge(2.9, 3.1), Verdict::Straddles);
        assert_eq!(judge(1.0, 4.0), Verdict::Straddles);
        // Wholly past an edge.
        assert_eq!(judge(3.1, 3.4), Verdict::Outside);
        assert_eq!(judge(1.0, 1.9), Verdict::Outside);
        // The golden length is a fact of the trajectory, not an interval.
        let golden = Band {
            max_golden: Some(0),
            ..band
        };
        assert_eq!(golden.judge((1.9, 2.1), 1, (50.0, 50.0)), Verdict::Outside);
    }

    #[test]
    fn percentile_bands_judge_both_ends() {
        let band = Band {
            min_percentile: Some(25.0),
            max_percentile: Some(50.0),
            ..Band::default()
        };
        let judge = |lo: f64, hi: f64| band.judge((1.0, 2.0), 1, (lo, hi));
        assert_eq!(judge(25.0, 49.9), Verdict::Inside);
        assert_eq!(judge(20.0, 30.0), Verdict::Straddles);
        assert_eq!(judge(40.0, 50.0), Verdict::Straddles);
        assert_eq!(judge(50.0, 60.0), Verdict::Outside);
        assert_eq!(judge(10.0, 24.0), Verdict::Outside);
        let last = Band {
            min_percentile: Some(50.0),
            max_percentile: Some(100.0),
            ..Band::default()
        };
        assert_eq!(last.judge((1.0, 2.0), 1, (60.0, 100.0)), Verdict::Inside);
    }
}
