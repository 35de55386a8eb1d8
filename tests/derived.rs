//! The derived artifacts of the main command, checked from the outside:
//! knowledge books (re-checked here), SFT chat and step records (replayed
//! here against the lines' golden trajectories), determinism across thread
//! counts and shards + merge, the Hugging Face card, unlabelled lines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{TestCommand, generate_in, json_lines, root};
use kumo_gen::domain::Domain;
use kumo_gen::render::{answer_tag, check_book, replay_sft};

const CLINIC: &str = "tests/fixtures/ok/clinic.yaml";
const TINY: &str = "tests/fixtures/ok/tiny.yaml";

fn load(fixture: &str) -> Domain {
    let text = std::fs::read_to_string(root().join(fixture)).unwrap();
    Domain::from_yaml(fixture, &text).unwrap().0
}

/// `kumo-gen generate` of `fixture` into `out` with `truths`/`actions`.
fn generate(
    out: &Path,
    fixture: &str,
    truths: usize,
    actions: usize,
    n: usize,
    extra: &[&str],
) -> TestCommand {
    generate_in(
        fixture,
        (truths, actions),
        out,
        n as u64,
        &[&["--steps"], extra].concat(),
    )
}

fn setting(truths: usize, actions: usize) -> String {
    format!("truth_num={truths}+action_num={actions}+valid_truth_num=1")
}

/// Every file under `dir` (relative path -> bytes), skipping `manifest.json`
/// (it records timings) and anything `skip` says.
fn tree(dir: &Path, skip: &dyn Fn(&str) -> bool) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().to_path_buf());
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files);
    files
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| p != "manifest.json" && !skip(p))
        .map(|p| {
            let bytes = std::fs::read(dir.join(&p)).unwrap();
            (p, bytes)
        })
        .collect()
}

/// Checks books and SFT records of a generated dataset against its lines;
/// returns (labelled, unlabelled) line counts.
fn check_derived(domain_dir: &Path, domain: &Domain, setting: &str) -> (usize, usize) {
    let lines = json_lines(&domain_dir.join(format!("{setting}.jsonl")));
    let books = domain_dir.join("knowledge_book").join(setting);
    assert_eq!(
        std::fs::read_dir(&books).unwrap().count(),
        lines.len(),
        "one book per line, nothing else"
    );
    let records = json_lines(&domain_dir.join("sft").join(format!("{setting}.jsonl")));
    let steps = json_lines(
        &domain_dir
            .join("sft")
            .join(format!("{setting}.steps.jsonl")),
    );
    let mut records = records.iter();
    let mut steps = steps.iter();
    let (mut labelled, mut unlabelled) = (0, 0);
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line["seed"], i as u64);
        let task = kumo_gen::game::task_from_json(domain, line).unwrap();
        let view = task.view(domain);
        let book = std::fs::read_to_string(books.join(format!("seed={i}.txt")))
            .unwrap_or_else(|e| panic!("book of seed {i}: {e}"));
        let check = check_book(&book, &view);
        assert!(check.is_ok(), "seed {i}: {:?}\n{book}", check.problems);

        let optimal = &line["optimal"];
        if optimal.get("unlabelled").is_some() {
            assert!(optimal.get("golden_trajectory").is_none(), "{line}");
            unlabelled += 1;
            continue;
        }
        labelled += 1;
        let record = records.next().expect("an SFT record per labelled line");
        let valid = domain.truth_index(line["valid_truth"].as_str().unwrap());
        assert_eq!(
            replay_sft(&view, record).ok(),
            valid,
            "seed {i}: {record:#}"
        );
        let messages = record["messages"].as_array().unwrap();
        // The system message carries the line's own book.
        assert!(
            messages[0]["content"]
                .as_str()
                .unwrap()
                .contains(book.trim_end())
        );
        for m in messages {
            let assistant = m["role"] == "assistant";
            assert_eq!(m.get("weight").is_some(), assistant, "seed {i}: {m}");
            if assistant {
                assert_eq!(m["weight"], 1);
            }
        }
        let said: Vec<&str> = messages
            .iter()
            .filter(|m| m["role"] == "assistant")
            .map(|m| m["content"].as_str().unwrap())
            .collect();
        let mut golden: Vec<String> = optimal["golden_trajectory"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| answer_tag(x.as_str().unwrap()))
            .collect();
        golden.push(answer_tag(optimal["golden_answer"].as_str().unwrap()));
        assert_eq!(said, golden, "seed {i}");
        assert_eq!(
            golden.last().unwrap(),
            &answer_tag(line["valid_truth"].as_str().unwrap())
        );
        // One step record per assistant turn: `eval`'s request of that
        // round (the history KUMO keeps: `Begin the game.` first, earlier
        // observations without the instruction) and the turn.
        for (k, turn) in messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m["role"] == "assistant")
        {
            let step = steps.next().expect("a step record per assistant turn");
            assert_eq!(step["seed"], i as u64);
            let prompt = step["prompt"].as_array().unwrap();
            assert_eq!(prompt.len(), k);
            assert_eq!(prompt[0], messages[0]);
            for (j, (p, m)) in prompt.iter().zip(messages).enumerate().skip(1) {
                assert_eq!(p["role"], m["role"]);
                assert!(p.get("weight").is_none());
                let (p, m) = (
                    p["content"].as_str().unwrap(),
                    m["content"].as_str().unwrap(),
                );
                if j + 1 == k {
                    assert_eq!(p, m, "the request's last message is the chat's user turn");
                } else if j == 1 {
                    assert_eq!(p, "Begin the game.");
                } else if m.starts_with("Observation") {
                    assert!(
                        m.starts_with(&format!("{p}\n\nAt this round")),
                        "{p:?} / {m:?}"
                    );
                } else {
                    assert_eq!(p, m);
                }
            }
            assert_eq!(step["completion"][0]["content"], turn["content"]);
        }
    }
    assert!(records.next().is_none(), "no SFT record without a label");
    assert!(steps.next().is_none(), "no step record without a turn");
    (labelled, unlabelled)
}

#[test]
fn books_and_sft_records_follow_every_line() {
    let tmp = tempfile::tempdir().unwrap();
    // The tiny domain has 4 distinct instances with all 4 truths.
    for (fixture, name, truths, actions, n) in
        [(CLINIC, "clinic", 4, 5, 30), (TINY, "tiny", 4, 3, 4)]
    {
        generate(tmp.path(), fixture, truths, actions, n, &[]).ok();
        let (labelled, unlabelled) = check_derived(
            &tmp.path().join(name),
            &load(fixture),
            &setting(truths, actions),
        );
        assert_eq!((labelled, unlabelled), (n, 0), "{name}");
    }
}

/// Books, SFT and HF files: the same bytes with 1 and 2 threads, and from
/// two shards merged.
#[test]
fn derived_bytes_do_not_depend_on_threads_or_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |dir: &str, extra: &[&str]| {
        generate(&tmp.path().join(dir), CLINIC, 4, 5, 40, extra).ok();
    };
    run("one", &["--threads", "1", "--hf"]);
    run("two", &["--threads", "2", "--hf"]);
    run("shards", &["--shard", "0/2", "--hf"]);
    run("shards", &["--shard", "1/2", "--hf"]);
    TestCommand::new()
        .args(["merge", "--hf", "--steps", "--out"])
        .arg(tmp.path().join("shards"))
        .ok();
    let derived = |p: &str| {
        !(p.starts_with("knowledge_book/") || p.starts_with("sft/") || p.starts_with("hf/"))
    };
    // The domain's folder and the export shared by the whole `--out`.
    let trees = |dir: &str| {
        let mut all = tree(&tmp.path().join(dir).join("clinic"), &derived);
        for (path, bytes) in tree(&tmp.path().join(dir).join("hf"), &|p| p.starts_with('.')) {
            all.insert(format!("hf/{path}"), bytes);
        }
        all
    };
    let one = trees("one");
    assert!(one.keys().any(|p| p.starts_with("knowledge_book/")));
    assert!(one.keys().any(|p| p.starts_with("sft/")));
    assert!(one.keys().any(|p| p.starts_with("hf/data/clinic/")));
    assert_eq!(
        one.len(),
        40 + 2 + 3,
        "{:?}",
        one.keys().collect::<Vec<_>>()
    );
    let two = trees("two");
    assert!(one == two, "1 and 2 threads wrote different derived files");
    let merged = trees("shards");
    assert_eq!(
        one.keys().collect::<Vec<_>>(),
        merged.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &one {
        assert!(
            &merged[path] == bytes,
            "shards + merge wrote a different `{path}`:\n{}\n---\n{}",
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(&merged[path])
        );
    }
}

/// `--hf`: one export under `OUT/hf/` for every domain and setting; the
/// card's `configs:` header lists data files that exist, and nothing in
/// the export points outside it.
#[test]
fn hf_card_lists_existing_data_files() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), TINY, 4, 3, 4, &["--hf"]).ok();
    generate(tmp.path(), CLINIC, 4, 5, 3, &["--hf"]).ok();
    let hf = tmp.path().join("hf");
    let card = std::fs::read_to_string(hf.join("README.md")).unwrap();
    let front = card
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .map(|(yaml, _)| yaml)
        .expect("a YAML header between --- lines");
    let header: Value = serde_saphyr::from_str(front).unwrap();
    let configs = header["configs"].as_array().expect("`configs:` list");
    let mut listed = Vec::new();
    for config in configs {
        assert!(config["config_name"].is_string(), "{config}");
        for files in config["data_files"].as_array().unwrap() {
            assert_eq!(files["split"], "train");
            for path in files["path"].as_array().unwrap() {
                listed.push(path.as_str().unwrap().to_string());
            }
        }
    }
    let (s, c) = (setting(4, 3), setting(4, 5));
    assert_eq!(
        listed,
        [
            format!("data/clinic/{c}.jsonl"),
            format!("data/clinic/{c}-sft.jsonl"),
            format!("data/tiny/{s}.jsonl"),
            format!("data/tiny/{s}-sft.jsonl"),
        ]
    );
    // The first instances are the default config.
    assert_eq!(configs[0]["config_name"], "clinic-t4-a5-v1");
    assert_eq!(configs[0]["default"], true);
    assert_eq!(configs[1]["config_name"], "clinic-t4-a5-v1-sft");
    assert_eq!(configs[2]["config_name"], "tiny-t4-a3-v1");
    assert!(!card.contains("../"), "the card points outside the export");
    for (path, n, domain) in listed
        .iter()
        .zip([3, 3, 4, 4])
        .zip(["clinic", "clinic", "tiny", "tiny"])
        .map(|((p, n), d)| (p, n, d))
    {
        let rows = json_lines(&hf.join(path));
        assert_eq!(rows.len(), n, "{path}");
        for row in &rows {
            assert_eq!(row["domain"], domain);
            let id = row["id"].as_str().unwrap();
            assert!(
                id.starts_with(&format!("{domain}/")) && id.ends_with(&format!("/{}", row["seed"])),
                "{id}"
            );
        }
        if path.ends_with("-sft.jsonl") {
            for row in &rows {
                for m in row["messages"].as_array().unwrap() {
                    assert!(m["weight"] == 0 || m["weight"] == 1, "{m}");
                    assert_eq!(m["weight"] == 1, m["role"] == "assistant", "{m}");
                }
            }
        }
    }
    // One type per column: observations are strings.
    for row in json_lines(&hf.join(&listed[0])) {
        for o in row["observations"].as_array().unwrap() {
            assert!(o["observation"].is_string(), "{o}");
        }
    }
}

/// A line whose search ran out of budget under `--exact-only` keeps its
/// book, has no SFT record, and says why.
#[test]
fn unlabelled_lines_get_a_book_and_no_sft_record() {
    let tmp = tempfile::tempdir().unwrap();
    generate(
        tmp.path(),
        CLINIC,
        4,
        5,
        20,
        &["--search-budget", "1", "--exact-only"],
    )
    .ok();
    let dir = tmp.path().join("clinic");
    let s = setting(4, 5);
    let (labelled, unlabelled) = check_derived(&dir, &load(CLINIC), &s);
    assert!(unlabelled > 0, "budget 1 leaves lines unlabelled");
    assert_eq!(labelled + unlabelled, 20);
    for line in json_lines(&dir.join(format!("{s}.jsonl"))) {
        if let Some(why) = line["optimal"].get("unlabelled") {
            assert_eq!(why, "budget exceeded");
        }
    }
}

/// A user's `book.j2` whose books fail their check is that template's
/// fault: exit 1 naming the template, and the dataset is not called
/// damaged.
#[test]
fn a_user_book_template_that_fails_its_check_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let templates = tmp.path().join("templates");
    std::fs::create_dir(&templates).unwrap();
    let shipped = std::fs::read_to_string(root().join("templates/book.j2")).unwrap();
    let bad = shipped.replace(
        "- {{ state.sentence }}\n",
        "- {{ state.sentence }}\n- {{ action.name }}: observing it confirms the answer.\n",
    );
    assert_ne!(bad, shipped);
    std::fs::write(templates.join("book.j2"), bad).unwrap();
    let templates = templates.display().to_string();
    generate(
        &tmp.path().join("out"),
        TINY,
        4,
        3,
        3,
        &["--templates-dir", &templates],
    )
    .expect_code(1)
    .stderr_contains("book.j2")
    .stderr_contains("fails its check")
    .stderr_contains("confirms the answer")
    .stderr_lacks("damaged");
}

/// An internal error (a book rendered by the shipped templates that fails
/// its check) exits 2 and does not blame the data.
#[test]
fn internal_errors_exit_2_and_blame_no_data() {
    use kumo_gen::pipeline::write::OutputError;
    let internal = || OutputError::Internal {
        message: "seed 3: the knowledge book rendered by the shipped template fails its check: x"
            .into(),
    };
    let e = internal();
    assert!(!e.is_input());
    assert_eq!(kumo_gen::error::Error::from(internal()).exit_code(), 2);
    let text = format!("{e} {}", e.help().unwrap());
    assert!(text.starts_with("internal error: "), "{text}");
    assert!(text.contains("bug in kumo-gen"), "{text}");
    assert!(!text.contains("damaged"), "{text}");
}

/// Valid domains whose names collide with the words of the book's own
/// prose (issue 11.5): every one generates, each book checked, exit 0.
#[test]
fn names_that_are_template_words_generate_cleanly() {
    let corpus: &[(&str, &[&str], &str)] = &[
        // (goal, truths, title)
        (
            "tell Apple from the rest",
            &["Apple", "Pear", "Plum", "Fig"],
            "Apple orchard",
        ),
        ("find it", &["A", "g", "This", "game"], "A game"),
        (
            "find the index entry",
            &["Index", "rules out", "is ruled out by", "and"],
            "Index",
        ),
        (
            "find the rule",
            &["observing", "the", "Candidate", "ruled out"],
            "The rules",
        ),
        (
            "find the fault",
            &["Fuse", "Lamp", "Lamp tester", "Fuse box"],
            "Lamp tester Fuse",
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (k, (goal, truths, title)) in corpus.iter().enumerate() {
        let quoted: Vec<String> = truths.iter().map(|t| format!("{t:?}")).collect();
        let [a, b, c, d] = [0, 1, 2, 3].map(|i| format!("{:?}", truths[i]));
        let yaml = format!(
            "name: words{k}\ntitle: {title:?}\ntruth_noun: {t0:?}\naction_noun: {t1:?}\n\
             goal: {goal:?}\ntruths: [{list}]\nactions:\n\
             - name: {a}\n  type: str\n  states:\n    {b}: [{a}, {c}]\n    {d}: [{b}]\n\
             - name: {t2:?}\n  type: str\n  states:\n    up: [{d}]\n    down: [{a}]\n\
             - name: Check {t3}\n  type: float\n  unit: {t0:?}\n  states:\n\
             \x20   - range: [0, 5]\n      rules_out: [{c}]\n\
             \x20   - range: [5, 10]\n      rules_out: [{b}, {d}]\n",
            t0 = truths[0],
            t1 = truths[1],
            t2 = truths[2],
            t3 = truths[3],
            list = quoted.join(", "),
        );
        let path = tmp.path().join(format!("words{k}.yaml"));
        std::fs::write(&path, &yaml).unwrap();
        let out = tmp.path().join(format!("out{k}"));
        TestCommand::new()
            .args(["generate", "--domain"])
            .arg(&path)
            .args([
                "--truths",
                "3",
                "--actions",
                "3",
                "-n",
                "6",
                "--steps",
                "--out",
            ])
            .arg(&out)
            .ok();
        let text = std::fs::read_to_string(&path).unwrap();
        let domain = Domain::from_yaml("words.yaml", &text).unwrap().0;
        let (labelled, _) = check_derived(&out.join(format!("words{k}")), &domain, &setting(3, 3));
        assert!(labelled > 0, "{yaml}");
    }
}
