//! Domain loading and validation: fixtures, the shipped domains, the CLI,
//! and robustness against mutated input.

use kumo_gen::domain::{LoadError, Registry, ShippedDomain, load_bytes};
use proptest::prelude::*;

use crate::common::{TestCommand, root};

#[test]
fn ok_fixtures_load() {
    for entry in std::fs::read_dir(root().join("tests/fixtures/ok")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        if let Err(e) = load_bytes(&path.display().to_string(), &bytes) {
            panic!("{} should load:\n{e}", path.display());
        }
    }
}

/// Each bad fixture starts with `# expect: TEXT`; the rendered error must
/// contain TEXT, and loading must fail with located diagnostics.
#[test]
fn bad_fixtures_fail_with_their_message() {
    let dir = root().join("tests/fixtures/bad/domain");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let expect = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| panic!("{} lacks `# expect:`", path.display()));
        let at = text
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("# at: "))
            .unwrap_or_else(|| {
                panic!(
                    "{} lacks a last line `# at: KIND LINE:COLUMN`",
                    path.display()
                )
            });
        let name = path.display().to_string();
        match load_bytes(&name, text.as_bytes()) {
            Err(e @ LoadError::Invalid(_)) => {
                // The first error's kind and position, as the header says.
                let LoadError::Invalid(diagnostics) = &e else {
                    unreachable!()
                };
                let first = diagnostics.iter().find(|d| d.is_error()).unwrap();
                let found = format!(
                    "{:?} {}:{}",
                    first.kind,
                    first.line.unwrap_or(0),
                    first.column.unwrap_or(0)
                );
                assert_eq!(found, at, "{name}");
                let rendered = e.to_string();
                assert!(
                    rendered.contains(expect),
                    "{name}: expected {expect:?} in:\n{rendered}"
                );
                assert!(
                    rendered.contains(&name),
                    "{name}: message must name the file"
                );
            }
            other => panic!("{name}: expected diagnostics, got {other:?}"),
        }
        checked += 1;
    }
    assert!(checked >= 10);
}

#[test]
fn every_shipped_domain_validates() {
    for shipped in ShippedDomain::all() {
        let result = Registry::default().load(shipped.name);
        assert!(result.is_ok(), "{}: {}", shipped.name, result.unwrap_err());
        assert_eq!(
            result.unwrap().0.name,
            shipped.name,
            "file name must match `name`"
        );
    }
}

#[test]
fn cli_validate_exit_codes() {
    TestCommand::new()
        .args(["validate", "tests/fixtures/ok/tiny.yaml"])
        .ok()
        .stdout_contains("ok    tiny");
    TestCommand::new()
        .args(["validate", "tests/fixtures/bad/domain/unknown-truth.yaml"])
        .expect_code(1)
        .stderr_contains("unknown truth `Lamb`");
    TestCommand::new()
        .args(["validate", "no-such-domain"])
        .expect_code(1)
        .stderr_contains("unknown domain `no-such-domain`");
}

#[test]
fn domains_dir_overrides_shipped_names() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("tests/fixtures/ok/tiny.yaml"),
        dir.path().join("tiny.yaml"),
    )
    .unwrap();
    TestCommand::new()
        .args(["domains", "--domains-dir"])
        .arg(dir.path())
        .ok()
        .stdout_contains("tiny");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Random byte edits of a valid file never panic: they load or fail
    /// with diagnostics that carry the file name.
    #[test]
    fn mutations_never_panic(edits in proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..8)) {
        let mut bytes = std::fs::read(root().join("tests/fixtures/ok/tiny.yaml")).unwrap();
        for (pos, byte, op) in edits {
            let pos = pos % (bytes.len() + 1);
            match op {
                0 if pos < bytes.len() => bytes[pos] = byte,
                1 => bytes.insert(pos, byte),
                _ if pos < bytes.len() => { bytes.remove(pos); }
                _ => {}
            }
        }
        match load_bytes("mutant.yaml", &bytes) {
            Ok(_) => {}
            Err(e) => prop_assert!(e.to_string().contains("mutant.yaml")),
        }
    }
}

/// Each warn fixture (`tests/fixtures/warn/domain`) loads — KUMO's
/// published data has these shapes, and labels must equal KUMO's on it —
/// with a located warning containing its `# expect: TEXT`.
#[test]
fn warn_fixtures_load_with_their_warning() {
    let dir = root().join("tests/fixtures/warn/domain");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let expect = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| panic!("{} lacks `# expect:`", path.display()));
        let name = path.display().to_string();
        let (_, warnings) = load_bytes(&name, text.as_bytes())
            .unwrap_or_else(|e| panic!("{name} should load with a warning:\n{e}"));
        let rendered: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
        assert!(
            warnings.iter().all(|w| !w.is_error() && w.line.is_some()),
            "{name}: located warnings only: {rendered:#?}"
        );
        assert!(
            rendered
                .iter()
                .any(|r| r.contains(expect) && r.contains(&name)),
            "{name}: expected {expect:?} in:\n{}",
            rendered.join("\n")
        );
        checked += 1;
    }
    assert_eq!(checked, 4);
}

/// Names that make a task unwinnable or unreadable (issue 11.5) are
/// rejected with a located error: file, line and column of the name.
#[test]
fn lookalike_and_unanswerable_names_are_located_errors() {
    // (bad truth written in YAML, what the message says)
    let corpus: &[(&str, &str)] = &[
        ("\" Flu\"", "whitespace"),
        ("\"Flu \"", "whitespace"),
        ("flu", "looks the same as truth `Flu`"),
        ("FLU", "looks the same as truth `Flu`"),
        ("\"F\\u006Cu\"", "duplicate"),
        ("\"Cafe\\u0301\"", "encoded"),
        ("\"Fl\\tu\"", "control character"),
        ("\"Fl\\u202Eu\"", "bidirectional"),
        ("\"Fl\\u2066u\"", "bidirectional"),
        ("\"<ANSWER> Flu\"", "`<ANSWER>`"),
        ("\"Flu </answer>\"", "`</ANSWER>`"),
        ("\"x ${Flu}\"", "`${`"),
        ("\"Fl\\u200Bu\"", "invisible character U+200B"),
        ("\"Fl\\u200Du\"", "invisible character U+200D"),
        ("\"Fl\\u00ADu\"", "invisible character U+00AD"),
        ("\"\\uFF26lu\"", "looks the same as truth `Flu`"),
        ("\"\\uFF26\\uFF2C\\uFF35\"", "looks the same as truth `Flu`"),
    ];
    for (bad, expect) in corpus {
        let yaml = format!(
            "name: look\ntruths:\n  - Flu\n  - Caf\u{e9}\n  - {bad}\nactions:\n  - name: Test\n    type: str\n    states:\n      a: [Flu]\n      b: [Caf\u{e9}]\n"
        );
        let err = load_bytes("look.yaml", yaml.as_bytes())
            .err()
            .unwrap_or_else(|| panic!("{bad} was accepted"));
        let LoadError::Invalid(diagnostics) = &err else {
            panic!("{bad}: {err:?}");
        };
        let d = diagnostics
            .iter()
            .find(|d| d.is_error() && d.message.contains(expect))
            .unwrap_or_else(|| panic!("{bad}: no error saying {expect:?} in {err}"));
        assert_eq!(d.path, "truths[2]", "{bad}: {d:?}");
        assert_eq!(d.line, Some(5), "{bad}: {d:?}");
        assert_eq!(d.column, Some(5), "{bad}: {d:?}");
    }
    // The same spellings declared case-sensitive: case is a warning, the
    // encoding trick is still an error.
    let yaml = "name: look\ncase_sensitive_names: true\ntruths: [Flu, flu, Caf\u{e9}]\nactions:\n  - name: T\n    type: str\n    states:\n      a: [Flu, Caf\u{e9}]\n      b: [flu]\n";
    let (_, warnings) = load_bytes("look.yaml", yaml.as_bytes()).unwrap();
    assert!(
        warnings.iter().any(|w| w.message.contains("letter case")),
        "{warnings:?}"
    );
    let yaml = yaml.replace("[Flu, flu, Caf\u{e9}]", "[Flu, Cafe\u{301}, Caf\u{e9}]");
    assert!(load_bytes("look.yaml", yaml.as_bytes()).is_err());
    // Full-width letters are not a case difference: still an error.
    let yaml = yaml.replace(
        "[Flu, Cafe\u{301}, Caf\u{e9}]",
        "[Flu, \u{ff46}lu, Caf\u{e9}]",
    );
    assert!(load_bytes("look.yaml", yaml.as_bytes()).is_err());
}

/// Names of other scripts that look alike (TR39 confusable skeletons) load
/// with a warning located at the later name.
#[test]
fn confusable_names_of_other_scripts_are_located_warnings() {
    // `Flu` beside `Fӏu`: Latin F and u around the Cyrillic palochka U+04CF.
    let yaml = "name: look\ntruths:\n  - Flu\n  - Caf\u{e9}\n  - F\u{4cf}u\nactions:\n  - name: Test\n    type: str\n    states:\n      a: [Flu]\n      b: [Caf\u{e9}]\n";
    let (_, warnings) = load_bytes("look.yaml", yaml.as_bytes()).unwrap();
    let w = warnings
        .iter()
        .find(|w| w.message.contains("TR39"))
        .unwrap_or_else(|| panic!("no confusable warning in {warnings:?}"));
    assert_eq!(w.path, "truths[2]", "{w:?}");
    assert_eq!(w.line, Some(5), "{w:?}");
}
