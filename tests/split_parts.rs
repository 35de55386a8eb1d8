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
    kumo_gen::output::derived::HF_FORMAT
}
