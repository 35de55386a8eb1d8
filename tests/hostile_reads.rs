//! Hostile reads the first round missed (docs/safety.md "Reading"):
//! files that are not regular where a command reads a card, results,
//! templates, domains, shards or setting files; a knowledge book past its
//! bound; a dataset far larger than memory allows; a file read whole with
//! a line past the cap; an `--instances` that holds nothing; a result line
//! past the cap; a domain whose warnings would flood the terminal. Each
//! is refused or skipped by name at once: no hang, no unbounded memory.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{TINY, TINY_SETTING, TestCommand, eval_player, generate_in, generate_tiny};

const LIMIT: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

fn symlink(target: impl AsRef<Path>, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// `sh -c 'ulimit -v KB; exec kumo-gen ARGS'`: a run whose address space
/// is capped, so memory that grows with the input aborts it.
fn capped(kb: u64, args: &[&str]) -> std::process::Output {
    let mut script = format!("ulimit -v {kb} && exec \"$0\"");
    for i in 0..args.len() {
        script.push_str(&format!(" \"${{{}}}\"", i + 1));
    }
    std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_kumo-gen"))
        .args(args)
        .current_dir(crate::common::root())
        .output()
        .unwrap()
}

/// `OUT/hf/README.md` a FIFO or a link to `/dev/zero`: `generate --hf`
/// replaces it without reading it, and ends.
#[test]
fn the_dataset_card_is_never_read_from_a_fifo_or_a_device() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, kind) in ["fifo", "zero"].into_iter().enumerate() {
        let out = tmp.path().join(format!("out-{i}"));
        std::fs::create_dir_all(out.join("hf")).unwrap();
        let card = out.join("hf/README.md");
        match kind {
            "fifo" => mkfifo(&card),
            _ => symlink("/dev/zero", &card),
        }
        generate_tiny(&out, 3, &["--hf"]).timeout(LIMIT).ok();
        let meta = std::fs::symlink_metadata(&card).unwrap();
        assert!(meta.is_file(), "{kind}: replaced by the card");
        assert!(std::fs::read_to_string(&card).unwrap().contains("configs:"));
    }
}

/// A FIFO and a `/dev/zero` link under serve's results root: it listens
/// at once, and names both.
#[test]
fn serve_names_results_it_cannot_read_and_listens() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    generate_tiny(&data, 3, &[]).timeout(LIMIT).ok();
    let results = tmp.path().join("results");
    let place = results.join("ann/HumanAgent/tiny").join(TINY_SETTING);
    std::fs::create_dir_all(&place).unwrap();
    mkfifo(&place.join("eval_times=1.jsonl"));
    symlink("/dev/zero", &place.join("eval_times=2.jsonl"));
    let mut child = TestCommand::new()
        .arg("serve")
        .arg("--data")
        .arg(&data)
        .arg("--out")
        .arg(&results)
        .args(["--port", "0"])
        .spawn();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let first = rx.recv_timeout(LIMIT);
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let first = first.expect("the server listens within the limit");
    assert!(first.starts_with("serving http://"), "{first}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("eval_times=1.jsonl") && stderr.contains("FIFO"),
        "{stderr}"
    );
    assert!(
        stderr.contains("eval_times=2.jsonl") && stderr.contains("character device"),
        "{stderr}"
    );
}

/// A knowledge book past its bound (the line cap, set small here): eval
/// and pairs refuse it by name instead of holding it.
#[test]
fn a_book_past_its_bound_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    generate_tiny(&data, 3, &[]).timeout(LIMIT).ok();
    let book = data
        .join("tiny/knowledge_book")
        .join(TINY_SETTING)
        .join("seed=1.txt");
    std::fs::write(&book, "x".repeat(50_000)).unwrap();
    let mut pairs = TestCommand::new();
    pairs
        .arg("pairs")
        .arg("--data")
        .arg(&data)
        .env("KUMO_GEN_MAX_LINE_BYTES", "20000");
    let mut eval = eval_player("golden", &data, &tmp.path().join("r"), &["--trials", "1"]);
    eval.env("KUMO_GEN_MAX_LINE_BYTES", "20000");
    for command in [&mut pairs, &mut eval] {
        command
            .timeout(LIMIT)
            .expect_code(1)
            .stderr_contains("seed=1.txt")
            .stderr_contains("a knowledge book")
            .stderr_contains("KUMO_GEN_MAX_LINE_BYTES");
    }
}

/// A dataset file `lines` long: the `base` lines again and again with
/// fresh seeds, into `dir/medical/` (with the manifest beside them).
fn long_dataset(base: &Path, dir: &Path, lines: usize) -> PathBuf {
    let setting = "truth_num=12+action_num=16+valid_truth_num=1.jsonl";
    let from: Vec<serde_json::Value> = std::fs::read_to_string(base.join("medical").join(setting))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let folder = dir.join("medical");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(
        base.join("medical/manifest.json"),
        folder.join("manifest.json"),
    )
    .unwrap();
    let mut text = String::new();
    for seed in 0..lines {
        let mut line = from[seed % from.len()].clone();
        line["seed"] = seed.into();
        text.push_str(&line.to_string());
        text.push('\n');
    }
    std::fs::write(folder.join(setting), text).unwrap();
    dir.to_path_buf()
}

/// eval, pairs and serve of a 40 000-line dataset under a 200 MB address
/// space: they read a line at a time (holding every line took some
/// 8.5 kB a line, 340 MB, and aborted).
#[test]
fn eval_pairs_and_serve_memory_does_not_grow_with_the_dataset() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    generate_in("medical", (12, 16), &base, 20, &["--no-sft"])
        .timeout(LIMIT)
        .ok();
    let data = long_dataset(&base, &tmp.path().join("long"), 40_000);
    let data = data.to_str().unwrap();
    let results = tmp.path().join("results");
    let pairs = tmp.path().join("pairs.jsonl");
    let runs: [Vec<&str>; 2] = [
        vec![
            "eval",
            "--player",
            "golden",
            "--trials",
            "1",
            "--limit",
            "20",
            "--data",
            data,
            "--out",
            results.to_str().unwrap(),
        ],
        vec![
            "pairs",
            "--limit",
            "20",
            "--data",
            data,
            "-o",
            pairs.to_str().unwrap(),
        ],
    ];
    for args in runs {
        let ran = capped(200_000, &args);
        assert_eq!(
            ran.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&ran.stderr)
        );
    }
    assert!(std::fs::metadata(&pairs).unwrap().len() > 0);
    // serve: lists every line without holding them.
    let serve_out = tmp.path().join("served");
    let said = tmp.path().join("serve.txt");
    let script = "(ulimit -v 200000 && exec \"$0\" serve --port 0 --data \"$1\" --out \"$2\") > \"$3\" 2>&1 & pid=$!; \
         for i in $(seq 60); do grep -q serving \"$3\" && break; kill -0 $pid 2>/dev/null || break; sleep 1; done; \
         kill -TERM $pid; wait $pid";
    std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_kumo-gen"))
        .arg(data)
        .arg(&serve_out)
        .arg(&said)
        .status()
        .unwrap();
    let said = std::fs::read_to_string(&said).unwrap();
    assert!(said.contains("40000 lines"), "{said}");
}

/// A file read whole (score's instances) with one 200 MB line, under a
/// 150 MB address space: refused at the line cap, not read to its end.
#[test]
fn a_long_line_in_a_file_read_whole_is_refused_before_it_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    generate_tiny(&data, 2, &[]).timeout(LIMIT).ok();
    let results = tmp.path().join("results");
    eval_player("golden", &data, &results, &["--trials", "1"])
        .timeout(LIMIT)
        .ok();
    let long = tmp.path().join("long.jsonl");
    {
        use std::io::Write;
        let mut file = std::io::BufWriter::new(std::fs::File::create(&long).unwrap());
        let chunk = vec![b' '; 1 << 20];
        for _ in 0..200 {
            file.write_all(&chunk).unwrap();
        }
        file.write_all(b"{}\n").unwrap();
    }
    let ran = capped(
        150_000,
        &[
            "score",
            results.to_str().unwrap(),
            "--instances",
            long.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert_eq!(ran.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("line 1 is longer than 16777216 bytes"),
        "{stderr}"
    );
}

/// Templates and `--domains-dir` entries that are FIFOs: refused by name
/// (never replaced by the shipped one, never blocking).
#[test]
fn templates_and_domains_that_are_not_files_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let templates = tmp.path().join("templates");
    std::fs::create_dir(&templates).unwrap();
    mkfifo(&templates.join("book.j2"));
    let mut c = generate_tiny(&tmp.path().join("a"), 2, &["--templates-dir"]);
    c.arg(&templates)
        .timeout(LIMIT)
        .expect_code(1)
        .stderr_contains("book.j2")
        .stderr_contains("FIFO");
    let domains = tmp.path().join("domains");
    std::fs::create_dir(&domains).unwrap();
    mkfifo(&domains.join("medical.yaml"));
    TestCommand::new()
        .arg("--domains-dir")
        .arg(&domains)
        .args(["generate", "--domain", "medical", "-n", "2", "--out"])
        .arg(tmp.path().join("b"))
        .timeout(LIMIT)
        .expect_code(1)
        .stderr_contains("medical.yaml")
        .stderr_contains("FIFO");
}

/// A setting file that is a FIFO: eval, pairs and serve name it, in the
/// error when it is the only one.
#[test]
fn setting_files_that_are_not_files_are_named_not_skipped_silently() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(data.join("tiny")).unwrap();
    let fifo = data.join("tiny").join(format!("{TINY_SETTING}.jsonl"));
    mkfifo(&fifo);
    let mut eval = eval_player("golden", &data, &tmp.path().join("r"), &["--domain", TINY]);
    let mut pairs = TestCommand::new();
    pairs
        .arg("pairs")
        .arg("--data")
        .arg(&data)
        .args(["--domain", TINY]);
    let mut serve = TestCommand::new();
    serve
        .arg("serve")
        .arg("--data")
        .arg(&data)
        .arg("--out")
        .arg(tmp.path().join("s"))
        .args(["--domain", TINY, "--port", "0"]);
    for command in [&mut eval, &mut pairs, &mut serve] {
        command
            .timeout(LIMIT)
            .expect_code(1)
            .stderr_contains(TINY_SETTING)
            .stderr_contains("FIFO");
    }
}

/// `score`/`report`/`moves`/`stats --instances` of an empty folder or an
/// empty file: refused by name, not scored as if unchecked.
#[test]
fn instances_that_hold_nothing_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    generate_tiny(&data, 2, &[]).timeout(LIMIT).ok();
    let results = tmp.path().join("results");
    eval_player("golden", &data, &results, &["--trials", "1"])
        .timeout(LIMIT)
        .ok();
    let empty_dir = tmp.path().join("EMPTY");
    std::fs::create_dir(&empty_dir).unwrap();
    let empty_file = tmp.path().join("empty.jsonl");
    std::fs::write(&empty_file, "").unwrap();
    for empty in [&empty_dir, &empty_file] {
        for args in [
            vec!["score"],
            vec!["stats"],
            vec!["report", "-o", tmp.path().join("page").to_str().unwrap()],
        ] {
            TestCommand::new()
                .args(&args[..1])
                .arg(&results)
                .args(&args[1..])
                .arg("--instances")
                .arg(empty)
                .timeout(LIMIT)
                .expect_code(1)
                .stderr_contains("holds no instance");
        }
    }
}

/// merge: a shard that is a FIFO is named as unreadable (exit 1, not
/// "cannot write"), a line past the cap is refused, and a damaged shard's
/// advice is to make it again (`--force` would refuse the same way).
#[test]
fn merge_reads_shards_by_the_rules_and_advises_what_mends_them() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    for k in ["0/2", "1/2"] {
        generate_tiny(&out, 4, &["--shard", k]).timeout(LIMIT).ok();
    }
    let shard = out
        .join("tiny/shards")
        .join(TINY_SETTING)
        .join("shard-0-of-2.jsonl");
    let kept = std::fs::read(&shard).unwrap();
    let merge = || {
        let mut c = TestCommand::new();
        c.args(["merge", "--force", "--out"]).arg(&out);
        c
    };
    std::fs::remove_file(&shard).unwrap();
    mkfifo(&shard);
    merge()
        .timeout(LIMIT)
        .expect_code(1)
        .stderr_contains("cannot read")
        .stderr_contains("FIFO")
        .stderr_lacks("cannot write");
    std::fs::remove_file(&shard).unwrap();
    std::fs::write(&shard, format!("{}\n", "x".repeat(500))).unwrap();
    merge()
        .env("KUMO_GEN_MAX_LINE_BYTES", "100")
        .timeout(LIMIT)
        .expect_code(1)
        .stderr_contains("line 1 is longer than 100 bytes");
    merge()
        .timeout(LIMIT)
        .expect_code(1)
        .stderr_contains("is damaged")
        .stderr_contains("make that shard again")
        .stderr_lacks("pass `--force`");
    std::fs::write(&shard, kept).unwrap();
    merge().timeout(LIMIT).ok();
}

/// A result line past the line cap (many trials, a small cap here) is not
/// written: the readers could not read it.
#[test]
fn a_result_line_past_the_cap_is_not_written() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    generate_tiny(&data, 2, &[]).timeout(LIMIT).ok();
    let results = tmp.path().join("results");
    eval_player("golden", &data, &results, &["--trials", "50"])
        .env("KUMO_GEN_MAX_LINE_BYTES", "3000")
        .timeout(LIMIT)
        .expect_code(1)
        .stderr_contains("longer than 3000 bytes")
        .stderr_contains("--trials");
    let file = results
        .join("golden/VanillaAgent/tiny")
        .join(TINY_SETTING)
        .join("eval_times=50.jsonl");
    assert_eq!(std::fs::read(&file).unwrap(), b"");
}

/// A domain of 5000 truths whose one action rules nothing out: one
/// warning for the truths, not 5000 (each several lines).
#[test]
fn a_flood_of_warnings_is_summarised() {
    let tmp = tempfile::tempdir().unwrap();
    let domain = tmp.path().join("flood.yaml");
    let truths: Vec<String> = (0..5000).map(|i| format!("T{i}")).collect();
    std::fs::write(
        &domain,
        format!(
            "name: flood\ntruths: [{}]\nactions:\n  - name: A\n    type: str\n    states:\n      a: []\n      b: []\n",
            truths.join(", ")
        ),
    )
    .unwrap();
    let ran = TestCommand::new()
        .arg("validate")
        .arg(&domain)
        .timeout(LIMIT)
        .run();
    let stderr = ran.stderr_text() + &ran.stdout_text();
    assert!(stderr.lines().count() < 40, "{}", stderr.lines().count());
    assert!(
        stderr.contains("no state rules out 5000 of the 5000 truths"),
        "{stderr}"
    );
}
