//! What a newcomer's slips are told (issue 42's probes): every error starts
//! `error:` and names the fix; a KUMO `.py` file as a domain points at
//! `kumo-gen import`; a transposed name gets "did you mean"; a negative
//! number, a file given as `--out` and `eval` without a model are
//! explained; `completions` and `man` come from the clap definitions.

use crate::common::TestCommand;

/// Runs `args`, expects `code`, and returns stderr after checking that
/// its first line is an `error:` head.
fn refused(args: &[&str], code: i32) -> String {
    let ran = TestCommand::new().args(args).expect_code(code);
    let said = ran.stderr_text();
    assert!(
        said.starts_with("error: "),
        "`kumo-gen {}` must start its message with `error:`:\n{said}",
        args.join(" ")
    );
    assert!(said.contains("= help: "), "no help line:\n{said}");
    said
}

#[test]
fn a_kumo_python_file_as_a_domain_points_at_import() {
    for spec in ["medical_data.py", "../kumo/env/data/medical_data.py"] {
        let said = refused(&["--domain", spec, "-n", "1"], 1);
        assert!(
            said.contains("is a Python file, not a domain file"),
            "{said}"
        );
        assert!(said.contains(&format!("kumo-gen import {spec}")), "{said}");
        assert!(!said.contains("YAML"), "{said}");
    }
}

#[test]
fn a_transposed_domain_name_gets_did_you_mean_under_an_error_head() {
    let said = refused(&["--domain", "medicla", "-n", "1"], 1);
    assert!(
        said.starts_with("error: unknown domain `medicla`"),
        "{said}"
    );
    assert!(said.contains("did you mean `medical`"), "{said}");
    // The same head where a command checks many names.
    let ran = TestCommand::new()
        .args(["validate", "medicla"])
        .expect_code(1);
    assert!(
        ran.stderr_text()
            .starts_with("error: unknown domain `medicla`"),
        "{}",
        ran.stderr_text()
    );
}

#[test]
fn a_negative_number_is_explained() {
    let said = refused(&["--domain", "medical", "-n", "-5"], 2);
    assert!(said.contains("`-n -5`"), "{said}");
    assert!(said.contains("no negative number"), "{said}");
    let said = refused(&["--domain", "medical", "--threads", "-1"], 2);
    assert!(said.contains("`--threads -1`"), "{said}");
}

#[test]
fn a_file_given_as_out_is_explained_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    let out = file.to_str().unwrap();
    for args in [
        vec!["--domain", "medical", "-n", "1", "--out", out],
        vec!["merge", "--out", out],
        vec!["split", "--domain", "medical", "--out-dir", out],
        vec!["eval", "--player", "guess", "--data", "x", "--out", out],
    ] {
        let said = refused(&args, 2);
        assert!(said.contains("is a file, not a directory"), "{said}");
    }
    let below = format!("{out}/sub");
    let said = refused(&["--domain", "medical", "-n", "1", "--out", &below], 2);
    assert!(said.contains("which is a file"), "{said}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

#[test]
fn eval_without_a_model_names_the_offline_players() {
    let said = refused(&["eval", "--data", "generated"], 2);
    assert!(said.contains("--player golden|random|guess"), "{said}");
    assert!(said.contains("--api-base URL --model NAME"), "{said}");
    // A model needs its server and the other way round (clap's message).
    TestCommand::new()
        .args(["eval", "--api-base", "http://127.0.0.1:9/v1", "--data", "x"])
        .expect_code(2)
        .stderr_contains("--model");
}

#[test]
fn completions_and_man_pages_come_from_the_flag_definitions() {
    let bash = TestCommand::new().args(["completions", "bash"]).ok();
    for word in [
        "generate",
        "--search-budget",
        "--exclude-key",
        "completions",
    ] {
        bash.stdout_contains(word);
    }
    // Bash completes a subcommand's flags (and their values), not only
    // the subcommands: the script is run as bash runs it on <Tab>.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("kumo-gen.bash");
    std::fs::write(&script, &bash.stdout).unwrap();
    for (words, want) in [
        ("kumo-gen sco", "score"),
        ("kumo-gen score --mo", "--moves"),
        ("kumo-gen check-books --fo", "--format"),
        ("kumo-gen report --repl", "--replays"),
        ("kumo-gen generate --search-b", "--search-budget"),
    ] {
        let cword = words.split(' ').count() - 1;
        let current = words.rsplit(' ').next().unwrap();
        let previous = words.split(' ').nth(cword - 1).unwrap();
        let run = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source '{}'; COMP_WORDS=({words}); COMP_CWORD={cword}; _kumo__gen kumo-gen '{current}' '{previous}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                script.display()
            ))
            .output()
            .unwrap();
        let offered = String::from_utf8_lossy(&run.stdout);
        assert!(
            offered.lines().any(|l| l == want),
            "`{words}<Tab>` offers {offered:?}, not {want}"
        );
    }
    TestCommand::new()
        .args(["completions", "zsh"])
        .ok()
        .stdout_contains("#compdef kumo-gen");
    let main = TestCommand::new().arg("man").ok();
    main.stdout_contains(".TH kumo-gen 1");
    main.stdout_contains("kumo\\-gen\\-generate(1)");
    TestCommand::new()
        .args(["man", "generate"])
        .ok()
        .stdout_contains("\\-\\-search\\-budget");
    refused(&["man", "generat"], 2);
    let dir = tempfile::tempdir().unwrap();
    TestCommand::new()
        .args(["man", "--dir"])
        .arg(dir.path().join("man"))
        .ok();
    let pages = std::fs::read_dir(dir.path().join("man")).unwrap().count();
    let commands = kumo_gen::cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .count();
    assert_eq!(pages, commands + 1);
}

#[test]
fn validating_every_domain_sums_up_the_shipped_warnings() {
    let ran = TestCommand::new().arg("validate").ok();
    let said = ran.stderr_text();
    assert!(!said.contains("warning:"), "{said}");
    let note: Vec<&str> = said.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(note.len(), 1, "{said}");
    assert!(note[0].contains("--list-warnings"), "{said}");
    let listed = TestCommand::new()
        .args(["validate", "--list-warnings"])
        .ok()
        .stderr_text();
    let warnings = listed.lines().filter(|l| l.starts_with("warning:")).count();
    assert!(
        note[0].starts_with(&format!("note: {warnings} expected warnings")),
        "{}: {warnings} listed",
        note[0]
    );
}
