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

use super::cells::{cell, count_cell, json, range_cell, script_json, text_cell};
use super::figures::{domain_figure, domains, esc, short, structure_figure};
use super::{Book, Page, Replay, Structure, TableRow};
use crate::score::interval::{BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED};
use crate::score::{render_curve_svg, render_svg_with};

const CSS: &str = include_str!("assets/report.css");
const SCRIPT: &str = include_str!("assets/report.js");

const COLUMNS: [(&str, &str, &str); 19] = [
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
        "KUMO's count, len(actions): the prediction counts twice; 95% t interval over instances",
    ),
    (
        "optimal_steps",
        "optimal E",
        "mean expected steps of optimal play (it counts E + 2 the same way); a range where labels are certified (lower <= E <= upper)",
    ),
    (
        "relative_action_count",
        "relative",
        "(actions - (E + 2)) / (E + 2); 95% percentile bootstrap over instances; a range where labels are certified",
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
    (
        "success_from",
        "success from",
        "checked against the instance, or the recorded field",
    ),
    ("kind", "player", "model, person (HumanAgent) or overall"),
];

fn table(rows: &[TableRow]) -> String {
    let mut s = String::new();
    s.push_str(r#"<table id="results" class="sortable"><thead><tr>"#);
    for (key, name, help) in COLUMNS {
        let _ = write!(
            s,
            r#"<th data-key="{key}" title="{}" tabindex="0">{name}</th>"#,
            esc(help)
        );
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for t in rows {
        let r = &t.row;
        let i = &t.intervals;
        let kind = if r.model == "all" || r.setting == "all" {
            "overall"
        } else if crate::game::is_human(&r.agent) {
            "person"
        } else {
            "model"
        };
        let class = if kind == "overall" {
            r#" class="overall""#
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "<tr{class}>{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}</tr>",
            text_cell("model", &r.model, &r.model),
            text_cell("agent", &r.agent, &r.agent),
            text_cell("domain", &r.domain, &r.domain),
            text_cell("setting", &r.setting, &short(&r.setting)),
            count_cell("instances", r.instances),
            count_cell("trials", r.trials),
            cell("success_rate", Some(r.success_rate), 3, i.success_rate),
            cell("mean_actions", Some(r.mean_actions), 3, i.mean_actions),
            range_cell(
                "optimal_steps",
                r.optimal_steps,
                r.optimal_steps_min,
                r.certified,
                3,
                None
            ),
            range_cell(
                "relative_action_count",
                r.relative_action_count,
                r.relative_action_count_max,
                r.certified,
                3,
                i.relative_action_count
            ),
            cell("mean_queries", Some(r.mean_queries), 3, None),
            cell("mean_repeats", Some(r.mean_repeats), 3, None),
            cell("budget_accuracy", r.budget_accuracy, 3, i.budget_accuracy),
            cell("mean_turns_solved", r.mean_turns_solved, 2, None),
            cell(
                "parse_error_rate",
                Some(r.parse_error_rate),
                3,
                i.parse_error_rate
            ),
            cell("mean_tokens", Some(r.mean_tokens), 1, i.mean_tokens),
            count_cell("labelled", r.labelled),
            text_cell(
                "success_from",
                &json(&r.success_from).replace('"', ""),
                &json(&r.success_from).replace('"', "")
            ),
            text_cell("kind", kind, kind),
        );
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
            s.push_str(r#"<table id="structure"><thead><tr><th>model</th><th>instances</th><th>correct</th><th>signatures</th><th>table</th><th>chi-square</th><th>dof</th><th>p</th><th>Cramér's V</th><th>refused because</th></tr></thead><tbody>"#);
            for t in tests {
                let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| {
                    v.map_or_else(|| "n/a".to_string(), f)
                };
                let _ = writeln!(
                    s,
                    r#"<tr><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}{}</td><td class="num">{}x{}</td><td class="num" data-value="{}">{}</td><td class="num">{}</td><td class="num" data-value="{}">{}</td><td class="num" data-value="{}">{}</td><td>{}</td></tr>"#,
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
            s.push_str("</tbody></table>\n");
            for t in tests.iter().filter(|t| !t.table.is_empty()) {
                let _ = writeln!(
                    s,
                    "<figure><figcaption>{}</figcaption>{}</figure>",
                    esc(&t.model),
                    structure_figure(t)
                );
            }
        }
    }
    s
}

/// The players-per-domain figures and the charts of `score --svg` and
/// `--curve-svg`.
fn players_and_charts(s: &mut String, page: &Page) {
    s.push_str(r#"<section id="players"><h2>Players on one axis per domain</h2><p>Models, people (<code>HumanAgent</code> results of <code>kumo-gen play</code>) and the optimal player (always right, in expected steps + 2 of KUMO's count) per setting; whiskers are 95% intervals.</p>"#);
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
        r#"<section id="charts"><h2>Success and efficiency</h2><p>The chart of <code>kumo-gen score --svg</code>.</p><figure>{}</figure>"#,
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
<p>{} result file(s), {} table row(s). Intervals are 95%: success, budget accuracy and parse errors by the Wilson score interval on trials; mean actions and tokens by Student's t over instances; the relative action count by a percentile bootstrap over instances ({BOOTSTRAP_RESAMPLES} resamples, ChaCha8 seed {BOOTSTRAP_SEED}, so the page is the same every time).</p>
<nav><a href="#table">results</a> · <a href="#players">players per domain</a> · <a href="#charts">charts</a> · <a href="#moves-section">moves</a> · <a href="#structure-section">structure</a> · <a href="#replay">replays</a></nav>
</header>
<main>"##,
        env!("CARGO_PKG_VERSION"),
        page.inputs.len(),
        page.rows.len()
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
        script_json(&ReplayData {
            replays: &page.replays,
            books: &page.books,
        })
    );
    s
}
