//! A lower bound for deep games: the game in which most actions can be
//! reused.
//!
//! The static bounds of the search (a node's shortest path to a base case)
//! are far below the value on deep games, where every action most likely
//! rules out one truth or two and an optimal player needs most of them
//! (car-identification 12 x 16: `E` up to 9.2 against path bounds of 1-3),
//! so a threshold test there proves little without searching nearly every
//! node. This bound keeps the part of the game that makes it deep, the
//! probabilities of the outcomes, and forgets which of most actions were
//! used. A few actions are *tracked* (their use is remembered exactly, set
//! `K`); the others can be used again and again. The truths every one of
//! whose related actions is tracked are *tracked truths*; the others are
//! *high truths*, and for them only a count `c` is kept: a lower bound of
//! the actions left relating to each of them.
//!
//! `R(T, U, c)`, for `U` the tracked actions not used yet, is `0` if
//! `|T| <= 1`, if a tracked truth of `T` has no related action in `U`, or
//! if `c = 0` and `T` holds a high truth; else `1 + min` over the actions
//! related to a truth of `T` that are untracked or in `U` of the sum, in
//! state order, of `R(T \ X_s, U', c') * P(s)`, with `P(s)` as the
//! reference computes it, `U'` = `U` without the action, and `c' = c - 1`
//! (or a constant once no high truth is left, where `c` no longer
//! matters).
//!
//! **`R(T, A ∩ K, c) <= E(T, A)` bit for bit** whenever `c` is at most the
//! fewest actions of `A` relating to one high truth of `T`, by induction
//! over the nodes below:
//! * a base case of the reference is one here: `|T| <= 1`; or a truth of
//!   `T` without a related action in `A`, which is a tracked truth with
//!   none in `U = A ∩ K`, or a high truth, whose count is then `c = 0`;
//! * the reference's minimum runs over the actions of `A` related to `T`, a
//!   subset of those here (an untracked action used before is still
//!   offered), and a child of the reference, `(T \ X_s, A \ {a})`, maps to
//!   `(T \ X_s, U', c - 1)` with every high truth still related to at least
//!   `c - 1` of its actions (using an action lowers each count by one at
//!   most), so by induction its value is at least `R` there (a child that
//!   is a base case here only has `R = 0 <= E`);
//! * every float operation (`* P`, `+` in state order, `min`, `+ 1.0`) is
//!   monotone under round-to-nearest, applied to the same `P` in the same
//!   order, and children with `|T| <= 1` add `0.0` in both.
//!
//! Which actions to track (at most [`MAX_TRACKED`]): first those of the
//! truths related to at most [`LOW_COVER`] actions, fewest first, truth by
//! truth while they fit. Their covers are what ends such games: on
//! car-identification 12 x 16 seed 24 one truth is related to 4 actions
//! and every other to 11 or more, so with a single count (no tracking) the
//! bound could never pass 4 (`c` fell by one at every step, whichever
//! truth the action concerned) where the value is 7.6. Then the actions
//! that rule out most truths in expectation over all the instance's
//! truths: reusing the best action again and again is what makes the
//! relaxed game short, and a tracked action cannot be reused.
//!
//! **Count cap.** The count is capped at [`LEVELS`] = 16 on instances of
//! more than KUMO's 16 actions, at 10 up to 16 ([`levels_for`]). With the
//! low-cover truths tracked, the high truths' fewest actions is often
//! 11-16 on deep games, and a cap of 10 stops the relaxed game after 10
//! steps there: car-identification 12 x 16 seed 3 #15, every truth
//! related to 12-16 actions, root bound 7.64 at cap 10 and 8.69 at 16
//! against a value of 9.45 (measured outside the repository). Any cap
//! keeps `c` at most the true fewest actions, so the proof above holds.
//! At 24 x 32 (`scripts/benchmark-frontier.sh 24 32 20`, BENCHMARKS.md
//! "Frontier settings") the cap of 16 lowered rules3's certified gaps
//! from 25 % to 7.8 % and left fashion, mythical-creature, music and
//! martial-arts as they were (their high truths' covers are below 10).
//! At 12 x 16 it cost more than it saved: car-identification `-n 100`,
//! one thread, cachegrind, 10.25 G -> 11.06 G instructions (10.96 G of
//! them with the count capped at 10 again: the cost is the path bound's
//! 16 cover layers, `bounds::LAYERS`), so KUMO's settings keep 10 levels
//! and 10 layers, with loops of constant bounds chosen once per listing
//! and a count of constant `NO_HIGH` where no high truth is left: `-n 40`
//! 4.83 G instructions on main, 4.88 G here (the fill's exactly main's),
//! the same nodes and the same bytes. A reuse-chosen tracked set
//! (tracking the untracked action the relaxed game's optimal policy uses
//! most, kept when its root bound is higher) was tried and dropped: at
//! 24 x 32 it changed no exact share and no gap of the six hardest
//! domains (their low-cover truths fill the six tracked slots), and at
//! 12 x 16 its selection cost car-identification 18 % more instructions.
//! A second count was tried and dropped too: beyond 16 actions, the high
//! truths of at most 4 or 6 actions got a count of their own, and a count
//! fell only when the action related to one of its truths in `T` (a bound
//! that holds, and is at least the one-count game's; both checked on
//! every node of small games against the plain recursion). The relaxed
//! games grew far deeper and their tables with them: fashion 24 x 32
//! `-n 3`, one thread, wrote its 3 lines in 42 s with one count and none
//! in 300 s with two (every variant: 4 or 6 actions; the main count
//! falling at every step or only where related).
//!
//! Tracking costs: the tracked game has up to `2^|K|` times the states of
//! the single-count game, and it pays only on large searches. So a search
//! asks the single-count game first and starts tracking at once on an
//! instance with a low-cover truth and at least `2 * MAX_TRACKED` actions,
//! else after `TRACK_AFTER` expansions (parent module). Measured on the
//! first 100 instances of each shipped domain (CPU time, search only, one
//! thread, `cargo run --release --example domain_sweep -- 100`):
//! car-identification 12 x 16 took 7.68 M node expansions untracked, 3.47 M
//! tracking only the low-cover truths' actions, 1.65 M tracking 6 chosen
//! as above from the start (tracking 8 or 10: 1.29 M and 0.96 M, but the
//! bound then cost more than the nodes saved); but tracking from the start
//! everywhere made small games 2-4x slower (mineral 12 x 8 0.19 -> 0.79 s,
//! spice 12 x 8 0.05 -> 0.16 s) and fantasy 12 x 16 2x slower, where the
//! rule above leaves them as they were and keeps car-identification at
//! 1.76 M. Building the bound after 500 expansions instead of 2 000 and
//! tracking after 5 000 instead of 20 000 (instances of 12 actions or
//! more; see `reuse_schedule` in the parent module) cut the expansions of
//! the first 100 instances of every shipped 12 x 16 domain by up to 60 %
//! (car-identification 1.76 M -> 1.58 M, chemical-compounds 468 k -> 330
//! k, fantasy 672 k -> 441 k, gemstone 286 k -> 125 k) and their CPU
//! time by 7-12 % in all; building it after 250 or 100 expansions saved a
//! few more nodes and cost more time. Tracking after 5 000 was undone
//! (back to 20 000, building after 500 kept) once re-tests became cheap:
//! the tracked fills then cost more than the expansions they saved
//! (`TRACK_AFTER` in the parent module has the figures).
//!
//! The tables are filled lazily: `R(T, U, c)` is computed (by the
//! recursion above, memoised) the first time the search asks for it, once
//! a search has proved deep enough to pay for it (see the parent module).
//! A game whose truths and tracked actions number at most 14 has a dense
//! table (the single-count game of 12 truths: 360 KB); a larger one a
//! hash table: a search asks for tens of thousands of its entries where
//! a dense table of 12 truths and 6 tracked actions was 20 MB, zeroed for
//! every instance. (A dense table per touched `(U, c)` plane, 4 096
//! entries of 12 truths, does not pay either: a car-identification
//! instance touches 564 of the 704 planes on average, 17.5 entries each.)
//! Both live in [`super::reuse_table`], on buffers the thread keeps from
//! one instance to the next.
//!
//! Cost: almost every call is a table hit (car-identification, 200
//! instances: 92 M calls, 1.9 M fills), half of them from fills. The
//! lookup is inlined into the fill's loop (no call per hit), the rows'
//! kept truths are one flat array, and a row whose floor already reaches
//! the best sum is skipped without a lookup (see [`Relaxed::fill`]): 6-12
//! % fewer instructions (whole `domain_sweep` process; BENCHMARKS.md,
//! "Optimal search").
//! Tried and dropped: trying the parent's best row first in a fill (the
//! minimum is order-free): 4.6 % fewer recursive lookups but 7 % more
//! instructions; rows are cut after about 1.5 lookups each already.

use std::cell::{Cell, RefCell};

use super::reuse_table::{ReuseTables, Table};
use crate::search::KUMO_MAX_ACTIONS;
use crate::search::mask::Mask;
use crate::search::shares::Shares;

/// Widest instance the bound is built for, in truths (a truth set is a
/// `u32` here).
pub(super) const MAX_TRUTHS: usize = 32;

/// Most count levels kept (instances of more than KUMO's 16 actions); a
/// higher count is capped, which only lowers the bound (module doc,
/// "Count cap").
pub(super) const LEVELS: u32 = 16;

/// Count levels kept on instances of at most KUMO's 16 actions.
pub(super) const KUMO_LEVELS: u32 = 10;

/// The count of a truth set without high truths, where the count no
/// longer matters (`R` there depends on `T` and `U` alone): one constant
/// for every cap, so the fill's loop does not read the game's cap.
const NO_HIGH: u32 = KUMO_LEVELS;

/// The count cap of an instance of `actions` actions (module doc, "Count
/// cap").
pub(super) fn levels_for(actions: usize) -> u32 {
    if actions > KUMO_MAX_ACTIONS {
        LEVELS
    } else {
        KUMO_LEVELS
    }
}

/// Most actions whose use is tracked exactly.
pub(super) const MAX_TRACKED: usize = 6;

/// A truth related to at most this many actions has *low cover*: its
/// actions are tracked first.
const LOW_COVER: usize = 4;

/// A row is skipped when `ΣW(non-base) / ΣW * FLOOR_SHRINK` reaches the
/// best sum so far (see [`Relaxed::fill`]).
const FLOOR_SHRINK: f64 = 1.0 - 1e-12;

/// One instance action as a relaxed game sees it.
#[derive(Clone, Copy)]
struct Row {
    /// The truths it relates to.
    related: u32,
    /// Its bit in `U` if tracked, else 0.
    bit: u32,
    /// Its states' kept truths (the complements of their rule-outs), in
    /// state order: `Relaxed::keeps[start..end]`.
    start: u32,
    end: u32,
}

/// The relaxed game of one set of tracked actions.
struct Relaxed {
    /// Number of instance truths.
    truths: u32,
    /// The count cap ([`levels_for`]).
    levels: u32,
    /// The instance actions that are tracked, in `U` bit order.
    tracked: Vec<usize>,
    /// The high truths.
    high: u32,
    /// `dead[U]`: the tracked truths no action of `U` relates to.
    dead: Vec<u32>,
    rows: Vec<Row>,
    /// Every row's kept truths, one after the other.
    keeps: Vec<u32>,
}

/// The bound `R` of one instance, computed on demand: the game without
/// tracked actions (a single count for every truth), and the game with
/// up to [`MAX_TRACKED`] tracked actions once tracking has started (see
/// [`ReuseBound::start_tracking`]).
pub(super) struct ReuseBound {
    single: Relaxed,
    single_table: RefCell<Table>,
    tracked: Relaxed,
    tracked_table: RefCell<Table>,
    /// The buffers not in use yet (the tracked table's, until tracking
    /// starts), see [`super::reuse_table`].
    spare: RefCell<ReuseTables>,
    /// The tracked game is asked.
    tracking: Cell<bool>,
    /// The tracked actions include those of a low-cover truth (see
    /// [`choose_tracked`]).
    pub(super) low_cover: bool,
}

impl ReuseBound {
    /// The (empty) bound of an instance of `truths` truths whose action `a`
    /// has the rule-out masks `states[a]` (state order) and relates to
    /// `related[a]`, its tables on the buffers of `tables` (all zero).
    pub(super) fn new<M: Mask>(
        truths: usize,
        states: &[Vec<M>],
        related: &[M],
        mut tables: ReuseTables,
    ) -> Self {
        debug_assert!(truths <= MAX_TRUTHS);
        let mask = |m: M| m.to_u128() as u32;
        let states: Vec<Vec<u32>> = states
            .iter()
            .map(|row| row.iter().map(|&x| mask(x)).collect())
            .collect();
        let related: Vec<u32> = related.iter().map(|&r| mask(r)).collect();
        let (tracked, low_cover) = choose_tracked(truths, &states, &related);
        let levels = levels_for(related.len());
        ReuseBound {
            single: Relaxed::new(truths, &states, &related, Vec::new()),
            single_table: RefCell::new(Table::new(truths as u32, levels, &mut tables)),
            // Made when tracking starts: most searches never track.
            tracked_table: RefCell::new(Table::empty()),
            spare: RefCell::new(tables),
            tracked: Relaxed::new(truths, &states, &related, tracked),
            tracking: Cell::new(false),
            low_cover,
        }
    }

    /// From now on, bounds come from the tracked game.
    pub(super) fn start_tracking(&self) {
        if self.tracked.tracked.is_empty() || self.tracking.get() {
            return;
        }
        let key_bits = self.tracked.truths + self.tracked.tracked.len() as u32;
        *self.tracked_table.borrow_mut() =
            Table::new(key_bits, self.tracked.levels, &mut self.spare.borrow_mut());
        self.tracking.set(true);
    }

    /// Its tables' buffers, reset, handed to `kept` (see
    /// [`super::reuse_table`]).
    pub(super) fn give_back(self, kept: &mut ReuseTables) {
        kept.keep_all(self.spare.into_inner());
        kept.keep(self.single_table.into_inner());
        kept.keep(self.tracked_table.into_inner());
    }

    /// The truths whose cover `get` takes (the high truths of the game
    /// asked).
    #[inline]
    pub(super) fn high<M: Mask>(&self) -> M {
        let high = if self.tracking.get() {
            self.tracked.high
        } else {
            self.single.high
        };
        M::from_u128(u128::from(high))
    }

    /// A lower bound of `E(truths, actions)`, where `cover` is at most the
    /// fewest actions of `actions` relating to one truth of `truths &
    /// self.high()`.
    #[inline]
    pub(super) fn get<M: Mask>(&self, truths: M, actions: M, cover: u32) -> f64 {
        self.get_unused(truths, self.unused(actions), cover)
    }

    /// `U` of `actions` in the game asked now: the tracked actions of
    /// `actions` (a set shared by every child of one action, so `expand`
    /// takes it once per action). Valid until tracking starts
    /// ([`ReuseBound::start_tracking`]), which no expansion does midway.
    #[inline]
    pub(super) fn unused<M: Mask>(&self, actions: M) -> u32 {
        if self.tracking.get() {
            self.tracked.unused(actions.to_u128())
        } else {
            self.single.unused(actions.to_u128())
        }
    }

    /// [`ReuseBound::get`] with `U` already taken ([`ReuseBound::unused`]).
    /// Always inlined into `floor_after` (see there).
    #[inline(always)]
    pub(super) fn get_unused<M: Mask>(&self, truths: M, unused: u32, cover: u32) -> f64 {
        let t = truths.to_u128() as u32;
        let (game, table) = if self.tracking.get() {
            (&self.tracked, &self.tracked_table)
        } else {
            (&self.single, &self.single_table)
        };
        game.level(&mut table.borrow_mut(), t, unused, game.count(t, cover))
    }
}

impl Relaxed {
    fn new(truths: usize, states: &[Vec<u32>], related: &[u32], tracked: Vec<usize>) -> Self {
        let bit_of = |a: usize| tracked.iter().position(|&b| b == a).map(|k| k as u32);
        let mut high = 0u32;
        // Per tracked truth: its bit, and its actions' bits in `U`.
        let mut tracked_truths = Vec::new();
        for t in 0..truths {
            let bits: Option<u32> = (0..related.len())
                .filter(|&a| related[a] >> t & 1 == 1)
                .try_fold(0u32, |acc, a| Some(acc | 1 << bit_of(a)?));
            match bits {
                Some(bits) => tracked_truths.push((1 << t, bits)),
                None => high |= 1 << t,
            }
        }
        let dead = (0..1u32 << tracked.len())
            .map(|u| {
                tracked_truths
                    .iter()
                    .filter(|&&(_, bits)| bits & u == 0)
                    .fold(0u32, |acc, &(truth, _)| acc | truth)
            })
            .collect();
        let mut keeps = Vec::new();
        let mut rows = Vec::with_capacity(states.len());
        for (a, (row, &related)) in states.iter().zip(related).enumerate() {
            let start = keeps.len() as u32;
            keeps.extend(row.iter().map(|&x| !x));
            rows.push(Row {
                related,
                bit: bit_of(a).map_or(0, |k| 1 << k),
                start,
                end: keeps.len() as u32,
            });
        }
        Relaxed {
            truths: truths as u32,
            levels: levels_for(related.len()),
            tracked,
            high,
            dead,
            rows,
            keeps,
        }
    }

    /// `U` of an action set (instance bits).
    #[inline]
    fn unused(&self, actions: u128) -> u32 {
        self.tracked.iter().enumerate().fold(0u32, |acc, (k, &b)| {
            acc | (((actions >> b) & 1) as u32) << k
        })
    }

    /// The count level of truths `t` whose high truths' cover is `cover`.
    #[inline]
    fn count(&self, t: u32, cover: u32) -> u32 {
        if t & self.high == 0 {
            NO_HIGH
        } else {
            cover.min(self.levels)
        }
    }

    /// `R(t, u, c)` for `c <= self.levels`, from `table` or, the first time,
    /// computed into it ([`Relaxed::fill`]). Inlined into its callers,
    /// the fill's loop included: almost all calls are table hits.
    ///
    /// A non-base entry of high truths only at count 1 is `1.0` without
    /// a lookup: every child of it is a base case (one truth or fewer, or
    /// high truths at count 0), so every offered row sums `0.0`, and one
    /// row is offered (a high truth is related to an untracked action,
    /// which every `U` offers): `0.0 + 1.0`. Such entries were a third of
    /// the fills on cooking 12 x 16 and half on language; with the fill's
    /// stop at a row of sum `0.0` (see [`Relaxed::fill`]), `domain_sweep
    /// 300`, cachegrind: language 3.199 G -> 2.890 G instructions,
    /// cooking 2.354 G -> 2.223 G, music (200) 6.881 G -> 6.548 G,
    /// car-identification (60) 6.932 G -> 6.887 G; the nodes the same.
    /// (Computing the count-2 entries of high truths straight from their
    /// rows' `P(s)`, the children being `1.0` each, cost more than the
    /// lookups it saved: language 2.904 G.)
    #[inline(always)]
    fn level(&self, table: &mut Table, t: u32, u: u32, c: u32) -> f64 {
        if t.count_ones() <= 1 || (c == 0 && t & self.high != 0) || t & self.dead[u as usize] != 0 {
            return 0.0;
        }
        if c == 1 && t & !self.high == 0 {
            return 1.0;
        }
        let key = u64::from(t) | (u64::from(c) << self.tracked.len() | u64::from(u)) << self.truths;
        match table.get(key) {
            Some(known) => known,
            None => self.fill(table, key, t, u, c),
        }
    }

    /// Computes `R(t, u, c)` (not a base case, not in `table`) by its
    /// recursion and stores it at `key`. A row's sum is cut once it
    /// reaches the best so far (the terms are non-negative, so the rest
    /// only raises it, and the minimum is the same).
    ///
    /// A row is skipped without a lookup when its floor reaches the best:
    /// every non-base child is worth at least `1.0`, so by monotonicity
    /// the row's float sum is at least the float sum `F` of its non-base
    /// children's `P(s)`; each `P(s)` and each addition of non-negative
    /// floats loses at most a factor `1 - 2^-53`, so
    /// `F >= D / ΣW' * (1 - 2^-53)^n` for `D` their weight, `ΣW'` the
    /// float denominator and `n` the states; the test's two roundings
    /// gain at most `(1 + 2^-53)^2`, and the factor `1 - 1e-12` covers
    /// both for any `n` below `10^3`. So the floor is at most the sum, and
    /// a row whose floor reaches the best cannot lower it. A row that
    /// sums to `0.0` ends the fill: no sum is below it.
    #[inline(never)]
    fn fill(&self, table: &mut Table, key: u64, t: u32, u: u32, c: u32) -> f64 {
        let mut best = f64::INFINITY;
        for row in &self.rows {
            if row.related & t == 0 || row.bit & u != row.bit {
                continue;
            }
            let child_u = u & !row.bit;
            let keeps = &self.keeps[row.start as usize..row.end as usize];
            // `ΣW`, and the part of it in children that are not base cases
            // here (each worth at least 1.0).
            let (mut total, mut deep) = (0u32, 0u32);
            for k in keeps {
                let child = t & k;
                let w = child.count_ones();
                total += w;
                let base = w <= 1
                    || (c == 1 && child & self.high != 0)
                    || child & self.dead[child_u as usize] != 0;
                deep += if base { 0 } else { w };
            }
            // `D / (ΣW + 1e-9)` and each `P(s)` from the table of those
            // quotients (`crate::search::shares`): the same floats.
            let shares = Shares::of(total);
            if shares.share(deep) * FLOOR_SHRINK >= best {
                continue;
            }
            let mut sum = 0.0f64;
            for k in keeps {
                let child = t & k;
                let w = child.count_ones();
                if w <= 1 {
                    continue;
                }
                let child_c = if child & self.high == 0 {
                    NO_HIGH
                } else {
                    c - 1
                };
                sum += self.level(table, child, child_u, child_c) * shares.share(w);
                if sum >= best {
                    break;
                }
            }
            best = best.min(sum);
            if best == 0.0 {
                break;
            }
        }
        let value = best + 1.0;
        table.put(key, value);
        value
    }
}

/// The tracked actions of an instance: those of the truths related to the
/// fewest actions, truth by truth while they fit, then the actions that
/// rule out most truths in expectation (instance order on ties).
fn choose_tracked(truths: usize, states: &[Vec<u32>], related: &[u32]) -> (Vec<usize>, bool) {
    let actions_of = |t: usize| -> Vec<usize> {
        (0..related.len())
            .filter(|&a| related[a] >> t & 1 == 1)
            .collect()
    };
    let mut tracked: Vec<usize> = Vec::new();
    let mut by_cover: Vec<Vec<usize>> = (0..truths).map(actions_of).collect();
    by_cover.sort_by_key(Vec::len);
    for acts in &by_cover {
        if acts.len() > LOW_COVER {
            break;
        }
        let new: Vec<usize> = acts
            .iter()
            .copied()
            .filter(|a| !tracked.contains(a))
            .collect();
        if tracked.len() + new.len() > MAX_TRACKED {
            break;
        }
        tracked.extend(new);
    }
    let low_cover = !tracked.is_empty() && related.len() >= 2 * MAX_TRACKED;
    let all = if truths == 32 {
        u32::MAX
    } else {
        (1u32 << truths) - 1
    };
    let mut by_use: Vec<(f64, usize)> = states
        .iter()
        .enumerate()
        .map(|(a, row)| (-expected_rule_out(all, row.iter().copied()), a))
        .collect();
    by_use.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    for (_, a) in by_use {
        if tracked.len() >= MAX_TRACKED {
            break;
        }
        if !tracked.contains(&a) {
            tracked.push(a);
        }
    }
    tracked.sort_unstable();
    (tracked, low_cover)
}

/// The truths of `all` an action with rule-out masks `rule_outs` (state
/// order) rules out in expectation, with the reference's `P(s)`.
fn expected_rule_out(all: u32, rule_outs: impl Iterator<Item = u32> + Clone) -> f64 {
    let total: u32 = rule_outs.clone().map(|x| (all & !x).count_ones()).sum();
    let denom = f64::from(total) + 1e-9;
    rule_outs
        .map(|x| f64::from((all & !x).count_ones()) / denom * f64::from((all & x).count_ones()))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// `R` straight from its definition (module doc): every offered row
    /// summed in full, no cut, no floor.
    fn defined(
        game: &Relaxed,
        t: u32,
        u: u32,
        c: u32,
        memo: &mut HashMap<(u32, u32, u32), f64>,
    ) -> f64 {
        if t.count_ones() <= 1 || (c == 0 && t & game.high != 0) || t & game.dead[u as usize] != 0 {
            return 0.0;
        }
        if let Some(&v) = memo.get(&(t, u, c)) {
            return v;
        }
        let mut best = f64::INFINITY;
        for row in &game.rows {
            if row.related & t == 0 || row.bit & u != row.bit {
                continue;
            }
            let keeps = &game.keeps[row.start as usize..row.end as usize];
            let total: u32 = keeps.iter().map(|k| (t & k).count_ones()).sum();
            let denom = f64::from(total) + 1e-9;
            let mut sum = 0.0f64;
            for k in keeps {
                let child = t & k;
                let child_c = if child & game.high == 0 {
                    NO_HIGH
                } else {
                    c - 1
                };
                let w = f64::from(child.count_ones());
                sum += defined(game, child, u & !row.bit, child_c, memo) * (w / denom);
            }
            best = best.min(sum);
        }
        memo.insert((t, u, c), best + 1.0);
        best + 1.0
    }

    /// The table's `R` (cut sums, skipped rows, entries filled in any
    /// order) equals the definition bit for bit at every `(T, U, c)` of
    /// random games, tracked (a hashed table) and not (a dense one), of
    /// KUMO's action counts (count cap 10) and beyond (cap 16).
    #[test]
    fn filled_values_equal_the_definition() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let truths = 9;
        let (mut checked, mut deep) = (0, 0);
        for actions in [10, 10, 10, 10, 10, 17, 17, 17] {
            let states: Vec<Vec<u32>> = (0..actions)
                .map(|_| {
                    (0..2 + next() % 3)
                        .map(|_| (next() & next() & 0x1ff) as u32)
                        .collect()
                })
                .collect();
            let related: Vec<u32> = states
                .iter()
                .map(|r| r.iter().fold(0, |a, &x| a | x))
                .collect();
            let (chosen, _) = choose_tracked(truths, &states, &related);
            for tracked in [Vec::new(), chosen] {
                let game = Relaxed::new(truths, &states, &related, tracked);
                assert_eq!(game.levels, if actions > 16 { LEVELS } else { 10 });
                let key_bits = truths as u32 + game.tracked.len() as u32;
                let mut table = Table::new(key_bits, game.levels, &mut ReuseTables::default());
                let mut memo = HashMap::new();
                for t in 0..1u32 << truths {
                    for u in 0..1u32 << game.tracked.len() {
                        for c in 0..=game.levels {
                            let c = if t & game.high == 0 { NO_HIGH } else { c };
                            let got = game.level(&mut table, t, u, c);
                            assert_eq!(got.to_bits(), defined(&game, t, u, c, &mut memo).to_bits());
                            checked += 1;
                            deep += usize::from(got >= 3.0);
                        }
                    }
                }
            }
        }
        assert!(
            checked > 100_000 && deep > 1_000,
            "{checked} checked, {deep} deep"
        );
    }
}
