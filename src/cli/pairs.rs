//! `kumo-gen pairs`: preference pairs (TRL's prompt/chosen/rejected
//! layout, with both actions' exact `Q`) along golden and random-player
//! paths of a dataset's instances (docs/analytics.md).

use std::io::{self, Write};
use std::path::PathBuf;

use super::flags::{domain_input, refuse_over_inputs, templates_input};
use super::{Error, Globals, Report};
use crate::analysis::pairs::{PairOptions, SettingPairs};
use crate::dataset::{self, Setting};
use crate::files::FileError;
use crate::files::target::{Input, Written};
use crate::render::{RenderOptions, Renderer};
use crate::search::SearchBudget;

#[derive(clap::Args, Debug)]
pub struct PairsArgs {
    /// Dataset directory, as `eval --data` reads it:
    /// `DIR/<domain>/truth_num=T+action_num=A+valid_truth_num=V.jsonl`
    /// (and its books).
    #[arg(long, value_name = "DIR")]
    data: PathBuf,
    /// Only this domain (its directory name, or a domain name or path).
    #[arg(long, value_name = "D")]
    domain: Option<String>,
    /// Where to write the pairs (JSON lines); `-` or none: standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Seed of the random-player paths.
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
    /// Random-player (off-policy) paths per instance (0 to 100; an
    /// instance's pairs are held in memory until written).
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = super::flags::in_range("random paths", 0..=MAX_RANDOM_PATHS))]
    random_paths: usize,
    /// Leave out the pairs along the golden path.
    #[arg(long)]
    no_golden: bool,
    /// Only the first N instances of each file.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// The model name eval would use (it decides the system message's role).
    #[arg(long, value_name = "NAME", default_value = "")]
    model: String,
    #[command(flatten)]
    templates: super::flags::TemplatesFlags,
    #[command(flatten)]
    pool: super::flags::PoolFlags,
}

/// Most `--random-paths`: every pair carries its whole conversation (a
/// few KiB to tens of KiB), and an instance's pairs are made at once.
pub const MAX_RANDOM_PATHS: usize = 100;

pub fn run(globals: &Globals, args: &PairsArgs) -> Result<Report, Error> {
    if !args.data.is_dir() {
        return Err(Error::input(format!(
            "`{}` is not a directory",
            args.data.display()
        )));
    }
    if let Some(output) = &args.output {
        let mut inputs = vec![Input::data("--data", &args.data)];
        inputs.extend(
            args.domain
                .as_deref()
                .and_then(|d| domain_input(&globals.registry, "--domain", d)),
        );
        inputs.extend(templates_input(&args.templates));
        refuse_over_inputs("-o", output, Written::File, &inputs)?;
    }
    let templates = args.templates.templates()?;
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let (datasets, unread) = dataset::open_all(
        &globals.registry,
        &args.data,
        args.domain.as_deref(),
        |_: &Setting| true,
    )?;
    super::note_unread(&unread);
    let options = PairOptions {
        seed: args.seed,
        random_paths: args.random_paths,
        golden: !args.no_golden,
        model: args.model.clone(),
        budget: SearchBudget::default(),
    };
    let pool = args.pool.pool()?;
    let job = SettingPairs {
        renderer: &renderer,
        options: &options,
        limit: args.limit,
        batch: 4 * pool.current_num_threads().max(1),
        pool: &pool,
    };
    let write = |w: &mut dyn Write| -> Result<(usize, usize), Error> {
        let (mut rows, mut skipped) = (0usize, 0usize);
        for (data, settings) in &datasets {
            for setting in settings {
                let (made, left_out) = job.write::<Error>(data, setting, w, &mut |e| {
                    crate::stderr_line!(
                        "note: {} {setting}: an instance is left out: {e}",
                        data.name()
                    );
                })?;
                rows += made;
                skipped += left_out;
            }
        }
        if rows == 0 {
            return Err(Error::input_with_help(
                format!(
                    "no preference pair from `{}`{}",
                    args.data.display(),
                    super::unread_list(&unread)
                ),
                "give a dataset root as `eval --data` takes it (DIR/<domain>/<setting>.jsonl)",
            ));
        }
        w.flush()?;
        Ok((rows, skipped))
    };
    let (rows, skipped) = match args.output.as_deref() {
        Some(path) if path.as_os_str() != "-" => {
            crate::files::write_atomic_with(path, write, |p, e| FileError::io(p, e).into())?
        }
        _ => write(&mut io::stdout().lock())?,
    };
    crate::stderr_line!(
        "{} pairs written{}",
        rows,
        if skipped > 0 {
            format!(" ({skipped} instances left out)")
        } else {
            String::new()
        }
    );
    Ok(Report::Done)
}
