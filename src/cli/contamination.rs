//! `kumo-gen overlap A B`, `kumo-gen verify --seed-file F`, and the
//! `--exclude` flags that `generate` and `merge` share.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use super::{Error, Globals, Report, out};
use crate::contamination::{Exclusion, KeyKind, overlap};
use crate::domain::Domain;

/// `--exclude-key` / `--key` values.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyArg {
    /// Same truths, valid truths, actions and observed state per action
    /// (the dedup key).
    Exact,
    /// Same truths, actions and valid truths, whatever was observed.
    Context,
    /// Same truths and actions (the same knowledge book), whatever the
    /// valid truth and the observations.
    Book,
}

impl From<KeyArg> for KeyKind {
    fn from(k: KeyArg) -> KeyKind {
        match k {
            KeyArg::Exact => KeyKind::Exact,
            KeyArg::Context => KeyKind::Context,
            KeyArg::Book => KeyKind::Book,
        }
    }
}

/// `--exclude PATH... [--exclude-key exact|context]`.
#[derive(clap::Args, Debug, Clone)]
pub struct ExcludeArgs {
    /// Instances of these datasets are never generated (redrawn from their
    /// own stream, like duplicates): dataset directories or .jsonl files of
    /// ours or KUMO's instances, HF rows, or SFT records.
    #[arg(long, value_name = "PATH", num_args = 1.., action = clap::ArgAction::Append)]
    pub exclude: Vec<PathBuf>,
    /// What counts as the same instance for `--exclude`.
    #[arg(long, value_enum, default_value_t = KeyArg::Exact)]
    pub exclude_key: KeyArg,
}

impl ExcludeArgs {
    /// The exclusion against `domain` (`None` without `--exclude`); the
    /// error when a set cannot be read.
    pub fn read(&self, domain: &Domain) -> Result<Option<Arc<Exclusion>>, Error> {
        if self.exclude.is_empty() {
            return Ok(None);
        }
        let exclusion = Exclusion::read(domain, &self.exclude, self.exclude_key.into())?;
        for set in exclusion.sets() {
            crate::stderr_line!("{}", set.excluding_line());
        }
        Ok(Some(Arc::new(exclusion)))
    }

    pub fn for_merge(&self) -> crate::pipeline::MergeExclude {
        crate::pipeline::MergeExclude {
            paths: self.exclude.clone(),
            key: self.exclude_key.into(),
        }
    }
}

/// Flags of `kumo-gen overlap`.
#[derive(clap::Args, Debug, Clone)]
pub struct OverlapArgs {
    /// First dataset (directory or .jsonl); its keys are held in memory.
    pub a: PathBuf,
    /// Second dataset (directory or .jsonl); streamed.
    pub b: PathBuf,
    /// What counts as the same instance.
    #[arg(long, value_enum, default_value_t = KeyArg::Exact)]
    pub key: KeyArg,
    /// Domain whose states numeric observations are compared by (default:
    /// the one in the `manifest.json` beside A or B; without one, by value).
    #[arg(long, value_name = "NAME|PATH")]
    pub domain: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when any instance is shared.
    #[arg(long)]
    pub fail_on_overlap: bool,
}

/// Runs `overlap`; findings when `--fail-on-overlap` finds shared instances.
pub fn run(globals: &Globals, args: &OverlapArgs) -> Result<Report, Error> {
    let domain = match &args.domain {
        Some(name) => Some(globals.registry.load(name)?.0),
        None => overlap::manifest_domain(&args.a).or_else(|| overlap::manifest_domain(&args.b)),
    };
    let result = overlap::overlap(&args.a, &args.b, args.key.into(), domain.as_ref())?;
    if args.json {
        out(&result.json().map_err(io::Error::other)?)?;
    } else {
        out(&result.text())?;
    }
    Ok(Report::failed_if(args.fail_on_overlap && result.shared > 0))
}

/// Flags of `kumo-gen verify`.
#[derive(clap::Args, Debug, Clone)]
pub struct VerifyArgs {
    /// The private seed file of a `--seed random` run
    /// (OUT/SECRET-seeds/DOMAIN/SETTING.json).
    #[arg(long, value_name = "FILE")]
    pub seed_file: PathBuf,
    /// The published dataset file (default: the one the seed file names,
    /// under the same OUT).
    pub dataset: Option<PathBuf>,
    #[command(flatten)]
    pub pool: super::flags::PoolFlags,
}

/// Runs `verify`; exit 1 when the dataset is not the seed's.
pub fn verify(args: &VerifyArgs) -> Result<Report, Error> {
    let pool = args.pool.pool()?;
    let v =
        pool.install(|| crate::pipeline::secret::verify(&args.seed_file, args.dataset.as_deref()))?;
    out(&v.text(&args.seed_file))?;
    Ok(Report::Done)
}
