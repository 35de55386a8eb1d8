//! One test per fixed defect, named after what went wrong, so it cannot
//! come back unnoticed. Larger behaviours have their own files
//! (conformance.rs, robust.rs); these are the small, sharp ones.

use kumo_gen::domain::{Registry, kumo_env_domain, load_bytes, plural};
use kumo_gen::synth::{Dedup, Params, Stats, Synthesizer};

use crate::common::{TestCommand, root};

/// Plurals read "diagnosises" and "specieses" when import and validation
/// had a plural each.
#[test]
fn one_plural_for_nouns() {
    assert_eq!(plural("diagnosis"), "diagnoses");
    assert_eq!(plural("species"), "species");
    assert_eq!(plural("plant species"), "plant species");
    assert_eq!(plural("ability"), "abilities");
}

/// KUMO env names worked in `score` (lower-cased, so `ArtStyleEnv` was
/// not found) and nowhere else.
#[test]
fn kumo_env_names_are_accepted_wherever_a_domain_name_is() {
    assert_eq!(kumo_env_domain("MedicalEnv"), Some("medical"));
    assert_eq!(kumo_env_domain("ArtStyleEnv"), Some("art-style"));
    assert_eq!(kumo_env_domain("MedicalAnonymousEnv"), Some("medical"));
    assert_eq!(kumo_env_domain("NoSuchEnv"), None);
    let (d, _) = Registry::default().load("ArtStyleEnv").unwrap();
    assert_eq!(d.name, "art-style");
    TestCommand::new().args(["validate", "MedicalEnv"]).ok();
}

/// `eval --domain` with a name that does not load was silently ignored
/// (the directory name was used instead).
#[test]
fn a_bad_domain_for_a_dataset_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = Registry::default()
        .for_dataset(Some("no-such-domain"), dir.path())
        .unwrap_err();
    assert!(err.to_string().contains("no-such-domain"), "{err}");
}

/// `validate /dev/zero` read without end; a FIFO blocked forever.
#[test]
fn non_regular_domain_files_are_refused() {
    TestCommand::new()
        .args(["validate", "/dev/zero"])
        .timeout(std::time::Duration::from_secs(20))
        .expect_code(1)
        .stderr_contains("not a regular file");
}

/// `--threads 4294967296` spawned threads without end; `--shard` with a
/// huge N overflowed.
#[test]
fn threads_and_shards_are_bounded() {
    for (flag, value, needle) in [
        ("--threads", "4294967296", "more than 1024"),
        ("--shard", "3/18446744073709551615", "at most"),
    ] {
        TestCommand::new()
            .args([
                "--domain",
                "medical",
                "--truths",
                "4",
                "--actions",
                "6",
                "-n",
                "1",
            ])
            .args([flag, value])
            .expect_code(2)
            .stderr_contains(needle);
    }
}

/// A 300-character domain name failed in the file system, not in
/// validation; int bounds past 2^53 and ranges whose width overflows
/// were accepted.
#[test]
fn oversized_names_and_ranges_are_located_errors() {
    let base = "name: NAME\ntruths: [A, B]\nactions:\n  - name: C\n    type: TYPE\n    states:\n      - range: [0, 1]\n        rules_out: [A]\n      - range: RANGE\n        rules_out: [B]\n";
    for (name, kind, range, needle) in [
        ("x".repeat(300), "float", "[1, 2]", "at most 64"),
        ("t".into(), "int", "[1, 1.0e17]", "beyond 2^53"),
        ("t".into(), "float", "[-1.0e308, 1.0e308]", "too wide"),
    ] {
        let text = base
            .replace("NAME", &name)
            .replace("TYPE", kind)
            .replace("RANGE", range);
        let err = load_bytes("r.yaml", text.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle) && err.contains("r.yaml:"), "{err}");
    }
}

/// KUMO's astronomy has `(1e38, 1e45)`: the decimal grid saturated and
/// the state could never be observed; its values are now rounded to
/// significant digits and read back as the state.
#[test]
fn very_wide_kumo_ranges_are_observable() {
    let (domain, _) = Registry::default().load("astronomy").unwrap();
    let a = domain.action_index("Luminosity Measurement").unwrap();
    let synth = Synthesizer::new(&domain, Params::new(12, 10, 1)).unwrap();
    let instances = synth
        .generate(0..300, &mut Dedup::default(), &mut Stats::default())
        .unwrap();
    let mut seen_first_state = false;
    for inst in &instances {
        if let Some(k) = inst.actions.iter().position(|&x| x == a) {
            let obs = &inst.observations[k];
            let v = obs.value.unwrap();
            assert_eq!(domain.actions[a].state_containing(v), Some(obs.state));
            seen_first_state |= obs.state == 0;
        }
    }
    assert!(seen_first_state, "the (1e38, 1e45) state is observed");
}

/// The importer added an `Inconclusive` state to cloud and constellation
/// actions (changing 26 of KUMO's reference values).
#[test]
fn no_state_is_ever_added_to_kumo_data() {
    for name in ["cloud", "star-constellation", "wildlife"] {
        let text =
            std::fs::read_to_string(root().join("domains").join(format!("{name}.yaml"))).unwrap();
        assert!(!text.contains("Inconclusive"), "{name}");
    }
}
