//! Rendered files: HF rows and the HF export directory, the KUMO book
//! heuristic, the `check-books` command, KUMO's published instances and
//! synthesized ones rendered, checked and replayed end to end.

use std::path::Path;

use kumo_gen::domain::Domain;
use kumo_gen::render::hf::{Card, CardConfig, config_name, dataset_card, hf_row, hf_sft_row};
use kumo_gen::render::{
    BookProblem, Claim, OwnedTask, RenderOptions, Renderer, Templates, check_book, check_kumo_book,
    replay_sft,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use crate::common::root;
use crate::render::{fixed, random_task, simple_golden, tiny};

#[test]
fn hf_rows_have_one_type_per_column() {
    let d = tiny();
    let task = fixed();
    let view = task.view(&d);
    let row = hf_row(&view, "s", &[0, 1], Some("Switch"), Some(1.5), "book");
    assert_eq!(row["id"], "tiny/s/7");
    assert_eq!(
        (row["domain"].as_str(), row["setting"].as_str()),
        (Some("tiny"), Some("s"))
    );
    for obs in row["observations"].as_array().unwrap() {
        assert!(obs["action"].is_string() && obs["observation"].is_string());
    }
    assert_eq!(row["observations"][1]["observation"], "7.25");
    assert_eq!(row["valid_truths"], json!(["Switch"]));
    assert_eq!(row["optimal_first_action"], "Continuity check");
    assert_eq!(row["golden_actions"], 2);
    assert_eq!(row["golden_trajectory"][0], "Continuity check");
    assert_eq!(row["golden_answer"], "Switch");
    let none = hf_row(&view, "s", &[], None, None, "book");
    assert!(none["optimal_first_action"].is_null() && none["expected_steps"].is_null());

    let card = dataset_card(&Card {
        pretty_name: "KUMO tiny".into(),
        license: "apache-2.0".into(),
        generator: "kumo-gen 0.1.0".into(),
        configs: vec![CardConfig {
            name: config_name("tiny", 4, 3, 1),
            kind: "instances".into(),
            split: "train".into(),
            files: vec!["data/tiny/truth_num=4+action_num=3+valid_truth_num=1.jsonl".into()],
            rows: 10,
        }],
        parameters: vec![("seed".into(), "0".into())],
        domains: vec![("tiny".into(), "Tiny test domain".into())],
        labels: Vec::new(),
    });
    assert!(card.starts_with("---\nlicense: \"apache-2.0\"\n"), "{card}");
    assert!(card.contains(
        "configs:\n- config_name: \"tiny-t4-a3-v1\"\n  default: true\n  data_files:\n  - split: train\n    path:\n    - \"data/tiny/truth_num=4+action_num=3+valid_truth_num=1.jsonl\"\n---\n"
    ), "{card}");
}

#[test]
fn kumo_heuristic_finds_unstated_facts() {
    let d = tiny();
    let task = fixed();
    let view = task.view(&d);
    let book = "\
# Guide

## Checks

### 1. Continuity check
- **Open**: rules out Lamp.
- **Closed**: confirms the Fuse is blown; rules out the Relay.

**Voltage**
- Readings of 0.0-5.0 exclude Switch.
- 5-12: eliminates Fuse.

### Clicks
Between 0 and 2 clicks: this is consistent with Relay.
- 3 to 10 clicks: rules out Switch.
- 3 to 10 clicks do not rule out Lamp.
";
    let check = check_kumo_book(book, &view);
    assert_eq!(check.facts, 6);
    assert_eq!(
        check.missing,
        vec![
            ("Continuity check".into(), "closed".into(), "Fuse".into()),
            ("Clicks".into(), "[0, 2]".into(), "Relay".into()),
        ]
    );
    assert_eq!(check.confirmations.len(), 2);
    assert_eq!(
        check.invented,
        vec![(15, "Clicks".into(), "[3, 10]".into(), "Switch".into())]
    );
}

fn write_dataset(dir: &Path, d: &Domain, n: usize) {
    let templates = Templates::shipped().unwrap();
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let setting = "truth_num=4+action_num=3+valid_truth_num=1";
    let books = dir.join("knowledge_book").join(setting);
    std::fs::create_dir_all(&books).unwrap();
    let mut lines = String::new();
    for seed in 0..n {
        let (mut task, _) = random_task(d, &mut rng, 4, 3);
        task.seed = seed as u64;
        let view = task.view(d);
        let observations: serde_json::Map<String, Value> = (0..task.actions.len())
            .map(|p| {
                let name = d.actions[task.actions[p]].name.clone();
                let obs = match task.values[p] {
                    Some(v) => json!(v),
                    None => json!(view.observation_text(p)),
                };
                (name, obs)
            })
            .collect();
        let line = json!({
            "truths": task.truths.iter().map(|&t| &d.truths[t]).collect::<Vec<_>>(),
            "actions": task.actions.iter().map(|&a| &d.actions[a].name).collect::<Vec<_>>(),
            "observations": observations,
            "seed": seed,
            "valid_truth": d.truths[task.valid[0]],
        });
        assert_eq!(kumo_gen::game::task_from_json(d, &line).unwrap(), task);
        lines.push_str(&format!("{line}\n"));
        std::fs::write(
            books.join(format!("seed={seed}.txt")),
            renderer.book(&view).unwrap(),
        )
        .unwrap();
    }
    std::fs::write(dir.join(format!("{setting}.jsonl")), lines).unwrap();
    std::fs::write(dir.join("manifest.json"), "{}").unwrap();
}

#[test]
fn check_books_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = tiny();
    write_dataset(dir.path(), &d, 20);
    let domain = root().join("tests/fixtures/ok/tiny.yaml");
    let run = |format: &str, code: i32| {
        crate::common::TestCommand::new()
            .arg("check-books")
            .arg(dir.path())
            .arg("--domain")
            .arg(&domain)
            .args(["--format", format])
            .expect_code(code)
    };
    run("auto", 0).stdout_contains("20 books checked (exact checker): 20 passed, 0 failed");
    run("kumo", 0).stdout_contains("0 of ");
    let book = dir
        .path()
        .join("knowledge_book/truth_num=4+action_num=3+valid_truth_num=1/seed=3.txt");
    let text = std::fs::read_to_string(&book).unwrap();
    std::fs::write(&book, text.replacen(" rules out ", " confirms ", 1)).unwrap();
    run("auto", 1)
        .stdout_contains("20 books checked (exact checker): 19 passed, 1 failed")
        .stderr_contains("seed=3.txt");
}

#[test]
fn truth_names_inside_action_names_are_not_claims() {
    let yaml = "\
name: overlap
title: Overlap
truth_noun: fault
action_noun: check
goal: find the fault
truths: [Lamp, Fuse]
actions:
  - name: Lamp tester
    type: str
    states:
      lit: [Fuse]
      dark: [Lamp]
  - name: Fuse box
    type: str
    states:
      ok: [Fuse]
      blown: []
";
    let (d, _) = Domain::from_yaml("overlap.yaml", yaml).unwrap();
    let task = OwnedTask {
        truths: vec![0, 1],
        valid: vec![0],
        actions: vec![0, 1],
        observed: vec![0, 0],
        values: vec![None, None],
        seed: 0,
        golden: None,
    };
    let view = task.view(&d);
    let templates = Templates::shipped().unwrap();
    let book = Renderer::new(&templates, RenderOptions::default())
        .book(&view)
        .unwrap();
    assert!(book.contains("### Lamp tester"));
    assert!(
        check_book(&book, &view).is_ok(),
        "{:?}",
        check_book(&book, &view)
    );
    // A heading is prose, not a claim; a rule in a rule's form is one.
    let heading = book.replace("### Lamp tester", "### Lamp tester (for a Lamp or a Fuse)");
    assert!(check_book(&heading, &view).is_ok());
    let bad = book.replace(
        "### Lamp tester\n",
        "### Lamp tester\n\nLamp tester: observing `lit` confirms Lamp.\n",
    );
    assert_ne!(bad, book);
    let check = check_book(&bad, &view);
    assert!(
        matches!(&check.problems[..], [BookProblem::Unverified { claim: Claim::Rule { action }, .. }] if action == "Lamp tester"),
        "{check:?}"
    );
}

#[test]
fn kumo_published_medical_instances_render_check_and_replay() {
    let Some(reference) = crate::common::kumo_reference() else {
        return;
    };
    let (d, _) = kumo_gen::domain::Registry::default()
        .load("medical")
        .unwrap();
    let templates = Templates::shipped().unwrap();
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let mut count = 0;
    for setting in [
        "truth_num=4+action_num=6+valid_truth_num=1",
        "truth_num=12+action_num=16+valid_truth_num=1",
    ] {
        let file = reference.join(format!("instances/MedicalEnv/{setting}.jsonl"));
        for line in std::fs::read_to_string(file).unwrap().lines() {
            let task =
                kumo_gen::game::task_from_json(&d, &serde_json::from_str(line).unwrap()).unwrap();
            let view = task.view(&d);
            let golden = simple_golden(&d, &task);
            let out = renderer.render(&view, &golden).unwrap();
            let check = check_book(&out.book, &view);
            assert!(check.is_ok(), "seed {}: {:?}", task.seed, check.problems);
            let kumo = check_kumo_book(&out.book, &view);
            assert!(kumo.is_ok(), "{}\n{kumo:?}", out.book);
            assert_eq!(replay_sft(&view, &out.sft_value()), Ok(task.valid[0]));
            count += 1;
        }
    }
    assert_eq!(count, 100);
}

/// Writes a small HF export (instances + SFT configs and the card) of
/// random tiny instances; with `KUMO_GEN_HF_DIR=DIR` it is written there,
/// for loading with Python `datasets` by hand:
/// `datasets.load_dataset(DIR, "tiny-t4-a3-v1")`.
#[test]
fn hf_export_directory() {
    let keep = std::env::var_os("KUMO_GEN_HF_DIR");
    let temp = tempfile::tempdir().unwrap();
    let dir = keep
        .as_ref()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| temp.path().to_path_buf());
    let d = tiny();
    let templates = Templates::shipped().unwrap();
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let setting = "truth_num=4+action_num=3+valid_truth_num=1";
    let (mut rows, mut sft) = (String::new(), String::new());
    for seed in 0..30 {
        let (mut task, golden) = random_task(&d, &mut rng, 4, 3);
        task.seed = seed;
        let view = task.view(&d);
        let out = renderer.render(&view, &golden).unwrap();
        let steps = (seed % 3 != 0).then_some(1.25 + seed as f64);
        rows.push_str(&format!(
            "{}\n",
            hf_row(&view, setting, &golden, None, steps, &out.book)
        ));
        let record: serde_json::Value = serde_json::from_str(&out.sft).unwrap();
        let sft_row = hf_sft_row("tiny", setting, seed, &record);
        let messages = sft_row["messages"].as_array().unwrap();
        assert!(messages.iter().all(|m| m["weight"].is_u64()));
        sft.push_str(&format!("{sft_row}\n"));
    }
    let data = dir.join("data/tiny");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join(format!("{setting}.jsonl")), rows).unwrap();
    std::fs::write(data.join(format!("{setting}.sft.jsonl")), sft).unwrap();
    let name = config_name("tiny", 4, 3, 1);
    let card = dataset_card(&Card {
        pretty_name: "KUMO tiny".into(),
        license: "apache-2.0".into(),
        generator: "kumo-gen test".into(),
        configs: vec![
            CardConfig {
                name: name.clone(),
                kind: "instances".into(),
                split: "train".into(),
                files: vec![format!("data/tiny/{setting}.jsonl")],
                rows: 30,
            },
            CardConfig {
                name: format!("{name}-sft"),
                kind: "sft chat".into(),
                split: "train".into(),
                files: vec![format!("data/tiny/{setting}.sft.jsonl")],
                rows: 30,
            },
        ],
        parameters: vec![("truths".into(), "4".into())],
        domains: vec![("tiny".into(), "Tiny test domain".into())],
        labels: Vec::new(),
    });
    std::fs::write(dir.join("README.md"), card).unwrap();
    // Every line of a config has the same keys and JSON types.
    let shape = |v: &Value| -> Vec<(String, &'static str)> {
        v.as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                let t = match v {
                    Value::Null => "null",
                    Value::String(_) => "string",
                    Value::Number(_) => "number",
                    Value::Array(_) => "array",
                    _ => "other",
                };
                (k.clone(), t)
            })
            .collect()
    };
    let text = std::fs::read_to_string(data.join(format!("{setting}.jsonl"))).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let same = shape(&v)
            .iter()
            .zip(shape(&first))
            .all(|((k, t), (k0, t0))| *k == k0 && (*t == t0 || *t == "null" || t0 == "null"));
        assert!(same, "{line}");
    }
}

#[test]
fn synthesized_instances_render_check_and_replay() {
    use kumo_gen::synth::{Params, Synthesizer};
    let templates = Templates::shipped().unwrap();
    let renderer = Renderer::new(&templates, RenderOptions::default());
    for (name, nt, na) in [
        ("medical", 12, 16),
        ("mineral-lab", 12, 16),
        ("medical", 4, 6),
    ] {
        let (d, _) = kumo_gen::domain::Registry::default().load(name).unwrap();
        let synth = Synthesizer::new(&d, Params::new(nt, na, 1)).unwrap();
        for index in 0..20 {
            let candidate = synth.candidate(index).unwrap();
            let task = OwnedTask::from_instance(&candidate.instance);
            let view = task.view(&d);
            view.validate().unwrap();
            let golden = simple_golden(&d, &task);
            let out = renderer.render(&view, &golden).unwrap();
            let check = check_book(&out.book, &view);
            assert!(check.is_ok(), "{name} #{index}: {:?}", check.problems);
            assert_eq!(replay_sft(&view, &out.sft_value()), Ok(task.valid[0]));
        }
    }
}

/// Truths whose names make prose lists ambiguous: `Flu and Cold` beside
/// `Flu` and `Cold`, and a truth called `nothing`.
const AMBIGUOUS_NAMES: &str = "name: ambiguous
truths: [Flu, Cold, Flu and Cold, nothing, Measles]
actions:
  - name: Swab
    type: str
    states:
      positive: [Measles]
      negative: [Flu, Cold, Flu and Cold]
  - name: Fever
    type: str
    states:
      high: [nothing, Cold]
      low: [Flu]
      none: []
  - name: Rash
    type: str
    states:
      yes: [Flu and Cold]
      no: [Measles, nothing]
";

#[test]
fn books_of_ambiguous_truth_names_quote_them_and_check_books_rejects_the_two_way_reading() {
    let dir = tempfile::tempdir().unwrap();
    let domain_path = dir.path().join("ambiguous.yaml");
    std::fs::write(&domain_path, AMBIGUOUS_NAMES).unwrap();
    let out = dir.path().join("out");
    let made = crate::common::kumo_gen()
        .args(["generate", "--domain"])
        .arg(&domain_path)
        .args([
            "--truths",
            "5",
            "--actions",
            "3",
            "-n",
            "2",
            "--no-sft",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let books = out.join("ambiguous/knowledge_book/truth_num=5+action_num=3+valid_truth_num=1");
    let check = || {
        crate::common::kumo_gen()
            .args(["check-books", "--domain"])
            .arg(&domain_path)
            .arg(out.join("ambiguous"))
            .output()
            .unwrap()
    };
    let passed = check();
    assert_eq!(passed.status.code(), Some(0), "{passed:?}");
    let book_path = books.join("seed=0.txt");
    let book = std::fs::read_to_string(&book_path).unwrap();
    assert!(book.contains("rules out \"Flu and Cold\"."), "{book}");
    assert!(book.contains("\"nothing\""), "{book}");
    // Every rule sentence's list reads one way only.
    let names = ["Flu", "Cold", "Flu and Cold", "nothing", "Measles"];
    for line in book
        .lines()
        .filter(|l| l.contains(": observing ") && l.contains(" rules out "))
    {
        let list = line
            .split(" rules out ")
            .nth(1)
            .unwrap()
            .trim_end_matches('.');
        assert_eq!(
            kumo_gen::render::rule_list_parses(list, &names, true),
            1,
            "{line}"
        );
    }
    // The same book with the names unquoted reads two ways: rejected.
    std::fs::write(&book_path, book.replace('"', "")).unwrap();
    let failed = check();
    assert_eq!(failed.status.code(), Some(1), "{failed:?}");
}
