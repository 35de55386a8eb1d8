//! The first draws of a setting's streams, drawn once and handed on.
//!
//! Before a run writes anything, the pipeline estimates the setting's
//! capacity from the first draws of streams `0..m` (m = 512, fewer for a
//! small `n`); the run then needs those very draws again, as the
//! candidates of its indices `0..m`. [`FirstDraws`] keeps them so each is
//! drawn once: a [`Synthesizer`] given them ([`Synthesizer::reusing`])
//! answers [`Synthesizer::candidate`] for those indices with a copy.
//!
//! Why the copy is exact: a first draw (attempt 0 of stream `i`, with its
//! stream positioned after it, its counters and its key) is a pure
//! function of the domain, the [`Params`] and `i` — the incidence tables
//! and the base seed are computed from the first two, and nothing else
//! enters a draw. The draws are kept with the domain they were drawn
//! from and their params, and a synthesizer takes them only when both are
//! its own (the same `Domain` value, equal params). Everything after the
//! first draw — a duplicate's retries, an `--exclude` set's or another
//! `--split` part's redraws, a band's redraws — continues the copied
//! stream exactly as it would the drawn one, and the counters (`sat_calls`,
//! `resamples`, ...) are the draw's own.
//!
//! Measured (whole process, 12x16, `-n 1000 --no-labels`): the 512
//! draws were a third of the synthesis; rules3 with `--threads 1` went
//! from 5.11 to 3.46 G instructions, the 85 shipped domains from 24.2 to
//! about 16 s of CPU (BENCHMARKS.md, "Optimal search").

use std::sync::Arc;

use super::{Candidate, Params, SynthError, Synthesizer};
use crate::domain::Domain;

/// The first draws of streams `0..len()` of one domain and setting.
#[derive(Debug)]
pub struct FirstDraws<'d> {
    domain: &'d Domain,
    params: Params,
    draws: Vec<Candidate>,
}

impl<'d> FirstDraws<'d> {
    /// The first draws of streams `0..count` of `synth` (in parallel on the
    /// current rayon pool; the ones it already holds are copied).
    pub fn draw(synth: &Synthesizer<'d>, count: u64) -> Result<FirstDraws<'d>, SynthError> {
        let indices: Vec<u64> = (0..count).collect();
        Ok(FirstDraws {
            domain: synth.domain,
            params: synth.params.clone(),
            draws: synth.candidates(&indices)?,
        })
    }

    /// How many streams' first draws it holds.
    pub fn len(&self) -> u64 {
        self.draws.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.draws.is_empty()
    }

    /// The first draws of streams `0..count` (all it holds if fewer).
    pub fn first(&self, count: u64) -> &[Candidate] {
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        &self.draws[..count.min(self.draws.len())]
    }

    /// Whether these are draws of `synth`'s own streams: the same domain
    /// value and equal params (everything a draw depends on).
    fn belong_to(&self, synth: &Synthesizer<'d>) -> bool {
        std::ptr::eq(self.domain, synth.domain) && self.params == synth.params
    }

    /// The first draw of stream `index`, if held.
    fn get(&self, index: u64) -> Option<&Candidate> {
        usize::try_from(index).ok().and_then(|i| self.draws.get(i))
    }
}

impl<'d> Synthesizer<'d> {
    /// This synthesizer, answering [`Synthesizer::candidate`] for the
    /// streams `draws` holds with a copy of their first draw. Draws of
    /// another domain value or other params are not used.
    pub fn reusing(mut self, draws: Option<Arc<FirstDraws<'d>>>) -> Synthesizer<'d> {
        self.first_draws = draws.filter(|d| d.belong_to(&self));
        self
    }

    /// The held first draw of stream `index`, if any.
    pub(super) fn held_draw(&self, index: u64) -> Option<Candidate> {
        self.first_draws.as_ref()?.get(index).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{Dedup, Stats, fixture};

    fn keys(instances: &[crate::synth::Instance]) -> Vec<crate::synth::Key> {
        instances.iter().map(crate::synth::Key::of).collect()
    }

    /// A run handed the first draws makes the same instances and counters
    /// as one that draws them, retries and redraws included (a small space:
    /// many duplicates continue the copied streams).
    #[test]
    fn reused_first_draws_give_the_same_run() {
        let domain = fixture::random(5, 9, 7, 0.3);
        let params = Params::new(4, 3, 1);
        let drawn = Synthesizer::new(&domain, params.clone()).unwrap();
        let mut seen = Dedup::new();
        let mut stats = Stats::default();
        let want = drawn.generate(0..120, &mut seen, &mut stats).unwrap();
        assert!(stats.duplicates > 0, "the case must exercise retries");

        let first = Arc::new(FirstDraws::draw(&drawn, 64).unwrap());
        assert_eq!(first.len(), 64);
        let reusing = Synthesizer::new(&domain, params.clone())
            .unwrap()
            .reusing(Some(Arc::clone(&first)));
        assert!(reusing.first_draws.is_some());
        let mut seen = Dedup::new();
        let mut again = Stats::default();
        let got = reusing.generate(0..120, &mut seen, &mut again).unwrap();
        assert_eq!(got, want);
        assert_eq!(keys(&got), keys(&want));
        assert_eq!(again, stats);
        let mut copy = reusing.candidate(3).unwrap();
        let mut fresh = drawn.candidate(3).unwrap();
        assert_eq!(
            (copy.key.clone(), copy.stats),
            (fresh.key.clone(), fresh.stats)
        );
        reusing.retry(&mut copy).unwrap();
        drawn.retry(&mut fresh).unwrap();
        assert_eq!(copy.instance, fresh.instance);
    }

    /// Draws of other params or another domain value are not taken.
    #[test]
    fn draws_of_another_setting_are_not_used() {
        let domain = fixture::random(5, 9, 7, 0.3);
        let params = Params::new(4, 3, 1);
        let synth = Synthesizer::new(&domain, params.clone()).unwrap();
        let first = Arc::new(FirstDraws::draw(&synth, 8).unwrap());
        let mut other = params.clone();
        other.seed += 1;
        let synth = Synthesizer::new(&domain, other).unwrap();
        assert!(
            synth
                .reusing(Some(Arc::clone(&first)))
                .first_draws
                .is_none()
        );
        let twin = fixture::random(5, 9, 7, 0.3);
        let synth = Synthesizer::new(&twin, params).unwrap();
        assert!(synth.reusing(Some(first)).first_draws.is_none());
    }
}
