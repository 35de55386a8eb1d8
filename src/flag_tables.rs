//! The flag reference (docs/flags.md) as text, written from a clap
//! definition (the command line's own, `cli::command()`) so it cannot
//! drift: one Markdown table per command (flag, default, meaning), between
//! two marker comments that `examples/flag_tables.rs --write docs/flags.md`
//! replaces and `tests/docs.rs` compares with this output. Pure
//! text-building: it reads only the clap values it is given.

use clap::{Arg, ArgAction, Command};

/// The comment that opens the generated block in docs/flags.md.
pub const BEGIN: &str = "<!-- flag tables: generated from the clap definitions by `cargo run --release --example flag_tables -- --write docs/flags.md`; edit the doc comments in src/cli, not this block -->";
/// The comment that closes it.
pub const END: &str = "<!-- end of flag tables -->";

/// The whole generated block, markers included: the flags every command
/// takes, then one table per visible command in `--help` order.
pub fn markdown(root: &Command) -> String {
    let mut text = format!("{BEGIN}\n\n");
    let globals: Vec<&Arg> = visible(root).filter(|a| a.is_global_set()).collect();
    if !globals.is_empty() {
        text.push_str("### Every command\n\n");
        text.push_str(&table(&globals));
        text.push('\n');
    }
    for command in root.get_subcommands().filter(|c| !c.is_hide_set()) {
        text.push_str(&format!("### `kumo-gen {}`\n\n", command.get_name()));
        if let Some(about) = command.get_about() {
            text.push_str(&format!("{}.\n\n", about.to_string().trim_end_matches('.')));
        }
        let args: Vec<&Arg> = visible(command).filter(|a| !a.is_global_set()).collect();
        if args.is_empty() {
            text.push_str("No flags of its own.\n\n");
        } else {
            text.push_str(&table(&args));
            text.push('\n');
        }
    }
    text.push_str(END);
    text.push('\n');
    text
}

/// The name a table gives `arg`: `--long`, `-s` when it has no long
/// name, or `<NAME>` for a positional argument.
pub fn flag_name(arg: &Arg) -> String {
    if let Some(long) = arg.get_long() {
        format!("--{long}")
    } else if let Some(short) = arg.get_short() {
        format!("-{short}")
    } else {
        format!("<{}>", value_names(arg))
    }
}

fn visible(command: &Command) -> impl Iterator<Item = &Arg> {
    command.get_arguments().filter(|a| !a.is_hide_set())
}

fn table(args: &[&Arg]) -> String {
    let mut text = String::from("| flag | default | meaning |\n| --- | --- | --- |\n");
    for arg in args {
        text.push_str(&format!(
            "| {} | {} | {} |\n",
            cell(&usage(arg)),
            default(arg),
            meaning(arg)
        ));
    }
    text
}

/// `--long <VALUE>`, `-s, --long`, `<NAME>...` as `--help` writes them.
fn usage(arg: &Arg) -> String {
    if arg.is_positional() {
        let many = arg.get_num_args().is_some_and(|n| n.max_values() > 1);
        return format!("<{}>{}", value_names(arg), if many { "..." } else { "" });
    }
    let mut name = match (arg.get_short(), arg.get_long()) {
        (Some(s), Some(l)) => format!("-{s}, --{l}"),
        (None, Some(l)) => format!("--{l}"),
        (Some(s), None) => format!("-{s}"),
        (None, None) => arg.get_id().to_string(),
    };
    if takes_value(arg) {
        name.push_str(&format!(" <{}>", value_names(arg)));
        if arg.get_num_args().is_some_and(|n| n.max_values() > 1) {
            name.push_str("...");
        }
    }
    name
}

fn takes_value(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Set | ArgAction::Append)
}

fn value_names(arg: &Arg) -> String {
    match arg.get_value_names() {
        Some(names) => names
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join("> <"),
        None => arg.get_id().as_str().to_uppercase(),
    }
}

fn default(arg: &Arg) -> String {
    if arg.is_required_set() {
        return "required".into();
    }
    if !takes_value(arg) {
        return String::new();
    }
    let values: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if values.is_empty() {
        String::new()
    } else {
        cell(&values.join(","))
    }
}

/// The first paragraph of the flag's doc comment, and its possible values.
fn meaning(arg: &Arg) -> String {
    let mut text = arg
        .get_help()
        .map(|h| h.to_string())
        .unwrap_or_default()
        .replace('\n', " ")
        .replace('|', "\\|");
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if takes_value(arg) && !values.is_empty() {
        let end = if text.ends_with('.') || text.is_empty() {
            ""
        } else {
            "."
        };
        text.push_str(&format!("{end} One of {}.", values.join(", ")));
        text = text.trim_start().to_string();
    }
    text
}

/// Code in a table cell (a `|` escaped so the row keeps its columns).
fn cell(code: &str) -> String {
    format!("`{}`", code.replace('|', "\\|"))
}
