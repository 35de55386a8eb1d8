//! Hostile outputs (docs/safety.md "Writing"): every writing flag aimed at
//! what the same command reads (a dataset file, a book, a results file, a
//! domain file, an `--exclude` set, a dataset folder), at a symbolic link,
//! and at a dangling link. Each is refused by name with exit 1 before
//! anything is written, and the input is left byte for byte as it was.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{TINY, TINY_SETTING, TestCommand, eval_player, generate_tiny, root};

const LIMIT: Duration = Duration::from_secs(60);

/// A tiny dataset `D`, golden results of it `R`, and a copy of the tiny
/// domain file `d.yaml`, in `dir`.
struct Inputs {
    data: PathBuf,
    results: PathBuf,
    domain: PathBuf,
}

impl Inputs {
    fn make(dir: &Path) -> Inputs {
        let data = dir.join("D");
        generate_tiny(&data, 3, &[]).timeout(LIMIT).ok();
        let results = dir.join("R");
        eval_player("golden", &data, &results, &["--trials", "1"])
            .timeout(LIMIT)
            .ok();
        let domain = dir.join("d.yaml");
        std::fs::copy(root().join(TINY), &domain).unwrap();
        Inputs {
            data,
            results,
            domain,
        }
    }

    fn dataset_file(&self) -> PathBuf {
        self.data.join("tiny").join(format!("{TINY_SETTING}.jsonl"))
    }

    fn book(&self) -> PathBuf {
        self.data
            .join("tiny/knowledge_book")
            .join(TINY_SETTING)
            .join("seed=0.txt")
    }

    fn results_file(&self) -> PathBuf {
        self.results
            .join("golden/VanillaAgent/tiny")
            .join(TINY_SETTING)
            .join("eval_times=1.jsonl")
    }
}

fn command(args: &[&dyn AsRef<std::ffi::OsStr>]) -> TestCommand {
    let mut c = TestCommand::new();
    for a in args {
        c.arg(a);
    }
    c.env_remove("OPENAI_API_KEY").env_remove("KUMO_API_KEY");
    c
}

/// Runs `c`, expecting the refusal (exit 1, both places named) and
/// `victim` unchanged.
fn refused_over(what: &str, c: &mut TestCommand, victim: &Path) {
    let before = std::fs::read(victim).unwrap();
    eprintln!("{what}");
    let ran = c.timeout(LIMIT).expect_code(1);
    ran.stderr_contains("which this command reads");
    assert_eq!(std::fs::read(victim).unwrap(), before, "{what}: {victim:?}");
}

#[test]
fn every_writing_flag_refuses_to_write_over_or_inside_its_own_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let i = Inputs::make(tmp.path());
    let (data, results, domain) = (&i.data, &i.results, &i.domain);
    let (file, book, result) = (i.dataset_file(), i.book(), i.results_file());
    let d = |s: &str| -> PathBuf { tmp.path().join(s) };

    // pairs -o: onto the dataset file, onto a book.
    for target in [&file, &book] {
        refused_over(
            "pairs -o",
            &mut command(&[&"pairs", &"--data", data, &"-o", target]),
            target,
        );
    }
    // moves -o onto a results file it reads, and onto its --domain file.
    refused_over(
        "moves -o",
        &mut command(&[&"moves", results, &"--instances", data, &"-o", &result]),
        &result,
    );
    refused_over(
        "moves -o domain",
        &mut command(&[
            &"moves",
            results,
            &"--instances",
            data,
            &"--domain",
            domain,
            &"-o",
            domain,
        ]),
        domain,
    );
    // score --svg and --curve-svg onto a results file.
    refused_over(
        "score --svg",
        &mut command(&[&"score", results, &"--svg", &result]),
        &result,
    );
    refused_over(
        "score --curve-svg",
        &mut command(&[
            &"score",
            results,
            &"--instances",
            data,
            &"--curve-svg",
            &result,
        ]),
        &result,
    );
    // report --out into the books it reads.
    let books = book.parent().unwrap().to_path_buf();
    refused_over(
        "report --out",
        &mut command(&[&"report", results, &"--instances", data, &"--out", &books]),
        &book,
    );
    // label -o onto its domain file and onto its instances.
    for target in [domain, &file] {
        refused_over(
            "label -o",
            &mut command(&[
                &"label",
                &"--domain",
                domain,
                &"--instances",
                &file,
                &"-o",
                target,
            ]),
            target,
        );
    }
    // play --out onto the instance file it plays.
    refused_over(
        "play --out",
        &mut command(&[&"play", &"--instances", &file, &"--out", &file]),
        &file,
    );
    // eval and serve --out inside the dataset's books.
    refused_over(
        "eval --out",
        &mut command(&[
            &"eval",
            &"--player",
            &"golden",
            &"--data",
            data,
            &"--out",
            &books,
        ]),
        &book,
    );
    refused_over(
        "serve --out",
        &mut command(&[&"serve", &"--data", data, &"--out", &books, &"--port", &"0"]),
        &book,
    );
    // generate and curriculum into a folder they exclude, or holding
    // their domain file; --hf over an --exclude set.
    let tiny = PathBuf::from(TINY);
    for (what, args) in [
        ("generate --exclude", vec!["generate"]),
        ("curriculum --exclude", vec!["curriculum", "--levels", "2"]),
    ] {
        let mut c = command(&[]);
        c.args(&args)
            .args([
                "--domain",
                TINY,
                "--truths",
                "3",
                "--actions",
                "3",
                "-n",
                "3",
            ])
            .arg("--out")
            .arg(data)
            .arg("--exclude")
            .arg(data);
        refused_over(what, &mut c, &file);
    }
    let inside = data.join("tiny/d.yaml");
    std::fs::copy(root().join(&tiny), &inside).unwrap();
    let mut c = command(&[]);
    c.args(["generate", "--domain"])
        .arg(&inside)
        .args(["--truths", "3", "--actions", "3", "-n", "3", "--out"])
        .arg(data);
    refused_over("generate --domain inside --out", &mut c, &inside);
    let hf = d("H");
    generate_tiny(&hf, 3, &["--hf"]).timeout(LIMIT).ok();
    let card = hf.join("hf/README.md");
    let mut c = generate_tiny(&hf, 3, &["--hf", "--force", "--exclude"]);
    c.arg(hf.join("hf"));
    refused_over("generate --hf over --exclude", &mut c, &card);
    // propose -o onto its --example domain file (before any request).
    let example = d("example.yaml");
    std::fs::copy(root().join(TINY), &example).unwrap();
    refused_over(
        "propose -o",
        &mut command(&[
            &"propose",
            &"--topic",
            &"teas",
            &"--api-base",
            &"http://127.0.0.1:9/v1",
            &"--model",
            &"m",
            &"--example",
            &example,
            &"-o",
            &example,
        ]),
        &example,
    );
    // Through links: a linked dataset folder and a link to the file.
    let linked = d("linked");
    std::os::unix::fs::symlink(data, &linked).unwrap();
    refused_over(
        "pairs -o through a linked --data",
        &mut command(&[&"pairs", &"--data", &linked, &"-o", &file]),
        &file,
    );
    let file_link = d("link.jsonl");
    std::os::unix::fs::symlink(&file, &file_link).unwrap();
    refused_over(
        "label -o the file behind --instances' link",
        &mut command(&[
            &"label",
            &"--domain",
            &tiny,
            &"--instances",
            &file_link,
            &"-o",
            &file,
        ]),
        &file,
    );
    // What is beside the inputs, or inside them where nothing is read, is
    // written: a chart in the dataset folder, results beside it.
    command(&[
        &"score",
        results,
        &"--instances",
        data,
        &"--svg",
        &data.join("chart.svg"),
    ])
    .timeout(LIMIT)
    .ok();
    assert!(data.join("chart.svg").is_file());
    eval_player("guess", data, &data.join("results"), &["--trials", "1"])
        .timeout(LIMIT)
        .ok();
}

/// `score --svg` and `--curve-svg` replace a link at the target with the
/// chart, as every other `-o` does: the file it pointed to is untouched,
/// and a dangling link's target is not created.
#[test]
fn svgs_never_write_through_a_link() {
    let tmp = tempfile::tempdir().unwrap();
    let i = Inputs::make(tmp.path());
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, "keep me\n").unwrap();
    let missing = tmp.path().join("nowhere/made.svg");
    for (flag, extra) in [("--svg", None), ("--curve-svg", Some(&i.data))] {
        for target in [&victim, &missing] {
            let link = tmp.path().join(format!("chart{flag}.svg"));
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(target, &link).unwrap();
            let mut c = command(&[&"score", &i.results, &flag, &link]);
            if let Some(data) = extra {
                c.arg("--instances").arg(data);
            }
            c.timeout(LIMIT).ok();
            let meta = std::fs::symlink_metadata(&link).unwrap();
            assert!(meta.is_file(), "{flag}: the link is replaced by the chart");
            assert!(std::fs::read_to_string(&link).unwrap().starts_with("<svg"));
        }
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
    assert!(!missing.parent().unwrap().exists());
}

/// A dangling `--out` link is named with the missing target, not "File
/// exists (os error 17)", in every command that makes an output folder.
#[test]
fn a_dangling_out_link_is_named_with_its_target() {
    let tmp = tempfile::tempdir().unwrap();
    let i = Inputs::make(tmp.path());
    let link = tmp.path().join("out.link");
    std::os::unix::fs::symlink(tmp.path().join("gone"), &link).unwrap();
    let commands: Vec<(&str, Vec<&dyn AsRef<std::ffi::OsStr>>)> = vec![
        (
            "generate",
            vec![
                &"generate",
                &"--domain",
                &TINY,
                &"-n",
                &"2",
                &"--truths",
                &"3",
                &"--actions",
                &"3",
                &"--out",
                &link,
            ],
        ),
        (
            "curriculum",
            vec![
                &"curriculum",
                &"--levels",
                &"2",
                &"--domain",
                &TINY,
                &"-n",
                &"2",
                &"--truths",
                &"3",
                &"--actions",
                &"3",
                &"--out",
                &link,
            ],
        ),
        ("merge", vec![&"merge", &"--out", &link]),
        (
            "eval",
            vec![
                &"eval",
                &"--player",
                &"golden",
                &"--data",
                &i.data,
                &"--out",
                &link,
            ],
        ),
        ("report", vec![&"report", &i.results, &"--out", &link]),
        (
            "split",
            vec![&"split", &"--domain", &"medical", &"--out-dir", &link],
        ),
        (
            "serve",
            vec![
                &"serve", &"--data", &i.data, &"--out", &link, &"--port", &"0",
            ],
        ),
    ];
    for (what, args) in commands {
        eprintln!("{what}");
        command(&args)
            .timeout(LIMIT)
            .expect_code(1)
            .stderr_contains("is a symbolic link to")
            .stderr_contains("gone")
            .stderr_lacks("os error 17");
        assert!(!tmp.path().join("gone").exists(), "{what}");
    }
}
