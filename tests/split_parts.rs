//! `--split` with `--hf` and `--sft-parts`: one HF export for the run whose
//! card has a config (and split) per part, the same bytes at any thread
//! count, SFT only for the parts asked, and bad `--sft-parts` refused.

use crate::common::TestCommand;
use std::path::Path;

const SETTING_4X6: &str = "truth_num=4+action_num=6+valid_truth_num=1";

fn run(args: &[&str]) -> TestCommand {
    let mut command = TestCommand::new();
    command.args(args);
    command
}

fn split_run(out: &Path, threads: &str, extra: &[&str]) {
    let out = out.display().to_string();
    let mut args = vec![
        "generate",
        "--domain",
        "medical",
        "-n",
        "40",
        "--books",
        "none",
        "--hf",
        "--out",
        &out,
        "--threads",
        threads,
    ];
    args.extend_from_slice(extra);
    run(&args).ok();
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::to_string)
        .collect()
}

/// `(config_name, split, path)` of every config in the card's YAML header.
fn card_configs(card: &str) -> Vec<(String, String, String)> {
    let header = card.split("---\n").nth(1).unwrap();
    let mut configs = Vec::new();
    let mut lines = header.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(name) = line.strip_prefix("- config_name: ") {
            let mut split = String::new();
            let mut path = String::new();
            while let Some(next) = lines.peek() {
                if next.starts_with("- ") {
                    break;
                }
                let next = lines.next().unwrap().trim();
                if let Some(s) = next.strip_prefix("- split: ") {
                    split = s.to_string();
                } else if let Some(p) = next.strip_prefix("- \"") {
                    path = p.trim_end_matches('"').to_string();
                }
            }
            configs.push((name.trim_matches('"').to_string(), split, path));
        }
    }
    configs
}

#[test]
fn split_hf_export_has_a_config_per_part_and_sft_only_where_asked() {
    let dir = tempfile::tempdir().unwrap();
    let extra = ["--split", "train=0.8,test=0.2", "--sft-parts", "train"];
    let (one, two) = (dir.path().join("1"), dir.path().join("2"));
    split_run(&one, "1", &extra);
    split_run(&two, "2", &extra);

    // One export for the run; none inside the parts.
    assert!(!one.join("train/hf").exists() && !one.join("test/hf").exists());
    let card = std::fs::read_to_string(one.join("hf/README.md")).unwrap();
    let configs = card_configs(&card);
    let part_file =
        |part: &str, sft: &str| format!("parts/{part}/medical/{SETTING_4X6}{sft}.{}", hf_format());
    assert_eq!(
        configs,
        vec![
            ("test".into(), "test".into(), part_file("test", "")),
            ("train".into(), "train".into(), part_file("train", "")),
            (
                "train-sft".into(),
                "train".into(),
                part_file("train", "-sft")
            ),
        ],
        "{card}"
    );
    // Each config holds exactly its part's instances, in order.
    for (part, rows) in [("test", 8), ("train", 32)] {
        let dataset = lines(
            &one.join(part)
                .join("medical")
                .join(format!("{SETTING_4X6}.jsonl")),
        );
        assert_eq!(dataset.len(), rows);
        if hf_format() == "jsonl" {
            let hf = lines(&one.join("hf").join(part_file(part, "")));
            let seeds: Vec<u64> = hf
                .iter()
                .map(|l| {
                    serde_json::from_str::<serde_json::Value>(l).unwrap()["seed"]
                        .as_u64()
                        .unwrap()
                })
                .collect();
            assert_eq!(seeds, (0..rows as u64).collect::<Vec<_>>(), "{part}");
        }
    }
    // SFT for `train` only: no SFT file, no SFT config for `test`.
    let sft = |part: &str| {
        one.join(part)
            .join("medical/sft")
            .join(format!("{SETTING_4X6}.jsonl"))
    };
    assert_eq!(lines(&sft("train")).len(), 32);
    assert!(!sft("test").exists());
    assert!(!one.join("hf").join(part_file("test", "-sft")).exists());
    // The same bytes with 1 and 2 threads, card included.
    for file in [
        "hf/README.md".to_string(),
        format!("hf/{}", part_file("test", "")),
        format!("hf/{}", part_file("train", "-sft")),
    ] {
        assert_eq!(
            std::fs::read(one.join(&file)).unwrap(),
            std::fs::read(two.join(&file)).unwrap(),
            "{file}"
        );
    }

    // A second setting in the same export: configs `<part>-<domain>-<setting>`.
    split_run(
        &one,
        "1",
        &["--split", "train=0.8,test=0.2", "--truths", "5"],
    );
    let names: Vec<String> =
        card_configs(&std::fs::read_to_string(one.join("hf/README.md")).unwrap())
            .into_iter()
            .map(|c| c.0)
            .collect();
    assert_eq!(
        names,
        [
            "test-medical-t4-a6-v1",
            "test-medical-t5-a6-v1",
            "test-medical-t5-a6-v1-sft",
            "train-medical-t4-a6-v1",
            "train-medical-t4-a6-v1-sft",
            "train-medical-t5-a6-v1",
            "train-medical-t5-a6-v1-sft",
        ]
    );
}

#[test]
fn bad_sft_parts_are_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out_text = out.display().to_string();
    let base = [
        "generate", "--domain", "medical", "-n", "10", "--out", &out_text,
    ];
    run(&[
        &base[..],
        &["--split", "train=0.5,test=0.5", "--sft-parts", "dev"],
    ]
    .concat())
    .expect_code(2)
    .stderr_contains("`dev` is not a part of `--split`");
    run(&[&base[..], &["--sft-parts", "train"]].concat())
        .expect_code(2)
        .stderr_contains("--split");
    assert!(!out.exists());
}

/// The HF export's format of this build.
fn hf_format() -> &'static str {
    kumo_gen::derived::HF_FORMAT
}

/// Every file under `dir` (relative path and bytes) but manifests (they
/// record timings and how the file was made), shard files and locks.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "shards" {
                    walk(root, &path, files);
                }
            } else if name != "manifest.json" && !name.ends_with(".lock") {
                let relative = path.strip_prefix(root).unwrap().display().to_string();
                files.push((relative, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files);
    files.sort();
    files
}

#[test]
fn sharded_split_merges_into_the_unsharded_split_run() {
    let dir = tempfile::tempdir().unwrap();
    let split = ["--split", "train=0.7,test=0.3"];
    let derived = ["--books", "files", "--hf", "--sft-parts", "train"];
    let whole = dir.path().join("whole");
    let whole_text = whole.display().to_string();
    let base = ["generate", "--domain", "medical", "-n", "60"];
    run(&[
        &base[..],
        &split,
        &derived,
        &["--threads", "1", "--out", &whole_text],
    ]
    .concat())
    .ok();
    let files = tree(&whole);
    assert!(
        files.iter().any(|(f, _)| f.starts_with("hf/parts/test/"))
            && files
                .iter()
                .any(|(f, _)| f.starts_with("train/medical/sft/"))
            && files.iter().any(|(f, _)| f.contains("knowledge_book")),
        "{:?}",
        files.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    // Shards at one thread merged at two, and the other way round.
    for (shard_threads, merge_threads) in [("1", "2"), ("2", "1")] {
        let sharded = dir.path().join(format!("sharded-{shard_threads}"));
        let sharded_text = sharded.display().to_string();
        for k in ["0/3", "1/3", "2/3"] {
            run(&[
                &base[..],
                &split,
                &["--shard", k, "--threads", shard_threads],
                &["--out", &sharded_text],
            ]
            .concat())
            .ok();
        }
        assert!(
            !sharded
                .join("train/medical")
                .join(format!("{SETTING_4X6}.jsonl"))
                .exists()
        );
        run(&[
            &["merge", "--out", &sharded_text, "--threads", merge_threads][..],
            &derived,
        ]
        .concat())
        .ok();
        let merged = tree(&sharded);
        let names = |files: &[(String, Vec<u8>)]| -> Vec<String> {
            files.iter().map(|f| f.0.clone()).collect()
        };
        assert_eq!(names(&merged), names(&files));
        for ((name, a), (_, b)) in files.iter().zip(&merged) {
            assert!(
                a == b,
                "{name} differs after merging shards at {shard_threads} thread(s)"
            );
        }
        // The counts too: draws the other part took are redrawn duplicates.
        for part in ["train", "test"] {
            let counts = |root: &Path| {
                let path = root.join(part).join("medical/manifest.json");
                let text = std::fs::read_to_string(path).unwrap();
                let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
                manifest["datasets"][SETTING_4X6]["counts"].clone()
            };
            assert_eq!(counts(&sharded), counts(&whole), "{part}");
            assert!(counts(&whole)["duplicates_rejected"].as_u64().unwrap() > 0);
        }
    }
}

#[test]
fn hf_row_ids_are_unique_across_parts_and_settings() {
    assert_eq!(
        hf_format(),
        "jsonl",
        "this test reads the JSON Lines export"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let split = ["--split", "train=0.5,test=0.5"];
    split_run(&out, "2", &split);
    split_run(&out, "2", &[&split[..], &["--truths", "5"]].concat());
    let mut ids = std::collections::BTreeSet::new();
    let mut sft_ids = Vec::new();
    let mut rows = 0;
    for part in ["train", "test"] {
        for setting in [SETTING_4X6, "truth_num=5+action_num=6+valid_truth_num=1"] {
            let data = out.join("hf/parts").join(part).join("medical");
            let id = |line: &String| {
                let row: serde_json::Value = serde_json::from_str(line).unwrap();
                let id = row["id"].as_str().unwrap().to_string();
                let seed = row["seed"].as_u64().unwrap();
                assert_eq!(id, format!("{part}/medical/{setting}/{seed}"));
                id
            };
            for line in lines(&data.join(format!("{setting}.jsonl"))) {
                rows += 1;
                ids.insert(id(&line));
            }
            sft_ids.extend(
                lines(&data.join(format!("{setting}-sft.jsonl")))
                    .iter()
                    .map(id),
            );
        }
    }
    // Every part numbers its seeds from 0; the ids still never repeat.
    assert_eq!(rows, 80);
    assert_eq!(ids.len(), rows, "{ids:?}");
    // An SFT row carries the id of its instance row.
    assert!(!sft_ids.is_empty() && sft_ids.iter().all(|id| ids.contains(id)));
}
