//! The command-line layer: turns flags into checked configurations, calls
//! the library, and maps results to exit codes.
//!
//! Every command handler returns `Result<Report, Error>`; [`main`] alone
//! prints an [`Error`] and picks the exit code from its kind: 0 ok, 1 bad
//! input or an infeasible request, 2 usage, output, service or internal
//! error ([`crate::error`]). A closed stdout pipe ends quietly with 0.
//! Without a subcommand, `kumo-gen --domain D ...` runs generation (the
//! main job).

mod check_books;
mod client;
mod contamination;
mod curriculum;
mod domains;
mod eval;
mod family;
mod flags;
mod generate;
mod graph;
mod import;
mod label;
mod manual;
mod merge;
mod moves;
mod pairs;
mod play;
mod predict_flags;
mod progress;
mod propose;
mod report;
mod score;
mod serve;
mod split;
mod stats;
mod stderr_line;

use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::domain::Registry;
pub use crate::error::{EXIT_INPUT, EXIT_OTHER, Error};

/// How a command that ran to its end went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// All is well (exit 0).
    Done,
    /// The command printed what it found, and what it found is a failure
    /// of the input the exit code must tell (exit 1): books that fail
    /// their check, domains that do not validate, topics left without a
    /// domain.
    Findings,
}

impl Report {
    /// `Findings` when `failed`, else `Done`.
    pub fn failed_if(failed: bool) -> Report {
        if failed {
            Report::Findings
        } else {
            Report::Done
        }
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "kumo-gen",
    version,
    about = "Generate verified KUMO-style reasoning tasks from domain seed configs",
    long_about = "Generate verified KUMO-style reasoning tasks from domain seed configs.\n\n\
        Main job: kumo-gen --domain medical --truths 12 --actions 16 -n 5000"
)]
struct Cli {
    /// Directory of domain files that override the shipped ones.
    #[arg(long, global = true, value_name = "DIR")]
    domains_dir: Option<PathBuf>,

    /// Most YAML nodes (values, keys, list items) a domain file may have.
    #[arg(long, global = true, value_name = "NODES", default_value_t = crate::domain::DEFAULT_YAML_NODES, value_parser = flags::parse_yaml_nodes)]
    domain_max_nodes: usize,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Validate domain files (all shipped domains when none is given).
    Validate(domains::ValidateArgs),
    /// List the known domains: name, #truths, #actions, title.
    Domains,
    /// Score trajectories in KUMO's result format: success, action counts, relative action count.
    Score(score::ScoreArgs),
    /// Chi-square test: structure signature vs correctness, per model.
    Stats(stats::StatsArgs),
    /// Every move of result files against the exact optimum: value, Q, regret (JSON lines).
    Moves(moves::MovesArgs),
    /// Preference pairs (prompt/chosen/rejected, exact Q) along golden and random paths.
    Pairs(pairs::PairsArgs),
    /// Write the results as one self-contained HTML page (DIR/index.html).
    Report(report::ReportArgs),
    /// Play a model over an OpenAI-compatible API on a dataset (KUMO's protocol).
    Eval(eval::EvalArgs),
    /// Play one instance in the terminal (or through a pipe).
    Play(play::PlayArgs),
    /// Serve datasets' episodes over OpenEnv's HTTP/WebSocket contract, and a page for people.
    Serve(serve::ServeArgs),
    /// Generate instances (also what `kumo-gen --domain ...` runs).
    Generate(generate::GenerateArgs),
    /// Datasets of increasing difficulty (OUT/level-1..K), one HF config per level.
    Curriculum(curriculum::CurriculumArgs),
    /// Join the shard files under --out into dataset files.
    Merge(merge::MergeArgs),
    /// Show a domain's truth graph: components, Louvain communities, Q.
    Graph(graph::GraphArgs),
    /// Split a domain into disjoint in-domain / out-of-domain halves.
    Split(split::SplitArgs),
    /// Compile a procedural task family (rules3, circuits, ciphers, programs, mechanics, puzzles,
    /// opponents) into a domain.
    Family(family::FamilyArgs),
    /// Check the knowledge books of a dataset directory against its instances.
    CheckBooks(check_books::CheckBooksArgs),
    /// Convert a KUMO Python domain file to domain YAML.
    Import(Box<import::ImportArgs>),
    /// Add optimal-search labels to KUMO-format instance lines.
    Label(label::LabelArgs),
    /// Ask a language model for a new domain; repair it until it validates.
    Propose(Box<propose::ProposeArgs>),
    /// Count the instances two datasets share (ours, KUMO's, SFT, HF).
    Overlap(contamination::OverlapArgs),
    /// Prove a dataset made with `--seed random` from its private seed file.
    Verify(contamination::VerifyArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(manual::CompletionsArgs),
    /// Print the man page of kumo-gen or of one command (roff).
    Man(manual::ManArgs),
}

/// The clap definition of the whole command line, for documents written
/// from it (the flag reference docs/flags.md: [`crate::flag_tables`], and the man page).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command().mut_subcommand("curriculum", |c| {
        curriculum::REFUSED
            .iter()
            .fold(c, |c, name| c.mut_arg(*name, |a| a.hide(true)))
    })
}

/// What every command gets besides its own flags.
pub struct Globals {
    pub registry: Registry,
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    let args = with_default_command(std::env::args_os().collect());
    let parsed = command()
        .try_get_matches_from(&args)
        .and_then(|matches| <Cli as clap::FromArgMatches>::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            if let Some(explained) = negative_number(&e, &args) {
                crate::stderr_line!("{}", explained.report());
                return explained.exit_code();
            }
            let code = if e.use_stderr() { EXIT_OTHER } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    crate::domain::set_yaml_node_budget(cli.domain_max_nodes);
    let globals = Globals {
        registry: Registry::new(cli.domains_dir),
    };
    let result = match cli.command {
        Some(Command::Validate(args)) => domains::validate(&globals, &args),
        Some(Command::Domains) => domains::list(&globals),
        Some(Command::Score(args)) => score::run(&globals, &args),
        Some(Command::Stats(args)) => stats::run(&globals, &args),
        Some(Command::Moves(args)) => moves::run(&globals, &args),
        Some(Command::Pairs(args)) => pairs::run(&globals, &args),
        Some(Command::Report(args)) => report::run(&globals, &args),
        Some(Command::Eval(args)) => eval::run(&globals, &args),
        Some(Command::Play(args)) => play::run(&globals, &args),
        Some(Command::Serve(args)) => serve::run(&globals, &args),
        Some(Command::Generate(args)) => generate::run(&globals, &args),
        Some(Command::Curriculum(args)) => curriculum::run(&globals, &args),
        Some(Command::Merge(args)) => merge::run(&globals, &args),
        Some(Command::Graph(args)) => graph::run(&globals, &args),
        Some(Command::Split(args)) => split::run(&globals, &args),
        Some(Command::Family(args)) => family::run(&args),
        Some(Command::CheckBooks(args)) => check_books::run(&globals, &args),
        Some(Command::Import(args)) => import::run(&args),
        Some(Command::Label(args)) => label::run_in(&globals.registry, &args),
        Some(Command::Propose(args)) => propose::run(&globals, &args),
        Some(Command::Overlap(args)) => contamination::run(&globals, &args),
        Some(Command::Verify(args)) => contamination::verify(&args),
        Some(Command::Completions(args)) => manual::completions(&args),
        Some(Command::Man(args)) => manual::man(&args),
        None => {
            // No subcommand and no flags: usage on stderr, as for any usage error.
            let _ = <Cli as clap::CommandFactory>::command().write_long_help(&mut io::stderr());
            return EXIT_OTHER;
        }
    };
    // Cache files that failed their check were computed again: say so.
    for note in crate::cache::take_notes() {
        crate::stderr_line!("note: {note}");
    }
    match result {
        Ok(Report::Done) => 0,
        Ok(Report::Findings) => EXIT_INPUT,
        Err(e) if e.is_closed_pipe() => 0,
        Err(e) => {
            crate::stderr_line!("{}", e.report());
            e.exit_code()
        }
    }
}

/// A negative number where clap saw a flag (`-n -5`, `--threads -1`):
/// clap says "unexpected argument '-5'", which hides what is wrong. No
/// flag of kumo-gen takes a negative value, so this says so, naming the
/// flag before it.
fn negative_number(e: &clap::Error, args: &[std::ffi::OsString]) -> Option<Error> {
    use clap::error::ErrorKind;
    if !matches!(
        e.kind(),
        ErrorKind::UnknownArgument | ErrorKind::InvalidValue | ErrorKind::NoEquals
    ) {
        return None;
    }
    let is_negative = |a: &str| {
        a.strip_prefix('-')
            .is_some_and(|rest| !rest.is_empty() && rest.parse::<f64>().is_ok())
    };
    let at = args
        .iter()
        .position(|a| a.to_str().is_some_and(is_negative))?;
    let number = args[at].to_string_lossy();
    let flag = args[..at]
        .last()
        .map(|a| a.to_string_lossy())
        .filter(|a| a.starts_with('-'));
    let message = match &flag {
        Some(flag) => format!("`{flag} {number}`: `{flag}` takes no negative number"),
        None => format!("`{number}`: no argument of kumo-gen is a negative number"),
    };
    Some(Error::Usage {
        message,
        help: Some(
            "counts, sizes, seeds and budgets are 0 or more; `kumo-gen COMMAND --help` gives each flag's range".into(),
        ),
    })
}

/// The main job needs no subcommand: `kumo-gen --domain medical ...`
/// means `kumo-gen generate --domain medical ...`. When the first argument
/// after the global `--domains-dir DIR` is a flag other than help or
/// version, `generate` is inserted before it.
fn with_default_command(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut i = 1;
    while let Some(arg) = args.get(i).and_then(|a| a.to_str()) {
        if arg == "--domains-dir" {
            i += 2;
        } else if arg.starts_with("--domains-dir=") {
            i += 1;
        } else {
            break;
        }
    }
    if let Some(arg) = args.get(i).and_then(|a| a.to_str()) {
        let help_or_version = matches!(arg, "-h" | "--help" | "-V" | "--version");
        if arg.starts_with('-') && !help_or_version {
            args.insert(i, "generate".into());
        }
    }
    args
}

/// Names the instance files a reader skipped because they are not regular
/// files ([`crate::dataset::unread_settings`]).
pub fn note_unread(unread: &[String]) {
    for file in unread {
        crate::stderr_line!("note: not read: {file}");
    }
}

/// The files not read, for an error that found nothing else: `` (not
/// read: `A`: why; ...)``, or nothing.
pub fn unread_list(unread: &[String]) -> String {
    if unread.is_empty() {
        String::new()
    } else {
        format!(" (not read: {})", unread.join("; "))
    }
}

/// Writes to stdout, reporting a closed pipe as an error the caller maps to 0.
pub fn out(text: &str) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()
}

/// Prints a loaded domain's validation warnings to stderr
/// ([`crate::domain::warning_lines`]).
pub fn report_warnings(domain: &crate::domain::Domain, warnings: &[crate::domain::Diagnostic]) {
    for line in crate::domain::warning_lines(&domain.name, warnings) {
        crate::stderr_line!("{line}");
    }
}
