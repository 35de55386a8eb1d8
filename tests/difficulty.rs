//! Difficulty on request: the `percentile` of every labelled line in its
//! setting's reference sample, bands (`--min-expected` ...), the
//! manifest's golden-answer counts, `curriculum`, and `play --budget`.

use crate::common::{TestCommand, clinic, generate_clinic, json_lines, kumo_gen};
use kumo_gen::difficulty::Reference;
use kumo_gen::synth::Params;
use serde_json::Value;
use std::path::{Path, PathBuf};

const SETTING: &str = "truth_num=3+action_num=3+valid_truth_num=1";
/// A band of the clinic 3x3 setting that holds about a third of the draws
/// and, at 100 instances, makes duplicates redraw too.
const BAND: [&str; 4] = ["--min-expected", "1.4", "--max-golden", "1"];

/// `kumo-gen generate` of clinic 3x3 into `out` (no books, no SFT).
fn generate(out: &Path, n: u64, extra: &[&str]) -> TestCommand {
    generate_clinic(out, n, &[&["--books", "none", "--no-sft"], extra].concat())
}

fn dataset(out: &Path) -> PathBuf {
    out.join("clinic").join(format!("{SETTING}.jsonl"))
}

fn entry(out: &Path, domain: &str) -> Value {
    let text = std::fs::read_to_string(out.join(domain).join("manifest.json")).unwrap();
    let manifest: Value = serde_json::from_str(&text).unwrap();
    manifest["datasets"][SETTING].clone()
}

#[test]
fn banded_lines_lie_inside_the_band_at_any_thread_count_shard_and_resume() {
    let one = tempfile::tempdir().unwrap();
    generate(one.path(), 100, &[&BAND[..], &["--threads", "1"]].concat()).ok();
    let written = json_lines(&dataset(one.path()));
    assert_eq!(written.len(), 100);
    for (i, line) in written.iter().enumerate() {
        let d = &line["difficulty"];
        assert_eq!(line["seed"], i as u64);
        assert!(
            d["expected_steps"].as_f64().unwrap() >= 1.4,
            "line {i}: {d}"
        );
        assert!(d["golden_length"].as_u64().unwrap() <= 1, "line {i}: {d}");
    }
    let counts = &entry(one.path(), "clinic")["counts"];
    assert!(counts["out_of_band_rejected"].as_u64().unwrap() > 0);
    assert!(
        counts["duplicates_rejected"].as_u64().unwrap() > 0,
        "the band must also make duplicates redraw here: {counts}"
    );
    assert_eq!(
        entry(one.path(), "clinic")["parameters"]["band"]["min_expected"],
        1.4
    );
    let bytes = std::fs::read(dataset(one.path())).unwrap();

    let two = tempfile::tempdir().unwrap();
    generate(two.path(), 100, &[&BAND[..], &["--threads", "2"]].concat()).ok();
    assert!(
        bytes == std::fs::read(dataset(two.path())).unwrap(),
        "1 vs 2 threads"
    );

    let sharded = tempfile::tempdir().unwrap();
    for k in 0..3 {
        generate(
            sharded.path(),
            100,
            &[&BAND[..], &["--shard", &format!("{k}/3")]].concat(),
        )
        .ok();
    }
    kumo_gen()
        .args(["merge", "--out"])
        .arg(sharded.path())
        .assert()
        .success();
    assert!(
        bytes == std::fs::read(dataset(sharded.path())).unwrap(),
        "shards + merge"
    );

    let resumed = tempfile::tempdir().unwrap();
    generate(resumed.path(), 40, &BAND).ok();
    generate(resumed.path(), 100, &BAND).ok();
    assert!(
        bytes == std::fs::read(dataset(resumed.path())).unwrap(),
        "resume"
    );
    // Another band is another dataset: a resume with it is refused.
    generate(resumed.path(), 100, &["--min-expected", "1.5"])
        .expect_code(1)
        .stderr_contains("band");
}

#[test]
fn a_band_the_setting_cannot_reach_fails_fast_naming_the_reachable_range() {
    let out = tempfile::tempdir().unwrap();
    generate(out.path(), 20, &["--min-expected", "7"])
        .expect_code(1)
        .stderr_contains("lands in the band `--min-expected 7`")
        .stderr_contains("reach expected steps 1.0000 to")
        .stderr_contains("golden length");
    assert!(!dataset(out.path()).exists());
    // Crossing bounds are wrong whatever the setting: refused as the flags
    // are read, like every such flag value.
    generate(out.path(), 20, &["--min-golden", "3", "--max-golden", "2"])
        .expect_code(2)
        .stderr_contains("is above");
    generate(out.path(), 20, &["--min-golden", "1", "--no-labels"]).expect_code(2);
}

#[test]
fn the_percentile_is_the_share_of_the_reference_sample_below_plus_half_the_ties() {
    let out = tempfile::tempdir().unwrap();
    generate(out.path(), 60, &[]).ok();
    let other = tempfile::tempdir().unwrap();
    generate(other.path(), 60, &["--seed", "5", "--threads", "1"]).ok();
    let reference = Reference::sample(&clinic(), &Params::new(3, 3, 1)).unwrap();
    let size = (reference.expected.len() as u64 + reference.unlabelled) as f64;
    let mut seen = std::collections::BTreeMap::new();
    for path in [dataset(out.path()), dataset(other.path())] {
        for text in std::fs::read_to_string(path).unwrap().lines() {
            // Numbers read by Rust's correctly rounded parser (serde_json's
            // default one may be one unit in the last place off).
            let number = |key: &str| -> f64 {
                let at = text.rfind(&format!("\"{key}\":")).unwrap() + key.len() + 3;
                let end = text[at..].find([',', '}']).unwrap();
                text[at..at + end].parse().unwrap()
            };
            let (x, got) = (number("expected_steps"), number("percentile"));
            // Counted by hand over the sample, not by the library.
            let below = reference.expected.iter().filter(|&&v| v < x).count() as f64;
            let equal = reference.expected.iter().filter(|&&v| v == x).count() as f64;
            let want = 100.0 * (below + equal / 2.0) / size;
            assert_eq!(got, want, "{text}");
            // One expected-steps value, one percentile, whatever the --seed.
            let p = *seen.entry(x.to_bits()).or_insert(want);
            assert_eq!(p, want);
        }
    }
    assert!(seen.len() > 3);
    let recorded = &entry(out.path(), "clinic")["difficulty"]["reference"];
    assert_eq!(recorded["size"], 256);
    assert_eq!(recorded["seed"], kumo_gen::difficulty::REFERENCE_SEED);
    let info = reference.info();
    assert_eq!(
        recorded["digest"], info.digest,
        "the sample's sorted values"
    );
    assert_eq!(recorded["unlabelled"], info.unlabelled);
    assert_eq!(
        *recorded,
        entry(other.path(), "clinic")["difficulty"]["reference"],
        "the sample does not depend on --seed"
    );
}

#[test]
fn the_manifest_counts_golden_answers_by_candidates_left() {
    let out = tempfile::tempdir().unwrap();
    generate(out.path(), 60, &[]).ok();
    let mut by_left = std::collections::BTreeMap::<String, u64>::new();
    for line in json_lines(&dataset(out.path())) {
        let left = line["difficulty"]["consistent_at_answer"].as_u64().unwrap();
        *by_left.entry(left.to_string()).or_default() += 1;
    }
    let summary = &entry(out.path(), "clinic")["difficulty"];
    assert_eq!(summary["labelled"], 60);
    assert_eq!(
        summary["answers_with_one_candidate"],
        by_left.get("1").copied().unwrap_or(0)
    );
    assert_eq!(
        summary["consistent_at_answer"],
        serde_json::to_value(&by_left).unwrap()
    );
    assert!(by_left.len() > 1, "{by_left:?}");
}

#[test]
fn curriculum_levels_are_ordered_datasets_with_one_hf_config_each() {
    let out = tempfile::tempdir().unwrap();
    kumo_gen()
        .args([
            "curriculum",
            "--domain",
            "medical",
            "--levels",
            "3",
            "-n",
            "30",
        ])
        .args(["--no-sft", "--hf", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let medical = "truth_num=4+action_num=6+valid_truth_num=1";
    let mut previous_max = f64::NEG_INFINITY;
    let mut previous_expected = f64::NEG_INFINITY;
    for level in 1..=3 {
        let dir = out.path().join(format!("level-{level}"));
        let file = dir.join("medical").join(format!("{medical}.jsonl"));
        let written = json_lines(&file);
        assert_eq!(written.len(), 30);
        let percentile = |l: &Value| l["difficulty"]["percentile"].as_f64().unwrap();
        let expected = |l: &Value| l["difficulty"]["expected_steps"].as_f64().unwrap();
        let lo = written.iter().map(percentile).fold(f64::INFINITY, f64::min);
        let hi = written
            .iter()
            .map(percentile)
            .fold(f64::NEG_INFINITY, f64::max);
        assert!(lo >= 100.0 * (level - 1) as f64 / 3.0 && hi < 100.0 * level as f64 / 3.0);
        assert!(lo > previous_max, "level {level} overlaps the one before");
        let easiest = written.iter().map(expected).fold(f64::INFINITY, f64::min);
        assert!(easiest >= previous_expected);
        previous_max = hi;
        previous_expected = written
            .iter()
            .map(expected)
            .fold(f64::NEG_INFINITY, f64::max);
        let manifest: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("medical/manifest.json")).unwrap(),
        )
        .unwrap();
        let band = &manifest["datasets"][medical]["parameters"]["band"];
        assert_eq!(band["min_percentile"], 100.0 * (level - 1) as f64 / 3.0);
    }
    let card = std::fs::read_to_string(out.path().join("hf/README.md")).unwrap();
    for level in 1..=3 {
        assert!(
            card.contains(&format!("config_name: \"level-{level}\"")),
            "{card}"
        );
    }
    kumo_gen()
        .args([
            "curriculum",
            "--domain",
            "medical",
            "--levels",
            "2",
            "--min-expected",
            "1",
        ])
        .arg("--out")
        .arg(out.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("does not take"));
}

#[test]
fn play_with_a_budget_goes_on_after_a_wrong_answer_through_a_pipe() {
    let out = tempfile::tempdir().unwrap();
    kumo_gen()
        .args(["--domain", "medical", "-n", "1", "--no-sft", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let file = out
        .path()
        .join("medical/truth_num=4+action_num=6+valid_truth_num=1.jsonl");
    let line = &json_lines(&file)[0];
    let valid = line["valid_truth"].as_str().unwrap();
    let wrong = line["truths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .find(|t| *t != valid)
        .unwrap();
    let results = out.path().join("results.jsonl");
    // `kumo-gen play` of `file`'s first instance with `flags`, the replies
    // piped in, appending to `results`.
    let play = |flags: &[&str], replies: &[&str]| {
        kumo_gen()
            .arg("play")
            .args(flags)
            .arg("--instances")
            .arg(&file)
            .arg("--out")
            .arg(&results)
            .write_stdin(format!("{}\n", replies.join("\n")))
            .assert()
            .success()
    };
    play(&["--budget", "3"], &[wrong, valid])
        .stdout(predicates::str::contains(format!("{wrong}: wrong")))
        .stdout(predicates::str::contains("correct in 2 turn(s)"));
    let played: Value =
        serde_json::from_str(std::fs::read_to_string(&results).unwrap().trim()).unwrap();
    let trial = &played["trajectories"][0];
    assert_eq!(trial["successful"], true);
    assert_eq!(trial["budget"], 3);
    assert_eq!(trial["observations"][1]["observation"], "wrong");
    assert_eq!(played["agent"], "HumanAgent-budget=3");
    // Two wrong answers spend a budget of two: recorded unsuccessful.
    play(&["--budget", "2"], &[wrong, wrong, valid])
        .stdout(predicates::str::contains("the 2 turns are spent"));
    let last = std::fs::read_to_string(&results).unwrap();
    let last: Value = serde_json::from_str(last.lines().last().unwrap()).unwrap();
    assert_eq!(last["trajectories"][0]["successful"], false);
    // Without --budget, KUMO's protocol: the wrong answer ends the game.
    play(&[], &[wrong, valid]).stdout(predicates::str::contains(
        "wrong: the observations rule out",
    ));
}
