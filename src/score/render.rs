//! Rendering a score report: a text table, a JSON array, an SVG chart.

use std::fmt::Write;

use super::axis::Axis;
use super::interval::{Interval, RowIntervals, row_intervals};
use super::{LineScore, Row};
use crate::dataset::Setting;

/// `truth_num=12+action_num=16+valid_truth_num=1` -> `12x16` (`12x16v2`
/// with more than one valid truth); anything else unchanged.
fn short_setting(setting: &str) -> String {
    setting
        .parse::<Setting>()
        .map_or_else(|_| setting.to_string(), |s| s.short_name())
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or_else(|| "n/a".to_string(), f)
}

/// The report as an aligned text table (settings shortened to `TxA`).
pub fn render_table(rows: &[Row]) -> String {
    let moves = rows.iter().any(|r| r.mean_regret.is_some());
    let mut header = vec![
        "MODEL",
        "AGENT",
        "DOMAIN",
        "SETTING",
        "INST",
        "TRIALS",
        "SUCCESS",
        "ACTIONS",
        "OPTIMAL",
        "REL",
        "REPEATS",
        "BUDGET ACC",
        "TURNS SOLVED",
        "PARSE",
        "TOKENS",
        "SUCCESS FROM",
    ];
    if moves {
        header.splice(15..15, ["REGRET", "OPT MOVES", "EFFIC"]);
    }
    // Rows with certified labels: their count, and OPTIMAL and REL as the
    // ranges the labels allow.
    let certified = rows.iter().any(|r| r.certified > 0);
    if certified {
        header.insert(9, "CERT");
    }
    let mut cells: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for r in rows {
        let mut cells_of_row = vec![
            r.model.clone(),
            r.agent.clone(),
            r.domain.clone(),
            short_setting(&r.setting),
            r.instances.to_string(),
            r.trials.to_string(),
            format!("{:.3}", r.success_rate),
            format!("{:.3}", r.mean_actions),
            match (r.optimal_steps_min, r.optimal_steps) {
                (Some(lo), Some(hi)) => format!("{:.3}..{:.3}", lo + 2.0, hi + 2.0),
                (_, e) => opt(e, |e| format!("{:.3}", e + 2.0)),
            },
            match (r.relative_action_count, r.relative_action_count_max) {
                (Some(lo), Some(hi)) => format!("{lo:+.3}..{hi:+.3}"),
                (v, _) => opt(v, |v| format!("{v:+.3}")),
            },
            format!("{:.3}", r.mean_repeats),
            opt(r.budget_accuracy, |v| format!("{v:.3}")),
            opt(r.mean_turns_solved, |v| format!("{v:.2}")),
            format!("{:.3}", r.parse_error_rate),
            format!("{:.1}", r.mean_tokens),
            format!("{:?}", r.success_from).to_lowercase(),
        ];
        if certified {
            cells_of_row.insert(9, r.certified.to_string());
        }
        let at = if certified { 16 } else { 15 };
        if moves {
            cells_of_row.splice(
                at..at,
                [
                    opt(r.mean_regret, |v| format!("{v:.3}")),
                    opt(r.optimal_move_rate, |v| format!("{v:.3}")),
                    opt(r.mean_efficiency, |v| format!("{v:.3}")),
                ],
            );
        }
        cells.push(cells_of_row);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            cells
                .iter()
                .map(|row| row[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &cells {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            // Text columns left, numbers right.
            if c < 4 || c == header.len() - 1 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
            line.push_str("  ");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(
        "ACTIONS counts KUMO's way (len(actions): the prediction counts twice); \
         OPTIMAL = expected steps + 2 in the same count; REL = (ACTIONS - OPTIMAL) / OPTIMAL; \
         REPEATS = queries of an action already queried in the same game, per game; \
         BUDGET ACC = solved within the turn budget (budgeted protocol only); \
         TURNS SOLVED = mean replies of the solved games.\n",
    );
    if certified {
        out.push_str(
            "CERT = lines whose label is certified, not exact (the search ran over budget: \
             lower <= E <= upper, docs/output.md); such a row shows OPTIMAL as the range of the \
             labels' means and REL as the range it allows: from the count against the upper \
             bounds (the least the player can have wasted) to the count against the lower \
             bounds (the most).\n",
        );
    }
    if moves {
        out.push_str(
            "REGRET = expected actions wasted against the exact optimum, per game; \
             OPT MOVES = share of optimal moves; EFFIC = min(1, golden / actions)^2 \
             for a proven answer, else 0 (docs/analytics.md).\n",
        );
    }
    out
}

/// The report as a JSON array of rows.
pub fn render_json(rows: &[Row]) -> String {
    let mut s = serde_json::to_string_pretty(rows).expect("rows serialize");
    s.push('\n');
    s
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const PALETTE: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
];

/// A self-contained SVG: two panels of grouped bars, success rate and
/// relative action count, one group per domain and setting, one bar per
/// model, each with its 95% interval ([`super::interval`]: Wilson for the
/// success rate, the seeded bootstrap for the relative action count) as a
/// whisker; axes ticked at round numbers ([`super::axis`]). Overall
/// (`all`) rows are left out. `lines` are the report's line scores, one
/// entry per row.
pub fn render_svg(rows: &[Row], lines: &[Vec<LineScore>]) -> String {
    let intervals: Vec<RowIntervals> = lines.iter().map(|l| row_intervals(l)).collect();
    render_svg_with(rows, &intervals)
}

/// [`render_svg`] with each row's intervals already computed.
pub fn render_svg_with(rows: &[Row], intervals: &[RowIntervals]) -> String {
    let rows: Vec<(&Row, RowIntervals)> = rows
        .iter()
        .zip(intervals)
        .filter(|(r, _)| r.model != "all" && r.setting != "all")
        .map(|(r, i)| (r, i.clone()))
        .collect();
    let label = |r: &Row| format!("{} ({})", r.model, r.agent);
    let mut models: Vec<String> = rows.iter().map(|(r, _)| label(r)).collect();
    models.sort();
    models.dedup();
    let groups = chart_groups(rows.iter().map(|(r, _)| *r));
    // (value, interval) of a model in a group, for either panel.
    let value = |g: &(String, String), m: &str, rel: bool| -> Option<(f64, Option<Interval>)> {
        rows.iter()
            .find(|(r, _)| r.domain == g.0 && r.setting == g.1 && label(r) == m)
            .and_then(|(r, i)| {
                if rel {
                    r.relative_action_count
                        .map(|v| (v, i.relative_action_count))
                } else {
                    Some((r.success_rate, i.success_rate))
                }
            })
    };
    // A row with certified labels (docs/output.md): its relative count is
    // a range, `(least, most, certified lines)`.
    let certified_range = |g: &(String, String), m: &str| -> Option<(f64, f64, usize)> {
        rows.iter()
            .find(|(r, _)| r.domain == g.0 && r.setting == g.1 && label(r) == m)
            .and_then(|(r, _)| {
                Some((
                    r.relative_action_count?,
                    r.relative_action_count_max?,
                    r.certified,
                ))
            })
    };
    let any_certified = rows.iter().any(|(r, _)| r.certified > 0);

    let bar = 34.0;
    let gap = 30.0;
    let longest = groups
        .iter()
        .map(|g| g.0.chars().count().max(short_setting(&g.1).chars().count()))
        .max()
        .unwrap_or(0) as f64;
    let group_w = (bar * models.len().max(1) as f64).max(longest * 7.0) + gap;
    let left = 60.0;
    let plot_w = (group_w * groups.len().max(1) as f64).max(540.0);
    let width = left + plot_w + 20.0;
    let panel_h = 180.0;
    let panel_gap = 90.0;
    let legend_h = 20.0 * models.len() as f64 + if any_certified { 72.0 } else { 44.0 };
    let height = 50.0 + 2.0 * (panel_h + panel_gap) + legend_h;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="22" font-size="14" font-weight="bold">kumo-gen score</text>"#
    );

    for (panel, rel) in [(0, false), (1, true)] {
        let top = 40.0 + panel as f64 * (panel_h + panel_gap);
        let axis = panel_axis(&groups, &models, &value, rel);
        let (lo, hi) = (axis.low, axis.high);
        let y = |v: f64| top + 24.0 + (hi - v) / (hi - lo) * panel_h;
        let zero = panel_frame(&mut s, &axis, rel, (top, left, plot_w), &y);
        for (gi, g) in groups.iter().enumerate() {
            let gx = left + gi as f64 * group_w;
            let bars_w = bar * models.len() as f64;
            let x0 = gx + (group_w - bars_w) / 2.0;
            for (mi, m) in models.iter().enumerate() {
                let x = x0 + mi as f64 * bar;
                let cx = x + (bar - 4.0) / 2.0;
                let colour = PALETTE[mi % PALETTE.len()];
                bar_mark(
                    &mut s,
                    (x, cx, bar),
                    value(g, m, rel),
                    rel,
                    if rel { certified_range(g, m) } else { None },
                    (&y, zero),
                    (colour, m),
                );
            }
            let cx = gx + group_w / 2.0;
            let ly = top + 24.0 + panel_h + 16.0;
            let _ = writeln!(
                s,
                r#"<text x="{cx:.1}" y="{ly:.1}" text-anchor="middle">{}</text><text x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                esc(&g.0),
                ly + 14.0,
                esc(&short_setting(&g.1))
            );
        }
    }
    legend(
        &mut s,
        &models,
        any_certified,
        left,
        40.0 + 2.0 * (panel_h + panel_gap),
    );
    s.push_str("</svg>\n");
    s
}

/// The (domain, setting) groups of `rows`, in order (settings by their
/// numbers), each once.
fn chart_groups<'a>(rows: impl Iterator<Item = &'a Row>) -> Vec<(String, String)> {
    let mut groups: Vec<(String, String)> = Vec::new();
    let mut sorted: Vec<&Row> = rows.collect();
    sorted.sort_by_key(|r| {
        let k = super::order_key(&crate::results::GroupKey {
            model: String::new(),
            agent: String::new(),
            domain: r.domain.clone(),
            setting: r.setting.clone(),
        });
        (k.2, k.3)
    });
    for r in sorted {
        let g = (r.domain.clone(), r.setting.clone());
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    groups
}

/// A model's value and interval in a group, in one panel.
type PanelValue<'a> = dyn Fn(&(String, String), &str, bool) -> Option<(f64, Option<Interval>)> + 'a;

/// The panel's axis: success from 0 to 1; the relative action count's
/// holds every bar, every whisker and zero.
fn panel_axis(
    groups: &[(String, String)],
    models: &[String],
    value: &PanelValue,
    rel: bool,
) -> Axis {
    if !rel {
        return Axis::new(0.0, 1.0, 4);
    }
    let mut ends = vec![0.0_f64];
    for g in groups {
        for m in models {
            if let Some((v, i)) = value(g, m, rel) {
                ends.push(v);
                if let Some(i) = i {
                    ends.extend([i.low, i.high]);
                }
            }
        }
    }
    let lo = ends.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ends.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Axis::new(lo, hi, 5)
}

/// One model's bar in a group: `x` its left edge, `cx` its whisker's, `bar`
/// its slot's width; its value and interval (`rel`: the relative action
/// count; none: `n/a`), drawn on `y` from the `zero` line; its colour and
/// name. `certified`: the range `(least, most, certified lines)` a row with
/// certified labels allows (docs/output.md), named in the bar's title and
/// marked `*` after its value.
fn bar_mark(
    s: &mut String,
    (x, cx, bar): (f64, f64, f64),
    value: Option<(f64, Option<Interval>)>,
    rel: bool,
    certified: Option<(f64, f64, usize)>,
    (y, zero): (&dyn Fn(f64) -> f64, f64),
    (colour, name): (&str, &str),
) {
    let Some((v, interval)) = value else {
        let _ = writeln!(
            s,
            r##"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" fill="#999" font-size="9">n/a</text>"##,
            zero - 3.0
        );
        return;
    };
    let (y0, y1) = (y(v).min(zero), y(v).max(zero));
    let shown = |v: f64| {
        if rel {
            format!("{v:+.2}")
        } else {
            format!("{v:.2}")
        }
    };
    let mut range = interval.map_or(String::new(), |i| {
        format!(" (95%: {} to {})", shown(i.low), shown(i.high))
    });
    if let Some((least, most, lines)) = certified {
        range.push_str(&format!(
            "; {lines} certified label(s): between {} and {}",
            shown(least),
            shown(most)
        ));
    }
    let _ = writeln!(
        s,
        r#"<rect x="{x:.1}" y="{y0:.1}" width="{:.1}" height="{:.1}" fill="{colour}" fill-opacity="0.75"><title>{}: {v:.3}{range}</title></rect>"#,
        bar - 4.0,
        (y1 - y0).max(0.5),
        esc(name)
    );
    // The whisker, and the value beside its top.
    let top_of_label = match interval {
        Some(i) => {
            let (a, b) = (y(i.high), y(i.low));
            let _ = writeln!(
                s,
                r##"<path d="M{cx:.1} {a:.1}V{b:.1}M{:.1} {a:.1}h8M{:.1} {b:.1}h8" stroke="#222" stroke-width="1.2" fill="none"/>"##,
                cx - 4.0,
                cx - 4.0
            );
            a.min(y0)
        }
        None => y0,
    };
    let _ = writeln!(
        s,
        r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="9">{}{}</text>"#,
        top_of_label - 3.0,
        shown(v),
        if certified.is_some() { "*" } else { "" }
    );
}

/// The legend under the panels (a swatch per model), how the whiskers
/// were made and, when a row has certified labels (`any_certified`), what
/// its `*` means.
fn legend(s: &mut String, models: &[String], any_certified: bool, left: f64, ly: f64) {
    for (mi, m) in models.iter().enumerate() {
        let yy = ly + 20.0 * mi as f64;
        let _ = writeln!(
            s,
            r#"<rect x="{left}" y="{yy:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            PALETTE[mi % PALETTE.len()],
            left + 18.0,
            yy + 10.0,
            esc(m)
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="{left}" y="{:.1}" fill="#555">whiskers: 95% intervals; success: Wilson on trials;</text><text x="{left}" y="{:.1}" fill="#555">relative: percentile bootstrap over instances ({} resamples, seed {})</text>"##,
        ly + 20.0 * models.len() as f64 + 12.0,
        ly + 20.0 * models.len() as f64 + 26.0,
        super::interval::BOOTSTRAP_RESAMPLES,
        super::interval::BOOTSTRAP_SEED
    );
    if any_certified {
        let _ = writeln!(
            s,
            r##"<text x="{left}" y="{:.1}" fill="#555">* certified labels (lower &lt;= E &lt;= upper): the bar is the least relative count they allow (against</text><text x="{left}" y="{:.1}" fill="#555">the upper bounds); the whisker reaches the 95% point of the most (against the lower bounds)</text>"##,
            ly + 20.0 * models.len() as f64 + 40.0,
            ly + 20.0 * models.len() as f64 + 54.0,
        );
    }
}

/// A panel's title, its value axis across the plot and its zero line
/// (`rel`: the relative action count's panel); returns the zero line's
/// height.
fn panel_frame(
    s: &mut String,
    axis: &Axis,
    rel: bool,
    (top, left, plot_w): (f64, f64, f64),
    y: &dyn Fn(f64) -> f64,
) -> f64 {
    let title = if rel {
        "relative action count: (model - optimal) / optimal, 95% bootstrap interval"
    } else {
        "success rate, 95% Wilson interval"
    };
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="{:.1}" font-size="12" font-weight="bold">{title}</text>"#,
        top + 12.0
    );
    for &v in &axis.ticks {
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            left + plot_w,
            left - 4.0,
            y(v) + 4.0,
            axis.label(v),
            y = y(v)
        );
    }
    let zero = y(0.0_f64.clamp(axis.low, axis.high));
    let _ = writeln!(
        s,
        r##"<line x1="{left}" x2="{:.1}" y1="{zero:.1}" y2="{zero:.1}" stroke="#333"/>"##,
        left + plot_w
    );
    zero
}
