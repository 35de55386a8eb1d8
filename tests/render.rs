//! Rendering: books pass the checker, corrupted books fail it, SFT
//! transcripts replay to the valid truth, exact text of a fixed instance,
//! strict templates (the written files, HF rows and `check-books` are in
//! `render_files`).

use kumo_gen::domain::{Domain, ShippedDomain};
use kumo_gen::render::{
    BookProblem, Claim, OwnedTask, RenderOptions, Renderer, SftBook, TemplateError, Templates,
    check_book, check_kumo_book, replay_sft,
};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use crate::common::root;

pub(crate) fn tiny() -> Domain {
    let path = root().join("tests/fixtures/ok/tiny.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    Domain::from_yaml(&path.display().to_string(), &text)
        .unwrap()
        .0
}

/// A random instance in the spirit of the generator: random truths and
/// actions, one valid truth, observed states that never rule it out,
/// preferring observations that rule out every invalid truth; numeric
/// values inside their range. The golden trajectory is a simple policy:
/// take the first untaken action related to a remaining truth, stop when
/// one truth remains or a remaining truth is related to no untaken action.
pub(crate) fn random_task(
    d: &Domain,
    rng: &mut ChaCha8Rng,
    nt: usize,
    na: usize,
) -> (OwnedTask, Vec<usize>) {
    let mut truths: Vec<usize> = (0..d.truths.len()).collect();
    truths.shuffle(rng);
    truths.truncate(nt);
    let valid = truths[rng.random_range(0..nt)];
    let mut task = OwnedTask::default();
    for _attempt in 0..50 {
        // Actions with some state consistent with the valid truth (KUMO's
        // data has actions whose every state rules a truth out).
        let mut actions: Vec<usize> = (0..d.actions.len())
            .filter(|&a| {
                d.actions[a]
                    .states
                    .iter()
                    .any(|s| !s.rules_out.contains(valid))
            })
            .collect();
        actions.shuffle(rng);
        actions.truncate(na);
        let mut observed = Vec::new();
        let mut values = Vec::new();
        let mut kept = Vec::new();
        for &a in &actions {
            let action = &d.actions[a];
            // A value read back as state `s` (the first range containing
            // it), if one is easy to find; shadowed states get none.
            let u: f64 = rng.random_range(0.1..0.9);
            let value_of = |s: usize| -> Option<Option<f64>> {
                let Some((lo, hi)) = action.states[s].label.range() else {
                    return Some(None);
                };
                let mut candidates = vec![
                    ((lo + (hi - lo) * u) * 100.0).round() / 100.0,
                    (lo + hi) / 2.0,
                    lo + (hi - lo) * u,
                ];
                if action.kind == kumo_gen::domain::ActionKind::Int {
                    candidates = (lo as i64..=hi as i64).map(|v| v as f64).collect();
                }
                candidates
                    .into_iter()
                    .find(|&v| action.state_containing(v) == Some(s))
                    .map(Some)
            };
            let ok: Vec<(usize, Option<f64>)> = (0..action.states.len())
                .filter(|&s| !action.states[s].rules_out.contains(valid))
                .filter_map(|s| value_of(s).map(|v| (s, v)))
                .collect();
            let Some(&(s, v)) = ok.get(rng.random_range(0..ok.len().max(1))) else {
                continue;
            };
            kept.push(a);
            observed.push(s);
            values.push(v);
        }
        let actions = kept;
        task = OwnedTask {
            truths: truths.clone(),
            valid: vec![valid],
            actions: actions.clone(),
            observed: observed.clone(),
            values,
            seed: rng.random_range(0..1000),
            golden: None,
        };
        let covered = truths.iter().all(|&t| {
            t == valid
                || actions
                    .iter()
                    .zip(&observed)
                    .any(|(&a, &s)| d.actions[a].states[s].rules_out.contains(t))
        });
        if covered {
            break;
        }
    }
    let golden = simple_golden(d, &task);
    (task, golden)
}

/// The simple policy of [`random_task`]: take the first untaken action
/// related to a remaining truth; stop when one truth remains or a remaining
/// truth is related to no untaken action.
pub(crate) fn simple_golden(d: &Domain, task: &OwnedTask) -> Vec<usize> {
    let mut remaining = task.truths.clone();
    let mut taken = vec![false; task.actions.len()];
    let mut golden = Vec::new();
    loop {
        let related = |t: usize, taken: &[bool]| {
            task.actions
                .iter()
                .zip(taken)
                .any(|(&a, &done)| !done && d.actions[a].related.contains(t))
        };
        if remaining.len() <= 1 || remaining.iter().any(|&t| !related(t, &taken)) {
            break;
        }
        let Some(pos) = (0..task.actions.len()).find(|&p| {
            !taken[p]
                && remaining
                    .iter()
                    .any(|&t| d.actions[task.actions[p]].related.contains(t))
        }) else {
            break;
        };
        taken[pos] = true;
        golden.push(pos);
        let state = &d.actions[task.actions[pos]].states[task.observed[pos]];
        remaining.retain(|&t| !state.rules_out.contains(t));
    }
    golden
}

/// Domains to test on: the tiny fixture and every shipped domain.
fn domains() -> Vec<Domain> {
    let mut all = vec![tiny()];
    for shipped in ShippedDomain::all() {
        let (d, _) = Domain::from_yaml(shipped.name, shipped.text).unwrap();
        all.push(d);
    }
    all
}

fn sizes(d: &Domain) -> Vec<(usize, usize)> {
    let (t, a) = (d.truths.len(), d.actions.len());
    let mut sizes = vec![(t.min(4), a.min(6)), (t.min(12), a.min(16)), (t, a)];
    sizes.dedup();
    sizes
}

#[test]
fn checker_accepts_every_rendered_book() {
    let templates = Templates::shipped().unwrap();
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for d in domains() {
        for (nt, na) in sizes(&d) {
            for _ in 0..if d.name == "tiny" { 100 } else { 2 } {
                let (task, _) = random_task(&d, &mut rng, nt, na);
                let view = task.view(&d);
                let book = renderer.book(&view).unwrap();
                let check = check_book(&book, &view);
                assert!(check.is_ok(), "{}:\n{book}\n{:#?}", d.name, check.problems);
                let facts: usize = view
                    .actions
                    .iter()
                    .enumerate()
                    .flat_map(|(p, &a)| (0..d.actions[a].states.len()).map(move |s| (p, s)))
                    .map(|(p, s)| view.ruled_out(p, s).count())
                    .sum();
                assert_eq!(check.facts, facts);
                // Our books also pass the (looser, slower) KUMO heuristic,
                // which reads clauses split at "; ": a truth whose name
                // holds one (the programs family's `y = x + 5; y = y * 2`)
                // cannot be read by it, and is proved by the exact checker
                // above.
                if nt > 12 || view.truths.iter().any(|&t| d.truths[t].contains("; ")) {
                    continue;
                }
                let kumo = check_kumo_book(&book, &view);
                assert!(
                    kumo.is_ok(),
                    "{book}\n{:?}\n{:?}",
                    kumo.missing,
                    kumo.invented
                );
                assert_eq!(kumo.facts, facts);
            }
        }
    }
}

/// A fixed tiny instance: all four faults, all three checks, Switch valid
/// (`open` rules out Lamp, 7.25 V Fuse, 1 click Relay).
pub(crate) fn fixed() -> OwnedTask {
    OwnedTask {
        truths: vec![0, 1, 2, 3],
        valid: vec![2],
        actions: vec![0, 1, 2],
        observed: vec![0, 1, 0],
        values: vec![None, Some(7.25), Some(1.0)],
        seed: 7,
        golden: Some(vec![0, 1, 2]),
    }
}

fn lines_with<'a>(book: &'a str, needle: &str) -> Vec<&'a str> {
    book.lines().filter(|l| l.contains(needle)).collect()
}

#[test]
fn book_states_the_guarantee_only_where_it_holds() {
    let d = tiny();
    let templates = Templates::shipped().unwrap();
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let guarantee = "Every candidate fault except the true one is ruled out by the actual \
                     outcome of at least one of the available checks.";

    // Every wrong fault is ruled out by some observation: the book says so,
    // and a book without the sentence fails.
    let task = fixed();
    let view = task.view(&d);
    let book = renderer.book(&view).unwrap();
    assert_eq!(lines_with(&book, "except the true one"), vec![guarantee]);
    let problems = check_book(&book.replace(guarantee, ""), &view).problems;
    assert!(
        matches!(problems[..], [BookProblem::MissingGuarantee { .. }]),
        "{problems:?}"
    );

    // Clicks observed at 5 rules out nothing, so Relay survives every
    // outcome: the guarantee is false of this instance and a book that
    // states it fails.
    let mut unguarded = fixed();
    unguarded.observed[2] = 1;
    unguarded.values[2] = Some(5.0);
    let view = unguarded.view(&d);
    assert!(!view.every_wrong_truth_ruled_out());
    let problems = check_book(&book, &view).problems;
    assert!(
        problems
            .iter()
            .any(|p| matches!(p, BookProblem::False { text, .. } if text == guarantee)),
        "{problems:?}"
    );
}

#[test]
fn checker_rejects_corrupted_books() {
    let d = tiny();
    let task = fixed();
    let view = task.view(&d);
    let templates = Templates::shipped().unwrap();
    let book = Renderer::new(&templates, RenderOptions::default())
        .book(&view)
        .unwrap();
    assert!(check_book(&book, &view).is_ok());
    let rule = "- Continuity check: observing `closed` rules out Fuse and Relay.";
    assert_eq!(lines_with(&book, "`closed` rules out"), vec![rule]);

    let fails = |corrupt: String, what: &str| {
        let check = check_book(&corrupt, &view);
        assert!(!check.is_ok(), "{what} was not caught:\n{corrupt}");
        check.problems
    };
    // A dropped fact.
    let problems = fails(
        book.replace(
            rule,
            "- Continuity check: observing `closed` rules out Fuse.",
        ),
        "a dropped fact",
    );
    assert!(problems.iter().any(|p| matches!(p,
        BookProblem::MissingRule { truths, .. } if truths == &["Fuse", "Relay"])));
    // A dropped line.
    fails(book.replace(&format!("{rule}\n"), ""), "a dropped line");
    // A dropped index entry.
    let index = lines_with(&book, "Lamp is ruled out by")[0].to_string();
    fails(
        book.replace(&format!("{index}\n"), ""),
        "a dropped index entry",
    );
    // A confirmation instead of an exclusion.
    let problems = fails(
        book.replace(
            rule,
            "- Continuity check: observing `closed` confirms Fuse and Relay.",
        ),
        "a confirmation",
    );
    assert!(problems.iter().any(|p| matches!(p,
        BookProblem::Unverified { claim: Claim::Rule { action }, .. } if action == "Continuity check")));
    // An invented rule-out, as an extra truth and as an extra line.
    fails(
        book.replace(
            rule,
            "- Continuity check: observing `closed` rules out Fuse, Relay and Lamp.",
        ),
        "an extra truth",
    );
    fails(
        book.replace(
            rule,
            &format!("{rule}\n- Clicks: a value from 3 to 10 rules out Switch."),
        ),
        "an invented line",
    );
    // A state that rules something out said to rule out nothing.
    let problems = fails(
        book.replace(
            rule,
            &format!("{rule}\n- Continuity check: observing `closed` rules out nothing."),
        ),
        "a false `nothing`",
    );
    assert!(matches!(problems[..], [BookProblem::False { .. }]));
    // A confirmation as another item of a list of rules, or of the index.
    let problems = fails(
        book.replace(
            rule,
            &format!("{rule}\n- A closed circuit confirms Switch."),
        ),
        "a confirmation in a rule list",
    );
    assert!(matches!(
        problems[..],
        [BookProblem::Unverified {
            claim: Claim::ListItem,
            ..
        }]
    ));
    let index = lines_with(&book, "Lamp is ruled out by")[0].to_string();
    fails(
        book.replace(&index, &format!("{index}\n\n* It is most likely Switch.")),
        "a confirmation in the index",
    );
    // A rule in prose, outside any list.
    let problems = fails(
        book.replace(
            "## Index",
            "Continuity check: observing `open` rules out Lamp and Fuse.\n\n## Index",
        ),
        "a rule in prose",
    );
    assert!(matches!(
        problems[..],
        [BookProblem::Unverified {
            claim: Claim::Rule { .. },
            ..
        }]
    ));
    // A falsified index entry, instead of the true one and beside it.
    let problems = fails(
        book.replace(&index, "- Lamp is ruled out by: Continuity check `closed`."),
        "a falsified index entry",
    );
    assert!(
        problems
            .iter()
            .any(|p| matches!(p, BookProblem::MissingIndex { .. }))
    );
    assert!(problems.iter().any(|p| matches!(p,
        BookProblem::Unverified { claim: Claim::Index { truth }, .. } if truth == "Lamp")));
    let problems = fails(
        book.replace(
            &index,
            &format!("{index}\nLamp is ruled out by: Voltage from 0 to 5 V."),
        ),
        "a second, false index entry",
    );
    assert!(matches!(
        problems[..],
        [BookProblem::Unverified {
            claim: Claim::Index { .. },
            ..
        }]
    ));
    let problems = fails(
        book.replace(
            &index,
            &format!("{index}\n- Lamp is ruled out by no outcome in this book."),
        ),
        "a false `ruled out by no outcome`",
    );
    assert!(matches!(problems[..], [BookProblem::False { .. }]));
    // A second list of truths.
    let problems = fails(
        book.replace(
            "## Index",
            "The candidate faults are: Fuse and Lamp.\n\n## Index",
        ),
        "a wrong list of truths",
    );
    assert!(matches!(
        problems[..],
        [BookProblem::Unverified {
            claim: Claim::TruthList,
            ..
        }]
    ));
    // A wrong range or unit.
    fails(
        book.replace("from 0 to 5 V", "from 0 to 6 V"),
        "a wrong range",
    );
}

#[test]
fn random_corruptions_are_caught() {
    let templates = Templates::shipped().unwrap();
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for d in domains() {
        for _ in 0..if d.name == "tiny" { 50 } else { 3 } {
            let (nt, na) = sizes(&d)[0];
            let (task, _) = random_task(&d, &mut rng, nt, na);
            let view = task.view(&d);
            let book = renderer.book(&view).unwrap();
            let rules: Vec<&str> = book
                .lines()
                .filter(|l| {
                    l.starts_with("- ") && l.contains(" rules out ") && !l.ends_with("nothing.")
                })
                .collect();
            let Some(&line) = rules.get(rng.random_range(0..rules.len().max(1))) else {
                continue;
            };
            let head = &line[..line.find(" rules out ").unwrap()];
            let absent: Vec<&str> = view
                .truths
                .iter()
                .map(|&t| d.truths[t].as_str())
                .filter(|t| !line.contains(t))
                .collect();
            let mut corruptions = vec![
                format!("{head} rules out nothing."),
                format!(
                    "{head} confirms {}",
                    &line[head.len() + " rules out ".len()..]
                ),
                String::new(),
            ];
            if let Some(t) = absent.first() {
                corruptions.push(format!("{} and {t}.", line.trim_end_matches('.')));
            }
            for corrupt in corruptions {
                let text = book.replacen(line, &corrupt, 1);
                assert!(!check_book(&text, &view).is_ok(), "`{line}` -> `{corrupt}`");
            }
        }
    }
}

#[test]
fn sft_transcripts_replay_to_the_valid_truth() {
    let templates = Templates::shipped().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for d in domains() {
        for (nt, na) in sizes(&d) {
            for i in 0..if d.name == "tiny" { 20 } else { 3 } {
                let (task, golden) = random_task(&d, &mut rng, nt, na);
                let view = task.view(&d);
                let options = RenderOptions {
                    sft_book: if i % 2 == 0 {
                        SftBook::Prose
                    } else {
                        SftBook::Symbolic
                    },
                    rationale: i % 3 == 0,
                };
                let out = Renderer::new(&templates, options)
                    .render(&view, &golden)
                    .unwrap();
                let sft = out.sft_value();
                // The record replays: every turn is legal and the answer
                // is a truth no observation rules out. It names the golden
                // player's answer (the first candidate no action left can
                // rule out); these random tasks need not keep KUMO's
                // guarantee that each invalid truth is ruled out by some
                // action, so that it is the valid truth is checked on
                // generated datasets (`docs::the_golden_player_rule_...`).
                assert!(replay_sft(&view, &sft).is_ok(), "{sft:#}");
                let messages = sft["messages"].as_array().unwrap();
                assert_eq!(messages.len(), 2 * golden.len() + 3);
                let assistants: Vec<&Value> = messages
                    .iter()
                    .filter(|m| m["role"] == "assistant")
                    .collect();
                assert_eq!(assistants.len(), golden.len() + 1);
                for (k, &pos) in golden.iter().enumerate() {
                    let action = &d.actions[task.actions[pos]].name;
                    assert!(
                        assistants[k]["content"]
                            .as_str()
                            .unwrap()
                            .ends_with(&format!("<ANSWER> {action} </ANSWER>"))
                    );
                }
                for m in messages {
                    assert_eq!(m.get("weight").is_some(), m["role"] == "assistant");
                }
                assert_eq!(out.steps.len(), golden.len() + 1);
                for (k, step) in out.steps.iter().enumerate() {
                    let step: Value = serde_json::from_str(step).unwrap();
                    assert_eq!(step["seed"], json!(task.seed));
                    assert_eq!(step["step"], json!(k));
                    // The request `eval` sends that round: it ends with
                    // the chat's user turn of the round.
                    let prompt = step["prompt"].as_array().unwrap();
                    assert_eq!(prompt[0], messages[0]);
                    assert_eq!(
                        prompt.last().unwrap()["content"],
                        messages[1 + 2 * k]["content"]
                    );
                    if k > 0 {
                        assert_eq!(prompt[1]["content"], "Begin the game.");
                    }
                    assert_eq!(step["completion"][0]["content"], assistants[k]["content"]);
                    assert_eq!(step["prompt"].as_array().unwrap().len(), 2 + 2 * k);
                }
                let system = messages[0]["content"].as_str().unwrap();
                match options.sft_book {
                    SftBook::Prose => assert!(system.contains(out.book.trim_end())),
                    SftBook::Symbolic => assert!(!system.contains("knowledge book")),
                }
            }
        }
    }
}

#[test]
fn replay_rejects_a_wrong_transcript() {
    let d = tiny();
    let task = fixed();
    let view = task.view(&d);
    let templates = Templates::shipped().unwrap();
    let out = Renderer::new(&templates, RenderOptions::default())
        .render(&view, &[0, 1])
        .unwrap();
    let sft = out.sft_value();
    assert_eq!(replay_sft(&view, &sft), Ok(2));
    let mut wrong = sft.clone();
    let last = wrong["messages"].as_array().unwrap().len() - 1;
    wrong["messages"][last]["content"] = json!("<ANSWER> Fuse </ANSWER>");
    assert_eq!(
        replay_sft(&view, &wrong).map_err(|e| e.to_string()),
        Err("final answer `Fuse` was ruled out".into())
    );
    let mut unweighted = sft.clone();
    unweighted["messages"][2]
        .as_object_mut()
        .unwrap()
        .remove("weight");
    assert!(replay_sft(&view, &unweighted).is_err());
}

/// Compares with a committed file; `KUMO_GEN_BLESS=1` rewrites it.
fn snapshot(name: &str, actual: &str) {
    let path = root().join("tests/fixtures/render").join(name);
    if std::env::var_os("KUMO_GEN_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with KUMO_GEN_BLESS=1)", path.display()));
    assert_eq!(actual, expected, "{} differs", path.display());
}

#[test]
fn exact_text_of_a_fixed_instance() {
    let d = tiny();
    let task = fixed();
    let view = task.view(&d);
    let templates = Templates::shipped().unwrap();
    let out = Renderer::new(&templates, RenderOptions::default())
        .render(&view, &[0, 1, 2])
        .unwrap();
    snapshot("tiny-book.txt", &out.book);
    snapshot("tiny-prompt.txt", &out.prompt);
    snapshot(
        "tiny-sft.json",
        &format!(
            "{}\n",
            serde_json::to_string_pretty(&out.sft_value()).unwrap()
        ),
    );
    let rationale = RenderOptions {
        sft_book: SftBook::Symbolic,
        rationale: true,
    };
    let out = Renderer::new(&templates, rationale)
        .render(&view, &[0, 1, 2])
        .unwrap();
    snapshot(
        "tiny-sft-symbolic-rationale.json",
        &format!(
            "{}\n",
            serde_json::to_string_pretty(&out.sft_value()).unwrap()
        ),
    );
}

fn override_error(name: &str, text: &str) -> String {
    let err = Templates::from_overrides(vec![(name.into(), text.into(), format!("my/{name}.j2"))])
        .unwrap_err();
    assert!(matches!(err, TemplateError::Template { .. }), "{err:?}");
    err.to_string()
}

#[test]
fn strict_templates_reject_typos() {
    let err = override_error("book", "# {{ titel }}\n{{ truths_sentence }}\n");
    assert!(
        err.contains("book.j2") && err.contains("my/book.j2"),
        "{err}"
    );
    assert!(err.contains("undefined"), "{err}");
    // A typo in an attribute, deep in a loop.
    let err = override_error(
        "book",
        "{% for a in actions %}{% for s in a.states %}{{ s.sentense }}\n{% endfor %}{% endfor %}",
    );
    assert!(err.contains("undefined"), "{err}");
    // A syntax error names the line.
    let err = override_error("rationale", "ok\n{% if %}\n");
    assert!(err.contains("line 2") || err.contains(":2"), "{err}");
    // A good override is used.
    let templates = Templates::from_overrides(vec![(
        "prompt".into(),
        "Find {{ truths | join(\"/\") }}.".into(),
        "mine".into(),
    )])
    .unwrap();
    let d = tiny();
    let task = fixed();
    let text = Renderer::new(&templates, RenderOptions::default())
        .prompt(&task.view(&d), None, "none")
        .unwrap();
    assert_eq!(text, "Find Fuse/Relay/Switch/Lamp.");
}

#[test]
fn templates_dir_overrides_by_name_and_rejects_unknown_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("prompt.j2"),
        "Choose. {{ actions | join(\"|\") }}",
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
    let templates = Templates::load_dir(dir.path()).unwrap();
    let d = tiny();
    let task = fixed();
    let text = Renderer::new(&templates, RenderOptions::default())
        .prompt(&task.view(&d), None, "none")
        .unwrap();
    assert_eq!(text, "Choose. Continuity check|Voltage|Clicks");
    // Templates that no longer exist are refused by name, not ignored.
    std::fs::write(dir.path().join("turn.j2"), "x").unwrap();
    let err = Templates::load_dir(dir.path()).unwrap_err().to_string();
    assert!(err.contains("unknown template `turn.j2`"), "{err}");
    std::fs::remove_file(dir.path().join("turn.j2")).unwrap();
    std::fs::write(dir.path().join("boook.j2"), "x").unwrap();
    let err = Templates::load_dir(dir.path()).unwrap_err().to_string();
    assert!(err.contains("unknown template `boook.j2`"), "{err}");
}
