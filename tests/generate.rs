//! `kumo-gen generate` and `kumo-gen merge`: the KUMO constraints on the
//! written lines, determinism across threads, shards + merge, resume after
//! an interruption, refusal to overwrite, and infeasible requests.

use crate::common::{TestCommand, clinic, generate_clinic, generate_tiny, root};
use kumo_gen::domain::{Domain, StateLabel};
use serde_json::Value;
use std::path::{Path, PathBuf};

const SETTING: &str = "truth_num=3+action_num=3+valid_truth_num=1.jsonl";

/// Runs `kumo-gen generate` of 150 clinic instances into `out`.
fn generate(out: &Path, extra: &[&str]) -> TestCommand {
    generate_clinic(out, 150, extra)
}

fn dataset(out: &Path) -> PathBuf {
    out.join("clinic").join(SETTING)
}

fn manifest(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("clinic/manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// An independent check of one line against the domain: KUMO's fields, the
/// sizes, the three constraints and the shortcut guard.
fn check_line(domain: &Domain, line: &Value, seed: u64, truths: usize, actions: usize) {
    let keys: Vec<&str> = line
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    // KUMO's fields in KUMO's order (serde_json keeps file order with
    // `preserve_order`), then ours: the structure signature and the labels.
    assert_eq!(
        keys,
        [
            "truths",
            "actions",
            "observations",
            "seed",
            "valid_truth",
            "structure",
            "optimal",
            "difficulty"
        ]
    );
    assert_eq!(line["seed"].as_u64(), Some(seed));
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let sampled = names(&line["truths"]);
    let acts = names(&line["actions"]);
    assert_eq!((sampled.len(), acts.len()), (truths, actions));
    let valid = line["valid_truth"].as_str().unwrap().to_string();
    assert!(sampled.contains(&valid));
    let observations = line["observations"].as_object().unwrap();
    assert_eq!(observations.len(), actions);
    let mut ruled_out = std::collections::BTreeSet::new();
    let mut ruled_out_by: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    let mut related_to_valid = false;
    for name in &acts {
        let action = &domain.actions[domain.action_index(name).unwrap()];
        let observed = &observations[name.as_str()];
        let matching: Vec<usize> = action
            .states
            .iter()
            .enumerate()
            .filter(|(_, s)| match (&s.label, observed) {
                (StateLabel::Named(l), Value::String(o)) => l == o,
                (StateLabel::Range { lo, hi }, Value::Number(v)) => {
                    let v = v.as_f64().unwrap();
                    *lo <= v && v <= *hi
                }
                _ => false,
            })
            .map(|(i, _)| i)
            .collect();
        assert_eq!(matching.len(), 1, "{name}: {observed} reads as one state");
        if action.kind == kumo_gen::domain::ActionKind::Int {
            assert!(observed.is_i64(), "{name}: {observed} is an integer");
        }
        for t in action.states[matching[0]].rules_out.iter() {
            ruled_out.insert(domain.truths[t].clone());
            ruled_out_by
                .entry(name.as_str())
                .or_default()
                .push(domain.truths[t].clone());
        }
        related_to_valid |= action.related.contains(domain.truth_index(&valid).unwrap());
    }
    assert!(
        !ruled_out.contains(&valid),
        "seed {seed}: valid truth ruled out"
    );
    for t in &sampled {
        assert!(
            *t == valid || ruled_out.contains(t),
            "seed {seed}: `{t}` not ruled out"
        );
    }
    assert!(related_to_valid, "seed {seed}: shortcut");

    // The golden trajectory replays to the valid truth: its actions are the
    // instance's, each at most once, and what they rule out leaves the
    // answer standing.
    let optimal = &line["optimal"];
    assert!(optimal["expected_steps"].as_f64().unwrap() >= 0.0);
    let golden = names(&optimal["golden_trajectory"]);
    assert_eq!(
        optimal["golden_actions"].as_u64(),
        Some(golden.len() as u64),
        "seed {seed}: `golden_actions` counts the trajectory's actions"
    );
    assert_eq!(
        optimal["golden_answer"].as_str(),
        Some(valid.as_str()),
        "seed {seed}: golden answer"
    );
    let mut remaining: std::collections::BTreeSet<&String> = sampled.iter().collect();
    for (i, action) in golden.iter().enumerate() {
        assert!(acts.contains(action) && !golden[..i].contains(action));
        for t in ruled_out_by.get(action.as_str()).into_iter().flatten() {
            remaining.remove(t);
        }
    }
    assert!(remaining.contains(&valid));
    if let Some(first) = golden.first() {
        assert_eq!(optimal["first_action"].as_str(), Some(first.as_str()));
    }
    // The difficulty object restates the label and counts the candidates
    // the golden trajectory's observations leave standing at the answer.
    let difficulty = &line["difficulty"];
    assert_eq!(difficulty["expected_steps"], optimal["expected_steps"]);
    assert_eq!(difficulty["golden_length"], optimal["golden_actions"]);
    assert_eq!(
        difficulty["consistent_at_answer"].as_u64(),
        Some(remaining.len() as u64),
        "seed {seed}: candidates consistent at the answer"
    );
}

#[test]
fn lines_are_kumo_instances_that_satisfy_the_constraints() {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), &[]).ok();
    let domain = clinic();
    let text = std::fs::read_to_string(dataset(dir.path())).unwrap();
    let mut keys = std::collections::BTreeSet::new();
    let mut count = 0;
    for (i, line) in text.lines().enumerate() {
        let value: Value = serde_json::from_str(line).unwrap();
        check_line(&domain, &value, i as u64, 3, 3);
        let mut truths: Vec<String> = value["truths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.to_string())
            .collect();
        truths.sort();
        let mut obs: Vec<(String, String)> = value["observations"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(a, o)| {
                let action = &domain.actions[domain.action_index(a).unwrap()];
                let state = match o {
                    Value::String(s) => action.state_named(s).unwrap(),
                    v => action.state_containing(v.as_f64().unwrap()).unwrap(),
                };
                (a.clone(), state.to_string())
            })
            .collect();
        obs.sort();
        assert!(
            keys.insert((truths, value["valid_truth"].to_string(), obs)),
            "duplicate at {i}"
        );
        count += 1;
    }
    assert_eq!(count, 150);
    let m = manifest(dir.path());
    let entry = &m["datasets"]["truth_num=3+action_num=3+valid_truth_num=1"];
    assert_eq!(entry["status"], "complete");
    assert_eq!(entry["parameters"]["n"], 150);
    assert!(entry["counts"]["duplicates_rejected"].as_u64().unwrap() > 0);
    assert_eq!(m["domain"]["name"], "clinic");
    assert_eq!(m["domain"]["document"]["truths"][0], "Flu");
}

#[test]
fn thread_count_does_not_change_the_bytes() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    generate(one.path(), &["--threads", "1"]).ok();
    generate(two.path(), &["--threads", "2"]).ok();
    let a = std::fs::read(dataset(one.path())).unwrap();
    let b = std::fs::read(dataset(two.path())).unwrap();
    assert!(!a.is_empty());
    assert!(a == b, "thread counts 1 and 2 wrote different bytes");
}

#[test]
fn shards_merge_into_the_unsharded_file() {
    let whole = tempfile::tempdir().unwrap();
    generate(whole.path(), &[]).ok();
    let sharded = tempfile::tempdir().unwrap();
    for k in 0..3 {
        generate(
            sharded.path(),
            &["--shard", &format!("{k}/3"), "--threads", "1"],
        )
        .ok();
    }
    TestCommand::new()
        .args(["merge", "--out"])
        .arg(sharded.path())
        .ok();
    let a = std::fs::read(dataset(whole.path())).unwrap();
    let b = std::fs::read(dataset(sharded.path())).unwrap();
    assert!(a == b, "merged shards differ from the unsharded file");
    TestCommand::new()
        .args(["merge", "--out"])
        .arg(sharded.path())
        .ok()
        .stderr_contains("up to date");
    // Duplicates across shards were redrawn, as the unsharded run did.
    let m = manifest(sharded.path());
    let entry = &m["datasets"]["truth_num=3+action_num=3+valid_truth_num=1"];
    assert_eq!(
        entry["counts"]["duplicates_rejected"],
        manifest(whole.path())["datasets"]["truth_num=3+action_num=3+valid_truth_num=1"]["counts"]
            ["duplicates_rejected"]
    );
    assert_eq!(entry["merged_shards"], 3);
}

#[test]
fn merge_names_missing_shards() {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), &["--shard", "1/3"]).ok();
    TestCommand::new()
        .args(["merge", "--out"])
        .arg(dir.path())
        .expect_code(1)
        .stderr_contains("shards 0/3, 2/3 are missing");
}

#[test]
fn an_interrupted_run_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), &[]).ok();
    let path = dataset(dir.path());
    let full = std::fs::read(&path).unwrap();
    // Cut mid-line, as a kill -9 during a write would (the manifest then
    // still says "in_progress": a finished file cut short is damage).
    let manifest_path = dir.path().join("clinic/manifest.json");
    let finished = std::fs::read_to_string(&manifest_path).unwrap();
    let interrupted = finished.replace("\"complete\"", "\"in_progress\"");
    assert_ne!(finished, interrupted);
    for cut in [full.len() / 3 + 17, 5, full.len() - 1] {
        std::fs::write(&path, &full[..cut]).unwrap();
        std::fs::write(&manifest_path, &interrupted).unwrap();
        generate(dir.path(), &[]).ok();
        assert!(
            std::fs::read(&path).unwrap() == full,
            "resume after {cut} bytes differs"
        );
    }
    // A sharded run resumes the same way.
    let shards = tempfile::tempdir().unwrap();
    generate(shards.path(), &["--shard", "0/2"]).ok();
    let shard = shards
        .path()
        .join("clinic/shards/truth_num=3+action_num=3+valid_truth_num=1/shard-0-of-2.jsonl");
    let whole = std::fs::read(&shard).unwrap();
    let shard_manifest = shard.with_file_name("shard-0-of-2.manifest.json");
    let finished = std::fs::read_to_string(&shard_manifest).unwrap();
    std::fs::write(
        &shard_manifest,
        finished.replace("\"complete\"", "\"in_progress\""),
    )
    .unwrap();
    std::fs::write(&shard, &whole[..whole.len() / 2 + 3]).unwrap();
    generate(shards.path(), &["--shard", "0/2"]).ok();
    assert!(std::fs::read(&shard).unwrap() == whole);
}

#[test]
fn a_longer_run_extends_a_shorter_one() {
    let short = tempfile::tempdir().unwrap();
    let long = tempfile::tempdir().unwrap();
    generate(short.path(), &["-n", "40"]).ok();
    generate(short.path(), &[]).ok();
    generate(long.path(), &[]).ok();
    assert!(
        std::fs::read(dataset(short.path())).unwrap()
            == std::fs::read(dataset(long.path())).unwrap()
    );
}

#[test]
fn an_existing_dataset_is_not_overwritten_silently() {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), &[]).ok();
    let before = std::fs::read(dataset(dir.path())).unwrap();
    generate(dir.path(), &[]).ok().stderr_contains("up to date");
    generate(dir.path(), &["--seed", "9"])
        .expect_code(1)
        .stderr_contains("--seed")
        .stderr_contains("--force");
    generate(dir.path(), &["-n", "20"])
        .expect_code(1)
        .stderr_contains("more than `-n 20`");
    assert!(std::fs::read(dataset(dir.path())).unwrap() == before);
    generate(dir.path(), &["--seed", "9", "--force"]).ok();
    assert!(std::fs::read(dataset(dir.path())).unwrap() != before);
}

#[test]
fn infeasible_requests_exit_1_with_the_parameter_to_change() {
    let dir = tempfile::tempdir().unwrap();
    // Wrong whatever the domain: refused as the flags are read (exit 2).
    for (args, parameter) in [
        (&["--actions", "0"][..], "--actions"),
        (&["--valid", "3"], "--valid"),
    ] {
        generate(dir.path(), args)
            .expect_code(2)
            .stderr_contains(parameter);
    }
    let cases: [(&[&str], &str); 4] = [
        (&["--truths", "9"], "--truths"),
        (&["--actions", "9"], "--actions"),
        (&["-n", "100000000"], "-n"),
        (&["--truths", "2", "--actions", "1", "-n", "60"], "-n"),
    ];
    for (args, parameter) in cases {
        let started = std::time::Instant::now();
        generate(dir.path(), args)
            .expect_code(1)
            .stderr_contains(parameter)
            .stderr_contains("help");
        // Generous: a bounded search, not a hang.
        assert!(started.elapsed().as_secs() < 20, "{args:?} took too long");
    }
    let mut cmd = TestCommand::new();
    cmd.args(["generate", "--domain", "no-such-domain", "--out"])
        .arg(dir.path())
        .expect_code(1);
}

/// Golden bytes: the first instances of the clinic fixture, rendered
/// without labels. A change here changes every dataset: make it on
/// purpose (new sampling, new rand/rand_chacha) and bump the generator
/// version with it, so that old files are not resumed by the new code.
#[test]
fn rendered_instances_are_stable() {
    use kumo_gen::dataset::record::render;
    use kumo_gen::synth::{Dedup, Params, Stats, Synthesizer};
    let domain = clinic();
    let synth = Synthesizer::new(&domain, Params::new(4, 4, 1)).unwrap();
    let instances = synth
        .generate(0..20, &mut Dedup::new(), &mut Stats::default())
        .unwrap();
    let mut bytes = Vec::new();
    for instance in &instances {
        bytes.extend(render(&domain, instance, None, None));
        bytes.push(b'\n');
    }
    let first =
        String::from_utf8(bytes[..bytes.iter().position(|&b| b == b'\n').unwrap()].to_vec())
            .unwrap();
    assert_eq!(first, GOLDEN_FIRST_LINE);
    assert_eq!(kumo_gen::fnv::fnv1a_hex(&bytes), GOLDEN_HASH);
}

const GOLDEN_FIRST_LINE: &str = r#"{"truths":["Measles","Migraine","Mumps","Gout"],"actions":["Rash check","Swab","Throat exam","Headache diary"],"observations":{"Rash check":"rash","Swab":"negative","Throat exam":"swollen","Headache diary":"frequent"},"seed":0,"valid_truth":"Gout","structure":{"truth_degrees":[3,2,2,1],"action_degrees":[3,2,2,1]}}"#;
const GOLDEN_HASH: &str = "fa95e760e1939ff7";

/// A long run with stderr to a file says up front what it expects, from
/// a sample of its first instances; a tiny run says nothing of the kind.
/// (The long run is stopped once the note is there.) 50 000 instances on
/// one thread project to about 9 minutes on the project's machine, so
/// the run is long (over the minute the note needs) on a machine up to
/// about nine times faster; 5 000 was under a minute there.
#[test]
fn a_long_run_says_up_front_what_it_expects() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stderr.log");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kumo-gen"))
        .current_dir(root())
        .args(["--domain", "car-identification", "--truths", "12"])
        .args(["--actions", "16", "-n", "50000", "--threads", "1"])
        .args(["--no-sft", "--books", "none", "--out"])
        .arg(dir.path().join("out"))
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let note = loop {
        let text = std::fs::read_to_string(&log).unwrap();
        if let Some(line) = text
            .lines()
            .find(|l| l.starts_with("note: car-identification"))
        {
            break Some(line.to_string());
        }
        if started.elapsed() > std::time::Duration::from_secs(300)
            || child.try_wait().unwrap().is_some()
        {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let _ = child.kill();
    let _ = child.wait();
    let note = note.expect("a long run prints its forecast");
    assert!(
        note.starts_with("note: car-identification 12x16: about ")
            && note.contains(" for 50000 instances on 1 thread (from the first "),
        "{note}"
    );

    let tiny = dir.path().join("tiny");
    let output = generate_tiny(&tiny, 20, &[]).output().unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("(from the first"), "{stderr}");
}
