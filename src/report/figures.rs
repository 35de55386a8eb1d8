//! The report's pictures, as inline SVG strings: per domain, every player
//! (models, people, the optimal player's expectation and the golden
//! player's own mean) on one axis of success and one of actions in KUMO's
//! count, with 95% whiskers; and per model the structure test summarised
//! as at most [`STRUCTURE_BARS`] + 1 stacked bars (share correct per
//! signature against the overall share).
//!
//! Axes are ticked by [`crate::score::axis::Axis`]; colours and marker
//! shapes say what a player is (circle: model, triangle: person, diamond:
//! optimal play's expectation `optimal_actions`, square: the golden
//! player's mean `golden_mean_actions`), and a legend says so on every
//! figure.

use std::fmt::Write as _;

use super::TableRow;
use crate::game::is_human;
use crate::score::axis::Axis;
use crate::score::interval::Interval;
use crate::stats::Test;

pub(super) fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// What kind of player a line of a domain figure is.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Model,
    Human,
    Optimal,
    Golden,
}

/// One line of a domain figure.
struct Entry {
    label: String,
    kind: Kind,
    success: Option<(f64, Option<Interval>)>,
    actions: Option<(f64, Option<Interval>)>,
}

const MODEL: &str = "#3366aa";
const HUMAN: &str = "#d9782d";
const OPTIMAL: &str = "#222222";
const GOLDEN: &str = "#8a6d00";

fn marker(kind: Kind, x: f64, y: f64) -> String {
    match kind {
        Kind::Model => format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="5" fill="{MODEL}"/>"#),
        Kind::Human => format!(
            r#"<path d="M{:.1} {:.1}l6 10h-12z" fill="{HUMAN}"/>"#,
            x,
            y - 6.0
        ),
        Kind::Optimal => format!(
            r#"<path d="M{x:.1} {:.1}l6 6l-6 6l-6 -6z" fill="{OPTIMAL}"/>"#,
            y - 6.0
        ),
        Kind::Golden => format!(
            r#"<rect x="{:.1}" y="{:.1}" width="10" height="10" fill="{GOLDEN}"/>"#,
            x - 5.0,
            y - 5.0
        ),
    }
}

/// The domains of the rows (overall rows left out), in row order.
pub(super) fn domains(rows: &[TableRow]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        if r.row.domain != "all" && !out.contains(&r.row.domain) {
            out.push(r.row.domain.clone());
        }
    }
    out
}

/// Entries of one domain: per setting, the optimal player, then each
/// model and person.
fn entries(rows: &[TableRow], domain: &str) -> Vec<(String, Vec<Entry>)> {
    let mut settings: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r.row.domain == domain) {
        if !settings.contains(&r.row.setting) {
            settings.push(r.row.setting.clone());
        }
    }
    settings
        .into_iter()
        .map(|setting| {
            let here: Vec<&TableRow> = rows
                .iter()
                .filter(|r| r.row.domain == domain && r.row.setting == setting)
                .collect();
            let mut list = Vec::new();
            // Optimal play on the instances of the row with the most
            // labelled ones: it always succeeds, in `optimal_actions`
            // (E + 2 of KUMO's count) in expectation and in
            // `golden_mean_actions` as the golden player plays them.
            if let Some(best) = here
                .iter()
                .filter(|r| r.row.optimal_actions.is_some())
                .max_by_key(|r| r.row.labelled)
            {
                // Certified labels bound E from above: the point is the
                // strategy their golden trajectories follow, at most E + 2.
                let label = if best.row.certified > 0 {
                    format!(
                        "optimal actions ≤ ({} inst., {} cert.)",
                        best.row.labelled, best.row.certified
                    )
                } else {
                    format!("optimal actions, expected ({} inst.)", best.row.labelled)
                };
                list.push(Entry {
                    label,
                    kind: Kind::Optimal,
                    success: Some((1.0, None)),
                    actions: best.row.optimal_actions.map(|e| (e, None)),
                });
                if let Some(golden) = best.row.golden_mean_actions {
                    list.push(Entry {
                        label: format!(
                            "golden actions: golden player ({} inst.)",
                            best.row.labelled
                        ),
                        kind: Kind::Golden,
                        success: Some((1.0, None)),
                        actions: Some((golden, None)),
                    });
                }
            }
            for r in here {
                list.push(Entry {
                    label: format!("{} ({})", r.row.model, r.row.agent),
                    kind: if is_human(&r.row.agent) {
                        Kind::Human
                    } else {
                        Kind::Model
                    },
                    success: Some((r.row.success_rate, r.intervals.success_rate)),
                    actions: Some((r.row.mean_actions, r.intervals.mean_actions)),
                });
            }
            (setting, list)
        })
        .collect()
}

/// One domain: a line per player and setting, success on the left axis,
/// actions (KUMO's count) on the right.
pub(super) fn domain_figure(rows: &[TableRow], domain: &str) -> String {
    let groups = entries(rows, domain);
    let label_w = 300.0;
    let panel_w = 260.0;
    let gap = 70.0;
    let line_h = 22.0;
    let top = 40.0;
    let count: usize = groups.iter().map(|(_, e)| e.len() + 1).sum();
    let height = top + line_h * count as f64 + 50.0;
    let width = label_w + 2.0 * panel_w + gap + 20.0;
    let success_axis = Axis::new(0.0, 1.0, 4);
    let mut most: f64 = 1.0;
    for (_, list) in &groups {
        for e in list {
            if let Some((v, i)) = e.actions {
                most = most.max(v).max(i.map_or(v, |i| i.high));
            }
        }
    }
    let action_axis = Axis::new(0.0, most, 5);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="figure" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="12" role="img" aria-label="{}: success and actions per player">"#,
        esc(domain)
    );
    let panels = [
        (label_w, &success_axis, "success rate (95% Wilson)"),
        (
            label_w + panel_w + gap,
            &action_axis,
            "actions per trial, KUMO's count (95% t)",
        ),
    ];
    let bottom = height - 40.0;
    for (x0, axis, title) in panels {
        let x = |v: f64| x0 + (v - axis.low) / (axis.high - axis.low) * panel_w;
        let _ = writeln!(
            s,
            r#"<text x="{x0:.1}" y="18" font-weight="bold">{title}</text>"#
        );
        for &t in &axis.ticks {
            let _ = writeln!(
                s,
                r##"<line x1="{0:.1}" x2="{0:.1}" y1="{top:.1}" y2="{bottom:.1}" stroke="#ddd"/><text x="{0:.1}" y="{1:.1}" text-anchor="middle">{2}</text>"##,
                x(t),
                bottom + 16.0,
                axis.label(t)
            );
        }
    }
    let mut y = top;
    for (setting, list) in &groups {
        let _ = writeln!(
            s,
            r#"<text x="4" y="{:.1}" font-weight="bold">{}</text>"#,
            y + 15.0,
            esc(&short(setting))
        );
        y += line_h;
        for e in list {
            let cy = y + line_h / 2.0;
            let _ = writeln!(
                s,
                r#"<text x="16" y="{:.1}">{}</text>"#,
                cy + 4.0,
                esc(&clip(&e.label, 42))
            );
            for ((x0, axis, _), value) in panels.iter().zip([e.success, e.actions]) {
                let Some(value) = value else { continue };
                let x = |v: f64| x0 + (v - axis.low) / (axis.high - axis.low) * panel_w;
                point_mark(&mut s, e, value, &x, cy);
            }
            y += line_h;
        }
    }
    legend(&mut s, &groups, label_w, height - 12.0);
    s.push_str("</svg>\n");
    s
}

/// One player's value in a panel at height `cy`: its 95% whisker and its
/// marker (`x`: the panel's scale).
fn point_mark(
    s: &mut String,
    e: &Entry,
    (v, interval): (f64, Option<Interval>),
    x: &dyn Fn(f64) -> f64,
    cy: f64,
) {
    if let Some(i) = interval {
        let _ = writeln!(
            s,
            r##"<path d="M{:.1} {cy:.1}H{:.1}M{:.1} {:.1}v8M{:.1} {:.1}v8" stroke="#555" fill="none"/>"##,
            x(i.low),
            x(i.high),
            x(i.low),
            cy - 4.0,
            x(i.high),
            cy - 4.0
        );
    }
    let range = interval.map_or(String::new(), |i| {
        format!(" (95%: {:.3} to {:.3})", i.low, i.high)
    });
    let _ = writeln!(
        s,
        "<g>{}<title>{}: {v:.3}{range}</title></g>",
        marker(e.kind, x(v), cy),
        esc(&e.label)
    );
}

/// The markers' legend along the bottom, from `lx`, on the line `ly`:
/// the kinds of player the figure's `groups` show.
fn legend(s: &mut String, groups: &[(String, Vec<Entry>)], mut lx: f64, ly: f64) {
    for (kind, name) in [
        (Kind::Model, "model"),
        (Kind::Human, "person"),
        (Kind::Optimal, "optimal actions, expected (E + 2)"),
        (Kind::Golden, "golden actions"),
    ] {
        if !groups
            .iter()
            .any(|(_, list)| list.iter().any(|e| e.kind == kind))
        {
            continue;
        }
        let _ = writeln!(
            s,
            r#"{}<text x="{:.1}" y="{:.1}">{name}</text>"#,
            marker(kind, lx, ly - 4.0),
            lx + 10.0,
            ly
        );
        lx += 24.0 + 7.0 * name.len() as f64;
    }
}

/// `truth_num=12+action_num=16+valid_truth_num=1` -> `12x16`.
pub(super) fn short(setting: &str) -> String {
    setting
        .parse::<crate::dataset::Setting>()
        .map_or_else(|_| setting.to_string(), |s| s.short_name())
}

fn clip(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        text.to_string()
    } else {
        let mut out: String = text.chars().take(most - 1).collect();
        out.push('…');
        out
    }
}

/// Signatures a model's chart shows one bar each: the most frequent ones;
/// the rest share one bar, so a model's chart has at most this many + 1
/// bars however many signatures its instances have.
pub(super) const STRUCTURE_BARS: usize = 10;

/// The bars of one model's chart: the [`STRUCTURE_BARS`] most frequent
/// rows of the tested table seen at least twice (most instances first,
/// then in table order), then one bar pooling every other row, labelled
/// with how many signatures it holds.
pub(super) fn structure_bars(test: &Test) -> Vec<(String, [usize; 2])> {
    let mut order: Vec<usize> = (0..test.table.len()).collect();
    let n = |i: usize| test.table[i].1[0] + test.table[i].1[1];
    order.sort_by_key(|&i| std::cmp::Reverse(n(i)));
    let shown: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| n(i) >= 2)
        .take(STRUCTURE_BARS)
        .collect();
    let mut bars: Vec<(String, [usize; 2])> =
        shown.iter().map(|&i| test.table[i].clone()).collect();
    let rest: Vec<usize> = order
        .iter()
        .copied()
        .filter(|i| !shown.contains(i))
        .collect();
    if !rest.is_empty() {
        let mut pooled = [0usize; 2];
        let mut signatures = 0usize;
        for &i in &rest {
            let (label, counts) = &test.table[i];
            pooled[0] += counts[0];
            pooled[1] += counts[1];
            // `stats --pool`'s `other` row already holds several.
            signatures += if label == "other" {
                test.pooled.max(1)
            } else {
                1
            };
        }
        bars.push((format!("{signatures} other signature(s)"), pooled));
    }
    bars
}

/// One model's structure test, summarised ([`structure_bars`]): per bar
/// the share correct (green) and incorrect (grey), `n` beside it, and a
/// dashed line at the model's overall share correct: bars far from the
/// line are what the chi-square statistic adds up.
pub(super) fn structure_figure(test: &Test) -> String {
    let bars = structure_bars(test);
    let label_w = 260.0;
    let bar_w = 360.0;
    let line_h = 20.0;
    let top = 30.0;
    let rows = bars.len().max(1) as f64;
    let height = top + line_h * rows + 46.0;
    let width = label_w + bar_w + 80.0;
    let overall = if test.instances > 0 {
        test.correct as f64 / test.instances as f64
    } else {
        0.0
    };
    let axis = Axis::new(0.0, 1.0, 4);
    let x = |v: f64| label_w + v * bar_w;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="figure" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="12" role="img" aria-label="{}: share correct per structure signature">"#,
        esc(&test.model)
    );
    let _ = writeln!(
        s,
        r#"<text x="{label_w}" y="18" font-weight="bold">share correct (majority of trials) per structure signature</text>"#
    );
    for (i, (label, [correct, incorrect])) in bars.iter().enumerate() {
        let n = correct + incorrect;
        let share = if n > 0 {
            *correct as f64 / n as f64
        } else {
            0.0
        };
        let y = top + line_h * i as f64;
        let _ = writeln!(
            s,
            r##"<text x="4" y="{:.1}">{}</text><rect x="{label_w}" y="{:.1}" width="{:.1}" height="14" fill="#59a14f"><title>{}: {correct} of {n} correct</title></rect><rect x="{:.1}" y="{:.1}" width="{:.1}" height="14" fill="#cccccc"/><text x="{:.1}" y="{:.1}">n = {n}</text>"##,
            y + 12.0,
            esc(&clip(label, 38)),
            y + 2.0,
            share * bar_w,
            esc(label),
            x(share),
            y + 2.0,
            (1.0 - share) * bar_w,
            x(1.0) + 6.0,
            y + 12.0
        );
    }
    let bottom = top + line_h * rows;
    for &t in &axis.ticks {
        let _ = writeln!(
            s,
            r##"<line x1="{0:.1}" x2="{0:.1}" y1="{bottom:.1}" y2="{1:.1}" stroke="#888"/><text x="{0:.1}" y="{2:.1}" text-anchor="middle">{3}</text>"##,
            x(t),
            bottom + 4.0,
            bottom + 16.0,
            axis.label(t)
        );
    }
    let _ = writeln!(
        s,
        r##"<line x1="{0:.1}" x2="{0:.1}" y1="{top:.1}" y2="{bottom:.1}" stroke="#222" stroke-dasharray="4 3"/><text x="{0:.1}" y="{1:.1}" text-anchor="middle">overall {2:.2}</text>"##,
        x(overall),
        bottom + 32.0,
        overall
    );
    s.push_str("</svg>\n");
    s
}
