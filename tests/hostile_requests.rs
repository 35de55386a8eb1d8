//! Requests a hostile (or unlucky) user makes that used to get a wrong
//! answer, lose work or run without bound (issue 38, the logic half):
//! contamination tools answering "0 shared" or "exhausted" without
//! evidence, secret-seed runs that could not be finished or verified
//! within bounds, outputs written over their input or under the wrong
//! name, unbounded counts, results scored against the wrong instances,
//! and flag values refused with different exit codes.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::common::{TestCommand, json_lines, root};

const SETTING_4X6: &str = "truth_num=4+action_num=6+valid_truth_num=1";
const TINY: &str = "tests/fixtures/ok/tiny.yaml";

fn medical(out: &Path, n: u64, extra: &[&str]) -> TestCommand {
    let mut cmd = TestCommand::new();
    cmd.args(["--domain", "medical", "-n", &n.to_string(), "--out"])
        .arg(out)
        .args(extra);
    cmd
}

#[test]
fn overlap_of_sft_records_with_their_own_dataset_is_not_zero_under_the_default_key() {
    let dir = tempfile::tempdir().unwrap();
    medical(dir.path(), 30, &["--books", "none"]).ok();
    let data = dir.path().join("medical");
    let sft = data.join("sft").join(format!("{SETTING_4X6}.jsonl"));
    for (a, b) in [(&sft, &data), (&data, &sft)] {
        let ran = TestCommand::new()
            .arg("overlap")
            .args([a, b])
            .args(["--json", "--fail-on-overlap"])
            .expect_code(1);
        let found = ran.stdout_json();
        assert_eq!(found["shared"], 30, "{found}");
        assert_eq!(found["key"], "context", "{found}");
        assert!(
            found["note"].as_str().unwrap().contains("SFT records"),
            "{found}"
        );
    }
}

#[test]
fn capacity_is_never_counted_from_a_sample_whose_draws_are_all_excluded() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("A"), dir.path().join("B"));
    medical(&a, 2000, &["--no-sft", "--books", "none"]).ok();
    let ran = medical(&b, 100, &["--no-sft", "--books", "none", "--exclude"])
        .arg(&a)
        .ok();
    ran.stderr_contains("capacity: unknown")
        .stderr_lacks("(counted)");
    assert_eq!(
        json_lines(&b.join("medical").join(format!("{SETTING_4X6}.jsonl"))).len(),
        100
    );
}

#[test]
fn a_split_part_without_room_is_refused_before_any_part_is_written() {
    // tiny 3x3 has 11 contexts, all of them in part `a` of a=0.8,b=0.2.
    let dir = tempfile::tempdir().unwrap();
    TestCommand::new()
        .args(["--domain", TINY, "--truths", "3", "--actions", "3"])
        .args(["-n", "20", "--split", "a=0.8,b=0.2", "--out"])
        .arg(dir.path())
        .expect_code(1)
        .stderr_contains("none of the contexts")
        .stderr_contains("nothing was written");
    assert!(!dir.path().join("a").exists(), "part `a` was written");
}

/// (truths, actions) of every line of `file`, sorted.
fn books(file: &Path) -> Vec<(Vec<String>, Vec<String>)> {
    let sorted = |v: &Value| {
        let mut names: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    json_lines(file)
        .iter()
        .map(|l| (sorted(&l["truths"]), sorted(&l["actions"])))
        .collect()
}

#[test]
fn a_split_by_book_shares_no_book_where_a_split_by_context_does() {
    let dir = tempfile::tempdir().unwrap();
    // historical-battle has 6 truths: at 4x6 its contexts share books.
    let shared = |key: &str| {
        let out = dir.path().join(key);
        TestCommand::new()
            .args(["--domain", "historical-battle", "-n", "300", "--out"])
            .arg(&out)
            .args(["--no-sft", "--books", "none"])
            .args(["--split", "train=0.9,test=0.1", "--split-key", key])
            .ok();
        let part = |name: &str| {
            out.join(name)
                .join("historical-battle")
                .join(format!("{SETTING_4X6}.jsonl"))
        };
        let train = books(&part("train"));
        let test = books(&part("test"));
        let counted = TestCommand::new()
            .arg("overlap")
            .args([part("train"), part("test")])
            .args(["--key", "book", "--json"])
            .ok()
            .stdout_json();
        let by_brute = test.iter().filter(|b| train.contains(b)).count() as u64;
        assert_eq!(counted["b"]["shared_lines"], by_brute, "{counted}");
        (by_brute, out)
    };
    let (by_context, _) = shared("context");
    assert!(
        by_context > 0,
        "the context split shares books (the finding)"
    );
    let (by_book, out) = shared("book");
    assert_eq!(by_book, 0);
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(out.join("test/historical-battle/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        manifest["datasets"][SETTING_4X6]["parameters"]["split"],
        "test of train=0.9,test=0.1 by book"
    );
}

fn seed_file(out: &Path) -> std::path::PathBuf {
    out.join("SECRET-seeds/medical")
        .join(format!("{SETTING_4X6}.json"))
}

#[test]
fn verify_refuses_a_seed_file_beyond_the_n_bound_and_never_echoes_the_seed() {
    let dir = tempfile::tempdir().unwrap();
    medical(dir.path(), 20, &["--seed", "random", "--books", "none"]).ok();
    let file = seed_file(dir.path());
    let record: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let seed = record["seed"].as_u64().unwrap().to_string();
    let verify = |record: &Value| {
        let edited = dir.path().join("edited.json");
        std::fs::write(&edited, serde_json::to_vec(record).unwrap()).unwrap();
        let mut cmd = TestCommand::new();
        cmd.args(["verify", "--seed-file"])
            .arg(&edited)
            .arg(
                dir.path()
                    .join("medical")
                    .join(format!("{SETTING_4X6}.jsonl")),
            )
            .timeout(Duration::from_secs(30));
        cmd
    };
    for n in [1_000_000_000_000u64, 100_000_000, 21] {
        let mut huge = record.clone();
        huge["parameters"]["n"] = n.into();
        verify(&huge).expect_code(1).stderr_lacks(&seed);
    }
    let mut as_text = record.clone();
    as_text["seed"] = Value::String(seed.clone());
    verify(&as_text)
        .expect_code(1)
        .stderr_contains("not a kumo-gen seed file")
        .stderr_lacks(&seed);
    verify(&record)
        .ok()
        .stdout_contains("verified")
        .stdout_contains("instance lines only")
        .stdout_lacks(&seed);
}

#[test]
fn an_interrupted_secret_seed_run_is_finished_by_the_same_command() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--seed", "random", "--books", "none"];
    medical(dir.path(), 40, &args).ok();
    let data = dir.path().join("medical");
    let sft = data.join("sft").join(format!("{SETTING_4X6}.jsonl"));
    let sft_bytes = std::fs::read(&sft).unwrap();
    // Killed after the dataset file, before its SFT records and digest.
    std::fs::remove_dir_all(data.join("sft")).unwrap();
    let file = seed_file(dir.path());
    let mut record: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    record["digest"] = Value::Null;
    std::fs::write(&file, serde_json::to_vec_pretty(&record).unwrap()).unwrap();
    medical(dir.path(), 40, &args)
        .ok()
        .stderr_contains("continuing the interrupted `--seed random` run");
    assert_eq!(std::fs::read(&sft).unwrap(), sft_bytes);
    let finished: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(finished["seed"], record["seed"]);
    assert!(finished["digest"].is_string());
    TestCommand::new()
        .args(["verify", "--seed-file"])
        .arg(&file)
        .ok();
    // A finished run is never continued by a new random seed.
    medical(dir.path(), 40, &args)
        .expect_code(1)
        .stderr_contains("never continues");
}

#[test]
fn graph_and_split_refuse_to_write_over_their_input_domain() {
    let dir = tempfile::tempdir().unwrap();
    let domain = dir.path().join("d.yaml");
    std::fs::copy(root().join(TINY), &domain).unwrap();
    let before = std::fs::read(&domain).unwrap();
    TestCommand::new()
        .args(["graph", "--domain"])
        .arg(&domain)
        .arg("-o")
        .arg(&domain)
        .expect_code(1)
        .stderr_contains("would replace its own input");
    // `split` writes `<name>-ind.yaml`: a domain file of that name.
    let name = "tiny-ind.yaml";
    let ind = dir.path().join(name);
    std::fs::copy(root().join(TINY), &ind).unwrap();
    TestCommand::new()
        .args(["split", "--domain"])
        .arg(&ind)
        .arg("--out-dir")
        .arg(dir.path())
        .expect_code(1)
        .stderr_contains("would replace its own input");
    assert_eq!(std::fs::read(&domain).unwrap(), before);
    assert_eq!(std::fs::read(&ind).unwrap(), before);
    assert!(!dir.path().join("tiny-ood.yaml").exists());
}

#[test]
fn counts_a_user_can_type_are_bounded_and_refused_at_once() {
    for args in [
        &["family", "rules3", "--curve", "--curve-n", "100000000"][..],
        &["family", "rules3", "--curve", "--curve-truths", "4,64"],
        &["family", "rules3", "--hypotheses", "100000", "-o", "x.yaml"],
        &[
            "propose",
            "--topic",
            "t",
            "--api-base",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "-o",
            "x.yaml",
            "--rounds",
            "100000",
        ],
        &[
            "eval",
            "--player",
            "guess",
            "--data",
            "x",
            "--max-steps",
            "1000000000",
        ],
        &[
            "eval",
            "--player",
            "guess",
            "--data",
            "x",
            "--retries",
            "4000000000",
        ],
        &["play", "--domain", "medical", "--index", "99999999999"],
    ] {
        TestCommand::new()
            .args(args)
            .timeout(Duration::from_secs(10))
            .expect_code(2)
            .stderr_contains("expected a number of");
    }
}

#[test]
fn a_huge_band_bound_is_echoed_short() {
    let dir = tempfile::tempdir().unwrap();
    medical(dir.path(), 5, &["--min-expected", "1e308"])
        .expect_code(1)
        .stderr_contains("--min-expected 1e308")
        .stderr_lacks("0000000000");
}

#[test]
fn score_refuses_instances_two_datasets_could_hold() {
    // The README's order: a dataset, then a curriculum writing
    // `generated/level-k/medical/` beside it, then golden's results.
    let dir = tempfile::tempdir().unwrap();
    let generated = dir.path().join("generated");
    medical(&generated, 20, &["--no-sft", "--books", "none"]).ok();
    medical(&generated.join("level-1"), 20, &["--seed", "1"])
        .args(["--no-sft", "--books", "none"])
        .ok();
    let results = dir.path().join("results");
    TestCommand::new()
        .args(["eval", "--player", "golden", "--trials", "1", "--data"])
        .arg(&generated)
        .args(["--domain", "medical", "--out"])
        .arg(&results)
        .ok();
    for command in ["score", "stats"] {
        TestCommand::new()
            .arg(command)
            .arg(&results)
            .arg("--instances")
            .arg(&generated)
            .expect_code(1)
            .stderr_contains("could be matched with the instances of 2 directories");
    }
    let rows = TestCommand::new()
        .arg("score")
        .arg(&results)
        .arg("--instances")
        .arg(generated.join("medical"))
        .arg("--json")
        .ok()
        .stdout_json();
    assert_eq!(rows[0]["success_rate"], 1.0, "{rows}");
}

#[test]
fn a_budget_of_at_least_the_truths_is_refused_and_protocols_are_not_mixed_in_all() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    medical(&data, 12, &["--no-sft", "--books", "none"]).ok();
    let results = dir.path().join("results");
    let eval = |player: &str, budget: Option<&str>| {
        let mut cmd = TestCommand::new();
        cmd.args(["eval", "--player", player, "--trials", "1", "--data"])
            .arg(&data)
            .arg("--out")
            .arg(&results);
        if let Some(b) = budget {
            cmd.args(["--budget", b]);
        }
        cmd
    };
    eval("guess", Some("4"))
        .expect_code(1)
        .stderr_contains("at least the 4 truths");
    eval("guess", Some("3")).ok();
    eval("golden", Some("3")).ok();
    eval("golden", None).ok();
    eval("guess", None).ok();
    let rows = TestCommand::new()
        .arg("score")
        .arg(&results)
        .arg("--json")
        .ok()
        .stdout_json();
    let overall: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["model"] == "all")
        .map(|r| r["agent"].as_str().unwrap())
        .collect();
    assert_eq!(overall, ["all", "all-budget=3"], "{rows}");
}

#[test]
fn a_failing_eval_with_stdout_a_closed_pipe_exits_non_zero() {
    // A server that answers every request with a 500: every instance is
    // left unfinished after its retries.
    let server = crate::eval::serve(std::sync::Arc::new(|_: &Value, _| {
        crate::eval::Answer::Reply(500, "{}".into())
    }));
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kumo-gen"))
        .current_dir(root())
        .args(["eval", "--api-base", &server.base, "--model", "m", "--data"])
        .arg(crate::eval::dataset())
        .arg("--domain")
        .arg(root().join(TINY))
        .arg("--out")
        .arg(dir.path())
        .args(["--trials", "1", "--retries", "0", "--backoff-ms", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "{status:?}");
}

#[test]
fn a_part_without_sft_is_not_logged_as_sft_records() {
    let dir = tempfile::tempdir().unwrap();
    medical(dir.path(), 40, &["--books", "none"])
        .args(["--split", "train=0.5,test=0.5", "--sft-parts", "train"])
        .ok()
        .stderr_contains("no SFT records (`--sft-parts` leaves this part out)")
        .stderr_contains("SFT records (");
}

#[test]
fn curriculum_help_names_only_the_flags_it_takes() {
    let help = TestCommand::new()
        .args(["curriculum", "--help"])
        .ok()
        .stdout_text();
    for refused in [
        "--split",
        "--sft-parts",
        "--shard",
        "--no-labels",
        "--min-expected",
        "--max-golden",
    ] {
        assert!(!help.contains(refused), "{refused} in:\n{help}");
    }
    assert!(help.contains("--levels"));
}

/// A value each value-taking flag refuses whatever the input (`None`:
/// the flag takes names, paths or text, checked against what they name).
fn refused_value(command: &str, flag: &str) -> Option<&'static str> {
    Some(match (command, flag) {
        (_, "threads") => "2000",
        (_, "search-budget" | "search-nodes") => "0",
        (_, "domain-max-nodes") => "0",
        (_, "seed") if command == "generate" || command == "curriculum" => "x",
        (_, "seed" | "sample-seed") => "-1",
        (_, "exclude-key" | "key" | "split-key") => "x",
        (_, "sft-book" | "books" | "format" | "method") => "x",
        ("eval", "player") => "x",
        ("generate" | "curriculum" | "play", "truths") => "1",
        ("generate" | "curriculum" | "play", "actions" | "valid") => "0",
        ("propose", "truths") => "3",
        ("propose", "actions") => "5",
        ("generate" | "curriculum", "n") => "0",
        ("generate" | "curriculum", "decimals") => "13",
        ("generate" | "curriculum", "shard") => "4/4",
        ("generate" | "curriculum", "split") => "a=0.5",
        ("generate" | "curriculum", "min-expected" | "max-expected") => "nan",
        ("generate" | "curriculum", "min-golden" | "max-golden") => "-1",
        ("curriculum", "levels") => "0",
        ("eval", "trials" | "concurrency" | "budget" | "max-steps" | "limit" | "sample") => "0",
        ("eval" | "propose", "timeout") => "0",
        ("eval" | "propose", "temperature") => "nan",
        ("eval" | "propose", "retries") => "101",
        ("eval" | "propose", "backoff-ms") => "60001",
        ("eval" | "propose", "api-base") => "localhost:8001/v1",
        ("propose", "rounds") => "101",
        ("play", "line") => "0",
        ("play", "index") => "1000000",
        ("play", "budget") => "0",
        ("eval" | "play", "turns" | "tests" | "attempts") => "0",
        ("eval" | "play", "feedback") => "x",
        ("stats", "pool") => "0",
        // Counts and addresses of the commands added beside this walk:
        // not numbers (or not an address) whatever the input.
        ("pairs", "random-paths") => "2147483648",
        ("pairs", "limit") => "x",
        ("report", "pool" | "replays") => "x",
        (
            "serve",
            "port" | "bind" | "max-sessions" | "idle-timeout" | "max-message-bytes" | "max-steps"
            | "max-connections" | "request-timeout",
        ) => "x",
        ("graph", "runs") => "0",
        ("check-books", "show") => "-1",
        ("label", "search-time") => "1e308",
        ("family", "hypotheses") => "1",
        ("family", "probes") => "0",
        ("family", "max-value") => "21",
        ("family", "inputs") => "11",
        ("family", "gates") => "13",
        ("family", "alphabet") => "27",
        ("family", "length") => "7",
        ("family", "curve-truths") => "25",
        ("family", "curve-actions" | "curve-n") => "0",
        ("family", "turns") => "13",
        _ => return None,
    })
}

#[test]
fn every_flag_value_refused_whatever_the_input_exits_2_in_every_command() {
    let cli = kumo_gen::cli::command();
    let mut walked = 0;
    for command in cli.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = command.get_name();
        for arg in command.get_arguments() {
            let short = arg.get_short().map(String::from);
            let Some(long) = arg.get_long().map(str::to_string).or(short) else {
                continue;
            };
            if !arg.get_action().takes_values() {
                continue;
            }
            let Some(value) = refused_value(name, &long) else {
                continue;
            };
            walked += 1;
            let flag = if long.len() == 1 {
                format!("-{long}")
            } else {
                format!("--{long}")
            };
            // Refused as the flags are read: exit 2 before any work,
            // whatever else is missing.
            TestCommand::new()
                .args([name, &format!("{flag}={value}")])
                .timeout(Duration::from_secs(10))
                .expect_code(2)
                .stderr_contains(&flag);
        }
    }
    assert!(walked > 60, "{walked} flags walked");
}

#[test]
fn every_value_taking_flag_is_classified_for_the_exit_code_walk() {
    // Flags whose values are names, paths or text: what they name is input
    // (exit 1 when it is wrong), so no value is refused whatever the input.
    let free = [
        "domains-dir",
        "domain",
        "instances",
        "oracle",
        "svg",
        "curve-svg",
        "model",
        "data",
        "setting",
        "out",
        "templates-dir",
        "exclude",
        "sft-parts",
        "output",
        "out-dir",
        "seed-file",
        "topic",
        "topics",
        "name",
        "example",
        "title",
        "truth-noun",
        "truth-plural",
        "action-noun",
        "action-plural",
        "goal",
        "truths-var",
        "actions-var",
        "outcomes-var",
        "player",
        "dir",
    ];
    let cli = kumo_gen::cli::command();
    let mut unclassified = Vec::new();
    for command in cli.get_subcommands() {
        for arg in command.get_arguments() {
            let (Some(long), true) = (arg.get_long(), arg.get_action().takes_values()) else {
                continue;
            };
            if refused_value(command.get_name(), long).is_none() && !free.contains(&long) {
                unclassified.push(format!("{} --{long}", command.get_name()));
            }
        }
    }
    assert!(
        unclassified.is_empty(),
        "give these flags a refused value in `refused_value` (or list them as free): {unclassified:?}"
    );
}

#[test]
fn propose_writes_the_file_o_names_whatever_the_name() {
    let tea = std::fs::read_to_string(root().join("tests/fixtures/propose/tea.yaml")).unwrap();
    let reply = format!("```yaml\n{tea}```\n");
    let server = crate::eval::serve(std::sync::Arc::new(move |_: &Value, _| {
        crate::eval::completion(&reply)
    }));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bar.yaml");
    TestCommand::new()
        .args(["propose", "--topic", "Teas of the world", "--name", "tea"])
        .args(["--api-base", &server.base, "--model", "m", "--actions", "8"])
        .args(["--truths", "6", "--backoff-ms", "1", "-o"])
        .arg(&out)
        .env("KUMO_API_KEY", "sk-test")
        .ok();
    assert!(out.is_file(), "`-o bar.yaml` was not written");
    assert!(!dir.path().join("tea.yaml").exists());
}

#[test]
fn sft_parts_over_an_all_parts_run_removes_the_left_out_sft_and_the_card_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        medical(dir.path(), 40, &["--books", "none", "--hf"])
            .args(["--split", "train=0.5,test=0.5"])
            .args(extra)
            .ok()
    };
    run(&[]);
    let test_sft = dir
        .path()
        .join("test/medical/sft")
        .join(format!("{SETTING_4X6}.jsonl"));
    assert!(test_sft.is_file());
    let card = dir.path().join("hf/README.md");
    assert!(std::fs::read_to_string(&card).unwrap().contains("test-sft"));
    run(&["--sft-parts", "train"]).stderr_contains("leaves this part out");
    assert!(!test_sft.exists(), "the test part keeps its SFT file");
    let text = std::fs::read_to_string(&card).unwrap();
    assert!(
        !text.contains("test-sft") && text.contains("train-sft"),
        "{text}"
    );
    // A deleted or edited card is written again by the same command.
    std::fs::remove_file(&card).unwrap();
    run(&["--sft-parts", "train"]);
    assert_eq!(std::fs::read_to_string(&card).unwrap(), text);
    std::fs::write(&card, "edited").unwrap();
    run(&["--sft-parts", "train"]);
    assert_eq!(std::fs::read_to_string(&card).unwrap(), text);
}

#[test]
fn a_failed_run_leaves_no_book_temp_folder() {
    let dir = tempfile::tempdir().unwrap();
    let templates = dir.path().join("templates");
    std::fs::create_dir(&templates).unwrap();
    // Renders the probe instance, fails on medical's.
    let book = std::fs::read_to_string(root().join("templates/book.j2")).unwrap()
        + "{% if \"Medical\" in title %}{{ no_such_function() }}{% endif %}\n";
    std::fs::write(templates.join("book.j2"), book).unwrap();
    let out = dir.path().join("out");
    medical(&out, 10, &["--books", "files", "--templates-dir"])
        .arg(&templates)
        .expect_code(1);
    let left: Vec<String> = std::fs::read_dir(out.join("medical"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_band_run_writes_its_first_lines_at_once_and_a_kill_keeps_them() {
    // The README's band example: before, 4 096 lines were drawn and
    // labelled (minutes) before the first was written.
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kumo-gen"))
        .current_dir(root())
        .args(["--domain", "medical", "--truths", "12", "--actions", "16"])
        .args(["-n", "5000", "--min-expected", "2", "--max-expected", "3"])
        .args(["--threads", "2", "--no-sft", "--books", "none", "--out"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let file = dir
        .path()
        .join("medical/truth_num=12+action_num=16+valid_truth_num=1.jsonl");
    let started = std::time::Instant::now();
    let mut lines = 0;
    while started.elapsed() < Duration::from_secs(40) && lines < 8 {
        std::thread::sleep(Duration::from_millis(200));
        lines = std::fs::read(&file)
            .map(|b| b.iter().filter(|&&c| c == b'\n').count())
            .unwrap_or(0);
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(lines >= 8, "{lines} lines after {:?}", started.elapsed());
    let kept = std::fs::read_to_string(&file).unwrap();
    for line in kept.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let e = v["optimal"]["expected_steps"].as_f64().unwrap();
        assert!((2.0..=3.0).contains(&e), "{e}");
    }
}
