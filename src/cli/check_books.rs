//! `kumo-gen check-books DIR`: checks the knowledge books of a dataset
//! directory against its instances.
//!
//! Layout (ours and KUMO's): `DIR/<setting>.jsonl` instance files and
//! `DIR/knowledge_book/<setting>/seed=<i>.txt` books. Our books get the
//! exact checker ([`crate::render::check_book`]); KUMO's LLM-written books
//! get the conservative heuristic ([`crate::render::check_kumo_book`]).
//! With `--format auto` a directory with a `manifest.json` is ours.

use std::path::PathBuf;

use super::{Error, Globals, Report, out};
use crate::dataset::{self, BookCheck, BookFinding, BookFormat, Dataset};

/// `--format`: whose books these are.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
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
    /// Domain name or path (default: the one the directory's manifest.json
    /// records, else the directory's name).
    #[arg(long, value_name = "NAME|PATH")]
    domain: Option<String>,
    /// Which checker to use.
    #[arg(long, value_enum, default_value = "auto")]
    format: FormatArg,
    /// Problems to print per failing book.
    #[arg(long, value_name = "N", default_value_t = 3)]
    show: usize,
}

/// Checks every book of the directory; exit 1 when a book fails.
pub fn run(globals: &Globals, args: &CheckBooksArgs) -> Result<Report, Error> {
    let data = Dataset::open(&globals.registry, &args.dir, args.domain.as_deref())?;
    let format = match args.format {
        FormatArg::Kumo => BookFormat::Kumo,
        FormatArg::Ours => BookFormat::Ours,
        FormatArg::Auto => BookFormat::of(&data),
    };
    let kumo = format == BookFormat::Kumo;
    let settings = data.settings()?;
    if settings.is_empty() {
        return Err(Error::input(format!(
            "no `<setting>.jsonl` instance file in `{}`",
            args.dir.display()
        )));
    }
    let mut total = BookCheck::default();
    for setting in &settings {
        let books = dataset::books_dir(data.dir(), &setting.to_string());
        if !books.is_dir() {
            out(&format!(
                "{setting}: no books to check (`{}` does not exist: written with `--books none`?)\n",
                books.display()
            ))?;
            continue;
        }
        let tally = dataset::check_books(&data, setting, format)?;
        for finding in &tally.findings {
            match finding {
                BookFinding::BadLine { line, message } => {
                    crate::stderr_line!("{}:{line}: {message}", data.file(setting).display());
                }
                BookFinding::Failed { path, problems } => {
                    crate::stderr_line!("FAIL {} ({} problems)", path.display(), problems.len());
                    for p in problems.iter().take(args.show) {
                        crate::stderr_line!("  {p}");
                    }
                }
            }
        }
        out(&tally.setting_line(setting, kumo))?;
        total.add_counts(&tally);
    }
    out(&total.total_line(kumo))?;
    if total.no_book > 0 {
        return Err(Error::input_with_help(
            format!("{} instances have no book file", total.no_book),
            "re-run the command that made the dataset (it rebuilds missing books) or pass `--books files` to it",
        ));
    }
    if total.books == 0 {
        return Err(Error::input(format!(
            "no knowledge books under `{}`",
            args.dir.join("knowledge_book").display()
        )));
    }
    Ok(Report::failed_if(total.failed > 0 || total.bad_lines > 0))
}
