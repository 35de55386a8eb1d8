//! `--exclude` and `kumo-gen overlap`: the two-seed overlap of the issue
//! reproduced and then excluded (same bytes at any thread count and with
//! shards + merge), KUMO's published MedicalEnv instances excluded, and
//! `overlap` against a brute-force comparison of the lines; the keys of a
//! written line equal the keys of the instance it records.

use crate::common::{TestCommand, json_lines, kumo_reference};
use kumo_gen::contamination::{Exclusion, KeyKind, instance_keys, recorded, recorded_keys};
use kumo_gen::dataset::record::{NameIndex, read_key, render};
use kumo_gen::domain::{Domain, Registry};
use kumo_gen::synth::{Dedup, Key, Params, Stats, Synthesizer, fixture};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

const SETTING_4X6: &str = "truth_num=4+action_num=6+valid_truth_num=1.jsonl";

fn run(args: &[&str]) -> TestCommand {
    let mut command = TestCommand::new();
    command.args(args);
    command
}

/// `generate --no-labels` (labels do not change which instances exist).
fn generate(domain: &str, seed: u64, n: u64, out: &Path, extra: &[&str]) -> PathBuf {
    let (seed, n) = (seed.to_string(), n.to_string());
    let mut args = vec![
        "generate",
        "--domain",
        domain,
        "--seed",
        &seed,
        "-n",
        &n,
        "--no-labels",
        "--no-sft",
        "--books",
        "none",
        "--out",
    ];
    let out_text = out.display().to_string();
    args.push(&out_text);
    args.extend_from_slice(extra);
    run(&args).ok();
    out.join(domain).join(SETTING_4X6)
}

/// An independent key of a line: sorted truths, sorted valid truths and
/// the observed state of each action (by the domain), or without states.
fn brute_key(domain: &Domain, line: &Value, exact: bool) -> String {
    let mut truths: Vec<String> = line["truths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    truths.sort();
    let valid = match &line["valid_truth"] {
        Value::String(s) => vec![s.clone()],
        other => other
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect(),
    };
    let mut pairs: Vec<String> = line["observations"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(action, seen)| {
            if !exact {
                return action.clone();
            }
            let a = domain.actions.iter().find(|a| &a.name == action).unwrap();
            format!("{action}={:?}", a.observed_state(seen))
        })
        .collect();
    pairs.sort();
    format!("{truths:?}|{valid:?}|{pairs:?}")
}

/// Brute force: lines of `b` whose key some line of `a` has, and the
/// distinct shared keys.
fn brute_overlap(domain: &Domain, a: &Path, b: &Path, exact: bool) -> (u64, u64) {
    let a_keys: BTreeSet<String> = json_lines(a)
        .iter()
        .map(|l| brute_key(domain, l, exact))
        .collect();
    let b_keys: Vec<String> = json_lines(b)
        .iter()
        .map(|l| brute_key(domain, l, exact))
        .collect();
    let b_in_a = b_keys.iter().filter(|k| a_keys.contains(*k)).count() as u64;
    let shared = b_keys
        .iter()
        .filter(|k| a_keys.contains(*k))
        .collect::<BTreeSet<_>>()
        .len() as u64;
    (b_in_a, shared)
}

fn overlap_json(a: &Path, b: &Path, key: &str) -> Value {
    let out = TestCommand::new()
        .args(["overlap", "--json", "--key", key])
        .arg(a)
        .arg(b)
        .run();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn load(name: &str) -> Domain {
    Registry::new(None).load(name).unwrap().0
}

#[test]
fn historical_battle_two_seed_overlap_is_reproduced_then_excluded() {
    let domain = load("historical-battle");
    let dir = tempfile::tempdir().unwrap();
    let train = generate(
        "historical-battle",
        1,
        20_000,
        &dir.path().join("train"),
        &[],
    );
    let test = generate("historical-battle", 0, 2_000, &dir.path().join("test"), &[]);
    // The figures, by an independent comparison and by `overlap`.
    let (b_in_a, shared) = brute_overlap(&domain, &train, &test, true);
    assert_eq!((b_in_a, shared), (852, 852));
    let report = overlap_json(&train, &test, "exact");
    assert_eq!(report["b"]["shared_lines"], 852);
    assert_eq!(report["shared"], 852);
    let (context_b_in_a, _) = brute_overlap(&domain, &train, &test, false);
    assert_eq!(context_b_in_a, 2_000);
    assert_eq!(
        overlap_json(&train, &test, "context")["b"]["shared_lines"],
        2_000
    );

    // Excluded: nothing shared, and the same bytes with 1 and 2 threads.
    let train_dir = dir.path().join("train");
    let exclude = ["--exclude", train_dir.to_str().unwrap()];
    let one_args = [&exclude[..], &["--threads", "1"]].concat();
    let one = generate(
        "historical-battle",
        0,
        2_000,
        &dir.path().join("one"),
        &one_args,
    );
    let two_args = [&exclude[..], &["--threads", "2"]].concat();
    let two = generate(
        "historical-battle",
        0,
        2_000,
        &dir.path().join("two"),
        &two_args,
    );
    assert_eq!(brute_overlap(&domain, &train, &one, true), (0, 0));
    let bytes = std::fs::read(&one).unwrap();
    assert_eq!(bytes, std::fs::read(&two).unwrap());
    TestCommand::new()
        .args(["overlap", "--fail-on-overlap"])
        .arg(&train)
        .arg(&one)
        .expect_code(0);
    TestCommand::new()
        .args(["overlap", "--fail-on-overlap"])
        .arg(&train)
        .arg(&test)
        .expect_code(1);

    // Excluding every context of the training set leaves (almost) nothing:
    // refused up front, naming how many remain.
    let refused = [&exclude[..], &["--exclude-key", "context"]].concat();
    let context_out = dir.path().join("context").display().to_string();
    run(&[
        &[
            "generate",
            "--domain",
            "historical-battle",
            "-n",
            "2000",
            "--out",
            &context_out,
        ][..],
        &refused[..],
    ]
    .concat())
    .expect_code(1)
    .stderr_contains("distinct instances");

    // Shards + merge with the same `--exclude`: the same bytes.
    let sharded = dir.path().join("sharded");
    for k in ["0/2", "1/2"] {
        let args = [&exclude[..], &["--shard", k]].concat();
        generate("historical-battle", 0, 2_000, &sharded, &args);
    }
    let sharded_text = sharded.display().to_string();
    // A merge without the shards' `--exclude` is refused.
    run(&[
        "merge",
        "--no-sft",
        "--books",
        "none",
        "--out",
        &sharded_text,
    ])
    .expect_code(1)
    .stderr_contains("--exclude");
    let merge = [
        &[
            "merge",
            "--no-sft",
            "--books",
            "none",
            "--out",
            &sharded_text,
        ][..],
        &exclude[..],
    ]
    .concat();
    run(&merge).ok();
    assert_eq!(
        std::fs::read(sharded.join("historical-battle").join(SETTING_4X6)).unwrap(),
        bytes
    );

    // The manifest records the excluded set; a resume without it is refused.
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("one/historical-battle/manifest.json")).unwrap(),
    )
    .unwrap();
    let set =
        &manifest["datasets"][SETTING_4X6.trim_end_matches(".jsonl")]["parameters"]["exclude"][0];
    assert_eq!(
        (set["key"].as_str(), set["instances"].as_u64()),
        (Some("exact"), Some(20_000))
    );
    let out = dir.path().join("one").display().to_string();
    run(&[
        "generate",
        "--domain",
        "historical-battle",
        "-n",
        "2100",
        "--no-labels",
        "--no-sft",
        "--books",
        "none",
        "--out",
        &out,
    ])
    .expect_code(1)
    .stderr_contains("--exclude");
}

#[test]
fn kumo_medical_instances_are_excluded_from_a_medical_4x6_run() {
    let Some(reference) = kumo_reference() else {
        return;
    };
    let kumo = reference.join("instances/MedicalEnv").join(SETTING_4X6);
    let domain = load("medical");
    let names = NameIndex::new(&domain);
    // Every published instance is recognised: its dedup key, read by the
    // writers' own reader, is excluded under both keys.
    for kind in [KeyKind::Exact, KeyKind::Context] {
        let exclusion = Exclusion::read(&domain, std::slice::from_ref(&kumo), kind).unwrap();
        assert_eq!(exclusion.sets()[0].instances, 50);
        for line in std::fs::read_to_string(&kumo).unwrap().lines() {
            let (_, key) = read_key(&domain, &names, line.as_bytes()).unwrap();
            assert!(exclusion.excludes(&key), "{kind:?}: {line}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let kumo_text = kumo.display().to_string();
    let args = ["--exclude", &kumo_text, "--exclude-key", "context"];
    let made = generate("medical", 0, 500, dir.path(), &args);
    assert_eq!(brute_overlap(&domain, &kumo, &made, false), (0, 0));
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("medical/manifest.json")).unwrap(),
    )
    .unwrap();
    let set =
        &manifest["datasets"][SETTING_4X6.trim_end_matches(".jsonl")]["parameters"]["exclude"][0];
    assert_eq!(
        set["digest"].as_str().unwrap(),
        kumo_gen::files::digest(&kumo).unwrap()
    );
    assert_eq!(set["key"], "context");
}

#[test]
fn overlap_equals_a_brute_force_comparison_on_small_sets() {
    let domain = load("historical-battle");
    let dir = tempfile::tempdir().unwrap();
    let mut files = HashMap::new();
    for (seed, n) in [(3u64, 300u64), (4, 120), (5, 60)] {
        let path = generate(
            "historical-battle",
            seed,
            n,
            &dir.path().join(seed.to_string()),
            &[],
        );
        files.insert(seed, path);
    }
    for (a, b) in [(3, 4), (4, 3), (3, 5), (5, 4), (3, 3)] {
        for (key, exact) in [("exact", true), ("context", false)] {
            let (b_in_a, shared) = brute_overlap(&domain, &files[&a], &files[&b], exact);
            let (a_in_b, _) = brute_overlap(&domain, &files[&b], &files[&a], exact);
            let report = overlap_json(&files[&a], &files[&b], key);
            assert_eq!(report["b"]["shared_lines"], b_in_a, "{a} {b} {key}");
            assert_eq!(report["a"]["shared_lines"], a_in_b, "{a} {b} {key}");
            assert_eq!(report["shared"], shared, "{a} {b} {key}");
        }
    }
    // A line that is no instance is an error naming the file and line.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"truths\": []}\n").unwrap();
    TestCommand::new()
        .args(["overlap"])
        .arg(&files[&3])
        .arg(&bad)
        .expect_code(1)
        .stderr_contains("bad.jsonl` line 1");
}

#[test]
fn a_random_seed_never_appears_in_the_public_outputs_and_verifies_later() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().display().to_string();
    let base = [
        "generate", "--domain", "medical", "-n", "60", "--seed", "random", "--out", &out,
    ];
    run(&[&base[..], &["--hf", "--steps"]].concat()).ok();
    let secret_dir = dir.path().join("SECRET-seeds/medical");
    let seed_file = secret_dir.join(SETTING_4X6.replace(".jsonl", ".json"));
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(&seed_file).unwrap()).unwrap();
    let seed = record["seed"].as_u64().unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&seed_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // No public file holds the seed, in decimal or hex.
    let forms = [
        seed.to_string(),
        format!("{seed:x}"),
        format!("{seed:016x}"),
    ];
    let mut stack = vec![dir.path().to_path_buf()];
    let mut checked = 0;
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.starts_with(dir.path().join("SECRET-seeds")) {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
                for form in &forms {
                    assert!(
                        !text.contains(form.as_str()),
                        "{} holds the seed",
                        p.display()
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 60, "{checked} files checked");
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("medical/manifest.json")).unwrap(),
    )
    .unwrap();
    let parameters = &manifest["datasets"][SETTING_4X6.trim_end_matches(".jsonl")]["parameters"];
    assert_eq!(
        (
            parameters["seed"].as_u64(),
            parameters["secret_seed"].as_bool()
        ),
        (Some(0), Some(true))
    );

    // The seed file proves the dataset; an edited dataset fails.
    let seed_text = seed_file.display().to_string();
    run(&["verify", "--seed-file", &seed_text])
        .ok()
        .stdout_contains("verified");
    let dataset = dir.path().join("medical").join(SETTING_4X6);
    let text = std::fs::read_to_string(&dataset).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.swap(3, 4);
    let edited = dir.path().join("edited.jsonl");
    std::fs::write(&edited, lines.join("\n") + "\n").unwrap();
    let edited_text = edited.display().to_string();
    run(&["verify", "--seed-file", &seed_text, &edited_text])
        .expect_code(1)
        .stderr_contains("line 4 differs");
    // A second random seed never continues the dataset, and is not sharded.
    run(&base).expect_code(1).stderr_contains("never continues");
    let other = dir.path().join("other").display().to_string();
    run(&[
        "generate", "--domain", "medical", "--seed", "random", "--shard", "0/2", "--out", &other,
    ])
    .expect_code(1)
    .stderr_contains("cannot be sharded");
}

#[test]
fn split_parts_share_no_context_and_do_not_depend_on_threads() {
    let domain = load("medical");
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(threads);
        let args = ["--split", "train=0.8,test=0.2", "--threads", threads];
        generate("medical", 0, 250, &out, &args);
        runs.push(out);
    }
    let part = |run: &Path, name: &str| run.join(name).join("medical").join(SETTING_4X6);
    for name in ["train", "test"] {
        assert_eq!(
            std::fs::read(part(&runs[0], name)).unwrap(),
            std::fs::read(part(&runs[1], name)).unwrap()
        );
    }
    assert_eq!(json_lines(&part(&runs[0], "train")).len(), 200);
    assert_eq!(json_lines(&part(&runs[0], "test")).len(), 50);
    let (train, test) = (part(&runs[0], "train"), part(&runs[0], "test"));
    assert_eq!(brute_overlap(&domain, &train, &test, false), (0, 0));
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(runs[0].join("test/medical/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        manifest["datasets"][SETTING_4X6.trim_end_matches(".jsonl")]["parameters"]["split"],
        "test of train=0.8,test=0.2"
    );
    // A secret-seed split verifies part by part.
    let secret = dir.path().join("secret");
    generate(
        "medical",
        0,
        100,
        &secret,
        &["--split", "a=0.5,b=0.5", "--seed", "random"],
    );
    for name in ["a", "b"] {
        let seed_file = secret
            .join(name)
            .join("SECRET-seeds/medical")
            .join(SETTING_4X6.replace(".jsonl", ".json"));
        run(&["verify", "--seed-file", seed_file.to_str().unwrap()]).ok();
    }
    // The same run again finds both parts up to date.
    generate(
        "medical",
        0,
        250,
        &runs[0],
        &["--split", "train=0.8,test=0.2"],
    );
    assert_eq!(
        std::fs::read(&train).unwrap(),
        std::fs::read(part(&runs[1], "train")).unwrap()
    );
}

#[test]
fn recorded_lines_and_generated_instances_share_keys() {
    let domain = fixture::random(5, 12, 10, 0.3);
    let synth = Synthesizer::new(&domain, Params::new(4, 5, 1)).unwrap();
    let instances = synth
        .generate(0..30, &mut Dedup::new(), &mut Stats::default())
        .unwrap();
    for instance in &instances {
        let line = render(&domain, instance, None, None);
        let recorded = recorded::parse_line(&line).unwrap();
        let from_line = recorded_keys(&recorded, Some(&domain));
        let from_key = instance_keys(&domain, &Key::of(instance));
        assert_eq!(from_line, from_key);
    }
    let a = instance_keys(&domain, &Key::of(&instances[0]));
    let b = instance_keys(&domain, &Key::of(&instances[1]));
    assert_ne!(a.exact, b.exact);
    assert_eq!(a.get(KeyKind::Context), a.context);
}
