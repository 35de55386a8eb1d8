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

/// The legend printed under the table, a line per figure: its column,
/// its `--json` field and its definition, so the table, `--json`, the
/// report and the docs use one name per figure.
pub const TABLE_LEGEND: &str = "\
ACTIONS (mean_actions): KUMO's count, len(actions): every reply one entry, the prediction a second; per trial.
OPT ACTIONS (optimal_actions) = optimal_steps + 2: optimal play's expected count, the same count (KUMO's Algorithm 3 expected steps E, which weight each outcome by the candidates it leaves).
GOLDEN ACTIONS (golden_mean_actions): the golden player's own mean on these instances (its trajectory + 2), the same count; above OPT ACTIONS when E's weighting differs from how often the outcomes occur.
REL (relative_action_count) = (ACTIONS - OPT ACTIONS) / OPT ACTIONS: KUMO's measure, kept for comparability; the golden player itself scores (GOLDEN ACTIONS - OPT ACTIONS) / OPT ACTIONS on it.
REPEATS (mean_repeats): queries of an action already queried in the same game; TURNS SOLVED (mean_turns_solved): mean replies of the solved games.
Every figure is a mean over an instance's trials, then over instances.
";

/// The legend line of the budget column, shown with it.
pub const BUDGET_LEGEND: &str =
    "BUDGET ACC (budget_accuracy): solved within the turn budget (budgeted protocol).\n";

/// The legend line of the certified-label column, shown with it.
pub const CERT_LEGEND: &str = "\
CERT (certified) = lines whose label is certified, not exact (the search ran over budget: lower <= E <= upper, docs/output.md); such a row shows OPT ACTIONS as the range of the labels' means (optimal_steps_min + 2 to optimal_actions) and REL as the range it allows: from the count against the upper bounds (relative_action_count, the least the player can have wasted) to the count against the lower bounds (relative_action_count_max, the most).
";

/// The legend of the `--moves` columns.
pub const MOVES_LEGEND: &str = "\
REGRET (mean_regret): expected actions a game's actions wasted against the exact optimum; answers cost none, so a game that answers at once or makes no move has regret 0: read it with OPT MOVES and EFFIC.
OPT MOVES (optimal_move_rate): a game's optimal moves / its moves (Q within 1e-9 of V is optimal; a game without a move counts 0), averaged over trials, not pooled over moves.
EFFIC (mean_efficiency): min(1, golden actions / actions)^2 for a game ending in a proven answer, else 0 (docs/analytics.md).
";

/// The report as an aligned text table (settings shortened to `TxA`),
/// then [`TABLE_LEGEND`] (and [`BUDGET_LEGEND`], [`CERT_LEGEND`],
/// [`MOVES_LEGEND`] with their columns). The budget column shows only
/// when a row was played under the budgeted protocol, the certified one
/// only when a row has certified labels.
pub fn render_table(rows: &[Row]) -> String {
    let moves = rows.iter().any(|r| r.mean_regret.is_some());
    let budget = rows.iter().any(|r| r.budget_accuracy.is_some());
    // Rows with certified labels: their count (CERT), and OPT ACTIONS and
    // REL as the ranges the labels allow.
    let certified = rows.iter().any(|r| r.certified > 0);
    let mut columns = label_columns();
    columns.extend(figure_columns());
    let columns: Vec<Column> = columns
        .into_iter()
        .filter(|(name, _, _)| match *name {
            "BUDGET ACC" => budget,
            "REGRET" | "OPT MOVES" | "EFFIC" => moves,
            "CERT" => certified,
            _ => true,
        })
        .collect();
    let mut out = aligned(&columns, rows);
    out.push_str(TABLE_LEGEND);
    if budget {
        out.push_str(BUDGET_LEGEND);
    }
    if certified {
        out.push_str(CERT_LEGEND);
    }
    if moves {
        out.push_str(MOVES_LEGEND);
    }
    out.push_str(&render_prediction_table(rows));
    out
}

/// A table column: its heading, whether it is a number (right-aligned),
/// and its cell of a row.
type Column = (&'static str, bool, Box<dyn Fn(&Row) -> String>);

/// The columns that say what a row is and how it compares with the optimum.
fn label_columns() -> Vec<Column> {
    let three = |v: f64| format!("{v:.3}");
    vec![
        ("MODEL", false, Box::new(|r: &Row| r.model.clone())),
        ("AGENT", false, Box::new(|r: &Row| r.agent.clone())),
        ("DOMAIN", false, Box::new(|r: &Row| r.domain.clone())),
        (
            "SETTING",
            false,
            Box::new(|r: &Row| short_setting(&r.setting)),
        ),
        ("INST", true, Box::new(|r: &Row| r.instances.to_string())),
        ("TRIALS", true, Box::new(|r: &Row| r.trials.to_string())),
        (
            "SUCCESS",
            true,
            Box::new(move |r: &Row| three(r.success_rate)),
        ),
        (
            "ACTIONS",
            true,
            Box::new(move |r: &Row| three(r.mean_actions)),
        ),
        (
            "OPT ACTIONS",
            true,
            Box::new(
                move |r: &Row| match (r.optimal_steps_min, r.optimal_actions) {
                    (Some(lo), Some(hi)) => format!("{:.3}..{hi:.3}", lo + 2.0),
                    (_, e) => opt(e, three),
                },
            ),
        ),
        ("CERT", true, Box::new(|r: &Row| r.certified.to_string())),
        (
            "GOLDEN ACTIONS",
            true,
            Box::new(move |r: &Row| opt(r.golden_mean_actions, three)),
        ),
        (
            "REL",
            true,
            Box::new(
                |r: &Row| match (r.relative_action_count, r.relative_action_count_max) {
                    (Some(lo), Some(hi)) => format!("{lo:+.3}..{hi:+.3}"),
                    (v, _) => opt(v, |v| format!("{v:+.3}")),
                },
            ),
        ),
    ]
}

/// The columns of the row's other figures.
fn figure_columns() -> Vec<Column> {
    let three = |v: f64| format!("{v:.3}");
    vec![
        (
            "REPEATS",
            true,
            Box::new(move |r: &Row| three(r.mean_repeats)),
        ),
        (
            "BUDGET ACC",
            true,
            Box::new(move |r: &Row| opt(r.budget_accuracy, three)),
        ),
        (
            "TURNS SOLVED",
            true,
            Box::new(|r: &Row| opt(r.mean_turns_solved, |v| format!("{v:.2}"))),
        ),
        (
            "PARSE",
            true,
            Box::new(move |r: &Row| three(r.parse_error_rate)),
        ),
        (
            "TOKENS",
            true,
            Box::new(|r: &Row| format!("{:.1}", r.mean_tokens)),
        ),
        (
            "REGRET",
            true,
            Box::new(move |r: &Row| opt(r.mean_regret, three)),
        ),
        (
            "OPT MOVES",
            true,
            Box::new(move |r: &Row| opt(r.optimal_move_rate, three)),
        ),
        (
            "EFFIC",
            true,
            Box::new(move |r: &Row| opt(r.mean_efficiency, three)),
        ),
        (
            "SUCCESS FROM",
            false,
            Box::new(|r: &Row| format!("{:?}", r.success_from).to_lowercase()),
        ),
    ]
}

/// The table's cells, each column as wide as its widest cell.
fn aligned(columns: &[Column], rows: &[Row]) -> String {
    let mut cells: Vec<Vec<String>> = vec![columns.iter().map(|c| c.0.to_string()).collect()];
    for r in rows {
        cells.push(columns.iter().map(|(_, _, f)| f(r)).collect());
    }
    let widths: Vec<usize> = (0..columns.len())
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
            if columns[c].1 {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            }
            line.push_str("  ");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The rows' prediction figures as a table (empty without any).
fn render_prediction_table(rows: &[Row]) -> String {
    let predicted: Vec<&Row> = rows.iter().filter(|r| r.prediction.is_some()).collect();
    if predicted.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "\nexplore-then-predict (accuracy on held-out inputs, 95% Wilson interval; GOLDEN EXPLORER: the exact accuracy of the optimal explorer's first T probes with the Bayes prediction)\nMODEL\tAGENT\tDOMAIN\tSETTING\tTURN@SHOT\tTESTS\tACCURACY\t95% CI\tEXPLORED\tGOLDEN EXPLORER\n",
    );
    for r in predicted {
        let p = r.prediction.as_ref().expect("filtered");
        let interval = p
            .accuracy_interval
            .map_or("n/a".into(), |i| format!("[{:.3}, {:.3}]", i.low, i.high));
        let golden = p
            .golden_explorer_accuracy
            .map_or("n/a".into(), |g| format!("{g:.3}"));
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{:.3}\t{interval}\t{:.2}\t{golden}\n",
            r.model,
            r.agent,
            r.domain,
            short_setting(&r.setting),
            p.turn_at_shot,
            p.tests,
            p.accuracy,
            p.mean_explored
        ));
    }
    text
}

/// The explore-then-predict chart (when every charted row was played
/// under that protocol): one group per box, setting and turn@shot, one bar
/// per model with its accuracy on held-out inputs and the 95% Wilson
/// whisker, and a black tick at the golden explorer's exact accuracy on
/// the same instances. Overall (`all`) rows are left out.
pub fn render_prediction_svg(rows: &[Row]) -> String {
    let rows: Vec<&Row> = rows
        .iter()
        .filter(|r| r.model != "all" && r.setting != "all")
        .collect();
    let mut models: Vec<&str> = rows.iter().map(|r| r.model.as_str()).collect();
    models.sort_unstable();
    models.dedup();
    let key = |r: &Row| {
        let p = r
            .prediction
            .as_ref()
            .map_or("", |p| p.turn_at_shot.as_str());
        (r.domain.clone(), short_setting(&r.setting), p.to_string())
    };
    let mut groups: Vec<(String, String, String)> = rows.iter().map(|r| key(r)).collect();
    groups.sort();
    groups.dedup();
    let (bar, left, top, panel_h) = (28.0, 60.0, 50.0, 200.0);
    let group_w = (bar * models.len() as f64).max(110.0) + 24.0;
    // Wide enough for the title and its second line, whatever the groups.
    let width = (left + group_w * groups.len().max(1) as f64 + 20.0).max(480.0);
    let height = top + panel_h + 70.0 + 20.0 * models.len() as f64 + 20.0;
    let y = |v: f64| top + (1.0 - v) * panel_h;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{left}" y="20" font-size="14" font-weight="bold">kumo-gen score: accuracy on held-out inputs</text><text x="{left}" y="36">black tick: the golden explorer's exact accuracy; whiskers: 95% Wilson interval</text>"#
    );
    accuracy_ticks(&mut s, left, width - 20.0, &y);
    for (gi, g) in groups.iter().enumerate() {
        let gx = left + gi as f64 * group_w + 12.0;
        for (mi, m) in models.iter().enumerate() {
            let Some((r, p)) = rows
                .iter()
                .find(|r| r.model == *m && key(r) == *g)
                .and_then(|r| Some((r, r.prediction.as_ref()?)))
            else {
                continue;
            };
            let x = gx + mi as f64 * bar;
            let colour = PALETTE[mi % PALETTE.len()];
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{colour}"><title>{} {}: {:.3}</title></rect>"#,
                y(p.accuracy),
                bar - 4.0,
                panel_h * p.accuracy,
                esc(&r.model),
                esc(&r.agent),
                p.accuracy
            );
            let cx = x + (bar - 4.0) / 2.0;
            if let Some(i) = p.accuracy_interval {
                let _ = writeln!(
                    s,
                    r##"<line x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{:.1}" stroke="#333"/>"##,
                    y(i.low),
                    y(i.high)
                );
            }
            if let Some(golden) = p.golden_explorer_accuracy {
                let _ = writeln!(
                    s,
                    r##"<line x1="{x:.1}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" stroke="black" stroke-width="2"/>"##,
                    y(golden),
                    x + bar - 4.0
                );
            }
        }
        let cx = gx + bar * models.len() as f64 / 2.0;
        for (line, text) in [&g.0, &g.1, &g.2].into_iter().enumerate() {
            let _ = writeln!(
                s,
                r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                top + panel_h + 16.0 + 14.0 * line as f64,
                esc(text)
            );
        }
    }
    prediction_legend(&mut s, &models, left, top + panel_h + 66.0);
    s.push_str("</svg>\n");
    s
}

/// The legend of the prediction chart: a swatch and name per model.
fn prediction_legend(s: &mut String, models: &[&str], left: f64, top: f64) {
    for (mi, m) in models.iter().enumerate() {
        let ly = top + 20.0 * mi as f64;
        let _ = writeln!(
            s,
            r#"<rect x="{left}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{}" y="{ly:.1}">{}</text>"#,
            ly - 10.0,
            PALETTE[mi % PALETTE.len()],
            left + 18.0,
            esc(m)
        );
    }
}

/// The accuracy axis: grid lines and labels at quarters.
fn accuracy_ticks(s: &mut String, left: f64, right: f64, y: &dyn Fn(f64) -> f64) {
    for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" stroke="#ddd"/><text x="{2}" y="{3:.1}" text-anchor="end">{tick:.2}</text>"##,
            y(tick),
            right,
            left - 6.0,
            y(tick) + 4.0
        );
    }
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
    let charted = rows
        .iter()
        .filter(|r| r.model != "all" && r.setting != "all");
    if rows.iter().any(|r| r.prediction.is_some())
        && charted.clone().all(|r| r.prediction.is_some())
    {
        return render_prediction_svg(rows);
    }
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
        "relative action count (KUMO's): actions / optimal actions - 1; 95% bootstrap"
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
