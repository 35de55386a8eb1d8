//! `kumo-gen propose`: new domains from a language model over an
//! OpenAI-compatible API, repaired until they validate
//! ([`crate::propose`]). One topic (`--topic`, `-o FILE`) or a resumable
//! batch (`--topics FILE`, `-o DIR`).

use std::path::{Path, PathBuf};

use super::client::ClientFlags;
use super::{Error, Globals, Report, out};
use crate::dataset::DatasetError;
use crate::eval::client::Client;
use crate::files::target::{Input, Written};
use crate::propose::batch::{self, BatchError, Row, Settings, Topic};
use crate::propose::files::Status;
use crate::propose::{DEFAULT_ROUNDS, Example, MAX_ROUNDS, Prompts};

// The API client's flags with a model required and a longer default
// `--timeout` (a domain is a long reply).
#[derive(clap::Args, Debug)]
#[command(
    mut_arg("api_base", |a| a.required(true)),
    mut_arg("model", |a| a.required(true)),
    mut_arg("timeout", |a| a.default_value("300"))
)]
pub struct ProposeArgs {
    /// What the domain is about, e.g. "Edible and poisonous mushrooms of Europe".
    #[arg(
        long,
        value_name = "TEXT",
        required_unless_present = "topics",
        conflicts_with = "topics"
    )]
    topic: Option<String>,
    /// A file of topics, one per line (`name | topic`, or a bare topic
    /// named by its slug); `-o` is then a directory. Resumable: a topic
    /// whose `DIR/NAME.yaml` is a valid domain is not asked again.
    #[arg(long, value_name = "FILE")]
    topics: Option<PathBuf>,
    /// The domain's name (default: the file name of `-o` without `.yaml`).
    #[arg(long, value_name = "N", conflicts_with = "topics")]
    name: Option<String>,
    #[command(flatten)]
    client: ClientFlags,
    /// The domain file to write (`domains/N.yaml`), or with `--topics` the
    /// directory. Written only when every check passes.
    #[arg(short = 'o', long = "out", value_name = "PATH")]
    out: PathBuf,
    /// Repairs after the first proposal, at most (up to 100).
    #[arg(long, value_name = "R", default_value_t = DEFAULT_ROUNDS, value_parser = parse_rounds)]
    rounds: usize,
    /// Ask the model a second time which rules look factually doubtful,
    /// into `N.review.txt` beside the output (nothing is changed).
    #[arg(long)]
    review: bool,
    /// At least this many truths (4 to 64); games of this many truths
    /// must synthesize.
    #[arg(long, value_name = "T", default_value_t = 12, value_parser = parse_truths)]
    truths: usize,
    /// At least this many actions (6 to 64); games of this many actions
    /// must synthesize.
    #[arg(long, value_name = "A", default_value_t = 16, value_parser = parse_actions)]
    actions: usize,
    /// The domain shown to the model as an example of the format (a name or
    /// a path).
    #[arg(long, value_name = "D", default_value = "coffee")]
    example: String,
    /// Directory of templates overriding the shipped prompts by name
    /// (`propose.j2`, `propose_repair.j2`, `propose_continue.j2`,
    /// `propose_review.j2`).
    #[arg(long, value_name = "DIR")]
    templates_dir: Option<PathBuf>,
}

/// `--truths T`: 4 (every domain must synthesize at 4x6) to 64.
fn parse_truths(text: &str) -> Result<usize, super::flags::BadValue> {
    super::flags::parse_count(text, "truths", 4, 64).map(|n| n as usize)
}

/// `--actions A`: 6 (every domain must synthesize at 4x6) to 64.
fn parse_actions(text: &str) -> Result<usize, super::flags::BadValue> {
    super::flags::parse_count(text, "actions", 6, 64).map(|n| n as usize)
}

/// `--rounds R`: 0 to [`MAX_ROUNDS`].
fn parse_rounds(text: &str) -> Result<usize, super::flags::BadValue> {
    super::flags::parse_count(text, "repair rounds", 0, MAX_ROUNDS as u64).map(|n| n as usize)
}

/// The topics and the output directory.
fn topics(args: &ProposeArgs) -> Result<(Vec<Topic>, PathBuf), Error> {
    if let Some(file) = &args.topics {
        let text = crate::files::read::read_lines(file)
            .and_then(|bytes| {
                String::from_utf8(bytes)
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
            })
            .map_err(|source| DatasetError::Io {
                path: file.clone(),
                source,
            })?;
        return Ok((
            batch::parse_topics(&file.display().to_string(), &text)?,
            args.out.clone(),
        ));
    }
    let topic = args.topic.clone().unwrap_or_default();
    if topic.trim().is_empty() {
        return Err(Error::input("--topic is empty"));
    }
    let name = match &args.name {
        Some(n) => n.clone(),
        None => stem(&args.out)?,
    };
    batch::check_name(&name)?;
    if !args
        .out
        .extension()
        .is_some_and(|e| e == "yaml" || e == "yml")
    {
        return Err(Error::input(format!(
            "-o `{}` should end in `.yaml`",
            args.out.display()
        )));
    }
    let dir = args.out.parent().map(Path::to_path_buf).unwrap_or_default();
    let file = args
        .out
        .file_name()
        .and_then(|f| f.to_str())
        .ok_or_else(|| Error::input(format!("-o `{}` names no file", args.out.display())))?
        .to_string();
    Ok((
        vec![Topic {
            topic: topic.trim().to_string(),
            name,
            file,
            line: 0,
        }],
        dir,
    ))
}

fn stem(path: &Path) -> Result<String, Error> {
    path.file_stem()
        .and_then(|s| s.to_str())
        .map(str::to_string)
        .ok_or_else(|| {
            Error::input(format!(
                "-o `{}` names no file; give `--name`",
                path.display()
            ))
        })
}

pub fn run(globals: &Globals, args: &ProposeArgs) -> Result<Report, Error> {
    // Every flag value was checked as the flags were read (exit 2).
    let (topics, dir) = topics(args)?;
    let mut inputs: Vec<Input> = args
        .topics
        .iter()
        .map(|t| Input::file("--topics", t))
        .collect();
    inputs.extend(super::flags::domain_input(
        &globals.registry,
        "--example",
        &args.example,
    ));
    inputs.extend(
        args.templates_dir
            .iter()
            .map(|d| Input::tree("--templates-dir", d)),
    );
    for topic in &topics {
        let file = dir.join(&topic.file);
        super::flags::refuse_over_inputs("-o", &file, Written::File, &inputs)?;
    }
    let example = Example::load(&globals.registry, &args.example)?;
    let prompts = Prompts::load(args.templates_dir.as_deref())?;
    if !dir.as_os_str().is_empty() {
        super::flags::check_out_dir(&dir, "-o")?;
        std::fs::create_dir_all(&dir).map_err(|e| crate::files::FileError::io(&dir, e))?;
    }
    // Say at once when nobody listens, instead of retrying in silence
    // (unless every topic is finished already).
    let pending = topics
        .iter()
        .any(|t| batch::existing(&dir.join(&t.file)).is_none());
    if pending {
        args.client.check_reachable()?;
    }
    let reporter = super::progress::Stderr::new();
    let model = args.client.model.as_deref().unwrap_or_default();
    let mut client = Client::new(args.client.config(model), 0, 0, &reporter);
    let settings = Settings {
        truths: args.truths,
        actions: args.actions,
        rounds: args.rounds,
        review: args.review,
        example: &example,
    };
    let total = topics.len();
    let result = batch::run(
        &mut client,
        &prompts,
        &topics,
        &dir,
        &settings,
        &mut |topic, r| crate::stderr_line!("{}", r.line(&topic.name)),
        &mut |i, row| progress(i, total, row),
    );
    let rows = result.map_err(|e| match e {
        BatchError::Api { .. } => Error::Service {
            message: format!("{e}; run the same command again to resume"),
        },
        BatchError::Write(e) => e.into(),
    })?;
    if args.topics.is_some() {
        out(&batch::summary_table(&rows))?;
    }
    let failed = rows.iter().any(|r| r.outcome.status == Status::Failed);
    Ok(Report::failed_if(failed))
}

/// One progress line per topic on stdout; a failure's findings on stderr.
fn progress(i: usize, total: usize, row: &Row) {
    let _ = out(&row.progress(i, total));
    for e in &row.outcome.errors {
        crate::stderr_line!("{e}\n");
    }
}
