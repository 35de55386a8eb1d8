//! Fault injection from the outside: closed stderr and stdout, kills,
//! a full disk, symbolic links inside `--out`. Each test checks that
//! nothing is lost, nothing is written outside `--out`, no temp file
//! survives the next run and the exit code is the documented one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{TINY, TINY_SETTING, TestCommand, generate_tiny, root};

const SETTING: &str = TINY_SETTING;

/// `kumo-gen generate` of the tiny fixture into `out` (`-n n`), with `extra`.
fn generate(out: &Path, n: u64, extra: &[&str]) -> TestCommand {
    generate_tiny(out, n, extra)
}

/// A pipe whose reading end is already closed: every write fails (EPIPE).
fn broken_pipe() -> std::io::PipeWriter {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer
}

/// Every path under `dir` (relative), sorted.
fn all_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            out.push(path.strip_prefix(base).unwrap().to_path_buf());
            if path.is_dir() && !path.is_symlink() {
                walk(base, &path, out);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files);
    files.sort();
    files
}

/// Temp files of the writers (`.NAME.tmp...`) anywhere under `dir`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    all_files(dir)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(".tmp"))
        })
        .collect()
}

#[test]
fn a_closed_stderr_and_stdout_do_not_stop_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let status = generate(&out, 5, &[])
        .stdout(broken_pipe())
        .stderr(broken_pipe())
        .run()
        .status;
    assert_eq!(status.code(), Some(0));
    let domain = out.join("tiny");
    assert!(domain.join(format!("{SETTING}.jsonl")).is_file());
    assert!(domain.join(format!("sft/{SETTING}.jsonl")).is_file());
    assert_eq!(
        std::fs::read_dir(domain.join(format!("knowledge_book/{SETTING}")))
            .unwrap()
            .count(),
        5
    );
    // An error with stderr closed still ends with its documented code.
    let status = TestCommand::new()
        .args(["generate", "--domain", "no-such-domain", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(broken_pipe())
        .run()
        .status;
    assert_eq!(status.code(), Some(1));
    let status = TestCommand::new()
        .args(["check-books", "--domain", TINY])
        .arg(&domain)
        .stdout(broken_pipe())
        .stderr(broken_pipe())
        .run()
        .status;
    assert_eq!(status.code(), Some(0));
    assert!(temp_files(&out).is_empty());
}

#[test]
fn symbolic_links_inside_out_are_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let victim = outside.join("victim.txt");
    std::fs::write(&victim, "keep me\n").unwrap();
    generate(&out, 3, &[]).ok();
    let domain = out.join("tiny");

    // A dataset file that is a link: `--force` replaces the link itself.
    let dataset = domain.join(format!("{SETTING}.jsonl"));
    std::fs::remove_file(&dataset).unwrap();
    std::os::unix::fs::symlink(&victim, &dataset).unwrap();
    generate(&out, 3, &["--force"]).ok();
    assert!(!dataset.is_symlink());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");

    // A derived directory that is a link is refused (exit 2, named).
    let sft = domain.join("sft");
    std::fs::remove_dir_all(&sft).unwrap();
    std::os::unix::fs::symlink(&outside, &sft).unwrap();
    let refused = generate(&out, 3, &["--force"]).expect_code(2);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("symbolic link") && said.contains("sft"),
        "{said}"
    );
    assert_eq!(all_files(&outside), vec![PathBuf::from("victim.txt")]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
}

#[test]
fn requests_beyond_the_documented_bounds_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let huge = generate(&out, 1_000_000_000_000, &[]).expect_code(2);
    let said = String::from_utf8_lossy(&huge.stderr);
    assert!(said.contains("100000000"), "{said}");
    assert!(!out.exists(), "nothing written");
    let trials = TestCommand::new()
        .args(["eval", "--model", "m", "--trials", "4294967296", "--data"])
        .arg(&out)
        .expect_code(2);
    let said = String::from_utf8_lossy(&trials.stderr);
    assert!(said.contains("1000"), "{said}");
}

#[test]
fn a_run_stopped_by_a_full_disk_resumes_to_the_same_bytes_and_leaves_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, full) = (dir.path().join("whole"), dir.path().join("full"));
    let medical = |out: &Path| {
        let mut command = TestCommand::new();
        command
            .args(["--domain", "medical", "--truths", "6", "--actions", "8"])
            .args(["-n", "60", "--out"])
            .arg(out);
        command
    };
    medical(&whole).ok();
    // A file-size limit stands in for a full disk: the kernel stops the
    // run (SIGXFSZ) in the middle of a write: at 8 KiB while the manifest
    // is written (its temp file is left), at 32 KiB inside the dataset.
    let program = env!("CARGO_BIN_EXE_kumo-gen");
    let dataset = "medical/truth_num=6+action_num=8+valid_truth_num=1.jsonl";
    for blocks in [16, 64] {
        let _ = std::fs::remove_dir_all(&full);
        let stopped = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -f {blocks}; exec '{program}' --domain medical --truths 6 --actions 8 -n 60 --out '{}'",
                full.display()
            ))
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(!stopped.success(), "the size limit stops the run");
        if blocks == 64 {
            assert_eq!(
                std::fs::metadata(full.join(dataset)).unwrap().len(),
                32 * 1024,
                "what was written before the disk filled is kept"
            );
        }
        medical(&full).ok();
        assert_eq!(
            std::fs::read(full.join(dataset)).unwrap(),
            std::fs::read(whole.join(dataset)).unwrap()
        );
        assert_eq!(temp_files(&full), Vec::<PathBuf>::new(), "{blocks} blocks");
    }
    let names = |d: &Path| -> Vec<PathBuf> {
        all_files(d)
            .into_iter()
            .filter(|p| !p.ends_with("manifest.json"))
            .collect()
    };
    assert_eq!(names(&full), names(&whole), "nothing lost, nothing extra");
}

#[test]
fn label_removes_the_temp_file_of_a_killed_run_and_reports_a_full_disk() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    generate(&out, 4, &["--no-labels"]).ok();
    let instances = out.join(format!("tiny/{SETTING}.jsonl"));
    let labelled = dir.path().join("labelled.jsonl");
    // A PID above the kernel's largest (2^22) belongs to no process.
    let orphan = dir.path().join(".labelled.jsonl.tmp-99999999");
    std::fs::write(&orphan, "{\"partial\":").unwrap();
    let label = |target: &Path| {
        TestCommand::new()
            .args(["label", "--domain", TINY, "--instances"])
            .arg(&instances)
            .arg("-o")
            .arg(target)
            .run()
    };
    let done = label(&labelled);
    assert!(done.status.success(), "{done:?}");
    assert!(!orphan.exists(), "the killed run's temp file is removed");
    assert_eq!(
        std::fs::read_to_string(&labelled).unwrap().lines().count(),
        4
    );
    // `/dev/full` fails every write with ENOSPC: an output failure, exit 2.
    let full = label(Path::new("/dev/full"));
    assert_eq!(full.status.code(), Some(2), "{full:?}");
    let said = String::from_utf8_lossy(&full.stderr);
    assert!(said.contains("/dev/full"), "{said}");
}

#[test]
fn a_missing_input_file_exits_1_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let missing = missing.to_str().unwrap();
    let commands: [&[&str]; 5] = [
        &["import", missing],
        &["score", missing],
        &["stats", "--instances", missing, missing],
        &["label", "--domain", TINY, "--instances", missing],
        &["validate", missing],
    ];
    for args in commands {
        let output = TestCommand::new().args(args).run();
        assert_eq!(output.status.code(), Some(1), "{args:?}: {output:?}");
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(said.contains(missing), "{args:?} names the file: {said}");
    }
    // `import X.py -o X.py` would overwrite its own input: refused.
    let python = dir.path().join("domain.py");
    let text = "truths = ['A', 'B']\n";
    std::fs::write(&python, text).unwrap();
    TestCommand::new()
        .arg("import")
        .arg(&python)
        .arg("-o")
        .arg(&python)
        .expect_code(1);
    assert_eq!(std::fs::read_to_string(&python).unwrap(), text);
}

/// `eval --player guess` of the eval fixture into `out`.
fn eval_guess(out: &Path) -> std::process::Output {
    TestCommand::new()
        .args(["eval", "--player", "guess", "--trials", "1", "--data"])
        .arg(root().join("tests/fixtures/eval"))
        .args(["--domain", TINY, "--out"])
        .arg(out)
        .env_remove("OPENAI_API_KEY")
        .env_remove("KUMO_API_KEY")
        .output()
        .unwrap()
}

#[test]
fn eval_refuses_a_symlinked_results_folder_or_file_and_writes_nothing_outside_out() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let victim = outside.join("victim.jsonl");
    std::fs::write(&victim, "keep me\n").unwrap();
    let first = eval_guess(&out);
    assert!(first.status.success(), "{first:?}");
    let file = out
        .join("guess/VanillaAgent/tiny/truth_num=4+action_num=3+valid_truth_num=1")
        .join("eval_times=1.jsonl");
    assert!(file.is_file());

    // The result file is a link to a file outside `--out`.
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&victim, &file).unwrap();
    let refused = eval_guess(&out);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("symbolic link") && said.contains("eval_times=1.jsonl"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");

    // A results folder is a link to a folder outside `--out`.
    let agent = out.join("guess/VanillaAgent");
    std::fs::remove_dir_all(&agent).unwrap();
    std::os::unix::fs::symlink(&outside, &agent).unwrap();
    let refused = eval_guess(&out);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("symbolic link") && said.contains("VanillaAgent"),
        "{said}"
    );
    assert_eq!(all_files(&outside), vec![PathBuf::from("victim.jsonl")]);
}

/// Sets the permission bits of `path` and everything below it: `write`
/// adds or removes write permission for everyone, read and traverse
/// permission is given to everyone.
fn set_writable(path: &Path, write: bool) {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).unwrap().permissions().mode();
    let dir = path.is_dir();
    if dir && write {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | 0o777)).unwrap();
    }
    if dir {
        for entry in std::fs::read_dir(path).unwrap() {
            set_writable(&entry.unwrap().path(), write);
        }
    }
    let readable = if dir { 0o555 } else { 0o444 };
    let mode = if write {
        mode | 0o666 | readable
    } else {
        (mode & !0o222) | readable
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `kumo-gen args` run in `dir` by a user that cannot write to a
/// read-only directory: root ignores permission bits, so under root it
/// runs as `nobody` (uid 65534) through `setpriv`.
fn as_reader(bin: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    use std::os::unix::fs::MetadataExt;
    let root_user = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    let mut command = if root_user {
        let mut c = Command::new("setpriv");
        c.args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
            .arg(bin);
        c
    } else {
        Command::new(bin)
    };
    command.current_dir(dir).args(args).output().unwrap()
}

#[test]
fn a_finished_dataset_in_a_read_only_directory_can_be_checked_and_re_run() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    // Everything the reader runs lives in the temp dir, readable by all.
    let bin = base.join("kumo-gen");
    std::fs::copy(env!("CARGO_BIN_EXE_kumo-gen"), &bin).unwrap();
    std::fs::copy(root().join(TINY), base.join("tiny.yaml")).unwrap();
    let out = base.join("out");
    assert!(generate(&out, 5, &[]).status().unwrap().success());
    let played = TestCommand::new()
        .args(["eval", "--player", "guess", "--trials", "1", "--data"])
        .arg(&out)
        .args(["--domain", TINY, "--out"])
        .arg(base.join("results"))
        .output()
        .unwrap();
    assert!(played.status.success(), "{played:?}");
    set_writable(base, true);
    set_writable(&out, false);
    set_writable(&base.join("results"), false);
    let before = all_files(&out);
    assert!(
        before
            .iter()
            .any(|p| p.to_string_lossy().ends_with(".lock"))
    );

    let same = [
        "generate",
        "--domain",
        "tiny.yaml",
        "--truths",
        "3",
        "--actions",
        "3",
        "-n",
        "5",
        "--out",
        "out",
    ];
    let checks: [&[&str]; 4] = [
        &same,
        &["check-books", "--domain", "tiny.yaml", "out/tiny"],
        &["overlap", "out/tiny", "out/tiny"],
        &[
            "score",
            "results",
            "--instances",
            "out",
            "--domain",
            "tiny.yaml",
        ],
    ];
    for args in checks {
        let output = as_reader(&bin, base, args);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {output:?}");
    }
    let rerun = as_reader(&bin, base, &same);
    assert!(
        String::from_utf8_lossy(&rerun.stderr).contains("nothing to do"),
        "{rerun:?}"
    );
    // Without its lock files (a dataset copied to read-only media) too.
    set_writable(&out, true);
    for lock in before
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".lock"))
    {
        std::fs::remove_file(out.join(lock)).unwrap();
    }
    set_writable(&out, false);
    let output = as_reader(&bin, base, &same);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    // A run that must write says where it cannot (exit 2).
    let more = as_reader(&bin, base, &[&same[..], &["--steps"]].concat());
    assert_eq!(more.status.code(), Some(2), "{more:?}");
    assert!(
        String::from_utf8_lossy(&more.stderr).contains("Permission denied"),
        "{more:?}"
    );
    set_writable(base, true);
}
