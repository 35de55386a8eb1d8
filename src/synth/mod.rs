//! Stage 2–4 of the pipeline: instance synthesis (DESIGN.md "Instance
//! synthesis", the paper's Algorithm 2 made deterministic).
//!
//! In: a compiled [`Domain`] and the [`Params`] of one setting
//! (`--truths`, `--actions`, `--valid`, `--seed`, ...). Out: [`Instance`]s,
//! the nouns the writers and the optimal search consume. The entry point is
//! [`Synthesizer`]: [`Synthesizer::new`] checks the request up front and
//! precomputes the domain's incidence tables, [`Synthesizer::generate`]
//! produces a run of instances by index.
//!
//! The steps of one draw, one file each:
//! 1. [`sample`]: N_truth truths, then N_valid of them valid; every state
//!    is classified *relevant* (rules out a sampled truth) and
//!    *contradictory* (rules out a valid truth).
//! 2. [`cnf`]: the SAT problem over the non-contradictory relevant states
//!    (at most one state per action, at most N_action actions through a
//!    sequential counter, every invalid truth covered), solved by varisat
//!    with a randomised variable order and phase. UNSAT is data: the draw
//!    resamples, boundedly, and then names the infeasible parameter.
//! 3. [`assemble`]: fill to exactly N_action actions, apply the shortcut
//!    guard, take numeric values from [`values`] (which also decides, once
//!    per domain, which range states can be observed at all).
//! 4. [`dedup`]: canonical keys, resolved in index order.
//!
//! Beside them: `params` (the setting, defaults, counters), `checks`
//! (the request checked up front, the infeasibility error naming the
//! parameter to change, and [`Instance::check`] of the three KUMO
//! constraints) and [`first_draws`] (the capacity estimate's first draws,
//! kept so the run copies them instead of drawing them again).
//!
//! Determinism: instance `i` draws only from its own `ChaCha8Rng`, seeded
//! with `seed_from_u64` of a stable FNV-1a hash of (seed, domain name,
//! N_truth, N_action, N_valid) and put on stream `i` ([`instance_rng`]).
//! Resamples and duplicate retries continue that same stream. Candidates
//! are drawn in parallel (rayon keeps order) and duplicates are resolved
//! sequentially in index order, so the output depends on neither thread
//! count nor timing. The definition every mode implements:
//!
//! > instance `i` is the first draw of stream `i` whose canonical key is
//! > not the key of any instance `j < i`.
//!
//! Instance `i` therefore depends only on instances `0..i`: a longer run
//! extends a shorter one, a resumed run continues an interrupted one, and
//! shards that draw the first candidate of each of their indices can be
//! merged by replaying this rule (see `crate::pipeline::write`).

pub mod assemble;
mod checks;
pub mod cnf;
pub mod dedup;
pub mod first_draws;
pub mod fixture;
pub mod index;
mod params;
pub mod sample;
pub mod values;

use crate::domain::Domain;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

pub use checks::{ErrorKind, SynthError};
use checks::{check_params, distinct_bound, infeasible};
pub use dedup::{Dedup, Key, Taken};
pub use first_draws::FirstDraws;
pub use params::{
    DEFAULT_DECIMALS, DEFAULT_SEED, MAX_DUPLICATE_RETRIES, MAX_SAMPLES, Params, Stats,
};

/// One observation of an instance action.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation {
    /// Index of the observed state in the action's states.
    pub state: usize,
    /// The measured value for `float`/`int` actions: inside the observed
    /// state's range and inside no other range of the action. Integral for
    /// `int` actions.
    pub value: Option<f64>,
}

/// One synthesized game instance. Indices refer to the domain.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    /// Position in the dataset (KUMO's `seed`).
    pub index: u64,
    /// The sampled truths, in sampled order.
    pub truths: Vec<usize>,
    /// The valid truths, in the order of `truths`.
    pub valid: Vec<usize>,
    /// The instance's actions, in instance (presentation) order.
    pub actions: Vec<usize>,
    /// One observation per entry of `actions`.
    pub observations: Vec<Observation>,
}

/// A draw of one index before dedup: the instance, the stream it came from
/// (positioned after it, so a duplicate continues the stream) and its key.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub instance: Instance,
    pub key: Key,
    pub stats: Stats,
    rng: ChaCha8Rng,
    retries: u32,
}

/// The synthesis stage for one domain and setting.
pub struct Synthesizer<'d> {
    domain: &'d Domain,
    params: Params,
    tables: sample::Tables,
    base_seed: u64,
    /// First draws made already (the capacity estimate's), copied instead
    /// of drawn again ([`first_draws`]).
    first_draws: Option<std::sync::Arc<FirstDraws<'d>>>,
}

impl<'d> Synthesizer<'d> {
    /// Checks `params` against `domain` and precomputes the incidence
    /// tables. Fails on parameters the domain can never satisfy.
    pub fn new(domain: &'d Domain, params: Params) -> Result<Self, SynthError> {
        check_params(domain, &params)?;
        let mut tables = sample::Tables::new(domain, params.decimals);
        values::mark_observable(&mut tables);
        let base_seed = base_seed(&domain.name, &params);
        Ok(Synthesizer {
            domain,
            params,
            tables,
            base_seed,
            first_draws: None,
        })
    }

    pub fn domain(&self) -> &'d Domain {
        self.domain
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// An upper bound on the number of distinct instances; `n` above it is
    /// refused up front.
    pub fn distinct_bound(&self) -> f64 {
        distinct_bound(self.domain, &self.params)
    }

    /// Refuses `n` larger than the number of distinct instances can be.
    pub fn check_count(&self, n: u64) -> Result<(), SynthError> {
        if n == 0 {
            return Err(SynthError::new(
                ErrorKind::Invalid,
                "-n",
                "`-n 0` asks for no instances".into(),
                "ask for at least one instance, e.g. `-n 100`",
            ));
        }
        let bound = self.distinct_bound();
        if (n as f64) > bound {
            return Err(SynthError::new(
                ErrorKind::TooFewDistinct,
                "-n",
                format!(
                    "`-n {n}` is more than the at most {bound:.0} distinct instances of domain `{}` with {} truths and {} actions",
                    self.domain.name, self.params.truths, self.params.actions
                ),
                "lower `-n`, or raise `--truths`/`--actions`",
            ));
        }
        Ok(())
    }

    /// The first draw of instance `index` (attempt 0 of its stream).
    pub fn candidate(&self, index: u64) -> Result<Candidate, SynthError> {
        if let Some(held) = self.held_draw(index) {
            return Ok(held);
        }
        let mut rng = instance_rng(self.base_seed, index);
        let mut stats = Stats::default();
        let instance = self.draw(index, &mut rng, &mut stats)?;
        let key = Key::of(&instance);
        Ok(Candidate {
            instance,
            key,
            stats,
            rng,
            retries: 0,
        })
    }

    /// The next draw of the candidate's stream, after its key turned out to
    /// be taken. Fails after [`MAX_DUPLICATE_RETRIES`].
    pub fn retry(&self, candidate: &mut Candidate) -> Result<(), SynthError> {
        candidate.retries += 1;
        candidate.stats.duplicates += 1;
        if candidate.retries > MAX_DUPLICATE_RETRIES {
            return Err(SynthError::new(
                ErrorKind::TooFewDistinct,
                "-n",
                format!(
                    "domain `{}` with {} truths and {} actions seems to have only {} distinct instances: {MAX_DUPLICATE_RETRIES} more draws for instance {} found none new",
                    self.domain.name,
                    self.params.truths,
                    self.params.actions,
                    candidate.instance.index,
                    candidate.instance.index
                ),
                "lower `-n`, or raise `--truths`/`--actions`",
            ));
        }
        let index = candidate.instance.index;
        candidate.instance = self.draw(index, &mut candidate.rng, &mut candidate.stats)?;
        candidate.key = Key::of(&candidate.instance);
        Ok(())
    }

    /// The next draw of the candidate's stream after its draw was turned
    /// down for its difficulty (a band, [`crate::difficulty`]): counted
    /// as out of band, not as a duplicate.
    pub fn redraw(&self, candidate: &mut Candidate) -> Result<(), SynthError> {
        candidate.stats.out_of_band += 1;
        let index = candidate.instance.index;
        candidate.instance = self.draw(index, &mut candidate.rng, &mut candidate.stats)?;
        candidate.key = Key::of(&candidate.instance);
        Ok(())
    }

    /// First draws of `indices`, in parallel on the current rayon pool, in
    /// the order given.
    pub fn candidates(&self, indices: &[u64]) -> Result<Vec<Candidate>, SynthError> {
        indices
            .par_iter()
            .with_min_len(16)
            .map(|&i| self.candidate(i))
            .collect()
    }

    /// Instances `range` in index order, deduplicated against `seen` (which
    /// must hold the keys of every instance below `range.start`) and added
    /// to it. The one entry point the writers use.
    pub fn generate(
        &self,
        range: std::ops::Range<u64>,
        seen: &mut Dedup,
        stats: &mut Stats,
    ) -> Result<Vec<Instance>, SynthError> {
        let indices: Vec<u64> = range.collect();
        let candidates = self.candidates(&indices)?;
        let mut out = Vec::with_capacity(candidates.len());
        for mut candidate in candidates {
            self.admit(&mut candidate, seen)?;
            stats.add(&candidate.stats);
            stats.instances += 1;
            out.push(candidate.instance);
        }
        Ok(out)
    }

    /// Makes `candidate` the instance of its index: retries its stream until
    /// its key is new to `seen`, then records the key.
    pub fn admit(&self, candidate: &mut Candidate, seen: &mut Dedup) -> Result<(), SynthError> {
        while seen.contains(&candidate.key) {
            self.retry(candidate)?;
        }
        seen.insert(candidate.key.clone());
        Ok(())
    }

    /// One draw: sample until a sample is SAT, fills and passes the guard.
    fn draw(
        &self,
        index: u64,
        rng: &mut ChaCha8Rng,
        stats: &mut Stats,
    ) -> Result<Instance, SynthError> {
        let mut failures = sample::Failures::default();
        let mut scratch = sample::Scratch::default();
        for _ in 0..MAX_SAMPLES {
            let sample = sample::Sample::draw(&self.tables, &self.params, rng, &mut scratch);
            match assemble::assemble(self.domain, &self.tables, &self.params, &sample, rng, stats) {
                Ok((actions, observations)) => {
                    return Ok(Instance {
                        index,
                        truths: sample.truths.iter().map(|&t| t as usize).collect(),
                        valid: sample.valid_truths().map(|t| t as usize).collect(),
                        actions,
                        observations,
                    });
                }
                Err(reason) => {
                    if matches!(
                        reason,
                        sample::Failure::Unsat | sample::Failure::Uncoverable
                    ) {
                        stats.unsat += 1;
                    }
                    failures.count(reason);
                    stats.resamples += 1;
                }
            }
        }
        Err(infeasible(self.domain, &self.params, &failures))
    }
}

/// The RNG of instance `index`: stream `index` of the setting's seed.
pub fn instance_rng(base_seed: u64, index: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(base_seed);
    rng.set_stream(index);
    rng
}

/// The stable hash of (seed, domain name, N_truth, N_action, N_valid) every
/// instance stream of a setting is seeded from.
pub fn base_seed(domain_name: &str, params: &Params) -> u64 {
    let mut bytes = Vec::with_capacity(64 + domain_name.len());
    bytes.extend_from_slice(b"kumo-gen/synth/v1\0");
    bytes.extend_from_slice(&params.seed.to_le_bytes());
    bytes.extend_from_slice(domain_name.as_bytes());
    bytes.push(0);
    for value in [params.truths, params.actions, params.valid] {
        bytes.extend_from_slice(&(value as u64).to_le_bytes());
    }
    crate::fnv::fnv1a(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::Rng;

    fn run(
        domain: &Domain,
        params: Params,
        n: u64,
        threads: usize,
    ) -> Result<Vec<Instance>, SynthError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let synth = Synthesizer::new(domain, params)?;
            let mut seen = Dedup::new();
            let mut stats = Stats::default();
            synth.generate(0..n, &mut seen, &mut stats)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Every instance of a random small domain satisfies the KUMO
        /// constraints, and keys are distinct; or the request is refused.
        #[test]
        fn instances_satisfy_constraints(
            seed in 0u64..1_000_000,
            truths in 4usize..12,
            actions in 3usize..10,
            density in 0.1f64..0.5,
            t in 2usize..6,
            a in 1usize..6,
            v in 1usize..3,
            shortcuts in any::<bool>(),
        ) {
            let domain = fixture::random(seed, truths, actions, density);
            let mut params = Params::new(t.min(truths), a.min(actions), v);
            params.allow_shortcuts = shortcuts;
            params.seed = seed;
            match run(&domain, params.clone(), 24, 1) {
                Ok(instances) => {
                    let mut seen = Dedup::new();
                    for (i, instance) in instances.iter().enumerate() {
                        prop_assert_eq!(instance.index, i as u64);
                        prop_assert_eq!(instance.check(&domain, &params), Ok(()));
                        prop_assert!(seen.insert(Key::of(instance)), "duplicate at {}", i);
                    }
                }
                Err(e) => prop_assert!(!e.message.is_empty() && !e.help.is_empty()),
            }
        }
    }

    #[test]
    fn thread_count_does_not_change_instances() {
        let domain = fixture::random(7, 20, 14, 0.25);
        let params = Params::new(6, 6, 1);
        let one = run(&domain, params.clone(), 300, 1).unwrap();
        let two = run(&domain, params, 300, 2).unwrap();
        assert_eq!(one, two);
    }

    #[test]
    fn instance_depends_on_seed_and_index_only() {
        let domain = fixture::random(3, 20, 14, 0.25);
        let params = Params::new(5, 5, 1);
        let long = run(&domain, params.clone(), 60, 2).unwrap();
        let short = run(&domain, params.clone(), 20, 2).unwrap();
        assert_eq!(&long[..20], &short[..]);
        let mut other = params;
        other.seed = 1;
        assert_ne!(run(&domain, other, 20, 1).unwrap(), short);
    }

    #[test]
    fn duplicates_are_redrawn_until_the_domain_is_exhausted() {
        // Two truths, one action with two states: only two distinct
        // instances exist (either truth valid).
        let domain = fixture::two_truths_one_action();
        let params = Params::new(2, 1, 1);
        let two = run(&domain, params.clone(), 2, 1).unwrap();
        assert_ne!(Key::of(&two[0]), Key::of(&two[1]));
        let err = run(&domain, params.clone(), 3, 1).unwrap_err();
        assert_eq!((err.kind, err.parameter), (ErrorKind::TooFewDistinct, "-n"));
        let synth = Synthesizer::new(&domain, params).unwrap();
        let err = synth.check_count(5).unwrap_err();
        assert_eq!((err.kind, err.parameter), (ErrorKind::TooFewDistinct, "-n"));
    }

    #[test]
    fn infeasible_requests_name_the_parameter() {
        let domain = fixture::random(11, 10, 6, 0.2);
        let cases = [
            (Params::new(11, 3, 1), "--truths"),
            (Params::new(1, 3, 1), "--truths"),
            (Params::new(4, 0, 1), "--actions"),
            (Params::new(4, 7, 1), "--actions"),
            (Params::new(4, 3, 0), "--valid"),
            (Params::new(4, 3, 4), "--valid"),
        ];
        for (params, parameter) in cases {
            let err = Synthesizer::new(&domain, params).err().expect("refused");
            assert_eq!((err.kind, err.parameter), (ErrorKind::Invalid, parameter));
        }
        // Ten truths, every invalid one needing its own action, one action.
        let names: Vec<String> = (0..10).map(|t| format!("t{t}")).collect();
        let actions = (0..10)
            .map(|t| {
                (
                    format!("a{t}"),
                    crate::domain::ActionKind::Str,
                    vec![
                        (crate::domain::StateLabel::Named("no".into()), vec![t]),
                        (crate::domain::StateLabel::Named("yes".into()), vec![]),
                    ],
                )
            })
            .collect();
        let domain = fixture::build("chain", &names, actions);
        let err = run(&domain, Params::new(6, 2, 1), 5, 2).unwrap_err();
        assert_eq!(
            (err.kind, err.parameter),
            (ErrorKind::Infeasible, "--actions")
        );
    }

    /// With one action per instance there is no fill: which of two
    /// equivalent covers appears is the solver's choice, and it must vary
    /// between instances with the same sample.
    #[test]
    fn the_solver_model_varies_with_the_instance_stream() {
        use crate::domain::{ActionKind, StateLabel};
        let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let action = |name: &str, rules_out: usize| {
            (
                name.to_string(),
                ActionKind::Str,
                vec![
                    (StateLabel::Named("x".into()), vec![rules_out]),
                    (StateLabel::Named("y".into()), vec![]),
                ],
            )
        };
        let domain = fixture::build(
            "covers",
            &names,
            vec![action("one", 1), action("two", 1), action("three", 2)],
        );
        let mut params = Params::new(2, 1, 1);
        params.allow_shortcuts = true;
        let synth = Synthesizer::new(&domain, params).unwrap();
        let mut chosen = std::collections::BTreeSet::new();
        for i in 0..200 {
            let instance = synth.candidate(i).unwrap().instance;
            let mut truths = instance.truths.clone();
            truths.sort();
            if truths == [0, 1] && instance.valid == [0] {
                chosen.insert(instance.actions[0]);
            }
        }
        assert_eq!(chosen.into_iter().collect::<Vec<_>>(), vec![0, 1]);
    }

    /// Golden values: the streams of the pinned rand/rand_chacha. A change
    /// here means every dataset changes; bump the generator version.
    #[test]
    fn instance_streams_are_stable() {
        let params = Params::new(12, 16, 1);
        let base = base_seed("medical", &params);
        let mut rng = instance_rng(base, 7);
        let words = [rng.next_u64(), rng.next_u64()];
        let mut rng = instance_rng(base, 7);
        let pick = sample::below(&mut rng, 65);
        assert_eq!((base, words, pick), GOLDEN);
    }

    const GOLDEN: (u64, [u64; 2], usize) = (
        2690164018864846387,
        [10859968944937369768, 7465278182546095259],
        33,
    );
}
