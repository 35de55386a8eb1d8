//! `kumo-gen generate` (and `kumo-gen --domain ...`): flags to one
//! [`GenerateJob`], run by the library's [`pipeline::generate`] with
//! progress on stderr. The flags of the derived files ([`RenderArgs`])
//! and the parsers of shared values are also `curriculum`'s and `merge`'s.

use std::path::PathBuf;

use super::flags::{BadValue, BudgetFlags, PoolFlags, TemplatesFlags};
use super::progress::Stderr;
use super::{Error, Globals, Report};
use crate::contamination::split;
use crate::dataset::manifest::ShardId;
use crate::difficulty::Band;
use crate::files::target::{Input, Written};
use crate::pipeline::Target;
use crate::pipeline::{self, Books, Datasets, DerivedFiles, GenerateJob};
use crate::render::{RenderOptions, SftBook, Templates};
use crate::synth::{DEFAULT_DECIMALS, DEFAULT_SEED, Params};

/// Flags of a generation run. A flag given twice takes the last value.
#[derive(clap::Args, Debug, Clone)]
#[command(
    args_override_self = true,
    mut_arg("threads", |a| a.help("Worker threads (0: one per core). The output does not depend on it"))
)]
pub struct GenerateArgs {
    /// Domain: a shipped or `--domains-dir` name, or a path to a .yaml file.
    #[arg(long, value_name = "NAME|PATH")]
    pub domain: String,
    /// Truths per instance (KUMO's easy setting is 4, hard 12).
    #[arg(long, default_value_t = 4, value_name = "N", value_parser = super::flags::in_range("truths", 2..=usize::MAX))]
    pub truths: usize,
    /// Actions per instance (KUMO's easy setting is 6, hard 16).
    #[arg(long, default_value_t = 6, value_name = "N", value_parser = super::flags::in_range("actions", 1..=usize::MAX))]
    pub actions: usize,
    /// Number of instances (seeds 0..n-1).
    #[arg(short = 'n', default_value_t = 50, value_name = "N", value_parser = parse_instances)]
    pub n: u64,
    /// Valid truths per instance.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = super::flags::in_range("valid truths", 1..=usize::MAX))]
    pub valid: usize,
    /// Dataset seed; the output depends only on the domain, the parameters
    /// and this seed. `random`: a seed from the OS, written only to the
    /// private OUT/SECRET-seeds/ (see `kumo-gen verify`).
    #[arg(long, default_value_t = SeedArg::Fixed(DEFAULT_SEED), value_parser = parse_seed, value_name = "N|random")]
    pub seed: SeedArg,
    /// Decimals of float observations (0 to 12).
    #[arg(long, default_value_t = DEFAULT_DECIMALS, value_name = "N", value_parser = parse_decimals)]
    pub decimals: u32,
    /// Output root; files go to OUT/DOMAIN/.
    #[arg(long, default_value = "generated", value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub pool: PoolFlags,
    /// Make only shard K of N (indices i with i % N == K, 0 <= K < N) into
    /// OUT/DOMAIN/shards/; `kumo-gen merge` joins them.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<ShardId>,
    /// Allow instances whose valid truth no instance action relates to (the
    /// paper's behaviour; such instances need zero actions).
    #[arg(long)]
    pub allow_shortcuts: bool,
    /// Overwrite an existing dataset instead of refusing.
    #[arg(long)]
    pub force: bool,
    /// Write instances without the `optimal` labels (synthesis only).
    #[arg(long)]
    pub no_labels: bool,
    #[command(flatten)]
    pub budget: BudgetFlags,
    /// Disjoint parts in one run, e.g. `train=0.9,test=0.1`: each part is
    /// its own dataset under OUT/PART/ (books, SFT), with `--hf` one export
    /// OUT/hf/ with a config per part, and no context (truths, actions,
    /// valid truth) is in two parts.
    #[arg(long, value_name = "NAME=FRACTION,...", value_parser = parse_split)]
    pub split: Option<SplitParts>,
    /// With `--split`: the parts that get SFT records (default: every
    /// part), e.g. `train`; the others get none.
    #[arg(
        long,
        value_name = "PART,...",
        value_delimiter = ',',
        requires = "split",
        conflicts_with = "no_sft"
    )]
    pub sft_parts: Option<Vec<String>>,
    /// With `--split`: what no two parts share. `context` (truths, actions,
    /// valid truth) lets a test line share its knowledge book and optimal
    /// first action with a training line of another valid truth (most do
    /// in small settings); `book` (truths and actions) does not.
    #[arg(long, value_enum, default_value_t = SplitKeyArg::Context, requires = "split")]
    pub split_key: SplitKeyArg,
    #[command(flatten)]
    pub exclude: super::contamination::ExcludeArgs,
    #[command(flatten)]
    pub band: BandArgs,
    #[command(flatten)]
    pub render: RenderArgs,
}

/// A difficulty band: instance i's own stream keeps drawing until its draw
/// lies in it (inclusive bounds; needs labels).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct BandArgs {
    /// Least exact optimal expected steps of every instance.
    #[arg(long, value_name = "X", conflicts_with = "no_labels", value_parser = super::flags::parse_bound)]
    pub min_expected: Option<f64>,
    /// Most exact optimal expected steps of every instance.
    #[arg(long, value_name = "Y", conflicts_with = "no_labels", value_parser = super::flags::parse_bound)]
    pub max_expected: Option<f64>,
    /// Least golden length (actions the golden player takes).
    #[arg(long, value_name = "A", conflicts_with = "no_labels")]
    pub min_golden: Option<usize>,
    /// Most golden length.
    #[arg(long, value_name = "B", conflicts_with = "no_labels")]
    pub max_golden: Option<usize>,
}

impl BandArgs {
    /// The band asked for, if any.
    pub fn band(&self) -> Option<Band> {
        Band {
            min_expected: self.min_expected,
            max_expected: self.max_expected,
            min_golden: self.min_golden,
            max_golden: self.max_golden,
            ..Band::default()
        }
        .some()
    }
}

/// Flags of the derived artifacts: books, SFT records, HF export.
#[derive(clap::Args, Debug, Clone)]
pub struct RenderArgs {
    #[command(flatten)]
    pub templates: TemplatesFlags,
    /// What the SFT system message carries: the prose knowledge book or the
    /// compact symbolic rule table.
    #[arg(long, value_enum, default_value_t = SftBookArg::Prose)]
    pub sft_book: SftBookArg,
    /// Explain in each SFT assistant turn, from the facts, what the last
    /// observation ruled out.
    #[arg(long)]
    pub sft_rationale: bool,
    /// Also write the Hugging Face export (OUT/hf/, shared by every domain of OUT, with a dataset card).
    #[arg(long)]
    pub hf: bool,
    /// Knowledge-book files: `auto` writes them up to 100 000 instances and
    /// not beyond (eval and play render a missing book from the domain);
    /// every book is checked either way.
    #[arg(long, value_enum, default_value_t = BooksArg::Auto)]
    pub books: BooksArg,
    /// Write no SFT records.
    #[arg(long)]
    pub no_sft: bool,
    /// Also write the per-step prompt/completion file
    /// (`sft/<setting>.steps.jsonl`; it repeats the history per step, so it
    /// is about 5x the chat records).
    #[arg(long)]
    pub steps: bool,
}

/// `--books` values.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum BooksArg {
    Auto,
    Files,
    None,
}

/// `--sft-book` values.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SftBookArg {
    Prose,
    Symbolic,
}

impl RenderArgs {
    /// Loads the templates.
    pub fn templates(&self) -> Result<Templates, Error> {
        Ok(self.templates.templates()?)
    }

    pub fn options(&self) -> RenderOptions {
        RenderOptions {
            sft_book: match self.sft_book {
                SftBookArg::Prose => SftBook::Prose,
                SftBookArg::Symbolic => SftBook::Symbolic,
            },
            rationale: self.sft_rationale,
        }
    }

    /// The derived files these flags ask for (SFT for every part; `--sft-parts`
    /// is the job's).
    pub fn derived_files(&self) -> Result<DerivedFiles, Error> {
        Ok(DerivedFiles {
            templates: self.templates()?,
            render: self.options(),
            books: match self.books {
                BooksArg::Auto => Books::Auto,
                BooksArg::Files => Books::Files,
                BooksArg::None => Books::None,
            },
            sft: !self.no_sft,
            steps: self.steps,
            hf: self.hf,
        })
    }
}

/// Most instances `-n` accepts: the dedup keys of every instance stay in
/// memory (about 100 bytes each, so 10^8 needs about 10 GB), and a larger
/// request is refused at once rather than failing hours later.
pub const MAX_INSTANCES: u64 = crate::pipeline::MAX_INSTANCES;

/// `-n N`: a number of instances up to [`MAX_INSTANCES`].
pub fn parse_instances(text: &str) -> Result<u64, BadValue> {
    let shown: String = text.chars().take(40).collect();
    let n: u64 = text.trim().parse().map_err(|_| BadValue::NotInstances {
        shown,
        max: MAX_INSTANCES,
    })?;
    if n == 0 {
        return Err(BadValue::NoInstances);
    }
    if n > MAX_INSTANCES {
        return Err(BadValue::TooManyInstances {
            n,
            max: MAX_INSTANCES,
        });
    }
    Ok(n)
}

/// `--split-key` values.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitKeyArg {
    /// Same truths, actions and valid truths.
    Context,
    /// Same truths and actions (the same knowledge book).
    Book,
}

impl From<SplitKeyArg> for crate::contamination::KeyKind {
    fn from(k: SplitKeyArg) -> Self {
        match k {
            SplitKeyArg::Context => Self::Context,
            SplitKeyArg::Book => Self::Book,
        }
    }
}

/// `--split` parts (one value, so clap does not read it as many).
#[derive(Clone, Debug, PartialEq)]
pub struct SplitParts(pub Vec<split::Part>);

fn parse_split(text: &str) -> Result<SplitParts, split::SplitError> {
    split::parse_split(text).map(SplitParts)
}

/// `--seed` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeedArg {
    Fixed(u64),
    /// Drawn from the OS and kept private.
    Random,
}

impl std::fmt::Display for SeedArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SeedArg::Fixed(n) => write!(f, "{n}"),
            SeedArg::Random => f.write_str("random"),
        }
    }
}

/// `--decimals N`: 0 to 12 (a float observation carries no more).
fn parse_decimals(text: &str) -> Result<u32, BadValue> {
    super::flags::parse_count(text, "decimals", 0, 12).map(|n| n as u32)
}

/// `--seed N|random`.
pub fn parse_seed(text: &str) -> Result<SeedArg, BadValue> {
    if text.trim() == "random" {
        return Ok(SeedArg::Random);
    }
    text.trim()
        .parse()
        .map(SeedArg::Fixed)
        .map_err(|_| BadValue::Seed(text.to_string()))
}

/// Most shards `--shard K/N` accepts.
pub const MAX_SHARDS: u64 = 1 << 20;

fn parse_shard(text: &str) -> Result<ShardId, String> {
    let err = || format!("`{text}` is not K/N (e.g. `0/4`: the first of four shards)");
    let (k, n) = text.split_once('/').ok_or_else(err)?;
    let (index, count): (u64, u64) = (
        k.trim().parse().map_err(|_| err())?,
        n.trim().parse().map_err(|_| err())?,
    );
    if count == 0 || index >= count {
        return Err(format!(
            "`{text}`: K must be below N (shards are numbered 0 to N-1)"
        ));
    }
    if count > MAX_SHARDS {
        return Err(format!("`{text}`: at most {MAX_SHARDS} shards"));
    }
    Ok(ShardId { index, count })
}

/// The job these flags ask for, writing `datasets`.
pub(super) fn job(
    globals: &Globals,
    args: &GenerateArgs,
    datasets: Datasets,
) -> Result<GenerateJob, Error> {
    super::flags::check_out_dir(&args.out, "--out")?;
    if args.valid >= args.truths {
        return Err(Error::Usage {
            message: format!(
                "`--valid {}` must be less than `--truths {}`: at least one truth must be invalid",
                args.valid, args.truths
            ),
            help: Some(format!(
                "use `--valid {}` or fewer, or raise `--truths`",
                args.truths - 1
            )),
        });
    }
    let band = args.band.band();
    if let Some(band) = &band {
        // Bounds that cross are wrong whatever the domain: a usage error,
        // like a value refused as the flags are read.
        band.check().map_err(|e| Error::Usage {
            message: e.message.clone(),
            help: Some(e.help.clone()),
        })?;
    }
    let (domain, warnings) = globals.registry.load(&args.domain)?;
    super::report_warnings(&domain, &warnings);
    let (seed, secret_seed) = match args.seed {
        SeedArg::Fixed(seed) => (seed, false),
        SeedArg::Random => (DEFAULT_SEED, true),
    };
    let params = Params {
        truths: args.truths,
        actions: args.actions,
        valid: args.valid,
        seed,
        allow_shortcuts: args.allow_shortcuts,
        decimals: args.decimals,
    };
    refuse_writing_inputs(globals, args, &domain.name, &datasets)?;
    let derived = args.render.derived_files()?;
    let exclude = args.exclude.read(&domain)?;
    Ok(GenerateJob {
        domain,
        params,
        n: args.n,
        out: args.out.clone(),
        target: args.shard.map_or(Target::Whole, Target::Shard),
        labels: (!args.no_labels).then_some(args.budget.budget()),
        exclude,
        band,
        datasets,
        derived,
        secret_seed,
        force: args.force,
    })
}

/// Refuses a run whose folders (the domain's, each part's or level's,
/// `hf/`, `SECRET-seeds/`) are, lie inside, or hold what it reads: an
/// `--exclude` set, the domain file, `--templates-dir`.
fn refuse_writing_inputs(
    globals: &Globals,
    args: &GenerateArgs,
    domain: &str,
    datasets: &Datasets,
) -> Result<(), Error> {
    let mut inputs: Vec<Input> = args
        .exclude
        .exclude
        .iter()
        .map(|p| Input::tree("--exclude", p))
        .collect();
    inputs.extend(super::flags::domain_input(
        &globals.registry,
        "--domain",
        &args.domain,
    ));
    inputs.extend(super::flags::templates_input(&args.render.templates));
    if inputs.is_empty() {
        return Ok(());
    }
    for folder in pipeline::generate::written_folders(&args.out, domain, datasets) {
        super::flags::refuse_within("--out", &args.out, &folder, Written::Folder, &inputs)?;
    }
    Ok(())
}

/// Runs `job` on `--threads` workers with progress on stderr.
pub(super) fn run_job(args: &GenerateArgs, job: &GenerateJob) -> Result<Report, Error> {
    let pool = args.pool.pool()?;
    pool.install(|| pipeline::generate(job, &Stderr::new()))?;
    Ok(Report::Done)
}

/// Runs generation.
pub fn run(globals: &Globals, args: &GenerateArgs) -> Result<Report, Error> {
    let datasets = match &args.split {
        None => Datasets::One,
        Some(SplitParts(parts)) => Datasets::Split {
            parts: parts.clone(),
            sft_parts: args.sft_parts.clone(),
            key: args.split_key.into(),
        },
    };
    run_job(args, &job(globals, args, datasets)?)
}
