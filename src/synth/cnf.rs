//! Synthesis step 2: the selection problem as CNF, solved by varisat.
//!
//! In: a [`Sample`], N_action and the instance RNG.
//! Out: the selected flat states (at most one per action, at most N_action
//! of them, every invalid truth ruled out), or `None` when the problem is
//! UNSAT — data, not an error.
//!
//! [`Cnf`] is a plain clause list with the two encodings the problem
//! needs: pairwise at-most-one (an action has a handful of states) and
//! Sinz's sequential counter for at-most-k over the actions, `O(n·k)`
//! clauses and auxiliary variables instead of a pairwise blow-up. varisat
//! has no cardinality constraints of its own.
//!
//! Diversity: variables are numbered in a shuffled order, and each state
//! variable gets a random polarity (the CNF is written over `x` or `¬x`),
//! so the solver's default phase (false) picks a random initial
//! assignment. Both come from the instance RNG, so the model is
//! deterministic for the instance yet differs between instances with the
//! same sample.

use super::sample::{Sample, Tables, below};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use varisat::{ExtendFormula, Lit, Solver, Var};

/// A CNF formula over variables `0..var_count`.
#[derive(Clone, Debug, Default)]
pub struct Cnf {
    vars: usize,
    lits: Vec<Lit>,
    ends: Vec<u32>,
}

impl Cnf {
    pub fn new() -> Cnf {
        Cnf::default()
    }

    /// A fresh variable, as its positive literal.
    pub fn new_var(&mut self) -> Lit {
        self.vars += 1;
        Lit::positive(Var::from_index(self.vars - 1))
    }

    pub fn var_count(&self) -> usize {
        self.vars
    }

    pub fn add_clause(&mut self, clause: &[Lit]) {
        self.lits.extend_from_slice(clause);
        self.ends.push(self.lits.len() as u32);
    }

    /// The clauses in insertion order.
    pub fn clauses(&self) -> impl Iterator<Item = &[Lit]> + '_ {
        let mut start = 0usize;
        self.ends.iter().map(move |&end| {
            let clause = &self.lits[start..end as usize];
            start = end as usize;
            clause
        })
    }

    /// At most one of `lits`: pairwise for small groups, a counter above.
    pub fn at_most_one(&mut self, lits: &[Lit]) {
        if lits.len() > 6 {
            return self.at_most(lits, 1);
        }
        for (i, &a) in lits.iter().enumerate() {
            for &b in &lits[i + 1..] {
                self.add_clause(&[!a, !b]);
            }
        }
    }

    /// At most `k` of `lits`, by a sequential counter (Sinz 2005) in the
    /// cheaper orientation: registers for "at most `k` true" when
    /// `k <= n - k`, else for "at least `n - k` false". Either way
    /// `O(n * min(k, n - k))` clauses and auxiliary variables.
    pub fn at_most(&mut self, lits: &[Lit], k: usize) {
        let n = lits.len();
        if k >= n {
            return;
        }
        if k == 0 {
            for &x in lits {
                self.add_clause(&[!x]);
            }
            return;
        }
        if k <= n - k {
            self.at_most_counter(lits, k);
        } else {
            let negated: Vec<Lit> = lits.iter().map(|&x| !x).collect();
            self.at_least_counter(&negated, n - k);
        }
    }

    /// Sinz's counter: register `s[i][j]` is forced true when at least
    /// `j + 1` of `lits[..=i]` are true; a `(k + 1)`-th true literal
    /// conflicts. Needs `1 <= k < n`.
    fn at_most_counter(&mut self, lits: &[Lit], k: usize) {
        let n = lits.len();
        let mut prev: Vec<Lit> = (0..k).map(|_| self.new_var()).collect();
        self.add_clause(&[!lits[0], prev[0]]);
        for &s in &prev[1..] {
            self.add_clause(&[!s]);
        }
        for &x in &lits[1..n - 1] {
            let cur: Vec<Lit> = (0..k).map(|_| self.new_var()).collect();
            self.add_clause(&[!x, cur[0]]);
            self.add_clause(&[!prev[0], cur[0]]);
            for j in 1..k {
                self.add_clause(&[!x, !prev[j - 1], cur[j]]);
                self.add_clause(&[!prev[j], cur[j]]);
            }
            self.add_clause(&[!x, !prev[k - 1]]);
            prev = cur;
        }
        self.add_clause(&[!lits[n - 1], !prev[k - 1]]);
    }

    /// At least `r` of `lits` (`1 <= r <= n`): register `t[i][j]` may be
    /// true only when at least `j + 1` of `lits[..=i]` are; the last
    /// register for `r` is asserted.
    fn at_least_counter(&mut self, lits: &[Lit], r: usize) {
        let mut prev: Vec<Lit> = (0..r).map(|_| self.new_var()).collect();
        self.add_clause(&[!prev[0], lits[0]]);
        for &t in &prev[1..] {
            self.add_clause(&[!t]);
        }
        for &x in &lits[1..] {
            let cur: Vec<Lit> = (0..r).map(|_| self.new_var()).collect();
            self.add_clause(&[!cur[0], prev[0], x]);
            for j in 1..r {
                self.add_clause(&[!cur[j], prev[j], x]);
                self.add_clause(&[!cur[j], prev[j], prev[j - 1]]);
            }
            prev = cur;
        }
        self.add_clause(&[prev[r - 1]]);
    }

    /// Whether `model[v]` (the value of variable `v`) satisfies every clause.
    pub fn satisfied_by(&self, model: &[bool]) -> bool {
        self.clauses().all(|clause| {
            clause
                .iter()
                .any(|lit| model.get(lit.index()).copied() == Some(lit.is_positive()))
        })
    }

    /// Solves under `assumptions`; the model as one value per variable, or
    /// `None` when UNSAT.
    ///
    /// The solver is the vendored varisat (vendor/varisat/README.kumo-gen.md):
    /// room for every variable is reserved before they are added, they are
    /// added at once, and the per-literal lists come from the lists of
    /// this thread's earlier solvers. None of it changes the model.
    pub fn solve(&self, assumptions: &[Lit]) -> Option<Vec<bool>> {
        self.solve_adding_vars(assumptions, |solver, count| solver.add_vars(count))
    }

    /// [`Cnf::solve`] with the variables added by `add_vars`.
    fn solve_adding_vars(
        &self,
        assumptions: &[Lit],
        add_vars: impl FnOnce(&mut Solver, usize),
    ) -> Option<Vec<bool>> {
        let mut solver = Solver::new();
        solver.reserve_vars(self.vars);
        add_vars(&mut solver, self.vars);
        for clause in self.clauses() {
            solver.add_clause(clause);
        }
        solver.assume(assumptions);
        // varisat only fails with a proof writer or an interrupt attached.
        if !solver.solve().unwrap_or(false) {
            return None;
        }
        let mut values = vec![false; self.vars];
        for lit in solver.model()? {
            if lit.index() < self.vars {
                values[lit.index()] = lit.is_positive();
            }
        }
        Some(values)
    }
}

/// The selection problem of one sample, after unit propagation.
#[derive(Clone, Debug)]
pub struct Selection {
    /// States every model must select: the only remaining cover of some
    /// invalid truth. They are not in `cnf`.
    pub forced: Vec<u32>,
    /// The residual problem over the other states.
    pub cnf: Cnf,
    /// Flat state of each state variable of `cnf`, and the literal meaning
    /// "this state is observed".
    pub states: Vec<(u32, Lit)>,
}

/// The states a selection may use (observable, relevant to the sample,
/// not contradicting it), or `Uncoverable` when they leave an invalid
/// truth uncovered.
fn coverable_states(tables: &Tables, sample: &Sample) -> Result<Vec<u32>, Infeasible> {
    let words = sample.words;
    let mut candidates: Vec<u32> = Vec::with_capacity(64);
    let mut covered = vec![0u64; words];
    for s in 0..tables.state_action.len() {
        if tables.observable[s] && sample.relevant(s) && !sample.contradictory(s) {
            candidates.push(s as u32);
            for (c, m) in covered.iter_mut().zip(sample.mask(s)) {
                *c |= m;
            }
        }
    }
    if covered
        .iter()
        .zip(&sample.invalid)
        .any(|(c, i)| i & !c != 0)
    {
        return Err(Infeasible::Uncoverable);
    }
    Ok(candidates)
}

/// What unit propagation leaves: which candidates live, the forced
/// states in order, and the truths they cover.
struct Propagated {
    alive: Vec<bool>,
    forced: Vec<u32>,
    covered: Vec<u64>,
}

/// Unit propagation: an invalid truth with a single live candidate state
/// forces it, which kills the other states of its action. Returns which
/// candidates live, the forced states in order and what they cover; a
/// truth with no candidate left, or more forced actions than
/// `max_actions`, is a `Conflict`.
fn propagate(
    tables: &Tables,
    sample: &Sample,
    candidates: &[u32],
    max_actions: usize,
) -> Result<Propagated, Infeasible> {
    let mut covered = vec![0u64; sample.words];
    let action_of = |s: u32| tables.state_action[s as usize];
    let mut alive = vec![true; candidates.len()];
    let mut forced: Vec<u32> = Vec::new();
    let mut changed = true;
    while changed {
        changed = false;
        for j in sample.invalid_positions() {
            if Sample::has(&covered, j) {
                continue;
            }
            let mut count = 0;
            let mut only = 0;
            for (c, &s) in candidates.iter().enumerate() {
                if alive[c] && Sample::has(sample.mask(s as usize), j) {
                    count += 1;
                    only = c;
                }
            }
            match count {
                0 => return Err(Infeasible::Conflict),
                1 => {
                    let state = candidates[only];
                    forced.push(state);
                    if forced.len() > max_actions {
                        return Err(Infeasible::Conflict);
                    }
                    for (c, &s) in candidates.iter().enumerate() {
                        if action_of(s) == action_of(state) {
                            alive[c] = false;
                        }
                    }
                    for (c, m) in covered.iter_mut().zip(sample.mask(state as usize)) {
                        *c |= m;
                    }
                    changed = true;
                }
                _ => {}
            }
        }
    }
    Ok(Propagated {
        alive,
        forced,
        covered,
    })
}

/// Why a sample has no selection, found before calling the solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Infeasible {
    /// Some invalid truth is ruled out by no non-contradictory state.
    Uncoverable,
    /// Unit propagation met a conflict (two forced states of one action,
    /// or more forced actions than N_action).
    Conflict,
}

impl Selection {
    /// Builds the CNF of DESIGN.md step 3 for `sample` with at most
    /// `max_actions` actions.
    ///
    /// Unit propagation first, without the solver: an invalid truth with a
    /// single candidate state forces it, which removes the other states of
    /// its action and one unit of the action budget. Candidates that cover
    /// no still-uncovered truth are left out (setting them false keeps
    /// every model a model). The residual goes to varisat.
    pub fn build(
        tables: &Tables,
        sample: &Sample,
        max_actions: usize,
        rng: &mut ChaCha8Rng,
    ) -> Result<Selection, Infeasible> {
        let candidates = coverable_states(tables, sample)?;
        let Propagated {
            alive,
            forced,
            covered,
        } = propagate(tables, sample, &candidates, max_actions)?;
        let action_of = |s: u32| tables.state_action[s as usize];
        let uncovered: Vec<u64> = sample
            .invalid
            .iter()
            .zip(&covered)
            .map(|(i, c)| i & !c)
            .collect();
        let mut free: Vec<u32> = candidates
            .iter()
            .zip(&alive)
            .filter(|&(&s, &live)| {
                live && sample
                    .mask(s as usize)
                    .iter()
                    .zip(&uncovered)
                    .any(|(m, u)| m & u != 0)
            })
            .map(|(&s, _)| s)
            .collect();

        // Shuffled numbering and random polarity: the solver's diversity.
        for i in (1..free.len()).rev() {
            free.swap(i, below(rng, i + 1));
        }
        let mut cnf = Cnf::new();
        let mut states: Vec<(u32, Lit)> = free
            .iter()
            .map(|&s| {
                let var = cnf.new_var();
                (s, if rng.random::<bool>() { !var } else { var })
            })
            .collect();
        // Grouped by action, in action order, for at-most-one and the counter.
        states.sort_by_key(|&(s, _)| s);
        let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
        let mut i = 0;
        while i < states.len() {
            let action = action_of(states[i].0);
            let start = i;
            while i < states.len() && action_of(states[i].0) == action {
                i += 1;
            }
            groups.push(start..i);
        }
        let budget = max_actions - forced.len();
        let counted = groups.len() > budget;
        let mut action_lits = Vec::with_capacity(if counted { groups.len() } else { 0 });
        let mut group: Vec<Lit> = Vec::new();
        for range in groups {
            group.clear();
            group.extend(states[range].iter().map(|&(_, lit)| lit));
            cnf.at_most_one(&group);
            if !counted {
                continue;
            }
            // The counter's input for this action: "some state is selected".
            if group.len() == 1 {
                action_lits.push(group[0]);
            } else {
                let used = cnf.new_var();
                for &x in &group {
                    cnf.add_clause(&[!x, used]);
                }
                action_lits.push(used);
            }
        }
        if counted {
            cnf.at_most(&action_lits, budget);
        }
        let mut clause = Vec::new();
        for j in (0..sample.truths.len()).filter(|&j| Sample::has(&uncovered, j)) {
            clause.clear();
            clause.extend(
                states
                    .iter()
                    .filter(|&&(s, _)| Sample::has(sample.mask(s as usize), j))
                    .map(|&(_, lit)| lit),
            );
            cnf.add_clause(&clause);
        }
        Ok(Selection {
            forced,
            cnf,
            states,
        })
    }

    /// Solves; the selected flat states (forced ones first), or `None` if
    /// UNSAT.
    pub fn solve(&self) -> Option<Vec<u32>> {
        let model = self.cnf.solve(&[])?;
        let mut selected = self.forced.clone();
        selected.extend(
            self.states
                .iter()
                .filter(|&&(_, lit)| model[lit.index()] == lit.is_positive())
                .map(|&(s, _)| s),
        );
        Some(selected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lits(cnf: &mut Cnf, n: usize) -> Vec<Lit> {
        (0..n).map(|_| cnf.new_var()).collect()
    }

    /// Every assignment of the inputs: SAT exactly when at most `k` are
    /// true, and then the model satisfies every clause and extends it.
    #[test]
    fn sequential_counter_is_exact_for_small_n_and_k() {
        for n in 1..=6 {
            for k in 0..=n + 1 {
                let mut cnf = Cnf::new();
                let xs = lits(&mut cnf, n);
                cnf.at_most(&xs, k);
                if k >= 1 && k < n {
                    let aux = if k <= n - k { (n - 1) * k } else { n * (n - k) };
                    assert_eq!(cnf.var_count(), n + aux, "aux vars n={n} k={k}");
                }
                for bits in 0u32..(1 << n) {
                    let assumptions: Vec<Lit> = (0..n)
                        .map(|i| if bits & (1 << i) != 0 { xs[i] } else { !xs[i] })
                        .collect();
                    let model = cnf.solve(&assumptions);
                    let ones = bits.count_ones() as usize;
                    assert_eq!(model.is_some(), ones <= k, "n={n} k={k} bits={bits:b}");
                    if let Some(model) = model {
                        assert!(cnf.satisfied_by(&model));
                        for (i, &value) in model.iter().take(n).enumerate() {
                            assert_eq!(value, bits & (1 << i) != 0);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn at_most_one_pairwise_and_counter_agree() {
        for n in [3, 7] {
            let mut cnf = Cnf::new();
            let xs = lits(&mut cnf, n);
            cnf.at_most_one(&xs);
            for bits in 0u32..(1 << n) {
                let assumptions: Vec<Lit> = (0..n)
                    .map(|i| if bits & (1 << i) != 0 { xs[i] } else { !xs[i] })
                    .collect();
                assert_eq!(cnf.solve(&assumptions).is_some(), bits.count_ones() <= 1);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Random clauses over up to 7 inputs plus at-most-k: the solver's
        /// model satisfies every clause and the bound, and UNSAT agrees
        /// with brute force over the inputs.
        #[test]
        fn models_satisfy_clauses_and_bound(
            n in 1usize..8,
            k in 0usize..8,
            raw in proptest::collection::vec(
                proptest::collection::vec((0usize..8, proptest::bool::ANY), 1..4),
                0..10,
            ),
        ) {
            let mut cnf = Cnf::new();
            let xs = lits(&mut cnf, n);
            let clauses: Vec<Vec<Lit>> = raw
                .iter()
                .map(|c| c.iter().map(|&(v, pos)| if pos { xs[v % n] } else { !xs[v % n] }).collect())
                .collect();
            for clause in &clauses {
                cnf.add_clause(clause);
            }
            cnf.at_most(&xs, k);
            let brute = (0u32..(1 << n)).any(|bits| {
                let value = |lit: &Lit| (bits >> lit.index() & 1 == 1) == lit.is_positive();
                bits.count_ones() as usize <= k && clauses.iter().all(|c| c.iter().any(value))
            });
            match cnf.solve(&[]) {
                Some(model) => {
                    proptest::prop_assert!(cnf.satisfied_by(&model));
                    proptest::prop_assert!(model[..n].iter().filter(|&&v| v).count() <= k);
                    proptest::prop_assert!(brute);
                }
                None => proptest::prop_assert!(!brute),
            }
        }
    }

    /// The vendored solver hands a dropped solver's per-literal lists to
    /// the next one on the same thread and adds a formula's variables at
    /// once (vendor/varisat/README.kumo-gen.md). A solver built after many
    /// others must find the model a solver on a fresh thread (no recycled
    /// lists) finds, and one given its variables one at a time, formula by
    /// formula.
    #[test]
    fn recycled_lists_and_bulk_variables_change_no_model() {
        use rand::SeedableRng;
        let mut rng = ChaCha8Rng::seed_from_u64(19);
        let formulas: Vec<Cnf> = (0..300)
            .map(|_| {
                let mut cnf = Cnf::new();
                let n = 2 + below(&mut rng, 60);
                let xs = lits(&mut cnf, n);
                for group in xs.chunks(1 + below(&mut rng, 6)) {
                    cnf.at_most_one(group);
                }
                for _ in 0..below(&mut rng, 2 * n) {
                    let clause: Vec<Lit> = (0..1 + below(&mut rng, 4))
                        .map(|_| {
                            let x = xs[below(&mut rng, n)];
                            if rng.random::<bool>() { x } else { !x }
                        })
                        .collect();
                    cnf.add_clause(&clause);
                }
                cnf.at_most(&xs, below(&mut rng, n + 1));
                cnf
            })
            .collect();
        let fresh: Vec<Option<Vec<bool>>> = formulas
            .iter()
            .map(|cnf| {
                let cnf = cnf.clone();
                std::thread::spawn(move || cnf.solve(&[]))
                    .join()
                    .expect("solver thread")
            })
            .collect();
        let warm: Vec<Option<Vec<bool>>> = formulas.iter().map(|cnf| cnf.solve(&[])).collect();
        assert!(fresh.iter().any(Option::is_some) && fresh.iter().any(Option::is_none));
        assert_eq!(warm, fresh);
        // The variables added at once, as upstream's one `new_var` at a time.
        let one_by_one: Vec<Option<Vec<bool>>> = formulas
            .iter()
            .map(|cnf| {
                cnf.solve_adding_vars(&[], |solver, count| {
                    for _ in 0..count {
                        solver.new_var();
                    }
                })
            })
            .collect();
        assert_eq!(warm, one_by_one);
    }

    #[test]
    fn satisfied_by_checks_every_clause() {
        let mut cnf = Cnf::new();
        let xs = lits(&mut cnf, 2);
        cnf.add_clause(&[xs[0], xs[1]]);
        cnf.add_clause(&[!xs[0]]);
        assert!(cnf.satisfied_by(&[false, true]));
        assert!(!cnf.satisfied_by(&[true, true]));
        assert!(!cnf.satisfied_by(&[false, false]));
        assert_eq!(cnf.solve(&[]), Some(vec![false, true]));
    }
}
