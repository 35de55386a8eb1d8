//! Hostile inputs to the readers and writers (docs/safety.md): files that
//! are not regular (a FIFO, a link to `/dev/zero`, a directory), lines and
//! files past their bounds, directory links that loop. Every reader refuses
//! them by name with exit 1, at once: no hang, no unbounded memory.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{TINY_SETTING, TestCommand, eval_player, generate_in, generate_tiny};

/// Long enough for a debug-free release run, short enough to catch a spin.
const LIMIT: Duration = Duration::from_secs(60);

/// `kumo-gen generate` of 20 medical 4x6 instances into `out`.
fn medical(out: &Path, extra: &[&str]) -> TestCommand {
    let mut command = generate_in("medical", (4, 6), out, 20, extra);
    command.timeout(LIMIT);
    command
}

/// `kumo-gen propose --topics TOPICS --out OUT` against an address where
/// nobody listens (each use is refused before any request).
fn propose_topics(topics: &Path, out: &Path) -> TestCommand {
    let mut command = TestCommand::new();
    command
        .args([
            "propose",
            "--api-base",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
        ])
        .arg("--topics")
        .arg(topics)
        .arg("--out")
        .arg(out);
    command
}

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

/// Runs `command` and expects exit 1 with `needles` (and the file's name)
/// in stderr, within [`LIMIT`].
fn refused(command: &mut TestCommand, file: &Path, needle: &str) {
    let ran = command.timeout(LIMIT).expect_code(1);
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    ran.stderr_contains(&name).stderr_contains(needle);
}

/// The commands that read a file of instances or topics the user names,
/// each reading `file`.
fn readers_of(file: &Path, tmp: &Path) -> Vec<(&'static str, TestCommand)> {
    let mut list = Vec::new();
    let mut c = TestCommand::new();
    c.args(["overlap"]).arg(file).arg(file);
    list.push(("overlap", c));
    let mut c = medical(&tmp.join("excluding"), &["--exclude"]);
    c.arg(file);
    list.push(("--exclude", c));
    let mut c = TestCommand::new();
    c.args(["label", "--domain", "medical", "--instances"])
        .arg(file);
    list.push(("label", c));
    let mut c = TestCommand::new();
    c.args(["play", "--domain", "medical", "--instances"])
        .arg(file);
    list.push(("play", c));
    list.push(("propose", propose_topics(file, &tmp.join("proposed"))));
    let mut c = TestCommand::new();
    c.args(["score"]).arg(file).args(["--instances"]).arg(file);
    list.push(("score", c));
    let mut c = TestCommand::new();
    c.args(["stats"]).arg(file).args(["--instances"]).arg(file);
    list.push(("stats", c));
    let mut c = TestCommand::new();
    c.args(["import"]).arg(file);
    list.push(("import", c));
    list
}

#[test]
fn a_fifo_is_refused_by_every_reader_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("instances.jsonl");
    mkfifo(&fifo);
    for (what, mut command) in readers_of(&fifo, tmp.path()) {
        eprintln!("{what}");
        refused(&mut command, &fifo, "FIFO");
    }
}

#[test]
fn dev_zero_is_refused_by_every_reader_without_reading_it() {
    let tmp = tempfile::tempdir().unwrap();
    let zero = tmp.path().join("zero.jsonl");
    symlink("/dev/zero", &zero);
    for (what, mut command) in readers_of(&zero, tmp.path()) {
        eprintln!("{what}");
        refused(&mut command, &zero, "character device");
    }
    // Named directly, too.
    let mut play = TestCommand::new();
    play.args(["play", "--domain", "medical", "--instances", "/dev/zero"]);
    refused(&mut play, Path::new("/dev/zero"), "not a regular file");
    let mut propose = propose_topics(Path::new("/dev/zero"), &tmp.path().join("p"));
    refused(&mut propose, Path::new("/dev/zero"), "not a regular file");
}

/// A downloaded dataset can carry a link to a device among its files.
#[test]
fn a_dev_zero_link_inside_a_dataset_folder_is_refused_by_overlap_and_exclude() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("A");
    medical(&a, &[]).ok();
    let zero = a.join("medical/zz-extra.jsonl");
    symlink("/dev/zero", &zero);
    let mut overlap = TestCommand::new();
    overlap.arg("overlap").arg(&a).arg(&a);
    refused(&mut overlap, &zero, "character device");
    let mut exclude = medical(&tmp.path().join("B"), &["--exclude"]);
    exclude.arg(&a);
    refused(&mut exclude, &zero, "character device");
    assert!(
        !tmp.path()
            .join("B/medical/truth_num=4+action_num=6+valid_truth_num=1.jsonl")
            .exists()
    );
}

/// `mkdir -p D/sub && ln -s .. D/sub/up && ln -s ../D D/self`: each
/// directory is read once, so the answers equal those without the links.
#[test]
fn directory_link_cycles_do_not_spin_overlap_exclude_score_or_stats() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("plain");
    generate_tiny(&plain, 3, &[]).ok();
    let looped = tmp.path().join("D");
    generate_tiny(&looped, 3, &[]).ok();
    std::fs::create_dir_all(looped.join("sub")).unwrap();
    symlink("..", &looped.join("sub/up"));
    symlink("../D", &looped.join("self"));

    let overlap = |dir: &Path| {
        let report = TestCommand::new()
            .args(["overlap", "--json"])
            .arg(dir)
            .arg(dir)
            .timeout(LIMIT)
            .ok()
            .stdout_json();
        // The counts (the paths differ).
        (
            report["a"]["lines"].clone(),
            report["a"]["distinct"].clone(),
            report["shared"].clone(),
        )
    };
    assert_eq!(overlap(&looped), overlap(&plain));

    // The tiny sets exclude nothing of medical, but are read whole, once.
    let out = tmp.path().join("out-looped");
    medical(&out, &["--exclude"]).arg(&looped).ok();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("medical/manifest.json")).unwrap()).unwrap();
    let set = &manifest["datasets"]["truth_num=4+action_num=6+valid_truth_num=1"]["parameters"]["exclude"]
        [0];
    assert_eq!(set["instances"], 3, "{set}");

    // Results of the tiny sets, scored and tested against the looped
    // folder as the instances.
    let results = tmp.path().join("results");
    eval_player("golden", &plain, &results, &["--trials", "1"])
        .timeout(LIMIT)
        .ok();
    std::fs::create_dir_all(results.join("sub")).unwrap();
    symlink("..", &results.join("sub/up"));
    let score = |instances: &Path| {
        TestCommand::new()
            .arg("score")
            .arg(&results)
            .arg("--instances")
            .arg(instances)
            .arg("--json")
            .timeout(LIMIT)
            .ok()
            .stdout_json()
    };
    assert_eq!(score(&looped), score(&plain));
    TestCommand::new()
        .arg("stats")
        .arg(&results)
        .arg("--instances")
        .arg(&looped)
        .timeout(LIMIT)
        .run();
}

/// A 64 MB line: refused at the 16 MiB cap, not read whole.
#[test]
fn a_line_over_the_cap_is_refused_with_its_number() {
    let tmp = tempfile::tempdir().unwrap();
    let long = tmp.path().join("long.jsonl");
    let mut bytes = b"\n".to_vec();
    bytes.extend(std::iter::repeat_n(b' ', 64 << 20));
    bytes.extend_from_slice(b"{}\n");
    std::fs::write(&long, &bytes).unwrap();
    let mut overlap = TestCommand::new();
    overlap.arg("overlap").arg(&long).arg(&long);
    refused(&mut overlap, &long, "line 2 is longer than 16777216 bytes");
    // Every reader has the cap; a small one set for the test.
    let short = tmp.path().join("short.jsonl");
    std::fs::write(&short, format!("\n{}\n", "x".repeat(200))).unwrap();
    for (what, mut command) in readers_of(&short, tmp.path()) {
        if what == "import" {
            continue; // a Python file, not lines
        }
        eprintln!("{what}");
        command.env("KUMO_GEN_MAX_LINE_BYTES", "100");
        refused(&mut command, &short, "KUMO_GEN_MAX_LINE_BYTES");
    }
    // stdin too.
    TestCommand::new()
        .args(["label", "--domain", "medical", "--instances", "-"])
        .env("KUMO_GEN_MAX_LINE_BYTES", "100")
        .stdin("x".repeat(300))
        .timeout(LIMIT)
        .expect_code(1)
        .stderr_contains("line 1 is longer than 100 bytes");
}

/// The total-size bound, named with the variable that raises it.
#[test]
fn a_file_over_the_size_bound_is_refused_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    generate_tiny(&data, 3, &[]).ok();
    let file: PathBuf = data.join("tiny").join(format!("{TINY_SETTING}.jsonl"));
    for args in [&["overlap"][..], &["score", "--instances"]] {
        let mut command = TestCommand::new();
        command
            .args(args)
            .arg(&file)
            .arg(&file)
            .env("KUMO_GEN_MAX_FILE_BYTES", "100");
        refused(&mut command, &file, "KUMO_GEN_MAX_FILE_BYTES");
    }
}

/// A directory where a file is read is named as one.
#[test]
fn a_directory_given_as_a_file_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("topics.txt");
    std::fs::create_dir(&dir).unwrap();
    let mut propose = propose_topics(&dir, &tmp.path().join("p"));
    refused(&mut propose, &dir, "a directory");
    let mut label = TestCommand::new();
    label
        .args(["label", "--domain", "medical", "--instances"])
        .arg(&dir);
    refused(&mut label, &dir, "a directory");
}

/// Every file under `dir`, following nothing (for "nothing was written
/// there").
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A linked folder where the writers make one (`SECRET-seeds`, its
/// domain folder, a part's folder, `<part>/SECRET-seeds`, `level-k`,
/// `hf`): refused, and nothing lands where the link points.
#[test]
fn linked_folders_inside_out_are_never_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let cases: [(&str, &[&str], &[&str]); 6] = [
        ("SECRET-seeds", &[], &["--seed", "random"]),
        (
            "SECRET-seeds/medical",
            &["SECRET-seeds"],
            &["--seed", "random"],
        ),
        ("train", &[], &["--split", "train=0.5,test=0.5"]),
        (
            "train/SECRET-seeds",
            &["train"],
            &["--split", "train=0.5,test=0.5", "--seed", "random"],
        ),
        ("level-1", &[], &[]),
        ("hf", &[], &["--hf"]),
    ];
    for (i, (link, dirs, flags)) in cases.into_iter().enumerate() {
        let out = tmp.path().join(format!("out-{i}"));
        for dir in dirs {
            std::fs::create_dir_all(out.join(dir)).unwrap();
        }
        let link_path = out.join(link);
        std::fs::create_dir_all(link_path.parent().unwrap()).unwrap();
        symlink(&outside, &link_path);
        let mut command = if link == "level-1" {
            let mut c = TestCommand::new();
            c.args(["curriculum", "--domain", "medical", "--truths", "4"])
                .args(["--actions", "6", "-n", "10", "--levels", "2", "--out"])
                .arg(&out);
            c
        } else {
            medical(&out, flags)
        };
        command
            .timeout(LIMIT)
            .expect_code(2)
            .stderr_contains("symbolic link");
        assert_eq!(files_under(&outside), Vec::<PathBuf>::new(), "{link}");
    }
}

/// Under umask 000 the seed's folders are still private.
#[test]
fn secret_seed_folders_are_private_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 000 && exec \"$0\" generate --domain medical --truths 4 --actions 6 -n 5 --seed random --out '{}'",
            out.display()
        ))
        .arg(env!("CARGO_BIN_EXE_kumo-gen"))
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let seeds = out.join("SECRET-seeds");
    assert_eq!(mode(&seeds), 0o700);
    assert_eq!(mode(&seeds.join("medical")), 0o700);
    for file in files_under(&seeds) {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
}

/// Part names that are kumo-gen's own folders, the domain's folder, or
/// another part's in other letter case: refused before anything is
/// written, so no seed can land in the published `hf/`.
#[test]
fn reserved_and_case_folded_part_names_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    for split in [
        "hf=0.5,test=0.5",
        "HF=0.5,test=0.5",
        "SECRET-seeds=0.5,test=0.5",
        "level-1=0.5,test=0.5",
        "train=0.5,sft=0.5",
        "Train=0.5,train=0.5",
        "medical=0.5,test=0.5",
    ] {
        let ran = medical(&out, &["--split", split, "--hf", "--seed", "random"]).run();
        assert_ne!(ran.status.code(), Some(0), "{split}");
        ran.stderr_contains("part");
        assert!(!out.exists(), "{split}: {:?}", files_under(&out));
    }
}

/// Topics whose names are reserved or differ only in case.
#[test]
fn reserved_and_case_folded_topic_names_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for (topics, needle) in [
        ("tea | Teas\nTea | More teas\n", "letter case"),
        ("hf | Hugging\n", "kumo-gen's own `hf` folder"),
        ("level-2 | Levels\n", "curriculum level"),
    ] {
        let file = tmp.path().join("topics.txt");
        std::fs::write(&file, topics).unwrap();
        propose_topics(&file, &tmp.path().join("proposed"))
            .timeout(LIMIT)
            .expect_code(1)
            .stderr_contains(needle);
    }
}

/// A model whose results folder differs only in case from one in `--out`.
#[test]
fn a_model_differing_only_in_case_from_earlier_results_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    generate_tiny(&data, 2, &[]).ok();
    let results = tmp.path().join("results");
    std::fs::create_dir_all(results.join("Golden")).unwrap();
    eval_player("golden", &data, &results, &["--trials", "1"])
        .timeout(LIMIT)
        .expect_code(1)
        .stderr_contains("only in letter case");
}
