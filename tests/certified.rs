//! Certified labels (`optimal.exact: false`, docs/output.md) as every
//! consumer of labels reads them: nothing may take a certified upper
//! bound for the exact optimum. The lines come cheaply from a tiny node
//! budget at KUMO's 12x16 (`--search-nodes 50`: every medical line is
//! certified there, and its interval is narrow but not a point).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::{TestCommand, eval_player, generate_in, json_lines};

const SETTING: &str = "truth_num=12+action_num=16+valid_truth_num=1";

/// `medical` 12x16, `-n 30`, `--search-nodes 50`, with the HF export and
/// the results of the `random` player (2 trials): made once per process.
fn certified() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        generate_in(
            "medical",
            (12, 16),
            &data,
            30,
            &["--search-nodes", "50", "--hf", "--threads", "2"],
        )
        .ok();
        eval_player(
            "random",
            &data,
            &tmp.path().join("results"),
            &["--trials", "2"],
        )
        .ok();
        tmp
    })
    .path()
}

fn dataset_file(dir: &Path) -> PathBuf {
    dir.join("data/medical").join(format!("{SETTING}.jsonl"))
}

/// `(upper, lower)` of every line's label, in file order.
fn labels(dir: &Path) -> Vec<(f64, f64, bool)> {
    json_lines(&dataset_file(dir))
        .iter()
        .map(|line| {
            let o = &line["optimal"];
            let upper = o["expected_steps"].as_f64().unwrap();
            let exact = o["exact"].as_bool().unwrap();
            let lower = o["lower_bound"].as_f64().unwrap_or(upper);
            (upper, lower, exact)
        })
        .collect()
}

#[test]
fn the_fixture_is_certified_with_proper_intervals() {
    let labels = labels(certified());
    assert_eq!(labels.len(), 30);
    let certified = labels.iter().filter(|l| !l.2).count();
    assert!(certified >= 20, "{certified} certified lines");
    for (upper, lower, exact) in &labels {
        assert!(lower <= upper);
        if !exact {
            assert!(lower < upper, "a certified interval of one point");
        }
    }
}

fn score_json(args: &[&str]) -> Vec<Value> {
    let mut command = TestCommand::new();
    let output = command.arg("score").args(args).arg("--json").ok();
    serde_json::from_slice::<Value>(&output.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn score_gives_certified_rows_a_range_of_relative_counts() {
    let dir = certified();
    let instances = dir.join("data/medical");
    let results = dir.join("results");
    let args = [
        "--instances",
        instances.to_str().unwrap(),
        results.to_str().unwrap(),
    ];
    let rows = score_json(&args);
    let row = &rows[0];
    let labels = labels(dir);
    let certified = labels.iter().filter(|l| !l.2).count();
    assert_eq!(row["certified"].as_u64(), Some(certified as u64));
    // Independently: the mean of upper and of lower ends, and the model's
    // mean actions, give the two ends of the relative count.
    let n = labels.len() as f64;
    let upper = labels.iter().map(|l| l.0).sum::<f64>() / n;
    let lower = labels.iter().map(|l| l.1).sum::<f64>() / n;
    let actions = row["mean_actions"].as_f64().unwrap();
    let least = (actions - (upper + 2.0)) / (upper + 2.0);
    let most = (actions - (lower + 2.0)) / (lower + 2.0);
    let close = |a: &Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-9;
    assert!(close(&row["relative_action_count"], least), "{row}");
    assert!(close(&row["relative_action_count_max"], most), "{row}");
    assert!(close(&row["optimal_steps"], upper), "{row}");
    assert!(close(&row["optimal_steps_min"], lower), "{row}");
    assert!(least < most);
    // The table marks the row and says how to read it; so does the SVG.
    let mut command = TestCommand::new();
    let table = command.arg("score").args(args).ok();
    let table = String::from_utf8(table.stdout.clone()).unwrap();
    assert!(table.contains("CERT"), "{table}");
    assert!(
        table.contains(&format!("{least:+.3}..{most:+.3}")),
        "{table}"
    );
    assert!(table.contains("certified, not exact"), "{table}");
    let svg = dir.join("score.svg");
    let mut command = TestCommand::new();
    command.arg("score").args(args).arg("--svg").arg(&svg).ok();
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("certified labels (lower &lt;= E &lt;= upper)"));
    assert!(svg.contains(&format!("{certified} certified label(s)")));
}

#[test]
fn score_of_exact_lines_has_no_certified_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    generate_in("medical", (4, 6), &data, 8, &[]).ok();
    eval_player(
        "random",
        &data,
        &tmp.path().join("results"),
        &["--trials", "1"],
    )
    .ok();
    let rows = score_json(&[
        "--instances",
        data.join("medical").to_str().unwrap(),
        tmp.path().join("results").to_str().unwrap(),
    ]);
    let row = rows[0].as_object().unwrap();
    for key in [
        "certified",
        "relative_action_count_max",
        "optimal_steps_min",
    ] {
        assert!(!row.contains_key(key), "{key} in {row:?}");
    }
    assert!(row["relative_action_count"].is_f64());
}

/// `(upper, lower)` of the labels of a dataset file.
fn bounds(file: &Path) -> Vec<(f64, f64)> {
    json_lines(file)
        .iter()
        .map(|line| {
            let o = &line["optimal"];
            let upper = o["expected_steps"].as_f64().unwrap();
            (upper, o["lower_bound"].as_f64().unwrap_or(upper))
        })
        .collect()
}

const FRONTIER: &str = "truth_num=24+action_num=32+valid_truth_num=1";

#[test]
fn a_band_at_24x32_admits_a_certified_line_only_if_its_whole_interval_is_in_it() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = ["--search-nodes", "300", "--threads", "2"];
    let plain = tmp.path().join("plain");
    generate_in("medical", (24, 32), &plain, 20, &budget).ok();
    let file = |dir: &Path| dir.join("medical").join(format!("{FRONTIER}.jsonl"));
    let first_draws = bounds(&file(&plain));
    // A bound inside the widest certified interval of the first draws:
    // that draw (line i is the first draw of stream i) must be redrawn.
    let (upper, lower) = first_draws
        .iter()
        .copied()
        .max_by(|a, b| (a.0 - a.1).total_cmp(&(b.0 - b.1)))
        .unwrap();
    assert!(lower < upper, "no certified interval to cut");
    let bound = (lower + upper) / 2.0;
    let banded = tmp.path().join("banded");
    let mut command = generate_in("medical", (24, 32), &banded, 20, &budget);
    let run = command.args(["--max-expected", &bound.to_string()]).ok();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(
        stderr.contains("certified with an interval across its edge"),
        "{stderr}"
    );
    for (upper, _) in bounds(&file(&banded)) {
        assert!(upper <= bound, "{upper} above --max-expected {bound}");
    }
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(banded.join("medical/manifest.json")).unwrap())
            .unwrap();
    let counts = &manifest["datasets"][FRONTIER]["counts"];
    assert!(
        counts["out_of_band_straddling"].as_u64() >= Some(1),
        "{counts}"
    );
    // The lower side: every line's lower bound is at least the minimum.
    let floor = tmp.path().join("floor");
    let mut command = generate_in("medical", (24, 32), &floor, 5, &budget);
    command.args(["--min-expected", &bound.to_string()]).ok();
    for (_, lower) in bounds(&file(&floor)) {
        assert!(lower >= bound, "{lower} below --min-expected {bound}");
    }
}

#[test]
fn curriculum_levels_at_24x32_hold_whole_intervals_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("curriculum");
    let mut command = TestCommand::new();
    let run = command
        .args(["curriculum", "--domain", "medical", "--truths", "24"])
        .args(["--actions", "32", "-n", "8", "--levels", "3"])
        .args(["--search-nodes", "300", "--threads", "2", "--out"])
        .arg(&out)
        .ok();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(stderr.contains("draws"), "{stderr}");
    let levels: Vec<Vec<(f64, f64)>> = (1..=3)
        .map(|k| {
            bounds(
                &out.join(format!("level-{k}/medical"))
                    .join(format!("{FRONTIER}.jsonl")),
            )
        })
        .collect();
    // Percentiles are monotone in E: a level holds its lines' whole
    // intervals only if every upper end of a level is below every lower
    // end of the next.
    for pair in levels.windows(2) {
        let top = pair[0].iter().map(|b| b.0).fold(f64::MIN, f64::max);
        let bottom = pair[1].iter().map(|b| b.1).fold(f64::MAX, f64::min);
        assert!(top < bottom, "{top} >= {bottom}");
    }
}

/// `(exact, certified)` as the summary line of a generate run states them.
fn summary_counts(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("medical: labels: "))
        .unwrap_or_else(|| panic!("no labels summary line in {stderr}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    (
        words[2].parse().unwrap(),
        words[4].trim_end_matches(',').parse().unwrap(),
    )
}

#[test]
fn summary_line_hf_card_and_sft_records_say_which_labels_are_certified() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let run = generate_in(
        "medical",
        (12, 16),
        &data,
        12,
        &["--search-nodes", "50", "--hf"],
    )
    .ok();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    let lines = json_lines(&dataset_file(tmp.path()));
    let certified = lines
        .iter()
        .filter(|l| l["optimal"]["exact"] == Value::Bool(false))
        .count() as u64;
    assert!(certified > 0);
    assert_eq!(summary_counts(&stderr), (12 - certified, certified));
    // The largest relative gap of the summary, from the lines themselves.
    let largest = lines
        .iter()
        .filter_map(|l| {
            let o = &l["optimal"];
            let lower = o["lower_bound"].as_f64()?;
            Some((o["expected_steps"].as_f64().unwrap() - lower) / lower)
        })
        .fold(0.0f64, f64::max);
    assert!(
        stderr.contains(&format!("largest {:.2}%", 100.0 * largest)),
        "{stderr}"
    );

    // The card counts them per config.
    let card = std::fs::read_to_string(data.join("hf/README.md")).unwrap();
    assert!(card.contains("## Labels"), "{card}");
    assert!(
        card.contains(&format!(
            "| `medical-t12-a16-v1` | {} | {certified} | 0 |",
            12 - certified
        )),
        "{card}"
    );
    assert!(card.contains("or certified where the exact search ran over"));

    // HF rows carry the bounds exactly as the lines state them.
    let rows = json_lines(&data.join(format!("hf/data/medical/{SETTING}.jsonl")));
    assert_eq!(rows.len(), lines.len());
    for (row, line) in rows.iter().zip(&lines) {
        let o = &line["optimal"];
        assert_eq!(row["expected_steps"], o["expected_steps"]);
        assert_eq!(row["exact"], o["exact"]);
        assert_eq!(row["lower_bound"], o["lower_bound"]);
    }

    // SFT records of certified lines say what their trajectory is worth.
    let sft = json_lines(&data.join(format!("medical/sft/{SETTING}.jsonl")));
    assert_eq!(sft.len(), lines.len());
    for (record, line) in sft.iter().zip(&lines) {
        let o = &line["optimal"];
        if o["exact"] == Value::Bool(false) {
            let c = &record["certified"];
            assert_eq!(c["expected_steps_at_most"], o["expected_steps"]);
            assert_eq!(c["expected_steps_at_least"], o["lower_bound"]);
        } else {
            assert!(record.get("certified").is_none(), "{record}");
        }
    }
    let hf_sft = json_lines(&data.join(format!("hf/data/medical/{SETTING}-sft.jsonl")));
    for (row, line) in hf_sft.iter().zip(&lines) {
        assert_eq!(row["exact"], line["optimal"]["exact"]);
    }
}

#[test]
fn exact_runs_keep_their_hf_rows_and_card_without_label_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let run = generate_in("medical", (6, 8), &data, 6, &["--hf"]).ok();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert_eq!(summary_counts(&stderr), (6, 0));
    let card = std::fs::read_to_string(data.join("hf/README.md")).unwrap();
    assert!(!card.contains("## Labels"), "{card}");
    assert!(card.contains("with an exact optimal-play label"), "{card}");
    let setting = "truth_num=6+action_num=8+valid_truth_num=1";
    for row in json_lines(&data.join(format!("hf/data/medical/{setting}.jsonl"))) {
        let row = row.as_object().unwrap();
        assert!(!row.contains_key("exact") && !row.contains_key("lower_bound"));
    }
    for line in json_lines(&data.join(format!("medical/{setting}.jsonl"))) {
        let difficulty = line["difficulty"].as_object().unwrap();
        for key in ["exact", "lower_bound", "percentile_lower"] {
            assert!(!difficulty.contains_key(key), "{key}");
        }
    }
}

/// Every move of a trial analysed under a budget too small for its
/// values is either exact (and then equal to the exact analysis) or
/// bounded by an interval that holds the exact value; a bounded move's
/// row gives no number that is not proven, and its game is not totalled.
#[test]
fn moves_over_the_budget_give_proven_intervals_never_a_bound_as_the_value() {
    use kumo_gen::analysis::{Analysed, Analyst};
    use kumo_gen::domain::Registry;
    use kumo_gen::game::InstanceLine;
    use kumo_gen::results::Said;
    use kumo_gen::search::SearchBudget;

    let domain = Registry::new(None).load("medical").unwrap().0;
    let tiny = SearchBudget::with_nodes(SearchBudget::DEFAULT_MAX_MEMO_ENTRIES, Some(50));
    let mut bounded = 0;
    for value in json_lines(&dataset_file(certified())) {
        let line: InstanceLine = serde_json::from_value(value).unwrap();
        let mut small = Analyst::new(&domain, &line, tiny).unwrap();
        let mut exact = Analyst::new(&domain, &line, SearchBudget::default()).unwrap();
        // The golden trajectory and a wasteful one: every action in
        // instance order, one of them repeated, then the golden answer.
        let answer = small
            .said(
                line.optimal
                    .as_ref()
                    .unwrap()
                    .golden_answer
                    .as_deref()
                    .unwrap(),
            )
            .unwrap();
        let mut games: Vec<Vec<Said>> = vec![
            line.optimal
                .as_ref()
                .unwrap()
                .golden_trajectory
                .iter()
                .map(|a| small.said(a).unwrap())
                .chain([answer])
                .collect(),
            (0..4)
                .map(Said::Action)
                .chain([Said::Action(1), answer])
                .collect(),
        ];
        for moves in games.drain(..) {
            let analysed = small.moves(&moves);
            let truth = exact.game(&moves).unwrap();
            assert_eq!(
                small.game_of(&analysed).is_ok(),
                analysed.iter().all(|m| matches!(m, Analysed::Exact(_)))
            );
            for (m, e) in analysed.iter().zip(&truth.moves) {
                match m {
                    Analysed::Exact(m) => assert_eq!(m, e),
                    Analysed::Bounded(b) => {
                        bounded += 1;
                        for (bounds, value) in
                            [(b.value, e.value), (b.q, e.q), (b.regret, e.regret)]
                        {
                            assert!(
                                bounds.lo <= value + 1e-9 && value <= bounds.hi + 1e-9,
                                "{value} outside [{}, {}]",
                                bounds.lo,
                                bounds.hi
                            );
                        }
                        if let Some(optimal) = b.optimal {
                            assert_eq!(optimal, e.optimal);
                        }
                        if let Some(reward) = b.reward() {
                            assert_eq!(reward, kumo_gen::analysis::dense_reward(Some(e)));
                        }
                        let row = small.analysed_json(m);
                        for key in ["value", "q", "regret"] {
                            let bounds = row[format!("{key}_bounds")].as_array().unwrap();
                            if bounds[0] != bounds[1] {
                                assert!(row[key].is_null(), "{key} in {row}");
                            }
                        }
                        assert!(
                            row["unproven"].as_str().unwrap().contains("budget"),
                            "{row}"
                        );
                    }
                }
            }
        }
    }
    assert!(bounded > 0, "no move went over the tiny budget");
}

/// Beyond KUMO's 16 actions the default node budget is scaled down
/// (`FRONTIER_MAX_NODES`); the manifest and the secret seed file record
/// the budget the lines were searched under, so a resume with a larger
/// `--search-nodes` relabels, the same budget is up to date, and `verify`
/// regenerates under the same budget.
#[test]
fn a_frontier_dataset_records_the_node_budget_its_lines_were_searched_under() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    generate_in("medical", (24, 32), &out, 2, &["--seed", "random"]).ok();
    let manifest = |dir: &Path| -> Value {
        serde_json::from_slice(&std::fs::read(dir.join("medical/manifest.json")).unwrap()).unwrap()
    };
    let recorded =
        |dir: &Path| manifest(dir)["datasets"][FRONTIER]["parameters"]["search_nodes"].as_u64();
    assert_eq!(recorded(&out), Some(1_000_000));
    let seed_file = out.join(format!("SECRET-seeds/medical/{FRONTIER}.json"));
    let record: Value = serde_json::from_slice(&std::fs::read(&seed_file).unwrap()).unwrap();
    assert_eq!(record["search_nodes"].as_u64(), Some(1_000_000), "{record}");

    let plain = tmp.path().join("plain");
    generate_in("medical", (24, 32), &plain, 2, &[]).ok();
    let again = generate_in("medical", (24, 32), &plain, 2, &[]).ok();
    let stderr = String::from_utf8_lossy(&again.stderr).into_owned();
    assert!(!stderr.contains("relabel"), "{stderr}");
    let larger = generate_in(
        "medical",
        (24, 32),
        &plain,
        2,
        &["--search-nodes", "2000000"],
    )
    .ok();
    let stderr = String::from_utf8_lossy(&larger.stderr).into_owned();
    assert!(
        stderr.contains("relabelled under `--search-budget 8000000 --search-nodes 2000000`"),
        "{stderr}"
    );
    assert_eq!(recorded(&plain), Some(2_000_000));
}
