//! The documents' facts against the code: the flag reference
//! (docs/flags.md) must name every flag that `kumo-gen CMD --help`
//! prints, in the table of that command, and be exactly what
//! `examples/flag_tables.rs` writes from the clap definitions (so a
//! changed default or help text shows up too); docs/output.md's section
//! "The golden player's answer rule" must be what the labels and the SFT
//! records of a generated dataset do. (`docs_commands.rs` runs the
//! documents' commands.)

use std::collections::BTreeMap;

use kumo_gen::flag_tables::{BEGIN, END, markdown};

use kumo_gen::domain::{Domain, Registry};
use kumo_gen::game::InstanceLine;
use serde_json::Value;

use crate::common::{TestCommand, root};
use crate::reference::Reference;

const REGENERATE: &str = "cargo run --release --example flag_tables -- --write docs/flags.md";

/// The flag reference, from the repository root.
const FLAGS: &str = "docs/flags.md";

/// The document that states the golden player's rule.
const GOLDEN_DOC: &str = "docs/output.md";

/// The generated block of the flag reference, split into its tables: command name
/// (`""` for the flags every command takes) to the flag names of its rows.
fn readme_tables() -> (String, BTreeMap<String, Vec<String>>) {
    let readme = std::fs::read_to_string(root().join(FLAGS)).unwrap();
    let (Some(start), Some(end)) = (readme.find(BEGIN), readme.find(END)) else {
        panic!(
            "{FLAGS} has no generated flag tables; put the lines\n{BEGIN}\n{END}\nwhere they belong and run `{REGENERATE}`"
        )
    };
    let block = readme[start..end + END.len()].to_string() + "\n";
    let mut tables: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current = None;
    for line in block.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            let name = heading
                .trim_matches('`')
                .strip_prefix("kumo-gen ")
                .unwrap_or("")
                .to_string();
            tables.entry(name.clone()).or_default();
            current = Some(name);
        } else if let (Some(name), Some(row)) = (&current, line.strip_prefix("| `")) {
            let usage = row.split('`').next().unwrap_or("").replace("\\|", "|");
            let flags: Vec<String> = if usage.starts_with('<') {
                vec![usage.trim_end_matches("...").to_string()]
            } else {
                // `-o, --out <FILE>` is `--out`, as `flag_name` names it.
                let words: Vec<&str> = usage.split([',', ' ']).collect();
                let long = words.iter().find(|w| w.starts_with("--"));
                let short = words.iter().find(|w| w.starts_with('-'));
                long.or(short).map(|w| w.to_string()).into_iter().collect()
            };
            tables.get_mut(name).unwrap().extend(flags);
        }
    }
    (block, tables)
}

/// The flags `kumo-gen CMD --help` lists (`--long`, or `-s` for a flag
/// with no long name), help and version aside.
fn help_flags(command: &str) -> Vec<String> {
    let help = TestCommand::new()
        .args([command, "--help"])
        .ok()
        .stdout_text();
    let mut flags = Vec::new();
    for line in help.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(first) = words.first() else { continue };
        // Flags start at column 2 or 6; their descriptions further in.
        let indent = line.len() - line.trim_start().len();
        if !(2..=6).contains(&indent) || !first.starts_with('-') || first.len() < 2 {
            continue;
        }
        let name = match words.get(1) {
            Some(long) if first.ends_with(',') && long.starts_with("--") => *long,
            _ => first.trim_end_matches(','),
        };
        let name = name.split('=').next().unwrap().to_string();
        if !["-h", "--help", "-V", "--version"].contains(&name.as_str()) {
            flags.push(name);
        }
    }
    flags
}

#[test]
fn the_flag_reference_names_every_flag_of_every_command() {
    let (block, tables) = readme_tables();
    let cli = kumo_gen::cli::command();
    let global: Vec<String> = tables.get("").cloned().unwrap_or_default();
    let mut problems = Vec::new();
    for command in cli.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = command.get_name();
        let Some(table) = tables.get(name) else {
            problems.push(format!("no table for `kumo-gen {name}`"));
            continue;
        };
        for flag in help_flags(name) {
            if !table.contains(&flag) && !global.contains(&flag) {
                problems.push(format!("the table of `kumo-gen {name}` lacks {flag}"));
            }
        }
        for listed in table {
            let known = command
                .get_arguments()
                .any(|a| kumo_gen::flag_tables::flag_name(a) == *listed);
            if !known {
                problems.push(format!(
                    "the table of `kumo-gen {name}` lists {listed}, which the command does not have"
                ));
            }
        }
    }
    for name in tables.keys().filter(|n| !n.is_empty()) {
        if cli.find_subcommand(name).is_none() {
            problems.push(format!(
                "a table for `kumo-gen {name}`, which does not exist"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{FLAGS} is out of date:\n  {}\nrun `{REGENERATE}`",
        problems.join("\n  ")
    );
    let generated = markdown(&cli);
    if let Some((readme, clap)) = block
        .lines()
        .zip(generated.lines())
        .find(|(a, b)| a != b)
        .or((block.lines().count() != generated.lines().count()).then_some(("(length)", "")))
    {
        panic!(
            "{FLAGS} names every flag but differs from the clap definitions \
             (a help text or default changed):\n  doc:  {readme}\n  clap: {clap}\nrun `{REGENERATE}`"
        );
    }
}

/// The documented statement of the golden player's rule, clause by clause
/// (whitespace aside): the test below checks the code against these.
const GOLDEN_RULE: [&str; 6] = [
    "As soon as at most one candidate is left, or some candidate is ruled out by no state of any action left (with no action left, every candidate is).",
    "Otherwise it takes the optimal action (least exact expected steps, the first in the line's `actions` order among ties)",
    "The first candidate, in the line's `truths` order, that no action left can rule out; when every candidate can still be ruled out, the one candidate left.",
    "with one valid truth (the default) `golden_answer` is the valid truth",
    "The last assistant turn is always the answer, and it names `golden_answer` with any number of valid truths:",
    "naming any valid truth scores as success, as in KUMO.",
];

fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text of `<ANSWER> x </ANSWER>` in an assistant turn (its last tag).
fn answer_of(turn: &str) -> &str {
    let after = turn.rsplit("<ANSWER>").next().unwrap_or("");
    after.split("</ANSWER>").next().unwrap_or("").trim()
}

/// One labelled line and its SFT record against the documented rule, played
/// independently: the candidates and actions left at every move, the
/// optimal action by KUMO's recursion, the named truth, the record's turns.
fn check_golden_rule(domain: &Domain, line: &InstanceLine, sft: &Value) {
    let resolved = line.resolve(domain).unwrap();
    let seed = resolved.seed;
    let rules: Vec<Vec<Vec<usize>>> = resolved
        .actions
        .iter()
        .map(|&a| {
            let states = &domain.actions[a].states;
            states
                .iter()
                .map(|s| {
                    (0..resolved.truths.len())
                        .filter(|&t| s.rules_out.contains(resolved.truths[t]))
                        .collect()
                })
                .collect()
        })
        .collect();
    let related = |a: usize, t: usize| rules[a].iter().any(|s| s.contains(&t));
    let mut reference = Reference::from_lists(resolved.truths.len(), &rules).canonical();
    let golden = resolved.golden.clone().expect("a labelled line");
    let expected = line.expected_steps().expect("a labelled line");
    let (want, _) = reference.root();
    assert!(
        (expected - want).abs() < 1e-9,
        "seed {seed}: expected_steps {expected} vs the recursion's {want}"
    );
    let valid: Vec<usize> = (0..resolved.truths.len())
        .filter(|&t| resolved.valid.contains(&resolved.truths[t]))
        .collect();
    let mut candidates: Vec<usize> = (0..resolved.truths.len()).collect();
    let mut left: Vec<usize> = (0..resolved.actions.len()).collect();
    let mask = |xs: &[usize]| xs.iter().fold(0u128, |m, &x| m | 1 << x);
    for step in 0..=golden.len() {
        let unprovable: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|&t| !left.iter().any(|&a| related(a, t)))
            .collect();
        let answers = candidates.len() <= 1 || !unprovable.is_empty();
        let Some(&action) = golden.get(step) else {
            assert!(
                answers,
                "seed {seed}: the golden player answers before the documented rule says it may"
            );
            let named = unprovable.first().or(candidates.first()).copied().unwrap();
            let answer = line
                .optimal
                .as_ref()
                .and_then(|o| o.golden_answer.as_deref());
            assert_eq!(
                answer,
                Some(domain.truths[resolved.truths[named]].as_str()),
                "seed {seed}: golden_answer"
            );
            if valid.len() == 1 {
                assert_eq!(
                    vec![named],
                    valid,
                    "seed {seed}: with one valid truth the golden answer is it"
                );
            }
            // The record names the golden answer: proven, with any
            // number of valid truths.
            let sft_named = named;
            assert!(
                valid.contains(&sft_named),
                "seed {seed}: the SFT answer is a valid truth"
            );
            let turns: Vec<&str> = sft["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "assistant")
                .map(|m| m["content"].as_str().unwrap())
                .collect();
            let (last, actions) = turns.split_last().unwrap();
            let played: Vec<&str> = golden
                .iter()
                .map(|&a| domain.actions[resolved.actions[a]].name.as_str())
                .collect();
            assert_eq!(
                actions.iter().map(|t| answer_of(t)).collect::<Vec<_>>(),
                played,
                "seed {seed}: SFT actions"
            );
            assert_eq!(
                answer_of(last),
                domain.truths[resolved.truths[sft_named]],
                "seed {seed}: the SFT record's answer"
            );
            return;
        };
        assert!(
            !answers,
            "seed {seed}: the golden player acts where the documented rule says it answers"
        );
        let optimal = reference.solve(mask(&candidates), mask(&left)).1;
        assert_eq!(
            optimal,
            Some(action),
            "seed {seed}: step {step} is not the first optimal action"
        );
        let observed = resolved.observed[action].expect("generated observations match a state");
        candidates.retain(|t| !rules[action][observed].contains(t));
        left.retain(|&a| a != action);
    }
}

#[test]
fn the_golden_player_rule_is_what_labels_and_sft_records_do() {
    let readme = std::fs::read_to_string(root().join(GOLDEN_DOC)).unwrap();
    let heading = "## The golden player's answer rule\n";
    let start = readme
        .find(heading)
        .unwrap_or_else(|| panic!("{GOLDEN_DOC} states the golden player's rule"));
    let body = &readme[start + heading.len()..];
    let section = squeeze(&body[..body.find("\n## ").unwrap_or(body.len())]);
    for clause in GOLDEN_RULE {
        assert!(
            section.contains(&squeeze(clause)),
            "{GOLDEN_DOC}'s golden player rule no longer says:\n  {clause}\nchange this test with the document, after checking the code"
        );
    }
    let domain = Registry::new(None).load("medical").unwrap().0;
    let out = tempfile::tempdir().unwrap();
    // `--valid 2` and `3` pass the checks of `--valid 1`: labels and
    // golden trajectories against the recursion, SFT answers, books.
    let settings = [("12", "16", "1"), ("6", "8", "2"), ("8", "10", "3")];
    for (truths, actions, valid) in settings {
        TestCommand::new()
            .args([
                "--domain",
                "medical",
                "--truths",
                truths,
                "--actions",
                actions,
                "--valid",
                valid,
                "-n",
                "40",
            ])
            .arg("--out")
            .arg(out.path())
            .ok();
        let setting =
            format!("truth_num={truths}+action_num={actions}+valid_truth_num={valid}.jsonl");
        let dir = out.path().join("medical");
        let lines = std::fs::read_to_string(dir.join(&setting)).unwrap();
        let records = std::fs::read_to_string(dir.join("sft").join(&setting)).unwrap();
        let (lines, records): (Vec<&str>, Vec<&str>) =
            (lines.lines().collect(), records.lines().collect());
        assert_eq!(lines.len(), records.len());
        for (line, record) in lines.iter().zip(records) {
            let line: InstanceLine = serde_json::from_str(line).unwrap();
            check_golden_rule(&domain, &line, &serde_json::from_str(record).unwrap());
        }
        TestCommand::new().arg("check-books").arg(&dir).ok();
    }
}
