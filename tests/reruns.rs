//! Re-running commands in another order than the documents show: derived
//! files an earlier run wrote are kept while they match the dataset,
//! stale or damaged ones are rebuilt (never called up to date), and
//! `check-books` notices a missing book.

use std::path::{Path, PathBuf};

use crate::common::{Ran, TINY, TINY_SETTING, TestCommand, generate_tiny, kumo_gen};

const SETTING: &str = TINY_SETTING;

fn generate(out: &Path, n: u64, extra: &[&str]) -> Ran {
    generate_tiny(out, n, extra).run()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

struct Paths {
    sft: PathBuf,
    steps: PathBuf,
    hf: PathBuf,
    books: PathBuf,
}

fn paths(out: &Path) -> Paths {
    let domain = out.join("tiny");
    Paths {
        sft: domain.join(format!("sft/{SETTING}.jsonl")),
        steps: domain.join(format!("sft/{SETTING}.steps.jsonl")),
        hf: out.join(format!("hf/data/tiny/{SETTING}.jsonl")),
        books: domain.join(format!("knowledge_book/{SETTING}")),
    }
}

#[test]
fn a_rerun_without_the_optional_outputs_keeps_what_an_earlier_run_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    assert!(generate(out, 6, &["--hf", "--steps"]).status.success());
    let p = paths(out);
    let before: Vec<Vec<u8>> = [&p.sft, &p.steps, &p.hf]
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .collect();
    for extra in [&[][..], &["--no-sft"], &["--books", "none"]] {
        let again = generate(out, 6, extra);
        assert!(again.status.success(), "{}", stderr(&again));
        assert!(!stderr(&again).contains("removed"), "{}", stderr(&again));
        for (file, bytes) in [&p.sft, &p.steps, &p.hf].iter().zip(&before) {
            assert_eq!(&std::fs::read(file).unwrap(), bytes, "{}", file.display());
        }
        assert_eq!(std::fs::read_dir(&p.books).unwrap().count(), 6);
    }
    assert!(out.join("hf/README.md").is_file());
}

#[test]
fn a_derived_file_that_no_longer_matches_its_dataset_is_removed_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    assert!(generate(out, 4, &["--hf"]).status.success());
    let p = paths(out);
    // Extended without `--hf`: the old export would be silently wrong.
    let extended = generate(out, 7, &[]);
    assert!(extended.status.success());
    let said = stderr(&extended);
    assert!(!p.hf.exists());
    assert!(
        said.contains("note: removed stale")
            && said.contains(&p.hf.display().to_string())
            && said.contains("--hf"),
        "{said}"
    );
    assert_eq!(std::fs::read_dir(&p.books).unwrap().count(), 7);
    assert_eq!(
        std::fs::read_to_string(&p.sft).unwrap().lines().count(),
        7,
        "the files asked for follow the dataset"
    );
}

#[test]
fn a_truncated_or_edited_derived_file_is_rebuilt_not_called_up_to_date() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    assert!(generate(out, 5, &["--steps"]).status.success());
    let p = paths(out);
    let sft = std::fs::read(&p.sft).unwrap();
    let book = p.books.join("seed=0.txt");
    let book_text = std::fs::read(&book).unwrap();
    type Damage<'a> = (&'static str, Box<dyn Fn() + 'a>);
    let damages: [Damage; 4] = [
        (
            "truncated SFT",
            Box::new(|| std::fs::write(&p.sft, &sft[..sft.len() / 2]).unwrap()),
        ),
        (
            "edited book",
            Box::new(|| std::fs::write(&book, "edited\n").unwrap()),
        ),
        (
            "deleted book",
            Box::new(|| std::fs::remove_file(&book).unwrap()),
        ),
        (
            "deleted steps",
            Box::new(|| std::fs::remove_file(&p.steps).unwrap()),
        ),
    ];
    for (what, damage) in damages {
        damage();
        let again = generate(out, 5, &["--steps"]);
        assert!(again.status.success(), "{what}: {}", stderr(&again));
        let said = stderr(&again);
        assert!(
            !said.contains("SFT records are up to date"),
            "{what}: {said}"
        );
        assert_eq!(std::fs::read(&p.sft).unwrap(), sft, "{what}");
        assert_eq!(std::fs::read(&book).unwrap(), book_text, "{what}");
        assert!(p.steps.is_file(), "{what}");
    }
    let stamp = std::fs::read_to_string(out.join(format!("tiny/.{SETTING}.derived.json"))).unwrap();
    let stamp: serde_json::Value = serde_json::from_str(&stamp).unwrap();
    for kind in ["books", "sft", "steps"] {
        assert!(stamp["files"][kind].is_string(), "{stamp}");
    }
    let unchanged = generate(out, 5, &["--steps"]);
    let said = stderr(&unchanged);
    assert!(said.contains("SFT records are up to date"), "{said}");
}

#[test]
fn check_books_fails_when_a_book_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    assert!(generate(out, 4, &[]).status.success());
    let domain = out.join("tiny");
    let check = || {
        TestCommand::new()
            .args(["check-books", "--domain", TINY])
            .arg(&domain)
            .run()
    };
    assert_eq!(check().status.code(), Some(0));
    std::fs::remove_file(paths(out).books.join("seed=1.txt")).unwrap();
    let missing = check();
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("1 instances have no book file"),
        "{}",
        stderr(&missing)
    );
}

/// The manifest without what describes one run rather than the dataset:
/// wall-clock timings and how many lines were already there.
fn manifest_without_run_fields(out: &Path) -> serde_json::Value {
    let text = std::fs::read(out.join("tiny/manifest.json")).unwrap();
    let mut manifest: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let entry = &mut manifest["datasets"][SETTING];
    let entry = entry.as_object_mut().unwrap();
    entry.remove("timings").unwrap();
    entry["counts"]
        .as_object_mut()
        .unwrap()
        .remove("resumed_from")
        .unwrap();
    manifest
}

/// Cuts `file` mid-line after a third of its bytes and marks its manifest
/// `manifest` unfinished, as a `kill -9` during the write leaves them.
fn cut_as_a_kill_would(file: &Path, manifest: &Path) {
    let bytes = std::fs::read(file).unwrap();
    std::fs::write(file, &bytes[..bytes.len() / 3 + 7]).unwrap();
    let text = std::fs::read_to_string(manifest).unwrap();
    let unfinished = text.replace("\"complete\"", "\"in_progress\"");
    assert_ne!(text, unfinished);
    std::fs::write(manifest, unfinished).unwrap();
}

#[test]
fn a_resumed_or_extended_dataset_counts_its_work_like_an_uninterrupted_run() {
    let dir = tempfile::tempdir().unwrap();
    let only_dataset = ["--books", "none", "--no-sft"];
    let run = |out: &Path, n: u64, extra: &[&str]| {
        let output = generate(out, n, &[&only_dataset[..], extra].concat());
        assert!(output.status.success(), "{}", stderr(&output));
    };
    // The tiny domain has 20 distinct instances at 3x3: `-n 20` redraws
    // duplicates, so every counter is far from zero.
    let whole = dir.path().join("whole");
    run(&whole, 20, &[]);
    let want = manifest_without_run_fields(&whole);
    let counts = &want["datasets"][SETTING]["counts"];
    for counter in [
        "resamples",
        "unsat_samples",
        "sat_calls",
        "duplicates_rejected",
    ] {
        assert!(counts[counter].as_u64().unwrap() > 0, "{counter}: {counts}");
    }

    let extended = dir.path().join("extended");
    run(&extended, 7, &[]);
    run(&extended, 20, &[]);
    assert_eq!(manifest_without_run_fields(&extended), want, "extended -n");

    let killed = dir.path().join("killed");
    run(&killed, 20, &[]);
    let file = killed.join(format!("tiny/{SETTING}.jsonl"));
    cut_as_a_kill_would(&file, &killed.join("tiny/manifest.json"));
    run(&killed, 20, &[]);
    assert_eq!(
        manifest_without_run_fields(&killed),
        want,
        "killed and re-run"
    );

    // A shard killed and re-run, then merged, counts the same work too.
    let sharded = dir.path().join("sharded");
    run(&sharded, 20, &["--shard", "0/2"]);
    run(&sharded, 20, &["--shard", "1/2"]);
    let shard = sharded.join(format!("tiny/shards/{SETTING}/shard-1-of-2.jsonl"));
    cut_as_a_kill_would(&shard, &shard.with_file_name("shard-1-of-2.manifest.json"));
    run(&sharded, 20, &["--shard", "1/2"]);
    let merged = kumo_gen()
        .args(["merge", "--out"])
        .arg(&sharded)
        .output()
        .unwrap();
    assert!(merged.status.success(), "{}", stderr(&merged));
    let merged = manifest_without_run_fields(&sharded);
    assert_eq!(
        merged["datasets"][SETTING]["counts"], want["datasets"][SETTING]["counts"],
        "sharded, one shard killed and re-run, merged"
    );
}
