//! How many distinct instances a domain and setting can give, estimated
//! before a run from a sample of its own first draws.
//!
//! The sample is the first draw of the dataset's streams `0..m` (the same
//! draws a run makes first: the pipeline keeps them and hands them to the
//! run, [`crate::synth::FirstDraws`], so they are drawn once and the
//! estimate changes no output). Draws an `--exclude` set takes are
//! dropped first, so the estimate is of what is still available. Over the remaining draws, with
//! `D` distinct keys of which `f1` were drawn once and `f2` twice, the
//! estimate is Chao1's bias-corrected richness `D + f1 (f1 - 1) / (2 (f2 +
//! 1))`: a lower-bound estimator suited to unequal draw probabilities,
//! which the synthesizer has. Without any repeat (`f1 = D`) the sample only
//! says "more than about m^2/6" (below that, a sample of m uniform draws
//! repeats with probability above 95%).
//!
//! A request is refused up front only when the sample has *exhausted* the
//! space: every key drawn at least twice and the sample at least ten times
//! the distinct keys; then the count is all but exact and `n` above it is
//! impossible. Otherwise `n` above half the estimate is a warning (the
//! redraws grow, and the run may end with "found none new").
//! [`crate::synth::Synthesizer::check_count`] keeps its combinatorial bound.
//!
//! Why not count exactly where the space is small: the space is what the
//! synthesizer *reaches*, not every set of truths and actions that meets
//! KUMO's constraints. Which action sets a draw can end with depends on
//! the SAT solver's randomised search, the fill to N_action actions and
//! the shortcut guard ([`crate::synth`]), and which states are observed on
//! which ranges can be hit; a count by enumeration would have to replay
//! those rules exactly, and one that drifted from them would refuse
//! feasible requests. So a small space is "counted" only when the sample
//! exhausts it (above), and the line printed says which kind of number it
//! is and what the sample left out (other `--split` parts, excluded sets).

use std::collections::{HashMap, HashSet};

use super::{Exclusion, KeyKind, instance_keys};
use crate::domain::Domain;
use crate::synth::{Candidate, FirstDraws, SynthError, Synthesizer};

/// Draws sampled by default.
pub const SAMPLE: u64 = 512;

/// The estimate under one key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Distinct keys among the sample's non-excluded draws.
    pub distinct: u64,
    /// Chao1's estimate (`None`: no repeat, see [`Estimate::lower_bound`]).
    pub estimate: Option<f64>,
    /// Every key drawn at least twice and the sample at least ten times the
    /// distinct keys: `distinct` is the count.
    pub exhausted: bool,
}

impl Estimate {
    fn of(counts: &HashMap<u128, u32>, sample: u64) -> Estimate {
        let mut f1 = 0u64;
        let mut f2 = 0u64;
        // Counting only: the order of the values cannot matter.
        #[allow(clippy::disallowed_methods)]
        for &c in counts.values() {
            match c {
                1 => f1 += 1,
                2 => f2 += 1,
                _ => {}
            }
        }
        let distinct = counts.len() as u64;
        let estimate = (f1 < distinct || distinct == 0).then(|| {
            distinct as f64 + (f1 * f1.saturating_sub(1)) as f64 / (2.0 * (f2 + 1) as f64)
        });
        Estimate {
            distinct,
            estimate: estimate.filter(|_| distinct > 0),
            // No draw left (all excluded) is no evidence at all.
            exhausted: distinct > 0 && f1 == 0 && sample >= 10 * distinct,
        }
    }

    /// What the sample guarantees at least (about): the estimate, or
    /// `m^2/6` when no draw repeated (0 when no draw was left).
    pub fn lower_bound(&self, sample: u64) -> f64 {
        self.estimate
            .unwrap_or((sample * sample) as f64 / 6.0)
            .max(self.distinct as f64)
    }

    /// `at least about 1234`, `more than about 43690`, `12`, or
    /// `unknown` when no draw was left to count.
    pub fn describe(&self, sample: u64) -> String {
        match self.estimate {
            _ if self.exhausted => format!("{}", self.distinct),
            _ if self.distinct == 0 => "unknown".to_string(),
            Some(e) => format!("at least about {e:.0}"),
            None => format!("more than about {:.0}", self.lower_bound(sample)),
        }
    }
}

/// The capacity of a setting.
#[derive(Clone, Debug, PartialEq)]
pub struct Capacity {
    /// Draws sampled.
    pub sample: u64,
    /// Of those, draws an excluded set or another `--split` part takes.
    pub excluded: u64,
    /// Of `excluded`, draws whose context is another `--split` part's.
    pub other_parts: u64,
    pub exact: Estimate,
    pub context: Estimate,
}

/// Samples the first draws of streams `0..sample` of `synth` (drawn as
/// the pipeline draws the ones it keeps, [`FirstDraws::draw`]).
pub fn estimate(
    synth: &Synthesizer,
    exclusion: Option<&Exclusion>,
    sample: u64,
) -> Result<Capacity, SynthError> {
    let draws = FirstDraws::draw(synth, sample)?;
    Ok(of_draws(synth.domain(), exclusion, draws.first(sample)))
}

/// The capacity `candidates` (the first draws of streams `0..len` of a
/// setting of `domain`, drawn once and kept for the run:
/// [`crate::synth::FirstDraws`]) show.
pub fn of_draws(
    domain: &Domain,
    exclusion: Option<&Exclusion>,
    candidates: &[Candidate],
) -> Capacity {
    let sample = candidates.len() as u64;
    // The part's draws, and (for a `--split` part) the draws of every
    // part: a space the whole sample exhausts is counted for each part too,
    // even one that none of the sample's draws fell into.
    let mut exact: HashMap<u128, u32> = HashMap::new();
    let mut context: HashMap<u128, u32> = HashMap::new();
    let mut whole_exact: HashMap<u128, u32> = HashMap::new();
    let mut whole_context: HashMap<u128, u32> = HashMap::new();
    let mut held_exact: HashSet<u128> = HashSet::new();
    let mut held_context: HashSet<u128> = HashSet::new();
    let (mut excluded, mut other_parts, mut whole_kept) = (0, 0, 0);
    for candidate in candidates {
        let in_sets = exclusion.is_some_and(|e| e.in_sets(&candidate.key));
        let outside = exclusion.is_some_and(|e| e.outside_part(&candidate.key));
        if in_sets || outside {
            excluded += 1;
            other_parts += u64::from(outside);
        }
        if in_sets {
            continue;
        }
        let keys = instance_keys(domain, &candidate.key);
        let exact_key = keys.get(KeyKind::Exact);
        whole_kept += 1;
        *whole_exact.entry(exact_key).or_default() += 1;
        *whole_context.entry(keys.context).or_default() += 1;
        if outside {
            continue;
        }
        held_exact.insert(exact_key);
        held_context.insert(keys.context);
        *exact.entry(exact_key).or_default() += 1;
        *context.entry(keys.context).or_default() += 1;
    }
    let kept = sample - excluded;
    let counted_in_part = |part: Estimate, whole: &HashMap<u128, u32>, held: &HashSet<u128>| {
        if part.exhausted || other_parts == 0 || !Estimate::of(whole, whole_kept).exhausted {
            return part;
        }
        Estimate {
            distinct: held.len() as u64,
            estimate: None,
            exhausted: true,
        }
    };
    let exact = counted_in_part(Estimate::of(&exact, kept), &whole_exact, &held_exact);
    let context = counted_in_part(Estimate::of(&context, kept), &whole_context, &held_context);
    Capacity {
        sample,
        excluded,
        other_parts,
        exact,
        context,
    }
}

impl Capacity {
    /// The line a run prints: the numbers, which kind of number each is
    /// (counted or estimated), and what the sample left out.
    pub fn describe(&self) -> String {
        let kept = self.sample - self.excluded;
        if kept == 0 && !self.exact.exhausted {
            return format!(
                "capacity: unknown: of the first {} draws of this run's streams, {}, so the sample says nothing of what is left (the run redraws past them)",
                self.sample,
                self.taken_by().join(" and ")
            );
        }
        let kind = |e: &Estimate| if e.exhausted { "counted" } else { "estimated" };
        let estimate =
            "an estimate is a lower bound (the space the synthesizer reaches is not enumerated)";
        let count = "a count means every one was drawn at least twice";
        let note = match (self.exact.exhausted, self.context.exhausted) {
            (true, true) => count.to_string(),
            (false, false) => estimate.to_string(),
            _ => format!("{estimate}; {count}"),
        };
        format!(
            "capacity: {} distinct instances ({}), {} distinct contexts ({}), from {kept} draws of this run's streams; {note}{}",
            self.exact.describe(kept),
            kind(&self.exact),
            self.context.describe(kept),
            kind(&self.context),
            self.left_out()
        )
    }

    /// `; of 512 draws, 417 belong to other parts ...`, or nothing.
    fn left_out(&self) -> String {
        if self.excluded == 0 {
            return String::new();
        }
        format!(
            "; of {} draws, {}, so this is what is left",
            self.sample,
            self.taken_by().join(" and ")
        )
    }

    /// Why sampled draws were left out: `417 belong to other parts ...`.
    fn taken_by(&self) -> Vec<String> {
        let sets = self.excluded - self.other_parts;
        let mut reasons = Vec::new();
        if self.other_parts > 0 {
            reasons.push(format!(
                "{} belong to other parts of `--split`",
                self.other_parts
            ));
        }
        if sets > 0 {
            let verb = if sets == 1 { "is" } else { "are" };
            reasons.push(format!("{sets} {verb} in excluded sets"));
        }
        reasons
    }

    /// `Err` (the refusal) when `n` is impossible; `Ok(Some(warning))` when
    /// it is close to the estimate.
    pub fn check(&self, n: u64, what: &str) -> Result<Option<String>, CapacityError> {
        let kept = self.sample - self.excluded;
        if self.context.exhausted && self.context.distinct == 0 {
            return Err(CapacityError::NoContextLeft {
                n,
                what: what.to_string(),
                sample: self.sample,
                left_out: self.left_out(),
            });
        }
        if self.exact.exhausted && n > self.exact.distinct {
            return Err(CapacityError::TooFewInstances {
                n,
                distinct: self.exact.distinct,
                what: what.to_string(),
                sample: self.sample,
                left_out: self.left_out(),
            });
        }
        if kept == 0 && !self.exact.exhausted {
            return Ok(Some(format!(
                "the first {} draws of {what} are all taken, so nothing is known of how many instances are left for `-n {n}`: expect many redraws, or a run that ends finding none new",
                self.sample
            )));
        }
        let bound = self.exact.lower_bound(kept);
        Ok(((n as f64) > 0.5 * bound).then(|| {
            format!(
                "`-n {n}` is close to the {} distinct instances {what} can give: expect many redraws, or a run that ends finding none new",
                self.exact.describe(kept)
            )
        }))
    }
}

/// Why `-n` is more than a setting can give. `what` names the setting;
/// `left_out` says what the exclusions took (empty without them).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CapacityError {
    /// Every context of the sample is excluded or another part's.
    #[error(
        "`-n {n}` is more than {what} can give: none of the contexts its first {sample} draws hold (each drawn at least twice) is left{left_out}"
    )]
    NoContextLeft {
        n: u64,
        what: String,
        sample: u64,
        left_out: String,
    },
    /// The sample drew every instance at least twice, and they are fewer
    /// than `n`.
    #[error(
        "`-n {n}` is more than the {distinct} distinct instances {what} can give: its first {sample} draws hold only those, each drawn at least twice{left_out}"
    )]
    TooFewInstances {
        n: u64,
        distinct: u64,
        what: String,
        sample: u64,
        left_out: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{Params, fixture};

    #[test]
    fn a_tiny_space_is_counted_and_a_large_one_estimated() {
        let domain = fixture::two_truths_one_action();
        let synth = Synthesizer::new(&domain, Params::new(2, 1, 1)).unwrap();
        let capacity = estimate(&synth, None, 64).unwrap();
        assert!(capacity.exact.exhausted);
        assert_eq!(capacity.exact.distinct, 2);
        assert!(capacity.check(2, "it").unwrap().is_some());
        assert!(
            capacity
                .describe()
                .starts_with("capacity: 2 distinct instances (counted), 2 distinct contexts (counted), from 64 draws"),
            "{}",
            capacity.describe()
        );
        assert!(
            capacity
                .check(3, "it")
                .unwrap_err()
                .to_string()
                .contains("the 2 distinct")
        );

        let domain = fixture::random(9, 40, 30, 0.2);
        let synth = Synthesizer::new(&domain, Params::new(8, 8, 1)).unwrap();
        let capacity = estimate(&synth, None, 128).unwrap();
        assert!(!capacity.exact.exhausted);
        assert!(capacity.exact.lower_bound(128) >= 128.0);
        assert_eq!(capacity.check(100, "it"), Ok(None));
        assert!(capacity.describe().contains("(estimated)"));
        assert!(!capacity.describe().contains("other parts"));

        // A `--split` part: the other parts' draws are left out and said so.
        let parts = super::super::split::parse_split("train=0.75,test=0.25").unwrap();
        let part =
            Exclusion::none(&domain).for_part(super::super::split::PartFilter::new(&parts, 1));
        let capacity = estimate(&synth, Some(&part), 128).unwrap();
        assert!(capacity.other_parts > 64, "{capacity:?}");
        assert_eq!(capacity.other_parts, capacity.excluded);
        let line = capacity.describe();
        assert!(
            line.contains(&format!(
                "from {} draws of this run's streams",
                128 - capacity.other_parts
            )) && line.contains(&format!(
                "of 128 draws, {} belong to other parts of `--split`",
                capacity.other_parts
            )),
            "{line}"
        );
    }

    #[test]
    fn a_sample_whose_draws_are_all_excluded_counts_nothing() {
        let none = Estimate::of(&HashMap::new(), 0);
        assert!(!none.exhausted);
        assert_eq!(none.estimate, None);
        assert_eq!(none.describe(0), "unknown");
        let capacity = Capacity {
            sample: 512,
            excluded: 512,
            other_parts: 0,
            exact: none,
            context: none,
        };
        let warning = capacity.check(100, "it").unwrap().unwrap();
        assert!(warning.contains("nothing is known"), "{warning}");
        let line = capacity.describe();
        assert!(
            line.contains("capacity: unknown")
                && line.contains("512 are in excluded sets")
                && !line.contains("counted"),
            "{line}"
        );
    }

    #[test]
    fn chao1_on_known_counts() {
        let counts: HashMap<u128, u32> = [(1, 1), (2, 1), (3, 1), (4, 2), (5, 3)].into();
        let e = Estimate::of(&counts, 8);
        // D = 5, f1 = 3, f2 = 1: 5 + 3 * 2 / (2 * 2).
        assert_eq!(e.estimate, Some(6.5));
        assert!(!e.exhausted);
        let none_repeat: HashMap<u128, u32> = [(1, 1), (2, 1)].into();
        assert_eq!(Estimate::of(&none_repeat, 2).estimate, None);
    }
}
