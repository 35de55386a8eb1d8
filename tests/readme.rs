//! README.md against the code: its flag tables must name every flag that
//! `kumo-gen CMD --help` prints, in the table of that command, and be
//! exactly what `examples/flag_tables.rs` writes from the clap
//! definitions (so a changed default or help text shows up too).

use std::collections::BTreeMap;

use kumo_gen::cli::flag_tables::{BEGIN, END, markdown};

use crate::common::{TestCommand, root};

const REGENERATE: &str = "cargo run --release --example flag_tables -- --write README.md";

/// The generated block of README.md, split into its tables: command name
/// (`""` for the flags every command takes) to the flag names of its rows.
fn readme_tables() -> (String, BTreeMap<String, Vec<String>>) {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let (Some(start), Some(end)) = (readme.find(BEGIN), readme.find(END)) else {
        panic!(
            "README.md has no generated flag tables; put the lines\n{BEGIN}\n{END}\nwhere they belong and run `{REGENERATE}`"
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
fn the_readme_flag_tables_name_every_flag_of_every_command() {
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
                .any(|a| kumo_gen::cli::flag_tables::flag_name(a) == *listed);
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
        "README.md's flag tables are out of date:\n  {}\nrun `{REGENERATE}`",
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
            "README.md's flag tables name every flag but differ from the clap definitions \
             (a help text or default changed):\n  README: {readme}\n  clap:   {clap}\nrun `{REGENERATE}`"
        );
    }
}
