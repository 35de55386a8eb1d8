//! `kumo-gen eval`: run a model over an OpenAI-compatible API on a
//! generated dataset and write KUMO-format results.

use std::path::PathBuf;

use super::client::ClientFlags;
use super::flags::TemplatesFlags;
use super::{Error, Globals, Report, out};
use crate::dataset::{self, Setting};
use crate::eval::players::{PLAYER_NAMES, Player};
use crate::eval::subset::Subset;
use crate::eval::{self, Picks, RunConfig, Suite};
use crate::files::target::{Input, Written};
use crate::progress::{Progress as _, Stage};

// A model (`--api-base` with `--model`) or an offline `--player`.
#[derive(clap::Args, Debug)]
#[command(
    mut_arg("api_base", |a| a.requires("model").conflicts_with("player")),
    mut_arg("model", |a| a.requires("api_base").conflicts_with("player"))
)]
pub struct EvalArgs {
    #[command(flatten)]
    client: ClientFlags,
    /// An offline player instead of a model (no server): `golden` (the
    /// optimal trajectory; needs labelled instances), `random` (random
    /// related actions, answers when one candidate is left) or `guess`
    /// (answers at once). Results go under the player's name; `--seed`
    /// seeds its choices.
    #[arg(long, value_name = "PLAYER", value_parser = clap::builder::PossibleValuesParser::new(PLAYER_NAMES))]
    player: Option<String>,
    /// Dataset directory: `DIR/<domain>/truth_num=T+action_num=A+valid_truth_num=V.jsonl`
    /// and books in `DIR/<domain>/knowledge_book/<setting>/seed=<i>.txt`.
    #[arg(long, value_name = "DIR")]
    data: PathBuf,
    /// Only this domain: its directory name, or a domain name or path (which
    /// then also judges the answers; `medical` matches KUMO's `MedicalEnv`).
    #[arg(long, value_name = "D")]
    domain: Option<String>,
    /// Only this setting: truths,actions (e.g. `12,16`).
    #[arg(long, value_name = "T,A")]
    setting: Option<String>,
    /// Play only the first N instances of each file.
    #[arg(long, value_name = "N", value_parser = parse_instances)]
    limit: Option<usize>,
    /// Play a deterministic sample of N instances of each file (after
    /// `--limit`), the same for every model and player given the same
    /// `--sample-seed`.
    #[arg(long, value_name = "N", value_parser = parse_instances)]
    sample: Option<usize>,
    /// Seed of `--sample` (not `--seed`, which seeds retries and players).
    #[arg(long, value_name = "S", default_value_t = 0, requires = "sample")]
    sample_seed: u64,
    /// Trials per instance (KUMO's `eval_times`; 1 to 1000: an instance's
    /// result line holds all of them).
    #[arg(long, value_name = "K", default_value_t = 5, value_parser = parse_trials)]
    trials: usize,
    /// Instances played at once (1 to 1024).
    #[arg(long, value_name = "C", default_value_t = 4, value_parser = parse_concurrency)]
    concurrency: usize,
    /// The budgeted protocol (Interactive Benchmarks) with N turns: a wrong
    /// answer is told "wrong" and play goes on until solved or N replies
    /// are spent (instead of KUMO's protocol, where the first answer ends
    /// the game). Results go under `VanillaAgent-budget=N`. N must be
    /// below the number of truths (with as many turns as truths, naming
    /// every truth in turn wins without one action).
    #[arg(long, value_name = "N", value_parser = parse_steps)]
    budget: Option<usize>,
    /// Replies per trial at most (KUMO's `max_steps`; 1 to 10 000).
    #[arg(long, value_name = "M", default_value_t = 50, value_parser = parse_steps)]
    max_steps: usize,
    /// Results directory.
    #[arg(long, value_name = "RESULTS_DIR", default_value = "results")]
    out: PathBuf,
    /// Seed of the backoff jitter.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Refuse to run when a knowledge book file is missing (by default a
    /// missing book is rendered from the domain and the instance, as the
    /// generator renders it).
    #[arg(long)]
    require_books: bool,
    #[command(flatten)]
    templates: TemplatesFlags,
    #[command(flatten)]
    predict: super::predict_flags::PredictFlags,
}

/// Most trials per instance `--trials` accepts: every trial's result is
/// kept in memory until its instance is written, in one result line that
/// `score` and `report` read under the 16 MiB line cap (10 000 trials of
/// 50 steps made a 26 MB line; a longer line is not written anyway).
pub const MAX_TRIALS: usize = 1_000;

/// `--trials K`: 1 to [`MAX_TRIALS`], refused at once beyond.
fn parse_trials(text: &str) -> Result<usize, super::flags::BadValue> {
    super::flags::parse_count(text, "trials", 1, MAX_TRIALS as u64).map(|n| n as usize)
}

/// Most replies per trial `--max-steps` and `--budget` accept (the
/// game's bound for every player).
pub const MAX_STEPS: usize = crate::game::MAX_REPLIES;

/// `--max-steps M`, `--budget N`: 1 to [`MAX_STEPS`].
fn parse_steps(text: &str) -> Result<usize, super::flags::BadValue> {
    super::flags::parse_count(text, "replies", 1, MAX_STEPS as u64).map(|n| n as usize)
}

/// `--concurrency C`: 1 to 1024.
fn parse_concurrency(text: &str) -> Result<usize, super::flags::BadValue> {
    super::flags::parse_count(text, "instances played at once", 1, 1024).map(|n| n as usize)
}

/// `--limit N`, `--sample N`: at least 1.
fn parse_instances(text: &str) -> Result<usize, super::flags::BadValue> {
    super::flags::parse_count(text, "instances", 1, usize::MAX as u64).map(|n| n as usize)
}

fn fail(message: String) -> Result<Report, Error> {
    Err(Error::input(message))
}

/// The instances of each file to play (`--limit`, `--sample`).
fn subset(args: &EvalArgs) -> Subset {
    Subset {
        limit: args.limit,
        sample: args.sample.map(|n| (n, args.sample_seed)),
    }
}

/// The name results are filed under: the model, or the player.
fn results_name(args: &EvalArgs) -> &str {
    args.player
        .as_deref()
        .or(args.client.model.as_deref())
        .unwrap_or_default()
}

/// `--setting T,A`: the truths and actions of the settings to play.
fn wanted_setting(args: &EvalArgs) -> Result<Option<(usize, usize)>, String> {
    let Some(s) = &args.setting else {
        return Ok(None);
    };
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    match parts.as_slice() {
        [t, a] => match (t.parse::<usize>(), a.parse::<usize>()) {
            (Ok(t), Ok(a)) => Ok(Some((t, a))),
            _ => Err(format!(
                "--setting `{s}`: expected two numbers like `12,16`"
            )),
        },
        _ => Err(format!(
            "--setting `{s}`: expected truths,actions like `12,16`"
        )),
    }
}

/// The agent results are filed under: per protocol.
fn agent_name(args: &EvalArgs) -> String {
    match args.predict.rules() {
        Some(rules) => crate::game::Agent::Model.predict_name(&rules),
        None => crate::game::Agent::Model.name(args.budget),
    }
}

/// The suites to play, each file read a line at a time (twice with
/// `--sample`: its length first): every line is checked, and of the
/// chosen ones only the position and seed are kept, the fewest truths
/// (for `--budget`) noted, the player's needs checked and the missing
/// books counted, before anything is played.
fn build_suites(
    globals: &Globals,
    args: &EvalArgs,
    player: Option<Player>,
) -> Result<Vec<(Suite, Option<usize>)>, Error> {
    if !args.data.is_dir() {
        return Err(Error::input(format!(
            "`{}` is not a directory",
            args.data.display()
        )));
    }
    let wanted = wanted_setting(args).map_err(Error::input)?;
    let templates = std::sync::Arc::new(args.templates.templates()?);
    let (datasets, unread) = dataset::open_all(
        &globals.registry,
        &args.data,
        args.domain.as_deref(),
        |s: &Setting| wanted.is_none_or(|w| w == (s.truths, s.actions)),
    )?;
    super::note_unread(&unread);
    let mut suites = Vec::new();
    let mut missing: (usize, Option<PathBuf>) = (0, None);
    for (data, settings) in datasets {
        for setting in settings {
            let count = match args.sample {
                None => None,
                Some(_) => {
                    let mut reader = data.stream(&setting)?;
                    let mut count = 0;
                    while reader.next_instance()?.is_some() {
                        count += 1;
                    }
                    Some(count)
                }
            };
            let picks = Picks {
                positions: count.map(|n| subset(args).indices(n)),
                limit: args.limit.unwrap_or(usize::MAX),
                require_books: args.require_books,
                player,
                predict: args.predict.rules(),
            };
            let (chosen, fewest_truths) = picks.choose::<Error>(&data, &setting, &mut missing)?;
            let name = setting.to_string();
            let suite = Suite {
                root: args.out.clone(),
                out: crate::results::result_path(
                    &args.out,
                    results_name(args),
                    &agent_name(args),
                    &data.name(),
                    &name,
                    args.trials,
                ),
                domain: data.domain().clone(),
                domain_dir: data.name(),
                setting: name,
                chosen,
                source: Box::new(eval::DatasetTasks {
                    data: data.clone(),
                    setting,
                    templates: templates.clone(),
                    require_books: args.require_books,
                }),
            };
            suites.push((suite, fewest_truths));
        }
    }
    if suites.is_empty() {
        return Err(Error::input(format!(
            "no instance files `<domain>/truth_num=T+action_num=A+valid_truth_num=V.jsonl` under `{}`{}{}",
            args.data.display(),
            match (&args.domain, &args.setting) {
                (None, None) => String::new(),
                _ => " matching --domain/--setting".into(),
            },
            super::unread_list(&unread)
        )));
    }
    missing_books(args, missing)?;
    Ok(suites)
}

pub fn run(globals: &Globals, args: &EvalArgs) -> Result<Report, Error> {
    if args.client.api_base.is_none() && args.player.is_none() {
        return Err(Error::Usage {
            message: "`eval` needs a model to play or an offline player".into(),
            help: Some(format!(
                "give `--api-base URL --model NAME` for a model behind an OpenAI-compatible API \
                 (vLLM, a hosted service), or `--player {}` to play offline without a server",
                PLAYER_NAMES.join("|")
            )),
        });
    }
    super::flags::check_out_dir(&args.out, "--out")?;
    let mut inputs = vec![Input::data("--data", &args.data)];
    inputs.extend(
        args.domain
            .as_deref()
            .and_then(|d| super::flags::domain_input(&globals.registry, "--domain", d)),
    );
    inputs.extend(super::flags::templates_input(&args.templates));
    // The folder this model's (or player's) results go into.
    let folder = args
        .out
        .join(crate::results::path_component(results_name(args)));
    super::flags::refuse_within("--out", &args.out, &folder, Written::Folder, &inputs)?;
    // Every other flag value was checked as the flags were read (exit 2).
    let player: Option<Player> = match args.player.as_deref().map(str::parse).transpose() {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let built = build_suites(globals, args, player)?;
    if let Some(budget) = args.budget {
        check_budget(budget, &built)?;
    }
    let suites: Vec<Suite> = built.into_iter().map(|(suite, _)| suite).collect();
    if let Some(problem) = crate::results::results_folder_problem(&args.out, results_name(args)) {
        return Err(Error::input_with_help(
            problem,
            "name the model or player otherwise (`--player`), or choose another `--out`",
        ));
    }
    if let Some(legacy) = crate::results::legacy_results_dir(&args.out, results_name(args)) {
        crate::stderr_line!(
            "note: `{}` holds results of an earlier kumo-gen under a folder name other models share; they are not resumed here (folder `{}`); move them there to resume",
            legacy.display(),
            crate::results::path_component(results_name(args))
        );
    }
    let config = RunConfig {
        client: args.client.config(results_name(args)),
        trials: args.trials,
        concurrency: args.concurrency,
        max_steps: args.max_steps,
        budget: args.budget,
        seed: args.seed,
        player,
        predict: args.predict.rules(),
    };
    let progress = super::progress::Stderr::new();
    progress.stage(Stage::new("eval", "instances", 0));
    if player.is_none() {
        args.client.check_reachable()?;
    }
    let summary = eval::run(&suites, &config, &progress);
    progress.finish();
    let summary = summary?;

    let outs: Vec<&std::path::Path> = suites.iter().map(|s| s.out.as_path()).collect();
    let text = summary.describe(player.is_some(), results_name(args), &outs);
    // A closed stdout must not hide a failed run: the failure decides the
    // exit code, the summary is printed where it can be.
    let printed = out(&text);
    if let Some(why) = &summary.unreadable {
        return Err(Error::input_with_help(
            why.clone(),
            "the results written so far are kept; run the same command again to resume",
        ));
    }
    run_failures(&summary)?;
    printed?;
    Ok(Report::Done)
}

/// Missing knowledge books: refused with `--require-books`, else noted.
fn missing_books(args: &EvalArgs, missing: (usize, Option<PathBuf>)) -> Result<(), Error> {
    if let (missing, Some(first)) = missing {
        let what = format!(
            "{missing} knowledge book(s) missing, e.g. `{}`",
            first.display()
        );
        if args.require_books {
            return Err(Error::input(format!(
                "{what}; generate the books with the dataset, or drop --require-books to render \
                 the missing books from the domain"
            )));
        }
        crate::stderr_line!(
            "note: {what}; rendered from the domain and the instances instead \
             (--require-books refuses)"
        );
    }
    Ok(())
}

/// A run that left instances unfinished, or that the API refused, fails.
fn run_failures(summary: &eval::Summary) -> Result<(), Error> {
    let mut failures: Vec<String> = summary.failures.iter().map(ToString::to_string).collect();
    if let Some(fatal) = &summary.fatal {
        failures.push(format!("the API refused the run: {fatal}"));
    } else if summary.unfinished > 0 {
        failures.push(format!(
            "{} instance(s) unfinished after retries; run the same command again to resume",
            summary.unfinished
        ));
    }
    if !failures.is_empty() {
        return Err(Error::Service {
            message: failures.join("\nerror: "),
        });
    }
    Ok(())
}

/// Refuses a `--budget` the game refuses for some instance
/// ([`crate::game::check_budget`]: at least its truths, with a turn per
/// truth, lets naming every truth in turn win without one action, so the
/// budget would measure nothing).
fn check_budget(budget: usize, suites: &[(Suite, Option<usize>)]) -> Result<(), Error> {
    for (suite, fewest_truths) in suites {
        let Some(truths) = *fewest_truths else {
            continue;
        };
        if let Err(e) = crate::game::check_budget(budget, truths, MAX_STEPS) {
            return Err(Error::input_with_help(
                format!(
                    "`--budget {budget}` cannot be played on `{}/{}.jsonl`: {e}",
                    suite.domain_dir, suite.setting
                ),
                format!(
                    "use `--budget {}` or fewer (`--setting` picks the settings played)",
                    crate::game::largest_budget(truths, MAX_STEPS).max(1)
                ),
            ));
        }
    }
    Ok(())
}
