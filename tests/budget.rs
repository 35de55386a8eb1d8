//! The search budget belongs to the data: the manifest records it, a
//! re-run with a larger one labels what a smaller one left unlabelled (to
//! the bytes of a fresh run with the larger budget), a smaller one changes
//! nothing, and manifests without a recorded budget count as the default.

use std::path::{Path, PathBuf};

use crate::common::{TestCommand, generate_in};

const SETTING: &str = "truth_num=12+action_num=16+valid_truth_num=1";
/// Leaves most medical 12x16 instances unlabelled.
const SMALL: &[&str] = &["--search-nodes", "50"];

fn generate(out: &Path, extra: &[&str]) -> String {
    let output = generate_in("medical", (12, 16), out, 20, extra).run();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    stderr
}

fn dataset(out: &Path) -> PathBuf {
    out.join("medical").join(format!("{SETTING}.jsonl"))
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn unlabelled(out: &Path) -> usize {
    String::from_utf8(read(&dataset(out)))
        .unwrap()
        .lines()
        .filter(|l| l.contains(r#""optimal":{"unlabelled""#) || l.contains(r#""exact":false"#))
        .count()
}

fn manifest(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&read(&out.join("medical/manifest.json"))).unwrap()
}

fn edit_entry(out: &Path, edit: impl Fn(&mut serde_json::Map<String, serde_json::Value>)) {
    let mut m = manifest(out);
    edit(m["datasets"][SETTING].as_object_mut().unwrap());
    std::fs::write(
        out.join("medical/manifest.json"),
        serde_json::to_vec_pretty(&m).unwrap(),
    )
    .unwrap();
}

#[test]
fn a_larger_budget_relabels_to_the_bytes_of_a_fresh_run() {
    let dir = tempfile::tempdir().unwrap();
    for threads in ["1", "2"] {
        let fresh = dir.path().join(format!("fresh{threads}"));
        let rerun = dir.path().join(format!("rerun{threads}"));
        let t = ["--threads", threads];
        generate(&fresh, &t);
        generate(&rerun, &[SMALL, &t].concat());
        let small = unlabelled(&rerun);
        assert!(small > 0, "the small budget must leave lines unlabelled");
        assert_eq!(
            manifest(&rerun)["datasets"][SETTING]["parameters"]["search_nodes"],
            50
        );
        let stderr = generate(&rerun, &t);
        assert!(
            stderr.contains(&format!(
                "{small} of {small} unlabelled or certified lines labelled exactly"
            )),
            "{stderr}"
        );
        assert_eq!(unlabelled(&rerun), 0);
        assert_eq!(read(&dataset(&fresh)), read(&dataset(&rerun)));
        let sft = format!("medical/sft/{SETTING}.jsonl");
        assert_eq!(
            read(&fresh.join(&sft)),
            read(&rerun.join(&sft)),
            "the SFT records are rebuilt"
        );
        let recorded = &manifest(&rerun)["datasets"][SETTING]["parameters"];
        assert_eq!(recorded["search_nodes"], 50_000_000, "{recorded}");
        assert_eq!(recorded["search_budget"], 8_000_000, "{recorded}");
        let stderr = generate(&rerun, &t);
        assert!(stderr.contains("up to date"), "{stderr}");
    }
}

#[test]
fn a_smaller_budget_changes_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    generate(&out, &["--no-sft", "--books", "none"]);
    let before = read(&dataset(&out));
    let stderr = generate(&out, &[SMALL, &["--no-sft", "--books", "none"]].concat());
    assert!(stderr.contains("is up to date"), "{stderr}");
    assert!(
        stderr.contains("`--search-budget 8000000 --search-nodes 50000000`; a budget that is not larger changes nothing"),
        "{stderr}"
    );
    assert_eq!(read(&dataset(&out)), before);
    let recorded = &manifest(&out)["datasets"][SETTING]["parameters"];
    assert_eq!(recorded["search_nodes"], 50_000_000);
}

#[test]
fn an_interrupted_relabel_finishes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let quick = ["--no-sft", "--books", "none"];
    let fresh = dir.path().join("fresh");
    generate(&fresh, &quick);
    // Killed before the rewrite (file untouched) and after it (file
    // rewritten, manifest not yet): the entry is unfinished under the old
    // budget in both.
    for rewritten in [false, true] {
        let out = dir.path().join(format!("killed-{rewritten}"));
        generate(&out, &[SMALL, &quick].concat());
        if rewritten {
            std::fs::copy(dataset(&fresh), dataset(&out)).unwrap();
        }
        edit_entry(&out, |entry| {
            entry.insert("status".into(), "in_progress".into());
            entry.remove("digest");
        });
        generate(&out, &quick);
        assert_eq!(read(&dataset(&out)), read(&dataset(&fresh)));
        assert_eq!(manifest(&out)["datasets"][SETTING]["status"], "complete");
    }
}

#[test]
fn a_manifest_without_a_budget_counts_as_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let quick = ["--no-sft", "--books", "none"];
    let out = dir.path().join("out");
    generate(&out, &[SMALL, &quick].concat());
    let before = read(&dataset(&out));
    edit_entry(&out, |entry| {
        let parameters = entry["parameters"].as_object_mut().unwrap();
        parameters.remove("search_budget");
        parameters.remove("search_nodes");
    });
    // Read as the default budget: the same budget again is up to date.
    let stderr = generate(&out, &quick);
    assert!(stderr.contains("is up to date"), "{stderr}");
    assert_eq!(read(&dataset(&out)), before);
    // A larger one relabels.
    let stderr = generate(
        &out,
        &[&quick[..], &["--search-nodes", "60000000"]].concat(),
    );
    assert!(
        stderr.contains("unlabelled or certified lines labelled exactly"),
        "{stderr}"
    );
    assert_eq!(
        manifest(&out)["datasets"][SETTING]["parameters"]["search_nodes"],
        60_000_000
    );
}

#[test]
fn merge_labels_under_the_shards_budget_then_relabels_with_a_larger_one() {
    let dir = tempfile::tempdir().unwrap();
    let quick = ["--no-sft", "--books", "none"];
    let fresh = dir.path().join("fresh");
    generate(&fresh, &quick);
    let sharded = dir.path().join("sharded");
    for k in ["0/2", "1/2"] {
        generate(&sharded, &[SMALL, &quick, &["--shard", k]].concat());
    }
    let shard0 = sharded.join(format!(
        "medical/shards/{SETTING}/shard-0-of-2.manifest.json"
    ));
    let recorded: serde_json::Value = serde_json::from_slice(&read(&shard0)).unwrap();
    assert_eq!(recorded["parameters"]["search_nodes"], 50);
    // Another budget cannot continue a shard.
    let refused = TestCommand::new()
        .args(["generate", "--domain", "medical", "--truths", "12"])
        .args(["--actions", "16", "-n", "30", "--shard", "0/2", "--out"])
        .arg(&sharded)
        .args(quick)
        .expect_code(1);
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("this shard was labelled under"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let merged = TestCommand::new()
        .args(["merge", "--out"])
        .arg(&sharded)
        .args(quick)
        .run();
    let stderr = String::from_utf8_lossy(&merged.stderr);
    assert!(merged.status.success(), "{stderr}");
    assert!(
        stderr.contains("unlabelled or certified lines labelled exactly"),
        "{stderr}"
    );
    assert_eq!(read(&dataset(&sharded)), read(&dataset(&fresh)));
    assert_eq!(
        manifest(&sharded)["datasets"][SETTING]["parameters"]["search_nodes"],
        50_000_000
    );
    // Merging again is up to date.
    let again = TestCommand::new()
        .args(["merge", "--out"])
        .arg(&sharded)
        .args(quick)
        .run();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("up to date"), "{stderr}");
}
