//! `kumo-gen report`: the results of `eval` (and `play`) as one
//! self-contained HTML page, `DIR/index.html`: the score table with 95%
//! intervals, every player on one axis per domain, every move against the
//! exact optimum (as `score --moves`), the structure tests of `stats`, and
//! a replay viewer. Reads what `score` reads, through the same
//! loader ([`super::score::load`]).

use std::path::PathBuf;

use super::score::{ScoreInputs, load};
use super::{Error, Globals, Report};
use crate::dataset::{Dataset, Setting};
use crate::files::target::{Input, Written};
use crate::game::InstanceLine;
use crate::render::{RenderOptions, Renderer, Templates};
use crate::report::{self, Page, Structure};
use crate::results::{ResultFile, Sources};
use crate::score;
use crate::stats;

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    #[command(flatten)]
    inputs: ScoreInputs,
    /// Directory to write the page into (`DIR/index.html`; created if
    /// missing).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    out: PathBuf,
    /// Optimal labels in oracle-medical.jsonl's format, as for `score`.
    #[arg(long, value_name = "FILE")]
    oracle: Option<PathBuf>,
    /// Pool structure signatures seen fewer than N times into one `other`
    /// row, as `stats --pool`.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pool: usize,
    /// The page's title.
    #[arg(long, default_value = "kumo-gen results")]
    title: String,
    /// Result lines replayed per model, agent, domain and setting (the
    /// same seeds for every model, spread evenly over those played), or
    /// `all`: every line (a page of about 12 KB per line).
    #[arg(long, value_name = "N|all", default_value = "20")]
    replays: report::ReplayLimit,
}

pub fn run(globals: &Globals, args: &ReportArgs) -> Result<Report, Error> {
    super::flags::check_out_dir(&args.out, "--out")?;
    let mut inputs = args.inputs.inputs(globals);
    inputs.extend(args.oracle.iter().map(|p| Input::file("--oracle", p)));
    let page = args.out.join("index.html");
    super::flags::refuse_within("--out", &args.out, &page, Written::File, &inputs)?;
    let (files, mut sources) = load(globals, &args.inputs, args.oracle.as_deref())?;
    // With the instances at hand every move is scored, as `score --moves`.
    if !sources.instance_sets.is_empty() {
        sources.moves = Some(crate::search::SearchBudget::default());
    }
    let (scored, moves) = report::score_with_moves(&files, &sources);
    let mut notes = scored.notes.clone();
    for note in &notes {
        crate::stderr_line!("note: {note}");
    }

    let structure = structure(&files, &sources, args.pool);

    let templates = Templates::resolve(None)?;
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let replayed = report::replays(&files, &sources, args.replays, |file, instance| {
        book_of(&renderer, &sources, file, instance)
    });
    for note in &replayed.notes {
        crate::stderr_line!("note: {note}");
    }
    notes.extend(replayed.notes);

    let page = Page {
        title: args.title.clone(),
        inputs: files.iter().map(|f| f.path.clone()).collect(),
        rows: report::table_rows(&scored),
        notes,
        curves: score::curves(&files, &sources),
        structure,
        moves,
        replays: replayed.replays,
        books: replayed.books,
        replay_limit: args.replays,
        replayable: replayed.replayable,
    };
    let html = report::render_html(&page);
    std::fs::create_dir_all(&args.out).map_err(|e| crate::files::FileError::io(&args.out, e))?;
    let path = args.out.join("index.html");
    crate::files::write_atomic(&path, html.as_bytes())?;
    crate::stderr_line!(
        "wrote {} ({} rows, {} of {} result lines replayed, {:.1} MB)",
        path.display(),
        page.rows.len(),
        page.replays.len(),
        page.replayable,
        html.len() as f64 / 1e6
    );
    Ok(Report::Done)
}

/// The structure tests of `stats` on the results whose domain is known,
/// or why the page has none.
fn structure(files: &[ResultFile], sources: &Sources, pool: usize) -> Structure {
    if sources.instance_sets.is_empty() {
        Structure::Missing(
            "No instances were given (--instances DIR): structure signatures come from the instances."
                .into(),
        )
    } else {
        let known: Vec<ResultFile> = files
            .iter()
            .filter(|f| sources.domains.contains_key(&f.key.domain))
            .cloned()
            .collect();
        match stats::observe(&known, sources, &sources.domains) {
            Ok(observed) if !observed.per_model.is_empty() => Structure::Tests {
                tests: observed
                    .per_model
                    .iter()
                    .map(|(model, data)| stats::test(model, data, pool))
                    .collect(),
                pool,
            },
            Ok(_) => Structure::Missing(
                "No result line has its instance and domain at hand: nothing to test.".into(),
            ),
            Err(e) => Structure::Missing(format!("The structure test could not run: {e}.")),
        }
    }
}

/// The knowledge book `instance` of `file` was played with: its book file
/// beside the instances, else rendered from the domain.
fn book_of(
    renderer: &Renderer,
    sources: &Sources,
    file: &ResultFile,
    instance: &InstanceLine,
) -> Result<String, String> {
    let set = sources
        .instances(&file.key)
        .ok_or_else(|| format!("{}: no instances", file.path))?;
    let domain = &sources.domains[&file.key.domain];
    let position = set
        .instances
        .iter()
        .position(|i| i.seed == instance.seed)
        .unwrap_or(0);
    let setting: Option<Setting> = set.setting.parse().ok();
    if let (Some(dir), Some(setting)) = (&set.dir, &setting) {
        let data = Dataset::with_domain(dir, domain.clone());
        if let Some(book) = data
            .book_file(setting, position)
            .map_err(|e| e.to_string())?
        {
            return Ok(book);
        }
    }
    crate::game::render_book(renderer, domain, instance).map_err(|e| {
        format!(
            "{}: the book of seed {} cannot be rendered: {e}",
            file.path, instance.seed
        )
    })
}
