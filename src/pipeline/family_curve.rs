//! `kumo-gen family NAME --curve`: the pipeline run on a family's domain
//! ([`crate::family`] compiles it; this generates and labels its lines):
//! the exact optimal expected number of
//! probes as the number of hypotheses per instance grows, with the golden
//! trajectory's hypothesis-space size after each probe (WILT's reduction
//! curve, exact).
//!
//! In: a compiled family domain, the hypotheses-per-instance counts, the
//! probes per instance, the instances per point and a per-instance search
//! budget. Out: one [`CurvePoint`] per count, or a [`FamilyError`] naming
//! the flag to change. Instances are generated and labelled as the main
//! command does; an instance whose search goes over the budget is not
//! labelled, and a point reports how many were (a mean over no instance
//! is "nothing labelled", never `0` or `-0`). The work is bounded: at most
//! [`MAX_CURVE_HYPOTHESES`] hypotheses per instance, and every instance's
//! search is cut at the budget (its memo at `max_memo_entries`, so memory
//! stays flat).

use serde_json::{Value, json};

use super::generate_lines;
use crate::domain::Domain;
use crate::family::FamilyError;
use crate::game::InstanceLine;
use crate::search::SearchBudget;
use crate::synth::Params;

/// Most hypotheses per instance a curve point may have. The exact search
/// grows exponentially with them: on `rules3`, 28 hypotheses took about
/// 1.3 s per instance and 64 about 10 s (whole-process timings under
/// load), so a 50-instance point beyond this bound runs for minutes.
pub const MAX_CURVE_HYPOTHESES: usize = 24;

/// Most instances per point `--curve-n` accepts: each point's instances
/// are generated and labelled in memory.
pub const MAX_CURVE_N: usize = 10_000;

/// The curve's default per-instance memo limit (about 48 MiB of table per
/// thread), smaller than `generate`'s: a curve is a quick look.
pub const CURVE_MEMO_ENTRIES: usize = 1_000_000;

/// The curve's default per-instance node limit.
pub const CURVE_NODES: u64 = 2_000_000;

/// One point of the curve.
#[derive(Clone, Debug, PartialEq)]
pub struct CurvePoint {
    pub hypotheses: usize,
    pub probes: usize,
    /// Instances generated.
    pub instances: u64,
    /// Instances labelled within the budget.
    pub labelled: usize,
    /// Mean exact optimal expected probes over the labelled instances;
    /// `None` when none was.
    pub mean_expected_probes: Option<f64>,
    /// Mean hypotheses left after each golden probe.
    pub golden_remaining: Vec<f64>,
}

/// What the curve asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveRequest<'a> {
    pub hypotheses: &'a [usize],
    pub probes: usize,
    pub instances: u64,
    pub budget: SearchBudget,
}

/// Probes per instance when not given (fewer if the domain has fewer).
pub const DEFAULT_CURVE_PROBES: usize = 16;

/// The probes per instance of a curve that names none: 16, or every
/// probe of a domain with fewer; for the explorer (`explorer`), which
/// holds out the probes an instance does not have, at most half of them.
pub fn default_probes(domain: &Domain, explorer: bool) -> usize {
    let room = if explorer {
        (domain.actions.len() / 2).max(1)
    } else {
        domain.actions.len()
    };
    DEFAULT_CURVE_PROBES.min(room)
}

impl CurveRequest<'_> {
    /// The budget as the flags that set it.
    pub fn budget_flags(&self) -> String {
        format!(
            "--search-nodes {} --search-budget {}",
            self.budget.max_nodes, self.budget.max_memo_entries
        )
    }

    /// Refuses counts outside what the domain and the bound allow, naming
    /// the valid range.
    pub(crate) fn check(&self, domain: &Domain) -> Result<(), FamilyError> {
        let probes = domain.actions.len();
        if self.probes == 0 || self.probes > probes {
            return Err(FamilyError::new(
                format!(
                    "`--curve-actions {}` is out of range: domain `{}` has {probes} probes, so the valid range is 1..={probes}",
                    self.probes, domain.name
                ),
                format!(
                    "pass `--curve-actions` between 1 and {probes}, or draw more probes with `--probes`"
                ),
            ));
        }
        let most = MAX_CURVE_HYPOTHESES.min(domain.truths.len());
        if let Some(&bad) = self.hypotheses.iter().find(|&&h| h < 2 || h > most) {
            let why = if bad > MAX_CURVE_HYPOTHESES && domain.truths.len() > MAX_CURVE_HYPOTHESES {
                format!(
                    "the exact search over more than {MAX_CURVE_HYPOTHESES} hypotheses per instance takes minutes per point"
                )
            } else if bad >= 2 {
                format!(
                    "domain `{}` has {} hypotheses",
                    domain.name,
                    domain.truths.len()
                )
            } else {
                "an instance needs a valid hypothesis and at least one other".into()
            };
            return Err(FamilyError::new(
                format!(
                    "`--curve-truths {bad}` is out of range ({why}): the valid range is 2..={most}"
                ),
                format!("pass `--curve-truths` values between 2 and {most}, e.g. `4,8,12`"),
            ));
        }
        Ok(())
    }
}

/// Generates and labels each point's instances and averages them. A
/// curve on which no instance was labelled is an error naming the budget.
pub fn curve(domain: &Domain, request: &CurveRequest) -> Result<Vec<CurvePoint>, FamilyError> {
    request.check(domain)?;
    let mut points = Vec::new();
    for &hypotheses in request.hypotheses {
        let params = Params::new(hypotheses, request.probes, 1);
        let lines = generate_lines(domain, params, request.instances, Some(request.budget))
            .map_err(|e| {
                FamilyError::new(
                    format!(
                        "{hypotheses} hypotheses x {} probes: {}",
                        request.probes, e.message
                    ),
                    e.help,
                )
            })?;
        points.push(point(domain, hypotheses, request, &lines)?);
    }
    if !points.is_empty() && points.iter().all(|p| p.labelled == 0) {
        return Err(FamilyError::new(
            if request.instances == 0 {
                "no curve point has an instance to label: `--curve-n` is 0".to_string()
            } else {
                format!(
                    "no instance of any curve point was labelled: every search went over the budget ({})",
                    request.budget_flags()
                )
            },
            if request.instances == 0 {
                "pass `--curve-n 1` or more".to_string()
            } else {
                "raise `--search-nodes` / `--search-budget`, or lower `--curve-truths` or `--curve-actions`"
                    .to_string()
            },
        ));
    }
    Ok(points)
}

fn point(
    domain: &Domain,
    hypotheses: usize,
    request: &CurveRequest,
    lines: &[String],
) -> Result<CurvePoint, FamilyError> {
    let internal = |e: String| FamilyError::new(e, "this is a bug in kumo-gen; please report it");
    let mut expected = Vec::new();
    let mut remaining: Vec<Vec<f64>> = Vec::new();
    for line in lines {
        let parsed: InstanceLine =
            serde_json::from_str(line).map_err(|e| internal(e.to_string()))?;
        let Some(steps) = parsed.expected_steps() else {
            continue;
        };
        expected.push(steps);
        let resolved = parsed
            .resolve(domain)
            .map_err(|e| internal(e.to_string()))?;
        let golden = resolved.golden.as_deref().unwrap_or(&[]);
        remaining.push(resolved.remaining_after(domain, golden));
    }
    // `+ 0.0` turns a `-0.0` into `0.0`; an empty mean is `None`.
    let mean =
        (!expected.is_empty()).then(|| expected.iter().sum::<f64>() / expected.len() as f64 + 0.0);
    Ok(CurvePoint {
        hypotheses,
        probes: request.probes,
        instances: request.instances,
        labelled: expected.len(),
        mean_expected_probes: mean,
        golden_remaining: crate::score::mean_curve(&remaining),
    })
}

/// The points as JSON rows (`mean_expected_probes` is `null` where nothing
/// was labelled).
pub fn to_json(points: &[CurvePoint]) -> Value {
    Value::Array(
        points
            .iter()
            .map(|p| {
                json!({
                    "hypotheses": p.hypotheses,
                    "probes": p.probes,
                    "instances": p.instances,
                    "labelled": p.labelled,
                    "mean_expected_probes": p.mean_expected_probes,
                    "golden_remaining": p.golden_remaining,
                })
            })
            .collect(),
    )
}

/// The points as a table, one row per point; a point with unlabelled
/// instances says how many of them were labelled, and one with none says
/// so instead of a mean.
pub fn to_table(domain: &Domain, request: &CurveRequest, points: &[CurvePoint]) -> String {
    let mut text = format!(
        "{}: exact optimal expected probes (mean of the instances labelled within {}; {} instances per row)\nhypotheses\tprobes\tE[probes]\thypotheses left after each golden probe (mean)\n",
        domain.name,
        request.budget_flags(),
        request.instances
    );
    for p in points {
        let Some(mean) = p.mean_expected_probes else {
            text.push_str(&format!(
                "{}\t{}\tnothing labelled: all {} instances went over the search budget\n",
                p.hypotheses, p.probes, p.instances
            ));
            continue;
        };
        let left: Vec<String> = p
            .golden_remaining
            .iter()
            .map(|v| format!("{v:.2}"))
            .collect();
        let partial = if (p.labelled as u64) < p.instances {
            format!(" ({} of {} labelled)", p.labelled, p.instances)
        } else {
            String::new()
        };
        text.push_str(&format!(
            "{}\t{}\t{mean:.4}\t{}{partial}\n",
            p.hypotheses,
            p.probes,
            left.join(" -> ")
        ));
    }
    text
}
