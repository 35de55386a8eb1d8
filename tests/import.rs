//! KUMO import: conformance with Python's evaluation of every KUMO data
//! file, the shipped KUMO domains, bad-input fixtures with their rendered
//! messages, the CLI, and robustness against mutated input.

use std::path::{Path, PathBuf};

use kumo_gen::domain::{DomainDoc, StatesDoc, compile, load_bytes};
use kumo_gen::fnv::fnv1a_hex;
use kumo_gen::import::{
    ImportOptions, Imported, NoteKind, Value, ValueKind, evaluate_python, import_python,
};
use kumo_gen::python_repr::py_float as py_float_repr;
use proptest::prelude::*;
use serde_json::{Value as Json, json};

use crate::common::{TestCommand, kumo_reference, root};

/// (data file, truths var, actions var, outcomes var) for every data file.
fn kumo_files(reference: &Path) -> Vec<(String, String, String, String)> {
    let envs: Json =
        serde_json::from_str(&std::fs::read_to_string(reference.join("envs.json")).unwrap())
            .unwrap();
    let mut files: Vec<(String, String, String, String)> = Vec::new();
    for (_, v) in envs.as_object().unwrap() {
        let s = |k: &str| v[k].as_str().unwrap().to_string();
        let entry = (
            s("data_file"),
            s("truths_var"),
            s("actions_var"),
            s("outcomes_var"),
        );
        if !files.iter().any(|f| f.0 == entry.0) {
            files.push(entry);
        }
    }
    files.sort();
    files
}

fn options_for(t: &str, a: &str, o: &str) -> ImportOptions {
    ImportOptions {
        truths_var: Some(t.into()),
        actions_var: Some(a.into()),
        outcomes_var: Some(o.into()),
        ..ImportOptions::default()
    }
}

// ---- Canonical forms (the same as scripts/kumo-conformance.py) ----

fn dumps(v: &Json) -> String {
    serde_json::to_string(v).unwrap()
}

/// Type-tagged value with sets and dicts sorted.
fn canon(v: &Value) -> Json {
    match &v.kind {
        ValueKind::None => Json::Null,
        ValueKind::Bool(b) => json!(b),
        ValueKind::Int(i) => json!(["i", i.to_string()]),
        ValueKind::Float(f) => json!(["f", py_float_repr(*f)]),
        ValueKind::Str(s) => json!(["s", s]),
        ValueKind::List(items) => json!(["l", items.iter().map(canon).collect::<Vec<_>>()]),
        ValueKind::Tuple(items) => json!(["t", items.iter().map(canon).collect::<Vec<_>>()]),
        ValueKind::Set(items) => {
            let mut c: Vec<Json> = items.iter().map(canon).collect();
            c.sort_by_key(dumps);
            json!(["S", c])
        }
        ValueKind::Dict(pairs) => {
            let mut c: Vec<Json> = pairs
                .iter()
                .map(|(k, v)| json!([canon(k), canon(v)]))
                .collect();
            c.sort_by_key(|p| dumps(&p[0]));
            json!(["d", c])
        }
    }
}

fn canon_label(s: &str) -> String {
    let pair = s
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .and_then(|r| r.split_once(", "))
        .filter(|(a, b)| !format!("{a}{b}").contains([',', '[', ']']));
    if let Some((a, b)) = pair
        && let (Ok(a), Ok(b)) = (a.trim().parse::<f64>(), b.trim().parse::<f64>())
    {
        return format!("[{}, {}]", py_float_repr(a.min(b)), py_float_repr(a.max(b)));
    }
    s.to_string()
}

/// A state label and its sorted rule-outs.
type CanonState = (String, Vec<String>);

/// Truths and per-action states of the imported document (every state:
/// the importer never adds one).
fn canon_doc(imported: &Imported) -> Json {
    let doc = &imported.doc;
    let mut truths = doc.truths.clone();
    truths.sort();
    let mut actions: Vec<(String, Vec<CanonState>)> = Vec::new();
    for a in &doc.actions {
        let mut states: Vec<CanonState> = match &a.states {
            StatesDoc::Named(pairs) => pairs
                .iter()
                .map(|(l, r)| (canon_label(l), r.clone()))
                .collect(),
            StatesDoc::Ranges(ranges) => ranges
                .iter()
                .map(|r| {
                    let label = format!(
                        "[{}, {}]",
                        py_float_repr(r.range[0]),
                        py_float_repr(r.range[1])
                    );
                    (canon_label(&label), r.rules_out.clone())
                })
                .collect(),
        };
        for (_, r) in &mut states {
            r.sort();
        }
        states.sort();
        actions.push((a.name.clone(), states));
    }
    actions.sort();
    json!([["truths", truths], ["actions", actions]])
}

fn expected_digests() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(root().join("tests/fixtures/kumo-conformance.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect()
}

#[test]
fn every_kumo_file_evaluates_and_imports_as_python_does() {
    let Some(reference) = kumo_reference() else {
        return;
    };
    let expected = expected_digests();
    let files = kumo_files(&reference);
    assert_eq!(files.len(), expected.len(), "one digest line per data file");
    for (file, t, a, o) in files {
        let (_, want_eval, want_import) = expected
            .iter()
            .find(|e| e.0 == file)
            .unwrap_or_else(|| panic!("{file} has no line in kumo-conformance.tsv"));
        let source = std::fs::read_to_string(reference.join("data").join(&file)).unwrap();
        let module = evaluate_python(&file, &source).unwrap_or_else(|e| panic!("{e}"));
        let raw = Json::Array(
            [&t, &a, &o]
                .iter()
                .map(|name| json!([name, canon(&module.get(name).unwrap().value)]))
                .collect(),
        );
        assert_eq!(
            &fnv1a_hex(dumps(&raw).as_bytes()),
            want_eval,
            "{file}: evaluation differs from Python's"
        );
        let imported = import_python(&file, &source, &options_for(&t, &a, &o)).unwrap();
        assert_eq!(
            &fnv1a_hex(dumps(&canon_doc(&imported)).as_bytes()),
            want_import,
            "{file}: imported truths/actions/states differ from Python's"
        );
        // Found by shape, the same variables are chosen.
        let guessed = import_python(&file, &source, &ImportOptions::default()).unwrap();
        assert_eq!(
            guessed.variables,
            (t.clone(), Some(a.clone()), o.clone()),
            "{file}"
        );
        // The result validates.
        if let Err(e) = compile(&file, &imported.doc) {
            panic!("{file} does not validate:\n{e}");
        }
    }
}

/// The shipped KUMO domains are what the importer makes of KUMO's files
/// with the metadata of domains/kumo-import.tsv (scripts/import-kumo.sh).
#[test]
fn shipped_kumo_domains_are_reproducible() {
    let Some(reference) = kumo_reference() else {
        return;
    };
    let table = std::fs::read_to_string(root().join("domains/kumo-import.tsv")).unwrap();
    let mut shipped = 0;
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("env\t"))
    {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 12, "{line}");
        if f[2] == "-" {
            continue;
        }
        let source = std::fs::read_to_string(reference.join("data").join(f[1])).unwrap();
        let options = ImportOptions {
            name: Some(f[2].into()),
            title: Some(f[6].into()),
            truth_noun: Some(f[7].into()),
            truth_plural: Some(f[8].into()),
            action_noun: Some(f[9].into()),
            action_plural: Some(f[10].into()),
            goal: Some(f[11].into()),
            ..options_for(f[3], f[4], f[5])
        };
        let imported = import_python(f[1], &source, &options).unwrap();
        let path = root().join("domains").join(format!("{}.yaml", f[2]));
        let on_disk = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            on_disk,
            imported.doc.to_yaml(),
            "{} is stale: run scripts/import-kumo.sh",
            path.display()
        );
        let (domain, _) = load_bytes(&path.display().to_string(), on_disk.as_bytes()).unwrap();
        assert_eq!(domain.name, f[2]);
        shipped += 1;
    }
    assert_eq!(shipped, 102);
}

/// Each `tests/fixtures/bad/import/NAME.py` fails with exactly the message
/// in `NAME.expected` (set `KUMO_GEN_BLESS=1` to rewrite them).
#[test]
fn bad_fixtures_fail_with_their_message() {
    let dir = root().join("tests/fixtures/bad/import");
    let bless = std::env::var_os("KUMO_GEN_BLESS").is_some();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 15);
    for path in paths {
        let name = format!(
            "tests/fixtures/bad/import/{}",
            path.file_name().unwrap().to_string_lossy()
        );
        let source = std::fs::read_to_string(&path).unwrap();
        let started = std::time::Instant::now();
        let err = match import_python(&name, &source, &ImportOptions::default()) {
            Ok(_) => panic!("{name} should fail"),
            Err(e) => e,
        };
        assert!(started.elapsed().as_secs() < 2, "{name} took too long");
        let rendered = format!("{err}\n");
        assert!(
            rendered.contains(&name),
            "{name}: message must name the file"
        );
        let expected_path = path.with_extension("expected");
        if bless {
            std::fs::write(&expected_path, &rendered).unwrap();
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_else(|_| {
            panic!(
                "{} missing; bless with KUMO_GEN_BLESS=1",
                expected_path.display()
            )
        });
        assert_eq!(rendered, expected, "{name}");
    }
}

fn quirks() -> (String, Imported) {
    let path = "tests/fixtures/kumo/quirks_data.py";
    let source = std::fs::read_to_string(root().join(path)).unwrap();
    let imported = import_python(path, &source, &ImportOptions::default()).unwrap();
    (source, imported)
}

fn states_of<'d>(doc: &'d DomainDoc, action: &str) -> &'d StatesDoc {
    &doc.actions
        .iter()
        .find(|a| a.name == action)
        .unwrap()
        .states
}

#[test]
fn quirks_are_mapped_and_noted() {
    let (_, imported) = quirks();
    let doc = &imported.doc;
    assert_eq!(doc.name, "quirks");
    assert_eq!(
        doc.truths,
        [
            "Alpha Stone",
            "Beta Orb",
            "Gamma Staff",
            "Delta Ring",
            "Epsilon's Crown"
        ]
    );
    let names: Vec<&str> = doc.actions.iter().map(|a| a.name.as_str()).collect();
    // Set order is source order; `Missing Test` has no outcomes; `Extra
    // Probe` is not listed but has outcomes.
    assert_eq!(
        names,
        ["Weigh", "Count Facets", "Glow Test", "Scan", "Extra Probe"]
    );
    let kinds: Vec<&str> = doc.actions.iter().map(|a| a.kind.as_str()).collect();
    assert_eq!(kinds, ["float", "str", "str", "str", "int"]);
    let StatesDoc::Ranges(weigh) = states_of(doc, "Weigh") else {
        panic!("ranges expected")
    };
    // Inverted as in KUMO: no value lies in it.
    assert_eq!(weigh[0].range, [10.0, 0.0]);
    assert_eq!(weigh[2].range, [20.5, 1000.0]);
    let StatesDoc::Named(count) = states_of(doc, "Count Facets") else {
        panic!("labels expected")
    };
    assert_eq!(count[0], ("1".to_string(), vec!["Delta Ring".to_string()]));
    assert_eq!(
        count[1],
        (
            "2".to_string(),
            vec!["Gamma Staff".to_string(), "Epsilon's Crown".to_string()]
        )
    );
    let StatesDoc::Named(glow) = states_of(doc, "Glow Test") else {
        panic!("labels expected")
    };
    assert_eq!(
        glow[1],
        ("dim".to_string(), vec!["Gamma Staff".to_string()])
    );
    let StatesDoc::Named(scan) = states_of(doc, "Scan") else {
        panic!("labels expected")
    };
    let labels: Vec<&str> = scan.iter().map(|(l, _)| l.as_str()).collect();
    // Every state rules out `Alpha Stone`: kept as KUMO has it (the
    // validator warns; no state is added).
    assert_eq!(labels, ["Positive", "[0.0, 0.5]", "Negative"]);

    let kinds: Vec<NoteKind> = imported.notes.iter().map(|n| n.kind.clone()).collect();
    for kind in [
        NoteKind::DuplicateTruth,
        NoteKind::DuplicateElement,
        NoteKind::ActionWithoutOutcomes,
        NoteKind::UnlistedAction,
        NoteKind::InvertedRange,
        NoteKind::Labels,
        NoteKind::DuplicateRuleOut,
        NoteKind::UnknownTruth,
    ] {
        assert!(
            kinds.contains(&kind),
            "missing note {kind:?}: {:#?}",
            imported.notes
        );
    }
    let rendered: Vec<String> = imported.notes.iter().map(|n| n.to_string()).collect();
    assert!(
        rendered.contains(
            &"9:9: actions[0] `Weigh`: range (10, 0) is inverted; kept as in KUMO, where no value lies in it (the state is never observed)".to_string()
        ),
        "{rendered:#?}"
    );
    let (_, warnings) = compile("quirks", doc).unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.path == "actions[3].states" && w.message.contains("`Alpha Stone`")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.path == "actions[0].states[0].range" && w.message.contains("lo > hi")),
        "{warnings:?}"
    );
}

#[test]
fn cli_imports_to_stdout_and_file() {
    let output = TestCommand::new()
        .args([
            "import",
            "tests/fixtures/kumo/quirks_data.py",
            "--truth-noun",
            "relic",
        ])
        .ok();
    let yaml = String::from_utf8(output.stdout.clone()).unwrap();
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    assert!(yaml.starts_with("name: quirks\n"), "{yaml}");
    assert!(yaml.contains("truth_plural: relics"), "{yaml}");
    assert!(
        stderr.contains("note: tests/fixtures/kumo/quirks_data.py:9:9: actions[0] `Weigh`: range (10, 0) is inverted"),
        "{stderr}"
    );
    let (domain, _) = load_bytes("stdout", yaml.as_bytes()).unwrap();
    assert_eq!(domain.actions.len(), 5);

    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("q.yaml");
    TestCommand::new()
        .args([
            "import",
            "tests/fixtures/kumo/quirks_data.py",
            "--name",
            "q",
            "-o",
        ])
        .arg(&target)
        .ok()
        .stdout_is("");
    let written = std::fs::read_to_string(&target).unwrap();
    assert!(written.starts_with("name: q\n"));
    let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(leftovers, 1, "no temporary file is left behind");
}

#[test]
fn cli_errors_exit_1_with_located_messages() {
    TestCommand::new()
        .args(["import", "tests/fixtures/bad/import/call.py"])
        .expect_code(1)
        .stdout_is("")
        .stderr_contains("error: calling `sorted` is not supported\n  --> tests/fixtures/bad/import/call.py:1:10");
    TestCommand::new()
        .args([
            "import",
            "tests/fixtures/kumo/quirks_data.py",
            "--truths-var",
            "Nope",
        ])
        .expect_code(1)
        .stderr_contains("the file assigns no variable `Nope`");
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("garbage.py");
    std::fs::write(&binary, b"Truths = ['a'\xff\xfe]\n").unwrap();
    TestCommand::new()
        .arg("import")
        .arg(&binary)
        .expect_code(1)
        .stderr_contains("not UTF-8")
        .stderr_contains(":1:14");
    TestCommand::new()
        .args(["import", "does/not/exist.py"])
        .expect_code(1)
        .stderr_contains("cannot read `does/not/exist.py`");
}

fn seed_source() -> String {
    // A real KUMO file when available (with comprehensions and duplicate
    // keys), else the quirks fixture.
    kumo_reference()
        .and_then(|r| std::fs::read_to_string(r.join("data/fantasy_data.py")).ok())
        .unwrap_or_else(|| quirks().0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Random byte edits never panic or hang: the importer returns a
    /// domain or a located error.
    #[test]
    fn mutated_files_never_panic(edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8)) {
        let mut bytes = seed_source().into_bytes();
        for (at, byte, op) in edits {
            let i = at.index(bytes.len() + 1);
            match op {
                0 if i < bytes.len() => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ if i < bytes.len() => { bytes.remove(i); }
                _ => bytes.push(byte),
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        match import_python("mutated.py", &text, &ImportOptions::default()) {
            Ok(imported) => { let _ = compile("mutated", &imported.doc); }
            Err(e) => prop_assert!(e.line().is_some() || !e.message().is_empty()),
        }
    }
}
