//! `kumo-gen moves`: every move of every trial in result files, scored
//! against the exact optimum, one JSON row per move (docs/analytics.md).

use std::io::{self, Write};
use std::path::PathBuf;

use super::score::{ScoreInputs, load};
use super::{Error, Globals, Report};
use crate::analysis::files::analyse_file;
use crate::files::FileError;
use crate::files::target::Written;
use crate::search::SearchBudget;

#[derive(clap::Args, Debug)]
#[command(mut_arg("instances", |a| a.required(true)))]
pub struct MovesArgs {
    #[command(flatten)]
    inputs: ScoreInputs,
    /// Where to write the rows (JSON lines); `-` or none: standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    pool: super::flags::PoolFlags,
}

pub fn run(globals: &Globals, args: &MovesArgs) -> Result<Report, Error> {
    if let Some(output) = &args.output {
        let inputs = args.inputs.inputs(globals);
        super::flags::refuse_over_inputs("-o", output, Written::File, &inputs)?;
    }
    let (files, sources) = load(globals, &args.inputs, None)?;
    let pool = args.pool.pool()?;
    let budget = SearchBudget::default();
    let analysed: Vec<_> = pool.install(|| {
        files
            .iter()
            .map(|f| analyse_file(f, &sources, budget, true))
            .collect()
    });
    let mut rows = 0usize;
    for a in &analysed {
        for note in &a.notes {
            crate::stderr_line!("note: {note}");
        }
        rows += a.lines.iter().map(|l| l.rows.len()).sum::<usize>();
    }
    if rows == 0 {
        return Err(Error::input_with_help(
            "no move could be analysed: no result line has its instance and domain",
            "pass --instances with the files the results were played on (and --domain if the result's domain name is not one)",
        ));
    }
    let write = |w: &mut dyn Write| -> io::Result<()> {
        for a in &analysed {
            for line in &a.lines {
                for row in &line.rows {
                    w.write_all(row.as_bytes())?;
                    w.write_all(b"\n")?;
                }
            }
        }
        w.flush()
    };
    match args.output.as_deref() {
        None => write(&mut io::stdout().lock()).map_err(Error::from)?,
        Some(p) if p.as_os_str() == "-" => write(&mut io::stdout().lock()).map_err(Error::from)?,
        Some(path) => crate::files::write_atomic_with(
            path,
            |w| write(w).map_err(|e| FileError::io(path, e)),
            FileError::io,
        )?,
    }
    crate::stderr_line!("{rows} moves analysed");
    Ok(Report::Done)
}
