//! `kumo-gen play`: a person plays one instance in the terminal (or a
//! script through a pipe), and the trajectory is appended in KUMO's format.
//!
//! Input per round: a menu number, an action or truth name (any case), or
//! `<ANSWER> name </ANSWER>`; `quit` or end of input abandons the game
//! (nothing is recorded). Unlike a model, a person who mistypes is asked
//! again instead of ending the trial with a parse error.
//!
//! `--budget N` plays the budgeted protocol ([`Session::budgeted`], as
//! `eval --budget`): each accepted reply is a turn, a wrong answer is told
//! "wrong" and play goes on until the right answer or the N-th turn.
//!
//! The game runs on [`Session`], eval's trial loop, with the person's
//! resolved choice as the answer; a generated instance is line `--index`
//! of its dataset, made by the pipeline's per-index API
//! ([`crate::pipeline::generate_range_lines`]).

use std::io;
use std::path::{Path, PathBuf};

use super::{Error, Globals, Report, out};
use crate::dataset::{self, Dataset, Setting};
use crate::domain::Domain;
use crate::files::target::{Input, Written};
use crate::game::session::Session;
use crate::game::{
    Agent, InstanceLine, Judge, ResultLine, Step, Steps, Task, Trial, Verdict, actions_taken,
    kumo_action_count, menu_choice, parse_instances, protocol,
};
use crate::python_repr::py_repr;
use crate::render::{RenderOptions, Renderer};
use crate::synth::Params;

/// The last `--index` `play` generates: instances `0..=index` are drawn
/// (the earlier ones for their dedup keys), so the bound keeps a typo from
/// costing minutes and gigabytes.
const MAX_PLAY_INDEX: usize = 999_999;

#[derive(clap::Args, Debug)]
pub struct PlayArgs {
    /// Instance file (`<domain>/truth_num=T+action_num=A+valid_truth_num=V.jsonl`);
    /// without it the instance is generated from --domain, --truths,
    /// --actions, --valid, --seed and --index.
    #[arg(long, value_name = "FILE")]
    instances: Option<PathBuf>,
    /// Line of the instance in the file, counting from 1.
    #[arg(long, value_name = "K", default_value_t = 1, requires = "instances", value_parser = super::flags::in_range("the line", 1..=usize::MAX))]
    line: usize,
    /// Domain (name or path). With --instances it judges the instance (by
    /// default the dataset's manifest.json or the directory name tells);
    /// without, the instance is generated from it.
    #[arg(long, value_name = "NAME|PATH")]
    domain: Option<String>,
    /// Truths per generated instance.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 4,
        conflicts_with = "instances",
        value_parser = super::flags::in_range("truths", 2..=usize::MAX)
    )]
    truths: usize,
    /// Actions per generated instance.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 6,
        conflicts_with = "instances",
        value_parser = super::flags::in_range("actions", 1..=usize::MAX)
    )]
    actions: usize,
    /// Valid truths per generated instance.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        conflicts_with = "instances",
        value_parser = super::flags::in_range("valid truths", 1..=usize::MAX)
    )]
    valid: usize,
    /// Dataset seed of the generated instance (as `kumo-gen --seed`).
    #[arg(long, value_name = "S", default_value_t = crate::synth::DEFAULT_SEED, conflicts_with = "instances")]
    seed: u64,
    /// Index of the generated instance in its dataset (KUMO's `seed`;
    /// below 1 000 000: the instances before it are drawn too, for their
    /// dedup keys).
    #[arg(
        long,
        value_name = "I",
        default_value_t = 0,
        conflicts_with = "instances",
        value_parser = super::flags::in_range("instances before the one played", 0..=MAX_PLAY_INDEX)
    )]
    index: usize,
    /// Player name, used as the model in the results.
    #[arg(long, value_name = "NAME", default_value = "human")]
    player: String,
    /// Result file to append to (default:
    /// `results/<player>/HumanAgent/<domain>/<setting>/eval_times=1.jsonl`).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    #[command(flatten)]
    templates: super::flags::TemplatesFlags,
    /// Play the budgeted protocol with N turns: a wrong answer is told
    /// "wrong" and play goes on until solved or the turns are spent
    /// (results under `HumanAgent-budget=N`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=crate::game::MAX_REPLIES as u64))]
    budget: Option<u64>,
    #[command(flatten)]
    predict: super::predict_flags::PredictFlags,
}

/// The instance to play and where it comes from.
struct Source {
    instance: InstanceLine,
    domain: Domain,
    /// Dataset directory name (results path) and setting.
    dataset: String,
    setting: String,
    /// The knowledge book: the dataset's file, else rendered from the
    /// domain as the generator renders it.
    book: String,
}

/// Instance `--line` of `--instances`.
fn from_file(
    globals: &Globals,
    args: &PlayArgs,
    renderer: &Renderer,
    file: &Path,
) -> Result<Source, Error> {
    // Read a line at a time, keeping the one played (every line is still
    // checked, as before).
    let index = args.line.saturating_sub(1);
    let mut reader = dataset::stream::InstanceReader::open(file)?;
    let (mut kept, mut count) = (None, 0);
    while let Some(read) = reader.next_instance()? {
        if read.position == index {
            kept = Some(read.instance);
        }
        count += 1;
    }
    let Some(instance) = kept.filter(|_| args.line > 0) else {
        return Err(Error::input(format!(
            "--line {}: `{}` has instances on lines 1 to {count}",
            args.line,
            file.display(),
        )));
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    let data = Dataset::open(&globals.registry, dir, args.domain.as_deref())?;
    let setting = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A file named by its setting has its books beside it.
    let book = match setting.parse::<Setting>() {
        Ok(s) => data.book(renderer, &s, index, &instance)?,
        Err(_) => data.render_book(renderer, &instance)?,
    };
    let domain = data.domain().clone();
    let dataset = Some(data.name())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| domain.name.clone());
    Ok(Source {
        instance,
        domain,
        dataset,
        setting,
        book,
    })
}

/// Instance `--index` of the dataset `kumo-gen --domain D --truths N
/// --actions N --valid V --seed S --no-labels` would write.
fn generated(globals: &Globals, args: &PlayArgs, renderer: &Renderer) -> Result<Source, Error> {
    let Some(spec) = &args.domain else {
        return Err(Error::input(
            "give --instances FILE, or --domain D to generate the instance",
        ));
    };
    let (domain, _) = globals.registry.load(spec)?;
    let params = Params {
        seed: args.seed,
        ..Params::new(args.truths, args.actions, args.valid)
    };
    let lines = crate::pipeline::generate_range_lines(
        &domain,
        params.clone(),
        args.index as u64..args.index as u64 + 1,
        None,
        None,
        None,
    )?;
    let line = lines
        .first()
        .ok_or_else(|| Error::Internal("no instance generated".into()))?;
    let mut parsed = parse_instances(line)
        .map_err(|e| Error::Internal(format!("a generated line does not read back: {e}")))?;
    let instance = parsed.swap_remove(0);
    let book = crate::game::render_book(renderer, &domain, &instance)?;
    Ok(Source {
        instance,
        dataset: domain.name.clone(),
        setting: Setting::from(&params).to_string(),
        domain,
        book,
    })
}

pub fn run(globals: &Globals, args: &PlayArgs) -> Result<Report, Error> {
    if let Some(output) = &args.out {
        let mut inputs = Vec::new();
        if let Some(file) = &args.instances {
            inputs.push(Input::file("--instances", file));
            // The instance's book is read from beside the file.
            let books = file
                .parent()
                .unwrap_or(Path::new(""))
                .join("knowledge_book");
            inputs.push(Input::tree("--instances", books));
        }
        inputs.extend(
            args.domain
                .as_deref()
                .and_then(|d| super::flags::domain_input(&globals.registry, "--domain", d)),
        );
        inputs.extend(super::flags::templates_input(&args.templates));
        super::flags::refuse_over_inputs("--out", output, Written::File, &inputs)?;
    }
    if args.out.is_none()
        && let Some(problem) =
            crate::results::results_folder_problem(Path::new("results"), &args.player)
    {
        return Err(Error::input_with_help(
            problem,
            "give another `--player` name, or `--out FILE`",
        ));
    }
    let templates = args.templates.templates()?;
    let renderer = Renderer::new(&templates, RenderOptions::default());
    let source = match &args.instances {
        Some(file) => from_file(globals, args, &renderer, file),
        None => generated(globals, args, &renderer),
    };
    let Source {
        instance,
        domain,
        dataset,
        setting,
        book,
    } = source?;
    let judge = Judge::new(&domain, &instance)?;
    if let Some(budget) = args.budget.map(|b| b as usize)
        && let Err(e) =
            crate::game::check_budget(budget, instance.truths.len(), crate::game::MAX_REPLIES)
    {
        // The one rule of eval, play and serve.
        return Err(Error::input_with_help(
            format!("`--budget {budget}`: {e}"),
            format!(
                "use `--budget {}` or fewer",
                crate::game::largest_budget(instance.truths.len(), crate::game::MAX_REPLIES).max(1)
            ),
        ));
    }
    let system_prompt = protocol::system_prompt(&renderer, &domain, &instance, &book)?;
    let task = std::sync::Arc::new(Task {
        instance,
        system_prompt,
        judge,
    });
    let instance = &task.instance;
    if let Some(rules) = args.predict.rules() {
        let trial = play_predict(args, &domain, task.clone(), rules)?;
        let agent = Agent::Person.predict_name(&rules);
        let path = record(args, trial, instance.seed, agent, &dataset, &setting)?;
        out(&format!("trajectory appended to {}\n", path.display()))?;
        return Ok(Report::Done);
    }
    out(&introduction(&domain, instance, &book))?;
    let budget = args.budget.map(|b| b as usize);
    if let Some(budget) = budget {
        out(&format!("{}\n\n", crate::game::budget_rule(budget)))?;
    }
    let mut session = match budget {
        Some(budget) => Session::budgeted(task.clone(), &args.player, budget),
        None => Session::new(task.clone(), &args.player, usize::MAX),
    };
    let (truth, successful) = play_rounds(&mut session, instance, &domain)?;
    let trial = session.trial();
    out(&summary(
        instance,
        &trial,
        truth.as_deref(),
        successful,
        budget,
    ))?;
    let agent = Agent::Person.name(budget);
    let path = record(args, trial, instance.seed, agent, &dataset, &setting)?;
    out(&format!("trajectory appended to {}\n", path.display()))?;
    Ok(Report::Done)
}

/// What the player is shown before the first round: the domain's goal,
/// the book, and the menu of numbered actions and truths.
fn introduction(domain: &Domain, instance: &InstanceLine, book: &str) -> String {
    let n_actions = instance.actions.len();
    let mut menu = String::new();
    menu.push_str(&format!(
        "{}:\n",
        crate::render::vocab::ucfirst(&domain.action_plural)
    ));
    for (i, a) in instance.actions.iter().enumerate() {
        menu.push_str(&format!("  {:>2}. {a}\n", i + 1));
    }
    menu.push_str(&format!("Possible {}:\n", domain.truth_plural));
    for (i, t) in instance.truths.iter().enumerate() {
        menu.push_str(&format!("  {:>2}. {t}\n", n_actions + i + 1));
    }
    format!(
        "{}: {}.\nPick one {} per round; name the {} when you are sure, in as few rounds as you can.\n\n{}\n\n{menu}",
        domain.title,
        domain.goal,
        domain.action_noun,
        domain.truth_noun,
        book.trim_end()
    )
}

/// Reads replies from stdin round by round until the game ends: the last
/// truth named and whether it was right (`None`: the budget ran out
/// before a right answer). A reply not on the menu is asked again; `quit`
/// or the end of input abandons the game.
fn play_rounds(
    session: &mut Session,
    instance: &InstanceLine,
    domain: &Domain,
) -> Result<(Option<String>, bool), Error> {
    let stdin = io::stdin();
    // Replies under the line cap of every user input.
    let mut lines = crate::files::read::Lines::new(stdin.lock());
    loop {
        if session.is_finished() {
            // Only the budgeted protocol ends without an answer.
            return Ok((None, false));
        }
        out(&format!("round {}> ", session.replies() + 1))?;
        let Some(line) = read_reply(&mut lines)? else {
            continue;
        };
        let input = line.trim();
        let Some(choice) = menu_choice(input, &instance.actions, &instance.truths) else {
            out(&format!(
                "`{input}` is not on the menu: give a number from 1 to {}, or a name\n",
                instance.actions.len() + instance.truths.len()
            ))?;
            continue;
        };
        let step = session
            .respond_as(Some(choice), Some(&line), 0)
            .expect("an unfinished session takes a reply");
        match step {
            Step::Observation { action, value } => {
                let unit = domain
                    .action_index(&action)
                    .and_then(|i| domain.actions[i].unit.clone())
                    .filter(|_| value.is_number())
                    .map(|u| format!(" {u}"))
                    .unwrap_or_default();
                let shown = value
                    .as_str()
                    .map_or_else(|| py_repr(&value), str::to_string);
                out(&format!("{action}: {shown}{unit}\n"))?;
            }
            Step::Predicted { truth, successful } => return Ok((Some(truth), successful)),
            // The budgeted protocol: the game goes on.
            Step::Wrong { truth } => out(&format!("{truth}: wrong\n"))?,
            Step::ParseError => unreachable!("menu_choice only returns menu entries"),
        }
    }
}

/// The next reply of the person: `None` for an empty line; `quit` or the
/// end of input abandons the game (an error: nothing is recorded).
fn read_reply(
    lines: &mut crate::files::read::Lines<io::StdinLock>,
) -> Result<Option<String>, Error> {
    let reply = lines.next().transpose().map_err(|e| {
        if crate::files::read::is_refusal(&e) {
            Error::input(format!("standard input: {e}"))
        } else {
            e.into()
        }
    })?;
    let Some(line) = reply else {
        out("\n")?;
        return Err(Error::input(
            "game abandoned at end of input; nothing recorded",
        ));
    };
    match line.trim() {
        "" => Ok(None),
        quit if quit.eq_ignore_ascii_case("quit") => {
            Err(Error::input("game abandoned; nothing recorded"))
        }
        _ => Ok(Some(line)),
    }
}

/// The explore-then-predict protocol in the terminal: each round's
/// message, then the person's menu choice (a number or a name).
fn play_predict(
    args: &PlayArgs,
    domain: &Domain,
    task: std::sync::Arc<Task>,
    rules: crate::game::predict::PredictRules,
) -> Result<Trial, Error> {
    let mut game = crate::game::predict::PredictGame::new(task, domain, rules, &args.player)
        .map_err(|e| Error::input(e.to_string()))?;
    out(&format!("{}\n", game.system_prompt()))?;
    let stdin = io::stdin();
    let mut lines = crate::files::read::Lines::new(stdin.lock());
    let mut asked = None;
    while let Some(prompt) = game.prompt() {
        if asked.as_ref() != Some(&prompt) {
            out(&format!("\n{prompt}\n"))?;
        }
        out("> ")?;
        asked = Some(prompt);
        let Some(line) = read_reply(&mut lines)? else {
            continue;
        };
        let menu = game.menu();
        let Some(choice) = menu_choice(line.trim(), &menu, &[] as &[String]) else {
            out(&format!(
                "`{}` is not on the menu: give a number from 1 to {}, or a name\n",
                line.trim(),
                menu.len()
            ))?;
            continue;
        };
        game.respond_as(Some(choice), Some(&line), 0);
    }
    out(&format!("\n{}\n", game.summary()))?;
    Ok(game.trial())
}

/// The end of the game: the verdict, the player's actions and KUMO's
/// count of them, and what optimal play takes on the instance.
fn summary(
    instance: &InstanceLine,
    trial: &Trial,
    truth: Option<&str>,
    successful: bool,
    budget: Option<usize>,
) -> String {
    let turns = trial.generated_text.len();
    let verdict = Verdict::of(instance, truth, successful, turns, budget.is_some());
    let optimal = match (&instance.optimal, instance.steps()) {
        (Some(o), Some(steps)) => {
            let path = if o.golden_trajectory.is_empty() {
                "the book alone decides".to_string()
            } else {
                o.golden_trajectory.join(", ")
            };
            match steps {
                Steps::Exact(e) => format!(
                    "optimal play: {} action(s) on this instance ({path}), {e:.2} expected",
                    o.golden_trajectory.len()
                ),
                // A certified label (docs/output.md): the golden strategy
                // is not proven optimal, only within the interval.
                Steps::Certified { lower, upper } => format!(
                    "certified play (the exact search ran over budget): {} action(s) on this instance ({path}), at most {upper:.2} expected; optimal play takes at least {lower:.2}",
                    o.golden_trajectory.len()
                ),
            }
        }
        _ => "optimal play: not labelled for this instance".to_string(),
    };
    format!(
        "\n{verdict}\nyou took {} action(s) (KUMO counts {}); {optimal}\n",
        actions_taken(&trial.actions, instance),
        kumo_action_count(&trial.actions)
    )
}

/// Appends the finished trial to `--out`, or to the player's results file
/// under `results/` (a person's agent, `HumanAgent`); returns its path.
fn record(
    args: &PlayArgs,
    trial: Trial,
    seed: u64,
    agent: String,
    dataset: &str,
    setting: &str,
) -> Result<PathBuf, Error> {
    let mut line = ResultLine::new(seed, vec![trial]);
    line.model = Some(args.player.clone());
    line.agent = Some(agent.clone());
    line.domain = Some(dataset.to_string());
    line.setting = Some(setting.to_string());
    let (root, path) = match &args.out {
        Some(path) => (
            path.parent().map(Path::to_path_buf).unwrap_or_default(),
            path.clone(),
        ),
        None => {
            let root = PathBuf::from("results");
            let path =
                crate::results::result_path(&root, &args.player, &agent, dataset, setting, 1);
            (root, path)
        }
    };
    let (mut file, _) = crate::results::open_results(&root, &path)?;
    use std::io::Write;
    file.write_all(line.to_jsonl().as_bytes())?;
    file.sync_data()?;
    Ok(path)
}
