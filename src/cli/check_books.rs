//! `kumo-gen check-books DIR`: checks the knowledge books of a dataset
//! directory against its instances.
//!
//! Layout (ours and KUMO's): `DIR/<setting>.jsonl` instance files and
//! `DIR/knowledge_book/<setting>/seed=<i>.txt` books. Our books get the
//! exact checker ([`crate::render::check_book`]); KUMO's LLM-written books
//! get the conservative heuristic ([`crate::render::check_kumo_book`]).
//! With `--format auto` a directory with a `manifest.json` is ours.

use std::io;
use std::path::{Path, PathBuf};

use super::{EXIT_INPUT, Globals, out};
use crate::domain::Domain;
use crate::render::{OwnedTask, check_book, check_kumo_book};

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BookFormat {
    /// `ours` when DIR has a manifest.json, else `kumo`.
    Auto,
    /// Books rendered by kumo-gen: exact check.
    Ours,
    /// KUMO's LLM-written books: heuristic check.
    Kumo,
}

#[derive(clap::Args, Debug)]
pub struct CheckBooksArgs {
    /// Dataset directory: `<setting>.jsonl` and `knowledge_book/<setting>/seed=<i>.txt`.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Domain name or path (default: the directory's name).
    #[arg(long, value_name = "NAME|PATH")]
    domain: Option<String>,
    /// Which checker to use.
    #[arg(long, value_enum, default_value = "auto")]
    format: BookFormat,
    /// Problems to print per failing book.
    #[arg(long, value_name = "N", default_value_t = 3)]
    show: usize,
}

#[derive(Default)]
struct Tally {
    books: usize,
    failed: usize,
    no_book: usize,
    bad_lines: usize,
    facts: usize,
    missing_facts: usize,
    invented: usize,
    confirmations: usize,
}

/// Checks every book of the directory; exit 1 when a book fails.
pub fn run(globals: &Globals, args: &CheckBooksArgs) -> io::Result<i32> {
    let spec = match &args.domain {
        Some(spec) => spec.clone(),
        None => args
            .dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string(),
    };
    let domain = match globals.registry.load(&spec) {
        Ok((domain, _)) => domain,
        Err(e) => {
            crate::stderr_line!("{e}\nhelp: name the dataset's domain with `--domain NAME|PATH`");
            return Ok(EXIT_INPUT);
        }
    };
    let kumo = match args.format {
        BookFormat::Kumo => true,
        BookFormat::Ours => false,
        BookFormat::Auto => !args.dir.join("manifest.json").is_file(),
    };
    let mut settings: Vec<PathBuf> = std::fs::read_dir(&args.dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    settings.retain(|p| p.is_file() && p.extension().is_some_and(|e| e == "jsonl"));
    settings.sort();
    if settings.is_empty() {
        crate::stderr_line!(
            "error: no `<setting>.jsonl` instance file in `{}`",
            args.dir.display()
        );
        return Ok(EXIT_INPUT);
    }
    let mut total = Tally::default();
    for file in &settings {
        let setting = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let books = args.dir.join("knowledge_book").join(setting);
        if !books.is_dir() {
            out(&format!(
                "{setting}: no books to check (`{}` does not exist: written with `--books none`?)\n",
                books.display()
            ))?;
            continue;
        }
        let tally = check_setting(&domain, file, &books, kumo, args.show)?;
        out(&format!(
            "{setting}: {} books, {} passed, {} failed{}{}{}\n",
            tally.books,
            tally.books - tally.failed,
            tally.failed,
            if tally.no_book > 0 {
                format!(", {} instances without a book", tally.no_book)
            } else {
                String::new()
            },
            if tally.bad_lines > 0 {
                format!(", {} unreadable instance lines", tally.bad_lines)
            } else {
                String::new()
            },
            if kumo {
                format!(
                    "; {} of {} facts not stated, {} invented rule-outs, {} confirmation sentences",
                    tally.missing_facts, tally.facts, tally.invented, tally.confirmations
                )
            } else {
                format!("; {} facts", tally.facts)
            },
        ))?;
        total.books += tally.books;
        total.failed += tally.failed;
        total.bad_lines += tally.bad_lines;
        total.no_book += tally.no_book;
    }
    out(&format!(
        "{} books checked ({} checker): {} passed, {} failed\n",
        total.books,
        if kumo { "kumo heuristic" } else { "exact" },
        total.books - total.failed,
        total.failed
    ))?;
    if total.no_book > 0 {
        crate::stderr_line!(
            "error: {} instances have no book file\n  = help: re-run the command that made the dataset (it rebuilds missing books) or pass `--books files` to it",
            total.no_book
        );
    }
    if total.books == 0 && total.no_book == 0 {
        crate::stderr_line!(
            "error: no knowledge books under `{}`",
            args.dir.join("knowledge_book").display()
        );
        return Ok(EXIT_INPUT);
    }
    Ok(
        if total.failed == 0 && total.bad_lines == 0 && total.no_book == 0 {
            0
        } else {
            EXIT_INPUT
        },
    )
}

fn check_setting(
    domain: &Domain,
    file: &Path,
    books: &Path,
    kumo: bool,
    show: usize,
) -> io::Result<Tally> {
    let mut tally = Tally::default();
    let text = crate::game::read_jsonl(file)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot read `{}`: {e}", file.display())))?;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let task = serde_json::from_str(line)
            .map_err(|e| e.to_string())
            .and_then(|v| OwnedTask::from_json(domain, &v).map_err(|e| e.to_string()));
        let task = match task {
            Ok(task) => task,
            Err(e) => {
                tally.bad_lines += 1;
                crate::stderr_line!("{}:{}: {e}", file.display(), i + 1);
                continue;
            }
        };
        let path = books.join(format!("seed={}.txt", task.seed));
        let book = match std::fs::read_to_string(&path) {
            Ok(book) => book,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                tally.no_book += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        tally.books += 1;
        let view = task.view(domain);
        let problems: Vec<String> = if kumo {
            let check = check_kumo_book(&book, &view);
            tally.facts += check.facts;
            tally.missing_facts += check.missing.len();
            tally.invented += check.invented.len();
            tally.confirmations += check.confirmations.len();
            check
                .missing
                .iter()
                .map(|(a, s, t)| format!("`{a}` state `{s}`: the rule-out of `{t}` is not stated"))
                .chain(check.invented.iter().map(|(line, a, s, t)| {
                    format!("line {line}: `{a}` state `{s}` is said to rule out `{t}`, which it does not")
                }))
                .collect()
        } else {
            let check = check_book(&book, &view);
            tally.facts += check.facts;
            check.problems.iter().map(ToString::to_string).collect()
        };
        if !problems.is_empty() {
            tally.failed += 1;
            crate::stderr_line!("FAIL {} ({} problems)", path.display(), problems.len());
            for p in problems.iter().take(show) {
                crate::stderr_line!("  {p}");
            }
        }
    }
    Ok(tally)
}
