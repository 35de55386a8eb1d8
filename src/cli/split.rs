//! `kumo-gen split`: split a domain into `<name>-ind.yaml` and
//! `<name>-ood.yaml` (see `graph::split` for the rule), and report sizes,
//! balance, the cut and what was dropped (text, or JSON with `--json`).

use std::io;
use std::path::PathBuf;

use super::graph::write_atomic;
use super::{Error, Globals, Report, out};
use crate::graph::split::{SplitMethod, SplitOptions, split};

#[derive(clap::Args, Debug)]
pub struct SplitArgs {
    /// Domain name or path to a .yaml file.
    #[arg(long, value_name = "NAME|PATH")]
    domain: String,
    /// Directory for `<name>-ind.yaml` and `<name>-ood.yaml` (created if missing).
    #[arg(long, value_name = "DIR")]
    out_dir: PathBuf,
    /// How to group truths: connected components (falling back to Louvain
    /// when one component holds more than 80% of the truths) or Louvain.
    #[arg(long, value_enum, default_value_t = MethodFlag::Components)]
    method: MethodFlag,
    /// Seed of the Louvain runs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// `--method`'s values: the library's [`SplitMethod`], as the command
/// line names and explains them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum MethodFlag {
    /// Connected components, falling back to Louvain (see the module docs).
    Components,
    /// Louvain communities.
    Louvain,
}

impl From<MethodFlag> for SplitMethod {
    fn from(flag: MethodFlag) -> SplitMethod {
        match flag {
            MethodFlag::Components => SplitMethod::Components,
            MethodFlag::Louvain => SplitMethod::Louvain,
        }
    }
}

/// Runs `kumo-gen split`.
pub fn run(globals: &Globals, args: &SplitArgs) -> Result<Report, Error> {
    super::flags::check_out_dir(&args.out_dir, "--out-dir")?;
    let (domain, _warnings) = globals.registry.load(&args.domain)?;
    let options = SplitOptions {
        method: args.method.into(),
        seed: args.seed,
        ..SplitOptions::default()
    };
    let split = split(&domain, &options)?;
    std::fs::create_dir_all(&args.out_dir)
        .map_err(|e| crate::files::FileError::io(&args.out_dir, e))?;
    // Refuse before writing either half.
    for doc in [&split.ind, &split.ood] {
        let path = args.out_dir.join(format!("{}.yaml", doc.name));
        super::flags::refuse_overwriting_domain(
            &globals.registry,
            &args.domain,
            &path,
            "--out-dir",
        )?;
    }
    let mut files = Vec::new();
    for doc in [&split.ind, &split.ood] {
        let path = args.out_dir.join(format!("{}.yaml", doc.name));
        write_atomic(&path, split.half_yaml(doc).as_bytes())?;
        files.push(path);
    }
    if args.json {
        out(&split.report.json(&files).map_err(io::Error::other)?)?;
    } else {
        out(&split.report.text(&files))?;
    }
    Ok(Report::Done)
}
