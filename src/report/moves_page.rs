//! The per-move sections as HTML: the table of [`MoveRow`]s (cells carry
//! `data-key`/`data-value` as the results table does, the keys of
//! `score --moves --json` where `score` has the number) and, per domain x
//! setting, the inline SVG chart of regret by move position: each player's
//! mean with 95% whiskers, and the optimal player's line at 0.

use std::fmt::Write as _;

use super::cells::{count_cell, json, text_cell};
use super::figures::{esc, short};
use super::moves::{MoveRow, MoveSection, PositionChart};
use crate::score::axis::Axis;
use crate::score::interval::Interval;

/// Colours of the chart's series, in turn.
const PALETTE: [&str; 8] = [
    "#3366aa", "#d9782d", "#59a14f", "#b07aa1", "#e15759", "#76b7b2", "#9c755f", "#edc948",
];

fn num(key: &str, value: f64, digits: usize, interval: Option<Interval>, help: &str) -> String {
    let (ends, shown) = interval.map_or((String::new(), String::new()), |i| {
        (
            format!(
                r#" data-low="{}" data-high="{}""#,
                json(&i.low),
                json(&i.high)
            ),
            format!(
                r#" <span class="ci">[{:.digits$}, {:.digits$}]</span>"#,
                i.low, i.high
            ),
        )
    });
    let title = if help.is_empty() {
        String::new()
    } else {
        format!(r#" title="{}""#, esc(help))
    };
    format!(
        r#"<td class="num" data-key="{key}" data-value="{}"{ends}{title}>{value:.digits$}{shown}</td>"#,
        json(&value)
    )
}

const COLUMNS: [(&str, &str, &str); 14] = [
    ("model", "model", ""),
    ("agent", "agent", ""),
    ("domain", "domain", ""),
    ("setting", "setting", "truths x actions"),
    (
        "analysed_trials",
        "trials",
        "trials whose moves were analysed",
    ),
    (
        "mean_regret",
        "regret",
        "mean_regret: expected actions a game's actions wasted against the optimum (sum of Q - V), mean per trial; answers cost none, so a game that answers at once or makes no move has regret 0; 95% percentile bootstrap over instances",
    ),
    (
        "optimal_move_rate",
        "optimal-move rate",
        "optimal_move_rate: a game's optimal moves / its moves (Q within 1e-9 of V is optimal; a game without a move counts 0), mean over trials, not pooled (the pooled share is in each cell's tooltip); 95% Wilson with n = moves",
    ),
    ("moves", "moves", "moves analysed (actions and answers)"),
    ("optimal_moves", "optimal moves", "optimal moves, summed"),
    (
        "redundant_moves",
        "redundant",
        "actions that could rule out no candidate whatever they showed (repeats included)",
    ),
    ("answers", "answers", "answers named"),
    (
        "unproven_answers",
        "unproven",
        "answers named while another candidate was left and the named one was not yet certified",
    ),
    (
        "unproven_correct",
        "unproven, right",
        "unproven answers that the judge accepted (lucky guesses)",
    ),
    (
        "mean_efficiency",
        "efficiency",
        "mean_efficiency: min(1, golden actions / actions)^2 for a game ending in a proven answer, else 0; mean per trial; 95% percentile bootstrap over instances",
    ),
];

fn table(rows: &[MoveRow]) -> String {
    let mut s = String::new();
    s.push_str(r#"<table id="moves" class="sortable"><thead><tr>"#);
    for (key, name, help) in COLUMNS {
        let _ = write!(
            s,
            r#"<th data-key="{key}" title="{}" tabindex="0">{name}</th>"#,
            esc(help)
        );
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        let class = if r.model == "all" || r.setting == "all" {
            r#" class="overall""#
        } else {
            ""
        };
        let pooled = if r.moves > 0 {
            format!(
                "{} of {} moves ({:.3})",
                r.optimal_moves,
                r.moves,
                r.optimal_moves as f64 / r.moves as f64
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "<tr{class}>{}{}{}{}{}{}{}{}{}{}{}{}{}{}</tr>",
            text_cell("model", &r.model, &r.model),
            text_cell("agent", &r.agent, &r.agent),
            text_cell("domain", &r.domain, &r.domain),
            text_cell("setting", &r.setting, &short(&r.setting)),
            count_cell("analysed_trials", r.analysed_trials),
            num("mean_regret", r.mean_regret, 3, r.regret_interval, ""),
            num(
                "optimal_move_rate",
                r.optimal_move_rate,
                3,
                r.optimal_move_interval,
                &pooled
            ),
            count_cell("moves", r.moves),
            count_cell("optimal_moves", r.optimal_moves),
            count_cell("redundant_moves", r.redundant_moves),
            count_cell("answers", r.answers),
            count_cell("unproven_answers", r.unproven_answers),
            count_cell("unproven_correct", r.unproven_correct),
            num(
                "mean_efficiency",
                r.mean_efficiency,
                3,
                r.efficiency_interval,
                ""
            ),
        );
    }
    s.push_str("</tbody></table>\n");
    s
}

/// One domain x setting: regret (y) by move position (x), a line per
/// player with 95% whiskers, the optimal player dashed at 0.
pub(super) fn position_figure(chart: &PositionChart) -> String {
    let (left, top, plot_w, plot_h) = (56.0, 30.0, 560.0, 240.0);
    let legend_h = 18.0 * (chart.series.len() + 1) as f64;
    let width = left + plot_w + 30.0;
    let height = top + plot_h + 44.0 + legend_h;
    let last = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.position))
        .max()
        .unwrap_or(1);
    let most = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .map(|p| p.interval.map_or(p.mean, |i| i.high).max(p.mean))
        .fold(0.0f64, f64::max);
    let y_axis = Axis::new(0.0, most.max(0.5), 5);
    let x_axis = Axis::new(1.0, last.max(2) as f64, 8.min(last.max(2) - 1));
    // Half a position of room at either end, so the first and last markers
    // clear the axes.
    let (x_low, x_high) = (0.5, last.max(2) as f64 + 0.5);
    let x = |v: f64| left + (v - x_low) / (x_high - x_low) * plot_w;
    let y = |v: f64| top + plot_h - (v - y_axis.low) / (y_axis.high - y_axis.low) * plot_h;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="figure" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="12" role="img" aria-label="{} {}: regret by move position">"#,
        esc(&chart.domain),
        esc(&short(&chart.setting))
    );
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="18" font-weight="bold">mean regret of the k-th move (expected actions wasted; 95% bootstrap over games)</text>"#
    );
    let bottom = top + plot_h;
    for &t in &y_axis.ticks {
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{0:.1}" y1="{1:.1}" y2="{1:.1}" stroke="#e3e3e3"/><text x="{2:.1}" y="{3:.1}" text-anchor="end">{4}</text>"##,
            left + plot_w,
            y(t),
            left - 6.0,
            y(t) + 4.0,
            y_axis.label(t)
        );
    }
    for &t in x_axis
        .ticks
        .iter()
        .filter(|t| t.fract() == 0.0 && **t >= 1.0 && **t <= last.max(2) as f64)
    {
        let _ = writeln!(
            s,
            r##"<line x1="{0:.1}" x2="{0:.1}" y1="{bottom:.1}" y2="{1:.1}" stroke="#888"/><text x="{0:.1}" y="{2:.1}" text-anchor="middle">{3}</text>"##,
            x(t),
            bottom + 4.0,
            bottom + 16.0,
            x_axis.label(t)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">move number</text>"#,
        left + plot_w / 2.0,
        bottom + 32.0
    );
    // The optimal player: every move's regret is 0.
    let _ = writeln!(
        s,
        r##"<line x1="{left}" x2="{0:.1}" y1="{1:.1}" y2="{1:.1}" stroke="#222" stroke-width="1.5" stroke-dasharray="6 4"/>"##,
        left + plot_w,
        y(0.0)
    );
    position_series(&mut s, chart, &x, &y);
    position_legend(&mut s, chart, left, bottom);
    s.push_str("</svg>\n");
    s
}

/// Each player's line of mean regret by move position, its 95% whiskers
/// and a marker per position (series side by side around a position).
fn position_series(
    s: &mut String,
    chart: &PositionChart,
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
) {
    let count = chart.series.len().max(1) as f64;
    for (n, series) in chart.series.iter().enumerate() {
        let colour = PALETTE[series.player % PALETTE.len()];
        // Series side by side around each position, so whiskers do not hide
        // each other.
        let shift = (n as f64 - (count - 1.0) / 2.0) * 5.0;
        let px = |p: usize| x(p as f64) + shift;
        let path: Vec<String> = series
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                format!(
                    "{}{:.1} {:.1}",
                    if i == 0 { "M" } else { "L" },
                    px(p.position),
                    y(p.mean)
                )
            })
            .collect();
        let _ = writeln!(
            s,
            r#"<path d="{}" stroke="{colour}" stroke-width="1.5" fill="none"/>"#,
            path.join("")
        );
        for p in &series.points {
            if let Some(i) = p.interval {
                let _ = writeln!(
                    s,
                    r#"<path d="M{0:.1} {1:.1}V{2:.1}M{3:.1} {1:.1}h6M{3:.1} {2:.1}h6" stroke="{colour}" fill="none"/>"#,
                    px(p.position),
                    y(i.low),
                    y(i.high),
                    px(p.position) - 3.0
                );
            }
            let range = p.interval.map_or(String::new(), |i| {
                format!(" (95%: {:.3} to {:.3})", i.low, i.high)
            });
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{colour}"><title>{} ({}), move {}: mean regret {:.3}{range} over {} game(s)</title></circle>"#,
                px(p.position),
                y(p.mean),
                esc(&series.model),
                esc(&series.agent),
                p.position,
                p.mean,
                p.games
            );
        }
    }
}

/// The legend under the plot: the optimal player, then each series.
fn position_legend(s: &mut String, chart: &PositionChart, left: f64, bottom: f64) {
    // Legend: the optimal player, then each series.
    let mut ly = bottom + 52.0;
    let _ = writeln!(
        s,
        r##"<line x1="{left}" x2="{0:.1}" y1="{1:.1}" y2="{1:.1}" stroke="#222" stroke-width="1.5" stroke-dasharray="6 4"/><text x="{2:.1}" y="{3:.1}">optimal player (regret 0 on every move)</text>"##,
        left + 24.0,
        ly - 4.0,
        left + 30.0,
        ly
    );
    for series in &chart.series {
        ly += 18.0;
        let colour = PALETTE[series.player % PALETTE.len()];
        let _ = writeln!(
            s,
            r#"<line x1="{left}" x2="{0:.1}" y1="{1:.1}" y2="{1:.1}" stroke="{colour}" stroke-width="1.5"/><circle cx="{2:.1}" cy="{1:.1}" r="3.5" fill="{colour}"/><text x="{3:.1}" y="{4:.1}">{5} ({6})</text>"#,
            left + 24.0,
            ly - 4.0,
            left + 12.0,
            left + 30.0,
            ly,
            esc(&series.model),
            esc(&series.agent)
        );
    }
}

/// The section: the table and the charts, or why they are absent.
pub(super) fn section(moves: &MoveSection) -> String {
    let mut s =
        String::from(r#"<section id="moves-section"><h2>Moves against the exact optimum</h2>"#);
    match moves {
        MoveSection::Missing(why) => {
            let _ = writeln!(
                s,
                r#"<p class="note" id="moves-missing">{}</p></section>"#,
                esc(why)
            );
        }
        MoveSection::Analysed { rows, charts } => {
            let _ = writeln!(
                s,
                r#"<p>Every move scored against the exact optimal value of its state (<code>kumo-gen moves</code>; docs/analytics.md): its regret is Q - V, the expected actions it wastes, and it is optimal when Q is within 1e-9 of V (float noise between equal values is a tie); an answer costs nothing but is <em>unproven</em> when another candidate was left and the named one was not yet certified. So regret alone does not rank players: a game that answers at once, or makes no move, wastes no action; its optimal-move rate (optimal moves over moves, 0 without a move; averaged over trials) and efficiency (0 without a proven answer) tell it from optimal play. Regret, optimal-move rate, efficiency and trials are the numbers of <code>kumo-gen score --moves --json</code>; intervals are 95%: regret and efficiency by a percentile bootstrap over instances, the optimal-move rate by the Wilson interval with n = moves.</p>
<div class="scroll">{}</div>"#,
                table(rows)
            );
            for chart in charts {
                let _ = writeln!(
                    s,
                    "<figure><figcaption>{} {}: regret by move position</figcaption>{}</figure>",
                    esc(&chart.domain),
                    esc(&short(&chart.setting)),
                    position_figure(chart)
                );
            }
            s.push_str("</section>\n");
        }
    }
    s
}
