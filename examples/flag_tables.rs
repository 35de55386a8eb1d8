//! Prints the flag reference (docs/flags.md), written from the clap definitions
//! (`kumo_gen::flag_tables`), or with `--write FILE` replaces the
//! generated block of FILE (between its marker comments) with them:
//!
//!     cargo run --release --example flag_tables -- --write docs/flags.md
//!
//! `tests/docs.rs` fails, naming each missing flag and its table, when
//! the block in docs/flags.md is not what this writes.

use kumo_gen::flag_tables::{BEGIN, END, markdown};

fn main() {
    let tables = markdown(&kumo_gen::cli::command());
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [flag, file] = args.as_slice() else {
        if args.is_empty() {
            print!("{tables}");
            return;
        }
        eprintln!("usage: flag_tables [--write FILE]");
        std::process::exit(2);
    };
    if flag != "--write" {
        eprintln!("usage: flag_tables [--write FILE]");
        std::process::exit(2);
    }
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| {
        eprintln!("error: cannot read {file}: {e}");
        std::process::exit(1)
    });
    let (Some(start), Some(end)) = (text.find(BEGIN), text.find(END)) else {
        eprintln!(
            "error: {file} has no generated block: put the two lines\n{BEGIN}\n{END}\nwhere the tables belong"
        );
        std::process::exit(1)
    };
    let end = end + END.len() + usize::from(text[end + END.len()..].starts_with('\n'));
    let updated = format!("{}{tables}{}", &text[..start], &text[end..]);
    if updated != text {
        std::fs::write(file, updated).unwrap_or_else(|e| {
            eprintln!("error: cannot write {file}: {e}");
            std::process::exit(2)
        });
        eprintln!("{file}: flag tables rewritten");
    } else {
        eprintln!("{file}: flag tables already current");
    }
}
