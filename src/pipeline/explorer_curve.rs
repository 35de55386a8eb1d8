//! `kumo-gen family NAME --explorer`: the exact best explorer of the
//! explore-then-predict protocol (docs/black-boxes.md).
//!
//! After `T` probes the player predicts the box's answer on held-out
//! inputs: here every probe of the domain that is not among the
//! instance's probes (so none was probed). With a uniform prior over the
//! instance's hypotheses still consistent, the Bayes-optimal prediction of
//! an input is the answer most of them give (ties: the first state), and
//! it is right for exactly those hypotheses. Two curves, per instance and
//! `T`, averaged exactly over the valid hypothesis (each hypothesis
//! determines every observation):
//! - **golden**: the golden policy (the exact labels' KUMO-optimal
//!   trajectory, [`crate::search`]) for its first `T` probes, then the
//!   Bayes prediction;
//! - **optimal**: the policy that maximises that accuracy within `T`
//!   probes, by a memoised recursion over (candidates, probes left, turns
//!   left); its table grows with the reachable candidate sets, so it runs
//!   under a node budget and an instance over it is left out (the point
//!   says how many were computed).
//!
//! In: a compiled family domain and a [`CurveRequest`]. Out: one
//! [`ExplorerPoint`] per hypotheses count, or a [`FamilyError`].

use std::collections::HashMap;

use serde_json::{Value, json};

use super::family_curve::CurveRequest;
use super::generate_lines;
use crate::domain::Domain;
use crate::family::FamilyError;
use crate::game::InstanceLine;
use crate::search::{Problem, Searcher};
use crate::synth::Params;

/// Most node expansions of one instance's accuracy-maximising recursion.
pub const OPTIMAL_NODES: u64 = 2_000_000;

/// One point: accuracies after `T = 0, 1, ..., turns` probes.
#[derive(Clone, Debug, PartialEq)]
pub struct ExplorerPoint {
    pub hypotheses: usize,
    pub probes: usize,
    /// Held-out inputs each instance is tested on.
    pub held_out: usize,
    pub instances: usize,
    /// Mean exact accuracy of the golden policy's first `T` probes.
    pub golden: Vec<f64>,
    /// Mean exact accuracy of the best `T`-probe policy, over the
    /// instances computed within [`OPTIMAL_NODES`] (`None`: none was).
    pub optimal: Vec<Option<f64>>,
    /// Instances whose best policy was computed.
    pub optimal_instances: usize,
}

/// One instance as the recursion needs it.
pub struct Instance {
    /// `answer[p][h]`: the state probe `p` shows when hypothesis `h` is
    /// the valid one (probes: the instance's, then the held-out ones).
    pub answer: Vec<Vec<usize>>,
    /// How many of `answer`'s probes the player may take.
    pub probes: usize,
}

impl Instance {
    /// The instance's hypotheses (domain indices) and probes, with every
    /// other probe of `domain` held out.
    pub fn new(domain: &Domain, truths: &[usize], probes: &[usize]) -> Self {
        let held = (0..domain.actions.len()).filter(|a| !probes.contains(a));
        let answer = probes
            .iter()
            .copied()
            .chain(held)
            .map(|a| {
                let states = &domain.actions[a].states;
                truths
                    .iter()
                    .map(|&t| {
                        states
                            .iter()
                            .position(|s| !s.rules_out.contains(t))
                            .unwrap_or(0)
                    })
                    .collect()
            })
            .collect();
        Instance {
            answer,
            probes: probes.len(),
        }
    }

    fn held_out(&self) -> std::ops::Range<usize> {
        self.probes..self.answer.len()
    }

    /// Hypotheses (bit set) right by the Bayes prediction, summed over the
    /// held-out inputs: the accuracy times `|candidates| * held_out`.
    fn right(&self, candidates: u128) -> usize {
        let mut total = 0;
        for x in self.held_out() {
            let mut count: Vec<usize> = Vec::new();
            for h in ones(candidates) {
                let s = self.answer[x][h];
                if count.len() <= s {
                    count.resize(s + 1, 0);
                }
                count[s] += 1;
            }
            total += count.iter().max().copied().unwrap_or(0);
        }
        total
    }

    /// Exact accuracy, averaged over the valid hypothesis, of following
    /// each hypothesis's golden trajectory `golden[h]` for `t` probes.
    pub fn golden_accuracy(&self, golden: &[Vec<usize>], t: usize) -> f64 {
        let n = golden.len();
        let held = self.held_out().len();
        let mut right = 0usize;
        for (h, path) in golden.iter().enumerate() {
            let candidates = self.consistent(h, &path[..t.min(path.len())]);
            // The prediction for `x`: the most common answer, first state
            // among ties.
            for x in self.held_out() {
                let mut count: Vec<usize> = Vec::new();
                for c in ones(candidates) {
                    let s = self.answer[x][c];
                    if count.len() <= s {
                        count.resize(s + 1, 0);
                    }
                    count[s] += 1;
                }
                let best = (0..count.len()).max_by_key(|&s| (count[s], usize::MAX - s));
                right += usize::from(best == Some(self.answer[x][h]));
            }
        }
        right as f64 / (n * held) as f64
    }

    /// The hypotheses answering probes `taken` as `h` does.
    fn consistent(&self, h: usize, taken: &[usize]) -> u128 {
        let n = self.answer[0].len();
        (0..n)
            .filter(|&c| {
                taken
                    .iter()
                    .all(|&p| self.answer[p][c] == self.answer[p][h])
            })
            .fold(0, |m, c| m | 1 << c)
    }

    /// The best `t`-probe policy's exact accuracy, or `None` over
    /// `max_nodes` expansions.
    pub fn optimal_accuracy(&self, t: usize, max_nodes: u64) -> Option<f64> {
        let n = self.answer[0].len();
        let mut memo = HashMap::new();
        let mut nodes = 0u64;
        let all = u128::MAX >> (128 - n);
        let probes = if self.probes == 0 {
            0
        } else {
            u128::MAX >> (128 - self.probes)
        };
        let right = self.best(all, probes, t, &mut memo, &mut nodes, max_nodes)?;
        Some(right / (n * self.held_out().len()) as f64)
    }

    /// Most hypotheses right (summed over held-out inputs) from
    /// `candidates` with `probes` left and `t` turns.
    fn best(
        &self,
        candidates: u128,
        probes: u128,
        t: usize,
        memo: &mut HashMap<(u128, u128, usize), f64>,
        nodes: &mut u64,
        max_nodes: u64,
    ) -> Option<f64> {
        let stop = self.right(candidates) as f64;
        if t == 0 || candidates.count_ones() <= 1 {
            return Some(stop);
        }
        if let Some(&v) = memo.get(&(candidates, probes, t)) {
            return Some(v);
        }
        *nodes += 1;
        if *nodes > max_nodes {
            return None;
        }
        let mut best = stop;
        for p in ones(probes) {
            let mut parts: Vec<u128> = Vec::new();
            let mut states: Vec<usize> = Vec::new();
            for h in ones(candidates) {
                let s = self.answer[p][h];
                match states.iter().position(|&x| x == s) {
                    Some(i) => parts[i] |= 1 << h,
                    None => {
                        states.push(s);
                        parts.push(1 << h);
                    }
                }
            }
            if parts.len() < 2 {
                continue;
            }
            let mut sum = 0.0;
            for part in parts {
                sum += self.best(part, probes & !(1 << p), t - 1, memo, nodes, max_nodes)?;
            }
            if sum > best {
                best = sum;
            }
        }
        memo.insert((candidates, probes, t), best);
        Some(best)
    }
}

fn ones(mut mask: u128) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            i
        })
    })
}

/// Each hypothesis's golden trajectory (instance probe positions) under
/// the exact labels' search.
pub fn golden_paths(instance: &Instance, request: &CurveRequest) -> Option<Vec<Vec<usize>>> {
    let n = instance.answer[0].len();
    let lists: Vec<Vec<Vec<usize>>> = instance.answer[..instance.probes]
        .iter()
        .map(|row| {
            let states = row.iter().max().map_or(0, |&m| m + 1);
            (0..states)
                .map(|s| (0..n).filter(|&h| row[h] != s).collect())
                .collect()
        })
        .collect();
    let problem = Problem::from_rule_outs(n, &lists).ok()?;
    let mut searcher = Searcher::new();
    (0..n)
        .map(|h| {
            let seen: Vec<Option<usize>> = instance.answer[..instance.probes]
                .iter()
                .map(|row| Some(row[h]))
                .collect();
            searcher
                .label(&problem, &seen, request.budget)
                .ok()
                .map(|label| label.golden_actions)
        })
        .collect()
}

/// The explorer curve: for each hypotheses count, the golden and the
/// optimal accuracy after `0..=turns` probes.
pub fn explorer_curve(
    domain: &Domain,
    request: &CurveRequest,
    turns: usize,
) -> Result<Vec<ExplorerPoint>, FamilyError> {
    request.check(domain)?;
    if request.probes > 128 {
        return Err(FamilyError::new(
            format!(
                "`--curve-actions {}` is more than 128 probes",
                request.probes
            ),
            "pass `--curve-actions` of 128 or fewer",
        ));
    }
    let held_out = domain.actions.len() - request.probes;
    if held_out == 0 {
        return Err(FamilyError::new(
            format!(
                "`--curve-actions {}` leaves no held-out input: domain `{}` has {} probes",
                request.probes,
                domain.name,
                domain.actions.len()
            ),
            "pass a smaller `--curve-actions`, or draw more probes with `--probes`",
        ));
    }
    let internal = |e: String| FamilyError::new(e, "this is a bug in kumo-gen; please report it");
    let mut points = Vec::new();
    for &hypotheses in request.hypotheses {
        let params = Params::new(hypotheses, request.probes, 1);
        let lines = generate_lines(domain, params, request.instances, None)
            .map_err(|e| FamilyError::new(e.message, e.help))?;
        let mut golden = vec![0.0; turns + 1];
        let mut optimal = vec![0.0; turns + 1];
        let (mut counted, mut optimal_counted) = (0usize, 0usize);
        for line in &lines {
            let parsed: InstanceLine =
                serde_json::from_str(line).map_err(|e| internal(e.to_string()))?;
            let resolved = parsed
                .resolve(domain)
                .map_err(|e| internal(e.to_string()))?;
            let instance = Instance::new(domain, &resolved.truths, &resolved.actions);
            let Some(paths) = golden_paths(&instance, request) else {
                continue;
            };
            counted += 1;
            for (t, g) in golden.iter_mut().enumerate() {
                *g += instance.golden_accuracy(&paths, t);
            }
            let best: Option<Vec<f64>> = (0..=turns)
                .map(|t| instance.optimal_accuracy(t, OPTIMAL_NODES))
                .collect();
            if let Some(best) = best {
                optimal_counted += 1;
                for (o, b) in optimal.iter_mut().zip(best) {
                    *o += b;
                }
            }
        }
        let mean = |v: f64, k: usize| (k > 0).then(|| v / k as f64 + 0.0);
        points.push(ExplorerPoint {
            hypotheses,
            probes: request.probes,
            held_out,
            instances: counted,
            golden: golden
                .iter()
                .map(|&g| mean(g, counted).unwrap_or(0.0))
                .collect(),
            optimal: optimal.iter().map(|&o| mean(o, optimal_counted)).collect(),
            optimal_instances: optimal_counted,
        });
    }
    Ok(points)
}

/// The points as JSON rows.
pub fn to_json(points: &[ExplorerPoint]) -> Value {
    Value::Array(
        points
            .iter()
            .map(|p| {
                json!({
                    "hypotheses": p.hypotheses,
                    "probes": p.probes,
                    "held_out": p.held_out,
                    "instances": p.instances,
                    "golden_accuracy": p.golden,
                    "optimal_accuracy": p.optimal,
                    "optimal_instances": p.optimal_instances,
                })
            })
            .collect(),
    )
}

/// The points as a table: one row per hypotheses count and policy.
pub fn to_table(domain: &Domain, points: &[ExplorerPoint]) -> String {
    let mut text = format!(
        "{}: exact expected accuracy on held-out inputs after T probes (Bayes prediction, uniform prior; T = 0, 1, ...)\nhypotheses\tprobes\theld out\tpolicy\taccuracy after T probes\n",
        domain.name
    );
    for p in points {
        let row = |v: Vec<String>| v.join(" ");
        text.push_str(&format!(
            "{}\t{}\t{}\tgolden ({} instances)\t{}\n",
            p.hypotheses,
            p.probes,
            p.held_out,
            p.instances,
            row(p.golden.iter().map(|g| format!("{g:.4}")).collect())
        ));
        let best = if p.optimal_instances == 0 {
            "over the node budget on every instance".to_string()
        } else {
            row(p
                .optimal
                .iter()
                .map(|o| o.map_or("-".into(), |o| format!("{o:.4}")))
                .collect())
        };
        text.push_str(&format!(
            "{}\t{}\t{}\tbest ({} instances)\t{best}\n",
            p.hypotheses, p.probes, p.held_out, p.optimal_instances
        ));
    }
    text
}
