//! Derived artifacts of a finished dataset file: knowledge books, SFT
//! records and the Hugging Face export.
//!
//! In: the domain, the complete dataset file
//! `OUT/<domain>/<setting>.jsonl` (its lines carry the `optimal` labels),
//! a [`Renderer`]. Out, under `OUT/<domain>/`:
//! - with `books`: `knowledge_book/<setting>/seed=<i>.txt`, one book per
//!   line; every book is verified by [`check_book`] whether written or not
//!   (a failing book stops the run: with the shipped templates it is a bug
//!   in kumo-gen, [`DerivedError::Internal`], never blamed on the dataset;
//!   with a user's `book.j2` it is that template's, [`DerivedError::Template`]);
//! - with `sft`: `sft/<setting>.jsonl` (chat records), and with `steps`
//!   also `sft/<setting>.steps.jsonl` (one prompt/completion record per
//!   assistant turn, repeating the history: large, so opt-in), for every
//!   labelled line (an unlabelled line has no golden trajectory to follow);
//! - with `hf`, under `OUT/hf/` (one export for every domain and setting
//!   written into this `--out`): `data/<domain>/<setting>.jsonl` (one type
//!   per column), `data/<domain>/<setting>-sft.jsonl` and the dataset card
//!   `README.md` listing every data file as a config ([`hf_card`]);
//!   a `--split` part `RUN/<part>/` writes into the run's export instead,
//!   `RUN/hf/parts/<part>/<domain>/`; with the cargo feature `parquet`,
//!   `.parquet` files of the same rows ([`hf_parquet`]).
//!
//! Files of this setting that the options do not ask for are kept while
//! they still match the dataset, and removed (with a note saying which and
//! why) once they do not ([`stamp`]).
//!
//! Everything here is a pure function of the dataset file and the
//! renderer, so it is rebuilt whole when either changed (resumed, extended
//! or merged alike) and never needs resuming itself: a stamp
//! (`.<setting>.derived.json`: the dataset's digest, the renderer's
//! signature and the digest of every derived file) says when the files on
//! disk are current, and then nothing is rewritten. Lines are read and
//! rendered in chunks (memory flat in n), rendered in parallel and written in order, with progress per chunk.
//! Every file goes to a temporary name first and is renamed into place;
//! the book directory is swapped in whole. Temporary files a killed run
//! left behind are removed first (the caller holds the dataset's lock, so
//! no other run is writing them).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use serde_json::Value;

mod error;
mod hf_card;
#[cfg(feature = "parquet")]
pub mod hf_parquet;
pub mod labels;
mod stamp;

use crate::domain::Domain;
use crate::files::{self, AtomicFile};
use crate::game::Steps;
use crate::render::hf::{hf_row, hf_sft_row, part_row_id, with_exact_column, with_label_columns};
use crate::render::with_certificate;
use crate::render::{Renderer, TemplateError, check_book};
use hf_card::write_card;
pub use labels::LabelCounts;
use labels::{holds_certified, line_steps, precise};
use stamp::Artifact;

pub use error::DerivedError;
pub use hf_card::HF_FORMAT;

/// Lines rendered per parallel chunk.
const CHUNK: usize = 1024;

/// Which derived files to write. Books are always rendered and checked
/// (the check is the proof that the dataset's lines are sound); `books`
/// only decides whether they are written as files.
#[derive(Clone, Copy, Debug)]
pub struct DerivedOptions<'a> {
    /// `knowledge_book/<setting>/seed=<i>.txt`.
    pub books: bool,
    /// `sft/<setting>.jsonl` (chat records).
    pub sft: bool,
    /// `sft/<setting>.steps.jsonl` (one prompt/completion record per
    /// assistant turn; it repeats the history, so it is large).
    pub steps: bool,
    /// The Hugging Face export.
    pub hf: bool,
    /// The `--split` part this dataset is (its `--out` is `RUN/<part>/`):
    /// its HF files go to the run's export, `RUN/hf/parts/<part>/`.
    pub part: Option<&'a str>,
    /// `--sft-parts` leaves this part out: its SFT files (and `-sft` HF
    /// rows) are removed even while they match the dataset.
    pub sft_left_out: bool,
}

impl Default for DerivedOptions<'_> {
    fn default() -> Self {
        DerivedOptions {
            books: true,
            sft: true,
            steps: false,
            hf: false,
            part: None,
            sft_left_out: false,
        }
    }
}

/// Counts of what was written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DerivedSummary {
    pub books: u64,
    pub sft_records: u64,
    pub sft_steps: u64,
    /// Lines without labels (no SFT record).
    pub unlabelled: u64,
    /// Labelled lines whose label is exact, and certified (docs/output.md,
    /// "Certified labels"), with the sum and the largest of the certified
    /// lines' relative gaps `(upper - lower) / lower`.
    pub labels: LabelCounts,
    pub seconds: f64,
    /// The files on disk were current; nothing was rewritten.
    pub up_to_date: bool,
    /// Derived files not asked for that no longer matched the dataset and
    /// were removed: `path: why; how to rebuild`.
    pub removed: Vec<String>,
}

/// One line's rendered artifacts.
struct Derived {
    seed: u64,
    /// What the line's label proves (`None`: unlabelled).
    steps: Option<Steps>,
    book: String,
    sft: Option<(String, Vec<String>)>,
    /// The HF instance row and the HF SFT row (empty when unlabelled).
    hf: Option<(String, String)>,
}

/// Why one line could not be derived.
enum LineError {
    /// The line is not an instance of the domain: the dataset's fault.
    Corrupt(String),
    /// A user's template failed (message, help).
    Template(String, String),
    /// Our own rendering failed or produced a book that fails its check.
    Bug(String),
}

/// Removes `.NAME.tmp*` files and directories beside `path`: leftovers of
/// killed runs ([`crate::files::temp_path`]'s names). The dataset's lock
/// is held, so no live run writes them: every one goes, where the atomic
/// writer, which holds no lock, removes only those of dead processes.
fn remove_stale_temps(path: &Path) -> Result<(), DerivedError> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(());
    };
    let prefix = format!(".{}.tmp", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(&prefix) {
            continue;
        }
        let stale = entry.path();
        let removed = if stale.is_dir() {
            std::fs::remove_dir_all(&stale)
        } else {
            std::fs::remove_file(&stale)
        };
        removed.map_err(|e| DerivedError::io(&stale, e))?;
    }
    Ok(())
}

/// Where the derived files of one dataset file go.
struct Paths {
    setting: String,
    /// The `--out` the dataset file is in.
    out: PathBuf,
    books_dir: PathBuf,
    sft: PathBuf,
    steps: PathBuf,
    /// The export's root (`OUT`, or the run's root for a `--split` part)
    /// and the export (`<root>/hf`).
    hf_root: PathBuf,
    hf_dir: PathBuf,
    /// The HF rows in the export's format, and as JSON Lines (written
    /// first, converted when the format is Parquet).
    hf_rows: PathBuf,
    hf_sft: PathBuf,
    hf_rows_lines: PathBuf,
    hf_sft_lines: PathBuf,
    /// Rows of the other format: stale.
    hf_stale: [PathBuf; 2],
    stamp: PathBuf,
}

impl Paths {
    fn of(domain: &Domain, dataset: &Path, part: Option<&str>) -> Result<Paths, DerivedError> {
        let setting = dataset
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| DerivedError::corrupt(dataset, "the dataset file has no name"))?
            .to_string();
        let domain_dir = dataset.parent().unwrap_or(Path::new(".")).to_path_buf();
        let out = domain_dir.parent().unwrap_or(Path::new(".")).to_path_buf();
        let sft_dir = domain_dir.join("sft");
        // The export is shared by every domain of this `--out`, and by
        // every part of a `--split` run.
        let (hf_root, hf_data_dir) = match part {
            None => (out.clone(), PathBuf::from("data")),
            Some(part) => (
                out.parent().unwrap_or(Path::new(".")).to_path_buf(),
                Path::new("parts").join(part),
            ),
        };
        let hf_dir = hf_root.join("hf");
        let hf_data = hf_dir.join(hf_data_dir).join(&domain.name);
        let other = if HF_FORMAT == "jsonl" {
            "parquet"
        } else {
            "jsonl"
        };
        Ok(Paths {
            books_dir: crate::dataset::setting::books_dir(&domain_dir, &setting),
            sft: sft_dir.join(format!("{setting}.jsonl")),
            steps: sft_dir.join(format!("{setting}.steps.jsonl")),
            hf_rows: hf_data.join(format!("{setting}.{HF_FORMAT}")),
            hf_sft: hf_data.join(format!("{setting}-sft.{HF_FORMAT}")),
            hf_rows_lines: hf_data.join(format!("{setting}.jsonl")),
            hf_sft_lines: hf_data.join(format!("{setting}-sft.jsonl")),
            hf_stale: [
                hf_data.join(format!("{setting}.{other}")),
                hf_data.join(format!("{setting}-sft.{other}")),
            ],
            stamp: domain_dir.join(format!(".{setting}.derived.json")),
            hf_root,
            hf_dir,
            out,
            setting,
        })
    }

    /// The stamp's artifacts: books, sft, steps, hf, hf_sft, in that order.
    fn artifacts(&self, options: &DerivedOptions) -> [Artifact; 5] {
        let left_out = options
            .sft_left_out
            .then_some("`--sft-parts` leaves this part out, so it has no SFT records");
        let artifact = |kind, path: &PathBuf, wanted, flag| Artifact {
            kind,
            path: path.clone(),
            wanted,
            flag,
            refused: match kind {
                "sft" | "steps" | "hf_sft" => left_out,
                _ => None,
            },
        };
        [
            artifact(
                "books",
                &self.books_dir,
                options.books,
                "pass `--books files`",
            ),
            artifact("sft", &self.sft, options.sft, "leave out `--no-sft`"),
            artifact(
                "steps",
                &self.steps,
                options.sft && options.steps,
                "pass `--steps`",
            ),
            artifact("hf", &self.hf_rows, options.hf, "pass `--hf`"),
            artifact(
                "hf_sft",
                &self.hf_sft,
                options.hf && options.sft,
                "pass `--hf`",
            ),
        ]
    }
}

/// The files a rebuild writes, each through the atomic writer (the books
/// into a temp directory swapped in whole).
struct Outputs {
    books_tmp: Option<PathBuf>,
    sft: Option<AtomicFile>,
    steps: Option<AtomicFile>,
    hf_rows: Option<AtomicFile>,
    hf_sft: Option<AtomicFile>,
}

/// Renders and writes the books, SFT records (and the HF export) of the
/// dataset file `dataset` of `domain`, unless the files on disk are
/// already current. `progress` is told the number of lines done.
pub fn write_derived(
    domain: &Domain,
    dataset: &Path,
    renderer: &Renderer,
    options: DerivedOptions<'_>,
    progress: &dyn crate::progress::Progress,
) -> Result<DerivedSummary, DerivedError> {
    let start = Instant::now();
    let paths = Paths::of(domain, dataset, options.part)?;
    let artifacts = paths.artifacts(&options);
    // Current already? The stamp names the dataset bytes and the renderer,
    // and the digest of every derived file.
    let source = stamp::Source {
        dataset: crate::files::digest(dataset)?,
        renderer: renderer.signature(),
        hf_format: HF_FORMAT.into(),
    };
    let old = stamp::read(&paths.stamp);
    let plan = stamp::plan(&old, &source, &artifacts)?;
    let removed_hf = plan.removed_hf;
    let mut kept = stamp::Stamp {
        source,
        files: plan.current.clone(),
    };
    if !plan.rebuild {
        return keep_current(
            &paths,
            &old,
            &kept,
            removed_hf || options.hf,
            plan.removed,
            start,
        );
    }
    let mut outputs = start_rebuild(&paths, &artifacts, &mut kept)?;
    let rendered = render_all(
        domain,
        dataset,
        renderer,
        &paths.setting,
        options,
        &mut outputs,
        progress,
    );
    let mut summary = match rendered {
        Ok(summary) => summary,
        Err(e) => {
            // A failed run leaves no half-written book folder behind (the
            // staged files go with `outputs`).
            if let Some(tmp) = outputs.books_tmp.take() {
                let _ = std::fs::remove_dir_all(tmp);
            }
            return Err(e);
        }
    };
    let labels = labels::FileLabels {
        counts: summary.labels,
        unlabelled: summary.unlabelled,
    };
    finish_rebuild(&paths, outputs, options.hf || removed_hf, labels)?;
    for a in artifacts.iter().filter(|a| a.wanted) {
        if let Some(found) = stamp::on_disk(&a.path)? {
            kept.files.insert(a.kind.to_string(), found);
        }
    }
    stamp::write(&paths.stamp, &kept)?;
    summary.removed = plan.removed;
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

/// The files on disk are current: records what was kept, and checks the
/// HF card (`card`: HF files were removed, or the run asks for the export)
/// so a deleted or edited card is written again; rewrites nothing else.
fn keep_current(
    paths: &Paths,
    old: &stamp::Stamp,
    kept: &stamp::Stamp,
    card: bool,
    removed: Vec<String>,
    start: Instant,
) -> Result<DerivedSummary, DerivedError> {
    if kept != old {
        stamp::write(&paths.stamp, kept)?;
    }
    if card && paths.hf_dir.is_dir() {
        write_card(&paths.hf_dir)?;
    }
    let books = if paths.books_dir.is_dir() {
        std::fs::read_dir(&paths.books_dir)
            .map_err(|e| DerivedError::io(&paths.books_dir, e))?
            .count() as u64
    } else {
        0
    };
    Ok(DerivedSummary {
        books,
        seconds: start.elapsed().as_secs_f64(),
        up_to_date: true,
        removed,
        ..DerivedSummary::default()
    })
}

/// Before a rebuild: a rebuild killed half way must not look current, so
/// until it ends the stamp records only the files kept as they are;
/// leftovers of killed runs and rows of the other HF format go; the wanted
/// files are started.
fn start_rebuild(
    paths: &Paths,
    artifacts: &[Artifact; 5],
    kept: &mut stamp::Stamp,
) -> Result<Outputs, DerivedError> {
    for a in artifacts.iter().filter(|a| a.wanted) {
        kept.files.remove(a.kind);
    }
    stamp::write(&paths.stamp, kept)?;
    for path in [&paths.sft, &paths.steps, &paths.hf_rows, &paths.hf_sft] {
        remove_stale_temps(path)?;
    }
    for path in &paths.hf_stale {
        remove_stale_temps(path)?;
        stamp::remove_path(path)?;
    }
    remove_stale_temps(&paths.books_dir)?;
    let [books, sft, steps, hf, hf_sft] = artifacts;
    let books_tmp = if books.wanted {
        let tmp = crate::files::temp_path(&paths.books_dir);
        crate::files::create_dir_below(&paths.out, &tmp)?;
        Some(tmp)
    } else {
        None
    };
    let stage_if = |root: &Path, path: &Path, wanted: bool| {
        wanted.then(|| files::stage_below(root, path)).transpose()
    };
    Ok(Outputs {
        books_tmp,
        sft: stage_if(&paths.out, &paths.sft, sft.wanted)?,
        steps: stage_if(&paths.out, &paths.steps, steps.wanted)?,
        hf_rows: stage_if(&paths.hf_root, &paths.hf_rows_lines, hf.wanted)?,
        hf_sft: stage_if(&paths.hf_root, &paths.hf_sft_lines, hf_sft.wanted)?,
    })
}

/// Reads the dataset in chunks, renders each chunk's lines in parallel
/// and writes them in order to `outputs`; the counts.
fn render_all(
    domain: &Domain,
    dataset: &Path,
    renderer: &Renderer,
    setting: &str,
    options: DerivedOptions<'_>,
    outputs: &mut Outputs,
    progress: &dyn crate::progress::Progress,
) -> Result<DerivedSummary, DerivedError> {
    // The HF rows of a file with certified lines carry the label's two
    // columns, every row of it alike (one schema per file).
    let certified = options.hf && holds_certified(dataset)?;
    let file = crate::files::read::open(dataset).map_err(|e| DerivedError::io(dataset, e))?;
    let mut reader = BufReader::new(file);
    let mut summary = DerivedSummary::default();
    let mut line_number = 0u64;
    loop {
        let mut chunk: Vec<String> = Vec::with_capacity(CHUNK);
        while chunk.len() < CHUNK {
            let mut line = String::new();
            let read = reader
                .read_line(&mut line)
                .map_err(|e| DerivedError::io(dataset, e))?;
            if read == 0 {
                break;
            }
            chunk.push(line);
        }
        if chunk.is_empty() {
            break;
        }
        let first_line = line_number;
        line_number += chunk.len() as u64;
        let derived = render_chunk(
            domain, dataset, renderer, setting, options, certified, &chunk, first_line,
        )?;
        write_chunk(&derived, outputs, &mut summary)?;
        progress.position(summary.books);
    }
    Ok(summary)
}

/// Renders the lines of one chunk in parallel; an error names the line
/// (`first_line` is the number of lines before the chunk) and whose fault
/// it is.
#[allow(clippy::too_many_arguments)]
fn render_chunk(
    domain: &Domain,
    dataset: &Path,
    renderer: &Renderer,
    setting: &str,
    options: DerivedOptions<'_>,
    certified: bool,
    chunk: &[String],
    first_line: u64,
) -> Result<Vec<Option<Derived>>, DerivedError> {
    chunk
        .par_iter()
        .enumerate()
        .map(|(k, line)| {
            if line.trim().is_empty() {
                return Ok(None);
            }
            let hf = options.hf.then_some(HfRow {
                setting,
                part: options.part,
                label_columns: certified,
            });
            derive_line(domain, renderer, line, hf)
                .map(Some)
                .map_err(|e| (first_line + k as u64 + 1, e))
        })
        .collect::<Result<_, (u64, LineError)>>()
        .map_err(|(line, e)| match e {
            LineError::Corrupt(message) => {
                DerivedError::corrupt(dataset, format!("line {line}: {message}"))
            }
            LineError::Template(message, help) => DerivedError::Template {
                message: format!(
                    "{message} (deriving line {line} of `{}`)",
                    dataset.display()
                ),
                help,
            },
            LineError::Bug(message) => DerivedError::Internal {
                message: format!(
                    "{message} (deriving line {line} of `{}`)",
                    dataset.display()
                ),
            },
        })
}

/// Writes one rendered chunk, in order, to the files being rebuilt.
fn write_chunk(
    derived: &[Option<Derived>],
    outputs: &mut Outputs,
    summary: &mut DerivedSummary,
) -> Result<(), DerivedError> {
    for d in derived.iter().flatten() {
        if let Some(books_tmp) = &outputs.books_tmp {
            let path = books_tmp.join(crate::dataset::setting::book_file_name(d.seed));
            std::fs::write(&path, &d.book).map_err(|e| DerivedError::io(&path, e))?;
        }
        summary.books += 1;
        if let Some(steps) = d.steps {
            summary.labels.add(steps);
        }
        match &d.sft {
            Some((record, step_lines)) => {
                if let Some(sft) = &mut outputs.sft {
                    sft.line(record)?;
                }
                if let Some(steps) = &mut outputs.steps {
                    for s in step_lines {
                        steps.line(s)?;
                    }
                }
                summary.sft_records += 1;
                summary.sft_steps += step_lines.len() as u64;
                if let (Some(hf_sft), Some((_, row))) = (&mut outputs.hf_sft, &d.hf) {
                    hf_sft.line(row)?;
                }
            }
            None => summary.unlabelled += 1,
        }
        if let (Some(rows), Some((row, _))) = (&mut outputs.hf_rows, &d.hf) {
            rows.line(row)?;
        }
    }
    Ok(())
}

/// Puts the rebuilt files in place: the files (converted to Parquet when
/// that is the export's format), the card when `card` (an HF file of this
/// setting appeared or went away) or one exists, the books directory.
fn finish_rebuild(
    paths: &Paths,
    outputs: Outputs,
    card: bool,
    #[cfg_attr(not(feature = "parquet"), allow(unused_variables))] labels: labels::FileLabels,
) -> Result<(), DerivedError> {
    #[cfg(feature = "parquet")]
    let converts = [
        (
            outputs.hf_rows.is_some(),
            &paths.hf_rows_lines,
            &paths.hf_rows,
            false,
        ),
        (
            outputs.hf_sft.is_some(),
            &paths.hf_sft_lines,
            &paths.hf_sft,
            true,
        ),
    ];
    let Outputs {
        books_tmp,
        sft,
        steps,
        hf_rows,
        hf_sft,
    } = outputs;
    for staged in [sft, steps, hf_rows, hf_sft].into_iter().flatten() {
        staged.commit_unsynced()?;
    }
    #[cfg(feature = "parquet")]
    for (wanted, lines, parquet, sft) in converts {
        if wanted {
            hf_parquet::convert(lines, parquet, sft, labels)?;
            stamp::remove_path(lines)?;
        }
    }
    // The card lists every data file, whatever this run wrote.
    if card || paths.hf_dir.join("README.md").exists() {
        write_card(&paths.hf_dir)?;
    }
    if let Some(books_tmp) = books_tmp {
        crate::files::replace_dir(&books_tmp, &paths.books_dir)?;
    }
    Ok(())
}

/// Where an HF row belongs: its setting, and its `--split` part (which
/// prefixes the row's `id`); whether its file holds certified lines, and
/// so the label's `exact` and `lower_bound` columns.
#[derive(Clone, Copy)]
struct HfRow<'a> {
    setting: &'a str,
    part: Option<&'a str>,
    label_columns: bool,
}

/// Renders one dataset line; an error names the line's problem and whose
/// it is.
fn derive_line(
    domain: &Domain,
    renderer: &Renderer,
    line: &str,
    hf: Option<HfRow>,
) -> Result<Derived, LineError> {
    let value: Value = serde_json::from_str(line)
        .map_err(|e| LineError::Corrupt(format!("a line is not JSON: {e}")))?;
    let task = crate::game::task_from_json(domain, &value)
        .map_err(|e| LineError::Corrupt(e.to_string()))?;
    let view = task.view(domain);
    let seed = task.seed;
    let steps = precise(line, line_steps(&value));
    let render_error = |e: TemplateError| {
        if e.is_user_template() {
            LineError::Template(
                format!("seed {seed}: {e}"),
                "fix the template, or drop it from `--templates-dir` to use the shipped one".into(),
            )
        } else {
            LineError::Bug(format!("seed {seed}: rendering failed: {e}"))
        }
    };
    let (book, sft) = match &task.golden {
        Some(golden) => {
            let out = renderer.render(&view, golden).map_err(render_error)?;
            let sft = match steps {
                // The golden trajectory of a certified line is not proven
                // optimal: its records say what it is worth.
                Some(Steps::Certified { lower, upper }) => (
                    with_certificate(&out.sft, lower, upper),
                    out.steps
                        .iter()
                        .map(|s| with_certificate(s, lower, upper))
                        .collect(),
                ),
                _ => (out.sft, out.steps),
            };
            (out.book, Some(sft))
        }
        None => (renderer.book(&view).map_err(render_error)?, None),
    };
    let check = check_book(&book, &view);
    if !check.is_ok() {
        const SHOWN: usize = 3;
        let mut problems: Vec<String> = check
            .problems
            .iter()
            .take(SHOWN)
            .map(|p| p.to_string())
            .collect();
        if check.problems.len() > SHOWN {
            problems.push(format!("and {} more", check.problems.len() - SHOWN));
        }
        let problems = problems.join("; ");
        return Err(match renderer.templates.user_origin("book") {
            Some(origin) => LineError::Template(
                format!(
                    "seed {seed}: the knowledge book rendered by `{origin}` fails its check: {problems}"
                ),
                "print each `sentence` on a line of its own and state no other rule, index entry or list of candidates (see the comment atop the shipped `book.j2`)".into(),
            ),
            None => LineError::Bug(format!(
                "seed {seed}: the knowledge book rendered by the shipped template fails its check: {problems}"
            )),
        });
    }
    let hf = hf.map(
        |HfRow {
             setting,
             part,
             label_columns,
         }| {
            let with_id = |mut row: Value| {
                if let Some(part) = part {
                    row["id"] = Value::String(part_row_id(part, &domain.name, setting, seed));
                }
                row.to_string()
            };
            let optimal = value.get("optimal");
            let expected = optimal
                .and_then(|o| o.get("expected_steps"))
                .and_then(Value::as_f64);
            let answer = optimal
                .and_then(|o| o.get("golden_answer"))
                .and_then(Value::as_str);
            let golden = task.golden.as_deref().unwrap_or(&[]);
            // A certified line's upper bound as the line states it (see
            // `precise`).
            let expected = match steps {
                Some(Steps::Certified { upper, .. }) => Some(upper),
                _ => expected,
            };
            let mut row = hf_row(&view, setting, golden, answer, expected, &book);
            if label_columns {
                let lower_bound = match steps {
                    Some(Steps::Certified { lower, .. }) => Some(lower),
                    _ => None,
                };
                row = with_label_columns(row, steps.map(Steps::is_exact), lower_bound);
            }
            let row = with_id(row);
            let sft_row = sft
                .as_ref()
                .and_then(|(record, _)| serde_json::from_str::<Value>(record).ok())
                .map(|record| {
                    let row = hf_sft_row(&domain.name, setting, seed, &record);
                    with_id(if label_columns {
                        with_exact_column(row, steps.is_none_or(Steps::is_exact))
                    } else {
                        row
                    })
                });
            (row, sft_row.unwrap_or_default())
        },
    );
    Ok(Derived {
        seed,
        steps,
        book,
        sft,
        hf,
    })
}
