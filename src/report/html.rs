//! The page: a [`Page`] as one HTML document, its stylesheet and script
//! embedded (`assets/report.css`, `assets/report.js`), its pictures
//! inline SVG, the replays one JSON island the script reads.
//!
//! Table cells carry `data-key` (the field of `score --json`) and
//! `data-value` (the number printed as `score --json` prints it, `null`
//! for none), so sorting and the browser test read exact numbers; the text
//! shown rounds them. Without a script the page still shows everything but
//! the replay viewer (it says so); printed, the viewer's controls hide.

use std::fmt::Write as _;

use serde::Serialize;

use super::cells::{cell, count_cell, json, range_cell, script_json, signed_cell, text_cell};
use super::figures::{STRUCTURE_BARS, domain_figure, domains, esc, short, structure_figure};
use super::{Book, Page, Replay, ReplayLimit, Structure, TableRow};
use crate::score::interval::{BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED};
use crate::score::{render_curve_svg, render_svg_with};

const CSS: &str = include_str!("assets/report.css");
const SCRIPT: &str = include_str!("assets/report.js");

/// The results table's columns: `score --json`'s field, the heading, its
/// definition (the heading's tooltip; docs/evaluation.md says the same).
const COLUMNS: [(&str, &str, &str); 18] = [
    ("model", "model", ""),
    ("agent", "agent", ""),
    ("domain", "domain", ""),
    ("setting", "setting", "truths x actions"),
    ("instances", "inst.", "instances scored"),
    ("trials", "trials", ""),
    (
        "success_rate",
        "success",
        "answer not ruled out by any observation; 95% Wilson interval on trials",
    ),
    (
        "mean_actions",
        "actions",
        "mean_actions: KUMO's count, len(actions): every reply one entry, the prediction a second; 95% t interval over instances",
    ),
    (
        "optimal_actions",
        "optimal actions",
        "optimal_actions = optimal_steps + 2: optimal play's expected count in the same count (KUMO's expected steps E, which weight each outcome by the candidates it leaves); a range where labels are certified (lower <= E <= upper)",
    ),
    (
        "golden_mean_actions",
        "golden actions",
        "golden_mean_actions: the golden player's own mean on these instances (its trajectory + 2), the same count",
    ),
    (
        "relative_action_count",
        "relative",
        "relative_action_count = (actions - optimal actions) / optimal actions: KUMO's measure, kept for comparability (the golden player scores above 0 on it); 95% percentile bootstrap over instances; a range where labels are certified",
    ),
    (
        "mean_queries",
        "queries",
        "actions queried before the answer",
    ),
    (
        "mean_repeats",
        "repeats",
        "queries of an action already queried",
    ),
    (
        "budget_accuracy",
        "budget acc.",
        "solved within the turn budget (budgeted protocol); 95% Wilson",
    ),
    (
        "mean_turns_solved",
        "turns solved",
        "mean replies of the solved games",
    ),
    (
        "parse_error_rate",
        "parse err.",
        "trials ended by an unusable reply; 95% Wilson",
    ),
    (
        "mean_tokens",
        "tokens",
        "mean tokens per trial; 95% t interval",
    ),
    ("labelled", "labelled", "instances with an optimal label"),
];

/// The cell of column `key` of one row.
fn row_cell(key: &str, t: &TableRow) -> String {
    let (r, i) = (&t.row, &t.intervals);
    match key {
        "model" => text_cell(key, &r.model, &r.model),
        "agent" => text_cell(key, &r.agent, &r.agent),
        "domain" => text_cell(key, &r.domain, &r.domain),
        "setting" => text_cell(key, &r.setting, &short(&r.setting)),
        "instances" => count_cell(key, r.instances),
        "trials" => count_cell(key, r.trials),
        "success_rate" => cell(key, Some(r.success_rate), 3, i.success_rate),
        "mean_actions" => cell(key, Some(r.mean_actions), 3, i.mean_actions),
        "optimal_actions" => range_cell(
            key,
            r.optimal_actions,
            r.optimal_steps_min.map(|e| e + 2.0),
            r.certified,
            false,
            None,
        ),
        "golden_mean_actions" => cell(key, r.golden_mean_actions, 3, None),
        "relative_action_count" if r.relative_action_count_max.is_some() => range_cell(
            key,
            r.relative_action_count,
            r.relative_action_count_max,
            r.certified,
            true,
            i.relative_action_count,
        ),
        "relative_action_count" => {
            signed_cell(key, r.relative_action_count, i.relative_action_count)
        }
        "mean_queries" => cell(key, Some(r.mean_queries), 3, None),
        "mean_repeats" => cell(key, Some(r.mean_repeats), 3, None),
        "budget_accuracy" => cell(key, r.budget_accuracy, 3, i.budget_accuracy),
        "mean_turns_solved" => cell(key, r.mean_turns_solved, 2, None),
        "parse_error_rate" => cell(key, Some(r.parse_error_rate), 3, i.parse_error_rate),
        "mean_tokens" => cell(key, Some(r.mean_tokens), 0, i.mean_tokens),
        "labelled" => count_cell(key, r.labelled),
        _ => unreachable!("a column of COLUMNS"),
    }
}

/// The results table, narrow enough for a 1280 px screen: the budget
/// column shows only when a row was played under the budgeted protocol,
/// the labelled column only when some instance has no optimal label, and
/// where success came from is said once above the table when every row
/// agrees, else it is a column.
fn table(rows: &[TableRow]) -> String {
    let budget = rows.iter().any(|t| t.row.budget_accuracy.is_some());
    let unlabelled = rows.iter().any(|t| t.row.labelled < t.row.instances);
    let from = |t: &TableRow| json(&t.row.success_from).replace('"', "");
    let mixed = rows.windows(2).any(|w| from(&w[0]) != from(&w[1]));
    let columns: Vec<&(&str, &str, &str)> = COLUMNS
        .iter()
        .filter(|(key, _, _)| match *key {
            "budget_accuracy" => budget,
            "labelled" => unlabelled,
            _ => true,
        })
        .collect();
    let mut s = String::new();
    let mut said = Vec::new();
    if let (false, Some(first)) = (mixed, rows.first()) {
        said.push(format!(
            "Success is {} for every row ({}).",
            from(first),
            if from(first) == "checked" {
                "judged here against the instances"
            } else {
                "the result files' recorded `successful` fields"
            }
        ));
    }
    if !unlabelled && !rows.is_empty() {
        said.push("Every instance has an optimal label.".into());
    }
    if !said.is_empty() {
        let _ = writeln!(s, r#"<p id="table-facts">{}</p>"#, said.join(" "));
    }
    s.push_str(r#"<table id="results" class="sortable"><thead><tr>"#);
    for (key, name, help) in columns.iter().copied() {
        let _ = write!(
            s,
            r#"<th data-key="{key}" title="{}" tabindex="0">{name}</th>"#,
            esc(help)
        );
    }
    if mixed {
        s.push_str(r#"<th data-key="success_from" title="checked against the instance, or the recorded field" tabindex="0">success from</th>"#);
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for t in rows {
        let r = &t.row;
        let class = if r.model == "all" || r.setting == "all" {
            r#" class="overall""#
        } else {
            ""
        };
        let _ = write!(s, "<tr{class}>");
        for (key, _, _) in columns.iter().copied() {
            s.push_str(&row_cell(key, t));
        }
        if mixed {
            s.push_str(&text_cell("success_from", &from(t), &from(t)));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table>\n");
    s
}

/// What the replay viewer reads.
#[derive(Serialize)]
struct ReplayData<'a> {
    replays: &'a [Replay],
    books: &'a [Book],
}

fn structure(structure: &Structure) -> String {
    let mut s = String::new();
    match structure {
        Structure::Missing(why) => {
            let _ = writeln!(s, r#"<p class="note">{}</p>"#, esc(why));
        }
        Structure::Tests { tests, pool } => {
            let _ = writeln!(
                s,
                "<p>Does correctness depend on an instance's structure? Per model, a chi-square test of independence between the structure signature (sorted degree sequences of the instance's truth-action graph) and correctness (the majority of an instance's trials), with Cramér's V; the same numbers as <code>kumo-gen stats{}</code>.</p>",
                if *pool > 0 {
                    format!(" --pool {pool}")
                } else {
                    String::new()
                }
            );
            s.push_str(r#"<div class="scroll"><table id="structure"><thead><tr><th>model</th><th>instances</th><th>correct</th><th>signatures</th><th>table</th><th>chi-square</th><th>dof</th><th>p</th><th>Cramér's V</th><th>refused because</th></tr></thead><tbody>"#);
            for t in tests {
                let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| {
                    v.map_or_else(|| "n/a".to_string(), f)
                };
                let _ = writeln!(
                    s,
                    r#"<tr><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}{}</td><td class="num">{}x{}</td><td class="num" data-value="{}">{}</td><td class="num">{}</td><td class="num" data-value="{}">{}</td><td class="num" data-value="{}">{}</td><td class="reason">{}</td></tr>"#,
                    esc(&t.model),
                    t.instances,
                    t.correct,
                    t.signatures,
                    if t.pooled > 0 {
                        format!(" ({} pooled)", t.pooled)
                    } else {
                        String::new()
                    },
                    t.rows,
                    t.columns,
                    json(&t.chi_square),
                    opt(t.chi_square, &|v| format!("{v:.4}")),
                    t.dof.map_or("n/a".to_string(), |d| d.to_string()),
                    json(&t.p_value),
                    opt(t.p_value, &|v| format!("{v:.4e}")),
                    json(&t.cramers_v),
                    opt(t.cramers_v, &|v| format!("{v:.4}")),
                    esc(t.refused.as_deref().unwrap_or(""))
                );
            }
            s.push_str("</tbody></table></div>\n");
            let _ = writeln!(
                s,
                "<p>One chart per model: the {STRUCTURE_BARS} signatures seen most often (at least twice) a bar each, every other signature in one bar; the test above uses the whole table. <code>kumo-gen stats RESULTS --instances DIR</code> lists every signature; <code>--pool N</code> pools those seen fewer than N times.</p>"
            );
            for t in tests.iter().filter(|t| !t.table.is_empty()) {
                let _ = writeln!(
                    s,
                    "<figure><figcaption>{} ({} instances, {} signatures)</figcaption>{}</figure>",
                    esc(&t.model),
                    t.instances,
                    t.signatures,
                    structure_figure(t)
                );
            }
        }
    }
    s
}

/// What the replays cover, and how to get more.
fn replay_coverage(page: &Page) -> String {
    let (shown, of) = (page.replays.len(), page.replayable);
    let more = "<code>kumo-gen report</code> with <code>--replays N</code> replays up to N lines per group, <code>--replays all</code> every line (each replayed line adds its moves' values to the page)";
    match page.replay_limit {
        ReplayLimit::PerGroup(n) if shown < of => format!(
            r#"<p id="replay-coverage">{shown} of {of} result lines are replayed: at most {n} per model, agent, domain and setting, on the same seeds for every model (spread evenly over the seeds played), so the page stays small; the table and charts above count every line. {more}.</p>"#
        ),
        _ => format!(
            r#"<p id="replay-coverage">All {shown} result lines with their instance at hand are replayed.</p>"#
        ),
    }
}

/// The players-per-domain figures and the charts of `score --svg` and
/// `--curve-svg`.
fn players_and_charts(s: &mut String, page: &Page) {
    s.push_str(r#"<section id="players"><h2>Players on one axis per domain</h2><p>Per setting, models, people (<code>HumanAgent</code> results of <code>kumo-gen play</code>) and optimal play, all in actions per trial of KUMO's count (every reply one action, the prediction one more): the diamond is optimal play's expectation, <em>optimal actions</em> = expected steps E + 2, the figure the relative action count compares with (where labels are certified, lower &lt;= E &lt;= upper, it is the upper end: at most that); the square is the golden player's own mean on the same instances, <em>golden actions</em> (its trajectory + 2). The two differ because E weights each outcome by the candidates it leaves, not by how often the instances show it. Whiskers are 95% intervals.</p>"#);
    for d in domains(&page.rows) {
        let _ = writeln!(
            s,
            "<figure><figcaption>{}</figcaption>{}</figure>",
            esc(&d),
            domain_figure(&page.rows, &d)
        );
    }
    s.push_str("</section>\n");
    let rows: Vec<crate::score::Row> = page.rows.iter().map(|t| t.row.clone()).collect();
    let intervals: Vec<_> = page.rows.iter().map(|t| t.intervals.clone()).collect();
    let _ = writeln!(
        s,
        r#"<section id="charts"><h2>Success and relative action count</h2><p>The chart of <code>kumo-gen score --svg</code>: the relative action count is (actions - optimal actions) / optimal actions, KUMO's measure (the golden player scores above 0 on it: see the players above).</p><figure>{}</figure>"#,
        render_svg_with(&rows, &intervals)
    );
    if !page.curves.is_empty() {
        let _ = writeln!(
            s,
            r#"<details><summary>Hypotheses left after each action (per result file)</summary><p>The player's mean (solid) against the optimal policy's (dashed); <code>score --curve-svg</code>.</p><figure>{}</figure></details>"#,
            render_curve_svg(&page.curves)
        );
    }
    s.push_str("</section>\n");
    prediction_section(s, page);
}

/// The explore-then-predict rows (docs/black-boxes.md "Scoring"), when
/// some were played so: accuracy on held-out inputs with its Wilson
/// interval beside the golden explorer's exact accuracy, and the chart of
/// `score --svg` for them.
fn prediction_section(s: &mut String, page: &Page) {
    let rows: Vec<crate::score::Row> = page
        .rows
        .iter()
        .filter(|t| t.row.prediction.is_some())
        .map(|t| t.row.clone())
        .collect();
    if rows.is_empty() {
        return;
    }
    s.push_str(r#"<section id="predict"><h2>Explore, then predict</h2><p>Accuracy on held-out test inputs (domain actions never offered as probes) after at most T exploration turns, s attempts per test (turn@shot), with the 95% Wilson interval over the tests; <em>golden explorer</em> is the exact accuracy of the optimal explorer's first T probes with the Bayes prediction on the same instances, averaged over the hidden truth and every held-out input.</p><div class="scroll"><table><thead><tr><th>model</th><th>agent</th><th>domain</th><th>setting</th><th>turn@shot</th><th>tests</th><th>accuracy</th><th>95% interval</th><th>explored</th><th>golden explorer</th></tr></thead><tbody>"#);
    for r in &rows {
        let p = r.prediction.as_ref().expect("filtered");
        let interval = p
            .accuracy_interval
            .map_or("n/a".into(), |i| format!("{:.3} – {:.3}", i.low, i.high));
        let golden = p
            .golden_explorer_accuracy
            .map_or("n/a".into(), |g| format!("{g:.3}"));
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{interval}</td><td>{:.2}</td><td>{golden}</td></tr>",
            esc(&r.model),
            esc(&r.agent),
            esc(&r.domain),
            esc(&short(&r.setting)),
            esc(&p.turn_at_shot),
            p.tests,
            p.accuracy,
            p.mean_explored
        );
    }
    let _ = writeln!(
        s,
        "</tbody></table></div><figure>{}</figure></section>",
        crate::score::render_prediction_svg(&rows)
    );
}

/// The whole page.
pub fn render_html(page: &Page) -> String {
    let mut s = String::new();
    let title = esc(&page.title);
    let _ = writeln!(
        s,
        r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="kumo-gen {}">
<title>{title}</title>
<style>
{CSS}</style>
</head>
<body>
<header><h1>{title}</h1>
<p>{} result file(s), {} table row(s), {} of {} result lines replayed (<a href="#replay">replays</a> says how to get more). Intervals are 95%: success, budget accuracy and parse errors by the Wilson score interval on trials; mean actions and tokens by Student's t over instances; the relative action count by a percentile bootstrap over instances ({BOOTSTRAP_RESAMPLES} resamples, ChaCha8 seed {BOOTSTRAP_SEED}, so the page is the same every time).</p>
<nav><a href="#table">results</a> · <a href="#players">players per domain</a> · <a href="#charts">relative action count</a> · <a href="#moves-section">moves</a> · <a href="#structure-section">structure</a> · <a href="#replay">replays</a></nav>
</header>
<main>"##,
        env!("CARGO_PKG_VERSION"),
        page.inputs.len(),
        page.rows.len(),
        page.replays.len(),
        page.replayable
    );
    if !page.notes.is_empty() {
        s.push_str(r#"<section id="notes"><h2>Notes</h2><ul>"#);
        for n in &page.notes {
            let _ = write!(s, "<li>{}</li>", esc(n));
        }
        s.push_str("</ul></section>\n");
    }
    let _ = writeln!(
        s,
        r#"<section id="table"><h2>Results per model, domain and setting</h2>
<p>The numbers of <code>kumo-gen score --json</code> over the same inputs; click a column to sort, hover a heading for its definition. Rows <em>all</em> pool a model's groups, or every model's.</p>
<div class="scroll">{}</div></section>"#,
        table(&page.rows)
    );
    players_and_charts(&mut s, page);
    s.push_str(&super::moves_page::section(&page.moves));
    let _ = writeln!(
        s,
        r#"<section id="structure-section"><h2>Structure and correctness</h2>{}</section>"#,
        structure(&page.structure)
    );
    let _ = writeln!(
        s,
        r#"<section id="replay"><h2>Replays</h2>
{}
<noscript><p class="note">The replay viewer needs JavaScript.</p></noscript>
<div id="replay-viewer" hidden>
<div class="controls">
<label>game <select id="replay-game"></select></label>
<label>trial <select id="replay-trial"></select></label>
<button type="button" id="replay-first">|&lt;</button>
<button type="button" id="replay-prev">&lt; back</button>
<span id="replay-position"></span>
<button type="button" id="replay-next">next &gt;</button>
<button type="button" id="replay-last">&gt;|</button>
</div>
<div id="replay-summary"></div>
<div class="replay-body">
<ol id="replay-steps" start="0"></ol>
<div id="replay-state"></div>
</div>
<details id="replay-book-box"><summary>knowledge book</summary><pre id="replay-book"></pre></details>
</div>
<p id="replay-empty" class="note" hidden>No result line has its instance at hand (pass <code>--instances DIR</code>): nothing to replay.</p>
</section>
</main>
<script type="application/json" id="replay-data">{}</script>
<script>
{SCRIPT}</script>
</body>
</html>"#,
        replay_coverage(page),
        script_json(&ReplayData {
            replays: &page.replays,
            books: &page.books,
        })
    );
    s
}
