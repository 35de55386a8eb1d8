//! Stage 5 of the pipeline: optimal-search labels.
//!
//! In: a [`Problem`] (one instance as bitmasks: its truths, its actions and
//! every state's rule-out set, see [`problem`]), the observed state of each
//! instance action (`None` when the observation matches no state, as a
//! value in none of the ranges does for KUMO: it rules nothing out), and a
//! [`SearchBudget`]. Out: a [`Label`]: the expected
//! number of steps `E` of the optimal player (KUMO's Algorithm 3, DESIGN.md
//! "Optimal search"), its first action, and the golden trajectory that
//! plays the optimal policy against the instance's observations.
//!
//! Invariants:
//! - `expected_steps` equals KUMO's reference recursion bit for bit (its
//!   float operations are reproduced in the same order; see [`solver`] for
//!   the exact reductions that make it fast);
//! - ties between actions go to the first in instance order, at the root
//!   and at every step of the golden trajectory;
//! - the golden trajectory answers once at most one truth is left or a
//!   remaining truth is related to no remaining action, naming the first
//!   such truth in instance order, else the one left (docs/output.md,
//!   "The golden player's answer rule");
//! - the result depends only on the inputs: the memo is per search and is
//!   never iterated, so thread count and scheduling cannot change a bit;
//! - a search that outgrows its budget stops with
//!   [`SearchError::BudgetExceeded`] instead of exhausting memory.
//!
//! No I/O happens here; `kumo-gen label` (in `cli`) reads and writes.

mod mask;
mod memo;
pub mod problem;
mod shares;
pub mod solver;
pub mod values;

use std::time::Duration;

pub use mask::Mask;
pub use problem::{MAX_WIDTH, Problem};
pub use values::{State, StateValues, TIE, Values, is_tie};

use memo::Memos;
use solver::Solver;

/// Most actions of KUMO's own settings (12 truths x 16 actions is its
/// hardest): up to here the default node budget is
/// [`SearchBudget::DEFAULT_MAX_NODES`], under which every line of every
/// shipped domain's benchmark is exact.
pub const KUMO_MAX_ACTIONS: usize = 16;

/// The default node budget of the exact search of a game of more than
/// [`KUMO_MAX_ACTIONS`] actions, after which its line is certified
/// (about 4 s of one core).
pub const FRONTIER_MAX_NODES: u64 = 1_000_000;

/// Limits on one instance's search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchBudget {
    /// Most memo entries the search may store (proven bounds and greedy
    /// rollouts together).
    pub max_memo_entries: usize,
    /// Most node expansions the search may make: the deterministic measure
    /// of its time (the same count on every machine and thread count).
    pub max_nodes: u64,
    /// Longest wall time the search may take, if limited. Note that a time
    /// limit makes *whether* a label is produced depend on the machine.
    pub max_time: Option<Duration>,
    /// A search over budget still labels its instance, with a certified
    /// interval instead of the exact value (DESIGN.md "Certified
    /// labels"); `false` (`--exact-only`) leaves it unlabelled.
    pub certify: bool,
    /// `max_nodes` is the default, which games of more than
    /// [`KUMO_MAX_ACTIONS`] actions scale down to [`FRONTIER_MAX_NODES`]
    /// (see [`SearchBudget::nodes_for`]); `false` when the user set it.
    pub scale_nodes: bool,
}

impl SearchBudget {
    /// A budget of `max_memo_entries` memo entries and `max_nodes` node
    /// expansions, without a time limit, certified beyond (the one
    /// constructor every caller uses; a time limit is set on the value).
    pub fn new(max_memo_entries: usize, max_nodes: u64) -> SearchBudget {
        SearchBudget {
            max_memo_entries,
            max_nodes,
            max_time: None,
            certify: true,
            scale_nodes: false,
        }
    }

    /// The default budget with `max_nodes` node expansions when given
    /// (`--search-nodes`), else the default node budget scaled to the game
    /// ([`SearchBudget::nodes_for`]).
    pub fn with_nodes(max_memo_entries: usize, max_nodes: Option<u64>) -> SearchBudget {
        SearchBudget {
            max_nodes: max_nodes.unwrap_or(Self::DEFAULT_MAX_NODES),
            scale_nodes: max_nodes.is_none(),
            ..SearchBudget::new(max_memo_entries, 0)
        }
    }

    /// The node budget of the exact search of a game of `actions`
    /// actions: `max_nodes`, or, when it is the default and the game has
    /// more than [`KUMO_MAX_ACTIONS`] actions, [`FRONTIER_MAX_NODES`]
    /// (DESIGN.md "Certified labels": beyond KUMO's settings a line is
    /// certified sooner, so that every line comes in seconds).
    pub fn nodes_for(&self, actions: usize) -> u64 {
        if self.scale_nodes && actions > KUMO_MAX_ACTIONS {
            self.max_nodes.min(FRONTIER_MAX_NODES)
        } else {
            self.max_nodes
        }
    }

    /// The budget a game of `actions` actions is searched under, its node
    /// limit resolved ([`SearchBudget::nodes_for`]): what a manifest, a
    /// seed file and a relabelling compare and record, so that a 24 x 32
    /// dataset labelled under the default says 1,000,000 nodes, not the
    /// 50,000,000 of KUMO's settings.
    pub fn for_actions(&self, actions: usize) -> SearchBudget {
        SearchBudget {
            max_nodes: self.nodes_for(actions),
            scale_nodes: false,
            ..*self
        }
    }

    /// The default memo limit: at most 384 MiB of table with 64-bit keys
    /// (24-byte slots: key and two bounds, at most half full), 512 MiB with
    /// 128-bit keys, 768 MiB beyond 128 truths + actions.
    pub const DEFAULT_MAX_MEMO_ENTRIES: usize = 8_000_000;

    /// The default node limit.
    pub const DEFAULT_MAX_NODES: u64 = 50_000_000;

    /// No practical limit (tests and small instances).
    pub const UNLIMITED: SearchBudget = SearchBudget {
        max_memo_entries: usize::MAX,
        max_nodes: u64::MAX,
        max_time: None,
        certify: true,
        scale_nodes: false,
    };
}

impl Default for SearchBudget {
    fn default() -> Self {
        SearchBudget {
            max_memo_entries: Self::DEFAULT_MAX_MEMO_ENTRIES,
            max_nodes: Self::DEFAULT_MAX_NODES,
            max_time: None,
            certify: true,
            scale_nodes: true,
        }
    }
}

/// Why an instance could not be labelled.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SearchError {
    #[error(
        "instance has {truths} truths and {actions} actions; the search handles at most {MAX_WIDTH} of each"
    )]
    TooLarge { truths: usize, actions: usize },
    #[error("{what} index {index} is not in the domain")]
    UnknownIndex { what: &'static str, index: usize },
    #[error("observed state {state} of instance action {action} does not exist")]
    BadObservation { action: usize, state: usize },
    #[error("expected {expected} observations (one per action), got {got}")]
    ObservationCount { expected: usize, got: usize },
    #[error(
        "search budget exceeded after {nodes} nodes, {memo_entries} memo entries and {elapsed:.2?}; raise `--search-nodes` or `--search-budget`, or use smaller settings"
    )]
    BudgetExceeded {
        memo_entries: usize,
        nodes: u64,
        elapsed: Duration,
    },
}

/// One step of a golden trajectory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    /// Take instance action `action`; the instance shows its state `state`
    /// (`None`: the observation matches no state and rules nothing out).
    Act { action: usize, state: Option<usize> },
    /// Name instance truth `truth` as the answer.
    Answer { truth: usize },
}

/// The optimal-play label of one instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    /// `E(T, A)` at the root.
    pub expected_steps: f64,
    /// First optimal action (instance index, first in instance order among
    /// ties); `None` when the root is a base case.
    pub first_action: Option<usize>,
    /// Instance actions the golden trajectory takes before answering.
    pub golden_actions: Vec<usize>,
    /// The golden trajectory: its actions with the observed states, then
    /// the answer (absent only if the observations rule out every truth).
    pub golden_trajectory: Vec<Move>,
    /// `None` when `expected_steps` is exact. For a certified label (the
    /// exact search ran over budget), the proven lower bound of `E`;
    /// `expected_steps` is then a proven upper bound that the strategy the
    /// golden trajectory follows achieves or beats (DESIGN.md "Certified
    /// labels").
    pub lower_bound: Option<f64>,
    /// Nodes stored in the memo (a measure of the memory used).
    pub memo_entries: usize,
    /// Nodes expanded (the measure of the work done, see
    /// [`SearchBudget::max_nodes`]).
    pub nodes: u64,
}

impl Label {
    /// `expected_steps` is the exact value (not a certified upper bound).
    pub fn is_exact(&self) -> bool {
        self.lower_bound.is_none()
    }

    /// The proven interval of `E`: `[lower_bound, expected_steps]`, a point
    /// when exact.
    pub fn interval(&self) -> (f64, f64) {
        (
            self.lower_bound.unwrap_or(self.expected_steps),
            self.expected_steps,
        )
    }

    /// `(upper - lower) / lower` of a certified label; 0 when exact.
    pub fn relative_gap(&self) -> f64 {
        let (lower, upper) = self.interval();
        if lower > 0.0 {
            (upper - lower) / lower
        } else {
            0.0
        }
    }

    /// The truth the golden trajectory names, if any.
    pub fn answer(&self) -> Option<usize> {
        match self.golden_trajectory.last() {
            Some(Move::Answer { truth }) => Some(*truth),
            _ => None,
        }
    }
}

/// Reusable search state (memo tables), one per thread. Labels do not
/// depend on what a `Searcher` computed before.
#[derive(Default)]
pub struct Searcher {
    narrow: Memos<u64>,
    wide: Memos<u128>,
    widest: Memos<[u128; 2]>,
}

/// Runs `$body` with the narrowest solver for `$problem`: 64-bit masks
/// where truths and actions each fit, and the narrowest packed memo key.
macro_rules! with_solver {
    ($searcher:expr, $problem:expr, $budget:expr, |$solver:ident| $body:expr) => {{
        let (t, a) = ($problem.truth_count(), $problem.action_count());
        if t + a <= 64 {
            let $solver = Solver::<u64, u64>::new($problem, &mut $searcher.narrow, $budget);
            $body
        } else if t <= 64 && a <= 64 {
            let $solver = Solver::<u64, u128>::new($problem, &mut $searcher.wide, $budget);
            $body
        } else if t + a <= 128 {
            let $solver = Solver::<u128, u128>::new($problem, &mut $searcher.wide, $budget);
            $body
        } else {
            let $solver = Solver::<u128, [u128; 2]>::new($problem, &mut $searcher.widest, $budget);
            $body
        }
    }};
}

impl Searcher {
    pub fn new() -> Self {
        Self::default()
    }

    /// Labels `problem` whose action `a` shows state `observed[a]`.
    pub fn label(
        &mut self,
        problem: &Problem,
        observed: &[Option<usize>],
        budget: SearchBudget,
    ) -> Result<Label, SearchError> {
        check_observed(problem, observed)?;
        let budget = SearchBudget {
            max_nodes: budget.nodes_for(problem.action_count()),
            ..budget
        };
        with_solver!(self, problem, budget, |solver| label_with(
            solver,
            problem,
            observed,
            budget.certify,
            budget.max_nodes
        ))
    }

    /// `E(T, A)` at the root of `problem`, without a trajectory.
    pub fn expected_steps(
        &mut self,
        problem: &Problem,
        budget: SearchBudget,
    ) -> Result<(f64, usize), SearchError> {
        let budget = SearchBudget {
            max_nodes: budget.nodes_for(problem.action_count()),
            ..budget
        };
        with_solver!(self, problem, budget, |solver| root_value(solver, problem))
    }
}

/// Labels one instance with a fresh memo; see [`Searcher::label`].
pub fn label(
    problem: &Problem,
    observed: &[Option<usize>],
    budget: SearchBudget,
) -> Result<Label, SearchError> {
    Searcher::new().label(problem, observed, budget)
}

fn all<M: Mask>(n: usize) -> M {
    (0..n).fold(M::ZERO, |m, i| m | M::bit(i))
}

fn check_observed(problem: &Problem, observed: &[Option<usize>]) -> Result<(), SearchError> {
    if observed.len() != problem.action_count() {
        return Err(SearchError::ObservationCount {
            expected: problem.action_count(),
            got: observed.len(),
        });
    }
    for (action, state) in observed.iter().enumerate() {
        if let Some(state) = *state
            && state >= problem.states(action).len()
        {
            return Err(SearchError::BadObservation { action, state });
        }
    }
    Ok(())
}

fn root_value<M: Mask, K: memo::Key>(
    mut solver: Solver<'_, M, K>,
    problem: &Problem,
) -> Result<(f64, usize), SearchError> {
    let v = solver.value(all(problem.truth_count()), all(problem.action_count()))?;
    Ok((v, solver.memo_entries()))
}

fn label_with<M: Mask, K: memo::Key>(
    mut solver: Solver<'_, M, K>,
    problem: &Problem,
    observed: &[Option<usize>],
    certify: bool,
    max_nodes: u64,
) -> Result<Label, SearchError> {
    match exact_label(&mut solver, problem, observed) {
        Err(SearchError::BudgetExceeded { .. }) if certify => {
            solver.extend_budget_to_certify(max_nodes, 1);
            let truths: M = all(problem.truth_count());
            let actions: M = all(problem.action_count());
            let label = certified_label(&mut solver, truths, actions, observed, max_nodes)
                .unwrap_or_else(|_| fallback_label(&mut solver, truths, actions, observed));
            Ok(label)
        }
        other => other,
    }
}

/// The exact label: `E`, the first optimal action in instance order, and
/// the golden trajectory of the optimal policy.
fn exact_label<M: Mask, K: memo::Key>(
    solver: &mut Solver<'_, M, K>,
    problem: &Problem,
    observed: &[Option<usize>],
) -> Result<Label, SearchError> {
    let truths: M = all(problem.truth_count());
    let actions: M = all(problem.action_count());
    let (expected_steps, first_action) = solver.decide(truths, actions)?;
    let mut first = Some(first_action);
    let (golden_actions, golden_trajectory) = walk(
        solver,
        truths,
        actions,
        observed,
        |solver, truths, actions| match first.take() {
            Some(action) => Ok(action),
            None => Ok(solver.decide(truths, actions)?.1),
        },
    )?;
    Ok(Label {
        expected_steps,
        first_action,
        golden_actions,
        golden_trajectory,
        lower_bound: None,
        memo_entries: solver.memo_entries(),
        nodes: solver.expansions(),
    })
}

/// The certified label of a game whose exact search ran over budget
/// (DESIGN.md "Certified labels"): the root's proven interval, and the
/// golden trajectory of the strategy its upper end bounds
/// (`solver::certify`).
fn certified_label<M: Mask, K: memo::Key>(
    solver: &mut Solver<'_, M, K>,
    truths: M,
    actions: M,
    observed: &[Option<usize>],
    max_nodes: u64,
) -> Result<Label, SearchError> {
    let root = solver.reduce_to_related(truths, actions);
    let step = match root {
        Some(related) => {
            solver.tighten(truths, related);
            // The trajectory's steps get a fresh allowance: tightening may
            // have spent all of its own.
            solver.extend_budget_to_certify(max_nodes, 2);
            Some(solver.certified_step(truths, related)?)
        }
        None => None,
    };
    let (golden_actions, golden_trajectory) = walk(
        solver,
        truths,
        actions,
        observed,
        |solver, truths, actions| match solver.reduce_to_related(truths, actions) {
            Some(related) => Ok(Some(solver.certified_step(truths, related)?.action)),
            None => Ok(None),
        },
    )?;
    let (expected_steps, lower) = step.map_or((0.0, 0.0), |s| (s.upper, s.lower));
    Ok(Label {
        expected_steps,
        first_action: step.map(|s| s.action),
        golden_actions,
        golden_trajectory,
        lower_bound: Some(lower),
        memo_entries: solver.memo_entries(),
        nodes: solver.expansions(),
    })
}

/// The label of last resort, when even the certified steps ran over
/// their allowance: every strategy is worth at most the action count
/// (DESIGN.md "Optimal search"), so the strategy that takes the first
/// related action in instance order is certified by it, with the root's
/// static lower bound.
fn fallback_label<M: Mask, K: memo::Key>(
    solver: &mut Solver<'_, M, K>,
    truths: M,
    actions: M,
    observed: &[Option<usize>],
) -> Label {
    let (expected_steps, lower) = match solver.reduce_to_related(truths, actions) {
        Some(related) => (
            f64::from(related.count()),
            solver.static_lower_bound(truths, related),
        ),
        None => (0.0, 0.0),
    };
    let first_related = |solver: &mut Solver<'_, M, K>, truths: M, actions: M| {
        Ok(solver.reduce_to_related(truths, actions).map(M::lowest))
    };
    // The pick never fails, so neither does the walk.
    let (golden_actions, golden_trajectory) =
        walk(solver, truths, actions, observed, first_related).unwrap_or_default();
    Label {
        expected_steps,
        first_action: golden_actions.first().copied(),
        golden_actions,
        golden_trajectory,
        lower_bound: Some(lower),
        memo_entries: solver.memo_entries(),
        nodes: solver.expansions(),
    }
}

/// The golden trajectory from `(truths, actions)` against the instance's
/// observations: at each node that is not a stop, the action `pick`
/// gives; it answers as DESIGN.md says (one truth or none left, or a
/// truth no remaining action can rule out: the first such truth in
/// instance order, else the one left).
fn walk<'m, M: Mask, K: memo::Key>(
    solver: &mut Solver<'m, M, K>,
    mut truths: M,
    mut actions: M,
    observed: &[Option<usize>],
    mut pick: impl FnMut(&mut Solver<'m, M, K>, M, M) -> Result<Option<usize>, SearchError>,
) -> Result<(Vec<usize>, Vec<Move>), SearchError> {
    let mut golden_actions = Vec::new();
    let mut golden_trajectory = Vec::new();
    loop {
        let uncovered = solver.uncovered(truths, actions);
        // Stop as DESIGN.md says: one truth (or none) left, no action
        // left, or a truth no remaining action can rule out.
        if truths.count() <= 1 || !uncovered.is_zero() {
            let pick = if uncovered.is_zero() {
                truths
            } else {
                uncovered
            };
            if !pick.is_zero() {
                golden_trajectory.push(Move::Answer {
                    truth: pick.lowest(),
                });
            }
            break;
        }
        let Some(action) = pick(solver, truths, actions)? else {
            debug_assert!(false, "a non-base node has an optimal action");
            break;
        };
        let state = observed[action];
        golden_actions.push(action);
        golden_trajectory.push(Move::Act { action, state });
        if let Some(state) = state {
            truths &= !solver.action_states(action)[state];
        }
        actions &= !M::bit(action);
    }
    Ok((golden_actions, golden_trajectory))
}

thread_local! {
    /// One reusable memo per worker thread; labels never depend on it.
    static SEARCHER: std::cell::RefCell<Searcher> = std::cell::RefCell::new(Searcher::new());
}

/// The label of a synthesized instance, or why it has none (the search
/// ran over budget), on this thread's reusable searcher. This is the
/// labeler the main command passes to the writers, which format it.
pub fn optimal_for_instance(
    domain: &crate::domain::Domain,
    instance: &crate::synth::Instance,
    budget: SearchBudget,
) -> Result<Label, SearchError> {
    let observed: Vec<Option<usize>> = instance
        .observations
        .iter()
        .map(|o| Some(o.state))
        .collect();
    Problem::new(domain, &instance.truths, &instance.actions).and_then(|problem| {
        SEARCHER.with(|searcher| searcher.borrow_mut().label(&problem, &observed, budget))
    })
}
