//! `kumo-gen report`: one self-contained HTML page whose table holds the
//! numbers of `score --json` (compared cell by cell), whose intervals are
//! recomputed here from their definitions, which is byte-identical across
//! runs, needs no network, replays a sample of the result lines (the same
//! seeds for every model) by default and every line with `--replays all`,
//! and stays small for a real evaluation's size.

use std::path::Path;

use serde_json::Value;

use crate::common::{TestCommand, eval_player, generate_in, json_lines};

const MEDIUM: &str = "truth_num=5+action_num=5+valid_truth_num=1";
const SMALL: &str = "truth_num=4+action_num=4+valid_truth_num=1";

/// A medical dataset of two settings, results of three offline players
/// (one of them budgeted) and of a scripted person on a few instances.
pub(crate) fn results(root: &Path) {
    let data = root.join("data");
    for setting in [(4, 4), (5, 5)] {
        generate_in("medical", setting, &data, 24, &["--seed", "7"]).ok();
    }
    let results = root.join("results");
    for (player, extra) in [
        ("golden", vec![]),
        ("random", vec![]),
        ("guess", vec![]),
        ("random", vec!["--budget", "3"]),
    ] {
        eval_player(
            player,
            &data,
            &results,
            &[&["--trials", "3", "--seed", "5"], &extra[..]].concat(),
        )
        .ok();
    }
    // A person: the first action of the instance, then the first truth.
    let file = data.join("medical").join(format!("{SMALL}.jsonl"));
    let out = results
        .join("person/HumanAgent/medical")
        .join(SMALL)
        .join("eval_times=1.jsonl");
    for (k, inst) in json_lines(&file).iter().take(6).enumerate() {
        let script = format!(
            "{}\n{}\n",
            inst["actions"][0].as_str().unwrap(),
            inst["truths"][0].as_str().unwrap()
        );
        TestCommand::new()
            .arg("play")
            .arg("--instances")
            .arg(&file)
            .arg("--line")
            .arg((k + 1).to_string())
            .args(["--player", "person", "--out"])
            .arg(&out)
            .stdin(script)
            .ok();
    }
}

pub(crate) fn report(root: &Path, out: &Path) -> String {
    report_with(root, out, &[])
}

/// [`report`] with more flags.
pub(crate) fn report_with(root: &Path, out: &Path, flags: &[&str]) -> String {
    TestCommand::new()
        .arg("report")
        .arg(root.join("results"))
        .arg("--instances")
        .arg(root.join("data"))
        .arg("-o")
        .arg(out)
        .args(flags)
        .ok();
    std::fs::read_to_string(out.join("index.html")).unwrap()
}

/// The replay viewer's data island of a page.
fn replay_data(html: &str) -> Value {
    let start = html
        .find(r#"<script type="application/json" id="replay-data">"#)
        .unwrap();
    let json = &html[html[start..].find('>').unwrap() + start + 1..];
    serde_json::from_str(&json[..json.find("</script>").unwrap()]).unwrap()
}

fn score_json(root: &Path) -> (Vec<Value>, String) {
    let ran = TestCommand::new()
        .arg("score")
        .arg(root.join("results"))
        .arg("--instances")
        .arg(root.join("data"))
        .arg("--json")
        .ok();
    (
        serde_json::from_slice(&ran.stdout).unwrap(),
        String::from_utf8(ran.stdout.clone()).unwrap(),
    )
}

/// The value of `name="..."` in a tag's text.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = start + tag[start..].find('"')?;
    Some(&tag[start..end])
}

/// The results table's rows: each cell's `(data-key, data-value,
/// data-low, data-high)`.
pub(crate) type Cells = Vec<(String, String, Option<String>, Option<String>)>;

fn table_rows(html: &str) -> Vec<Cells> {
    table_rows_of(html, "results")
}

/// The rows of the page's table `id`, as [`table_rows`].
pub(crate) fn table_rows_of(html: &str, id: &str) -> Vec<Cells> {
    let start = html.find(&format!(r#"<table id="{id}""#)).unwrap();
    let end = start + html[start..].find("</table>").unwrap();
    let body = &html[start..end];
    let body = &body[body.find("<tbody>").unwrap()..];
    body.split("<tr")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let tag = &cell[..cell.find('>').unwrap()];
                    let unescape = |s: &str| s.replace("&quot;", "\"").replace("&amp;", "&");
                    (
                        attribute(tag, "data-key").unwrap().to_string(),
                        unescape(attribute(tag, "data-value").unwrap()),
                        attribute(tag, "data-low").map(str::to_string),
                        attribute(tag, "data-high").map(str::to_string),
                    )
                })
                .collect()
        })
        .collect()
}

/// Wilson 95% of a rate `p` over `n` trials, written out from its
/// definition.
pub(crate) fn wilson(p: f64, n: f64) -> (f64, f64) {
    let z = 1.959_963_984_540_054_f64;
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
    ((c - h).max(0.0), (c + h).min(1.0))
}

#[test]
fn the_page_holds_score_json_numbers_with_their_intervals() {
    let tmp = tempfile::tempdir().unwrap();
    results(tmp.path());
    let html = report(tmp.path(), &tmp.path().join("page"));
    let (rows, json_text) = score_json(tmp.path());
    let table = table_rows(&html);
    assert_eq!(table.len(), rows.len(), "one table row per score row");
    let mut checked_intervals = 0;
    for (cells, row) in table.iter().zip(&rows) {
        for (key, value, low, high) in cells {
            if key == "kind" {
                continue;
            }
            let expected = &row[key.as_str()];
            match expected {
                Value::String(s) => assert_eq!(value, s, "{key} of {row}"),
                Value::Number(n) => {
                    // Exactly the text `score --json` prints (serde_json's
                    // parse may be an ulp off, so the text is compared too).
                    assert!(
                        json_text.contains(&format!("\"{key}\": {value},")),
                        "{key} {value} not in score --json"
                    );
                    let v: f64 = value.parse().unwrap();
                    let e = n.as_f64().unwrap();
                    assert!(
                        (v - e).abs() <= 4.0 * f64::EPSILON * e.abs(),
                        "{key} of {row}"
                    );
                }
                Value::Null => assert_eq!(value, "null", "{key} of {row}"),
                other => panic!("{key}: {other}"),
            }
            if key == "success_rate" {
                let (low, high) = (low.as_ref().unwrap(), high.as_ref().unwrap());
                let trials = row["trials"].as_f64().unwrap();
                let (l, h) = wilson(row["success_rate"].as_f64().unwrap(), trials);
                assert!((low.parse::<f64>().unwrap() - l).abs() < 1e-12, "{row}");
                assert!((high.parse::<f64>().unwrap() - h).abs() < 1e-12, "{row}");
                checked_intervals += 1;
            }
            if key == "mean_actions" && row["instances"].as_u64().unwrap() > 1 {
                let (low, high) = (low.as_ref().unwrap(), high.as_ref().unwrap());
                let mid = (low.parse::<f64>().unwrap() + high.parse::<f64>().unwrap()) / 2.0;
                assert!((mid - row["mean_actions"].as_f64().unwrap()).abs() < 1e-9);
            }
        }
    }
    assert!(checked_intervals >= 6, "{checked_intervals}");
    // The budgeted run has its budget accuracy; every bootstrap interval of
    // the relative action count holds its estimate; the guess player's
    // actions never vary (2 each: the answer and its entry), nor does their
    // t interval.
    let budgeted = rows
        .iter()
        .position(|r| r["agent"] == "VanillaAgent-budget=3")
        .unwrap();
    assert!(rows[budgeted]["budget_accuracy"].is_number());
    let cell = |row: usize, key: &str| table[row].iter().find(|c| c.0 == key).cloned().unwrap();
    for (i, row) in rows.iter().enumerate() {
        let (_, value, low, high) = cell(i, "relative_action_count");
        let (v, l, h): (f64, f64, f64) = (
            value.parse().unwrap(),
            low.unwrap().parse().unwrap(),
            high.unwrap().parse().unwrap(),
        );
        assert!(l <= v + 1e-12 && v <= h + 1e-12, "{row}");
    }
    let guess = rows
        .iter()
        .position(|r| r["model"] == "guess" && r["setting"] == MEDIUM)
        .unwrap();
    let (_, _, low, high) = cell(guess, "mean_actions");
    assert_eq!(
        (low.as_deref(), high.as_deref()),
        (Some("2.0"), Some("2.0"))
    );
    // The person, optimal play's expectation and the golden player's own
    // mean are on the medical figure, on one scale (KUMO's count).
    assert!(html.contains("person (HumanAgent)"));
    assert!(html.contains("optimal actions, expected (24 inst.)"));
    assert!(html.contains("golden actions: golden player (24 inst.)"));
    assert!(html.contains("actions per trial, KUMO's count"));
    // The golden player plays its labels: its own mean actions is the
    // golden_mean_actions every row of its instances shows.
    for golden in rows.iter().filter(|r| r["model"] == "golden") {
        let mean = golden["mean_actions"].as_f64().unwrap();
        let own = golden["golden_mean_actions"].as_f64().unwrap();
        assert!((mean - own).abs() < 1e-9, "{golden}");
        let optimal = golden["optimal_actions"].as_f64().unwrap();
        let steps = golden["optimal_steps"].as_f64().unwrap();
        assert!((optimal - steps - 2.0).abs() < 1e-12, "{golden}");
    }
    // The structure tests ran (or said why not) for every model.
    for model in ["golden", "random", "guess", "person"] {
        assert!(
            html.contains(&format!("<tr><td>{model}</td>")),
            "structure row of {model}"
        );
    }
}

#[test]
fn the_page_is_self_contained_identical_and_replays_a_sample_or_every_line() {
    let tmp = tempfile::tempdir().unwrap();
    results(tmp.path());
    let a = report(tmp.path(), &tmp.path().join("a"));
    let b = report(tmp.path(), &tmp.path().join("b"));
    assert_eq!(a, b, "the same inputs give the same bytes");
    // Nothing to fetch: no links, no external scripts, styles or images;
    // the only URL is the SVG namespace.
    for needle in ["<link", " src=", "@import", "url("] {
        assert!(!a.contains(needle), "{needle}");
    }
    let without_namespace = a.replace("http://www.w3.org/2000/svg", "");
    assert!(!without_namespace.contains("http://") && !without_namespace.contains("https://"));
    let lines: usize = walk(&tmp.path().join("results"))
        .iter()
        .map(|f| json_lines(f).len())
        .sum();
    // By default at most 20 lines per model, agent, domain and setting,
    // the same seeds for every model played on all of them, and the page
    // says what it left out and how to get it.
    let sampled = replay_data(&a);
    let sampled = sampled["replays"].as_array().unwrap();
    assert!(sampled.len() < lines, "{} of {lines}", sampled.len());
    let mut per_group: std::collections::BTreeMap<(String, String, String, String), Vec<u64>> =
        Default::default();
    for r in sampled {
        let key =
            ["model", "agent", "domain", "setting"].map(|k| r[k].as_str().unwrap().to_string());
        per_group
            .entry(key.into())
            .or_default()
            .push(r["seed"].as_u64().unwrap());
    }
    for seeds in per_group.values() {
        assert!(seeds.len() <= 20);
    }
    let seeds_of = |model: &str, setting: &str| {
        let mut s = per_group
            .iter()
            .find(|(k, _)| k.0 == model && k.2 == "medical" && k.3 == setting)
            .unwrap()
            .1
            .clone();
        s.sort_unstable();
        s
    };
    assert_eq!(seeds_of("golden", MEDIUM).len(), 20);
    assert_eq!(seeds_of("golden", MEDIUM), seeds_of("random", MEDIUM));
    assert_eq!(seeds_of("golden", MEDIUM), seeds_of("guess", MEDIUM));
    assert!(a.contains(&format!(
        "{} of {lines} result lines are replayed",
        sampled.len()
    )));
    assert!(a.contains("<code>--replays all</code> every line"));
    // `--replays all`: one replay per result line, each step's candidates
    // never growing, the valid truth always among them.
    let all = report_with(tmp.path(), &tmp.path().join("all"), &["--replays", "all"]);
    let data = replay_data(&all);
    let replays = data["replays"].as_array().unwrap();
    assert_eq!(replays.len(), lines);
    assert!(all.contains(&format!(
        "All {lines} result lines with their instance at hand are replayed"
    )));
    for r in replays {
        let valid = r["valid"][0].as_str().unwrap();
        assert!(r["book"].as_u64().unwrap() < data["books"].as_array().unwrap().len() as u64);
        for trial in r["trials"].as_array().unwrap() {
            let mut left = r["truths"].as_array().unwrap().len();
            for step in trial["steps"].as_array().unwrap() {
                let c = step["candidates"].as_array().unwrap();
                assert!(c.len() <= left);
                assert!(c.iter().any(|t| t == valid), "{step}");
                left = c.len();
            }
        }
    }
    TestCommand::new()
        .arg("report")
        .arg(tmp.path().join("results"))
        .args(["--replays", "some", "-o"])
        .arg(tmp.path().join("bad"))
        .expect_code(2)
        .stderr_contains("neither a number of lines nor `all`");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn bad_inputs_say_what_to_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    TestCommand::new()
        .arg("report")
        .arg(&empty)
        .arg("-o")
        .arg(tmp.path().join("page"))
        .expect_code(1)
        .stderr_contains("no result files");
    assert!(!tmp.path().join("page").exists());
    TestCommand::new()
        .arg("report")
        .arg(tmp.path().join("missing"))
        .arg("-o")
        .arg(tmp.path().join("page"))
        .expect_code(1);
    // `-o` naming a file: an error, the file untouched.
    let results = tmp.path().join("r.jsonl");
    std::fs::write(
        &results,
        r#"{"trajectories": [{"actions": ["A", "T", {"predicted_truth": "T"}], "successful": true}], "seed": 0}"#,
    )
    .unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, "keep").unwrap();
    TestCommand::new()
        .arg("report")
        .arg(&results)
        .arg("-o")
        .arg(&file)
        .expect_code(2);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
    // A results file alone still makes a page (recorded success, no replay).
    let page = tmp.path().join("page");
    TestCommand::new()
        .arg("report")
        .arg(&results)
        .arg("-o")
        .arg(&page)
        .ok();
    let html = std::fs::read_to_string(page.join("index.html")).unwrap();
    assert!(html.contains("No instances were given"));
    // ... and says why it has no per-move sections.
    assert!(html.contains(r#"<p class="note" id="moves-missing">No instances were given"#));
}
