//! `kumo-gen play`: a person plays one instance in the terminal (or a
//! script through a pipe), and the trajectory is appended in KUMO's format.
//!
//! Input per round: a menu number, an action or truth name (any case), or
//! `<ANSWER> name </ANSWER>`; `quit` or end of input abandons the game
//! (nothing is recorded). Unlike a model, a person who mistypes is asked
//! again instead of ending the trial with a parse error.

use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use super::eval::dataset_domain;
use super::{EXIT_INPUT, Globals, out};
use crate::eval::protocol::{parse_answer, py_repr};
use crate::game::{Episode, Judge, ResultLine, Step, parse_instances, rules_text};

#[derive(clap::Args, Debug)]
pub struct PlayArgs {
    /// Instance file (`<domain>/truth_num=T+action_num=A+valid_truth_num=V.jsonl`).
    #[arg(long, value_name = "FILE")]
    instances: PathBuf,
    /// Line of the instance in the file, counting from 1.
    #[arg(long, value_name = "K", default_value_t = 1)]
    line: usize,
    /// Domain (name or path) the instance comes from; by default the
    /// dataset's manifest.json or the directory name.
    #[arg(long, value_name = "NAME|PATH")]
    domain: Option<String>,
    /// Player name, used as the model in the results.
    #[arg(long, value_name = "NAME", default_value = "human")]
    player: String,
    /// Result file to append to (default:
    /// `results/<player>/HumanAgent/<domain>/<setting>/eval_times=1.jsonl`).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

fn name_of(p: Option<&Path>) -> String {
    p.and_then(Path::file_name)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub fn run(globals: &Globals, args: &PlayArgs) -> io::Result<i32> {
    let fail = |m: String| {
        eprintln!("error: {m}");
        Ok(EXIT_INPUT)
    };
    let text = match std::fs::read_to_string(&args.instances) {
        Ok(t) => t,
        Err(e) => return fail(format!("cannot read `{}`: {e}", args.instances.display())),
    };
    let instances = match parse_instances(&text) {
        Ok(i) => i,
        Err(e) => return fail(format!("{}:{e}", args.instances.display())),
    };
    if args.line == 0 || args.line > instances.len() {
        return fail(format!(
            "--line {}: `{}` has instances on lines 1 to {}",
            args.line,
            args.instances.display(),
            instances.len()
        ));
    }
    let index = args.line - 1;
    let instance = &instances[index];
    let dir = args.instances.parent().unwrap_or(Path::new("."));
    let domain = match dataset_domain(&globals.registry, args.domain.as_deref(), dir) {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    let judge = match Judge::new(&domain, instance) {
        Ok(j) => j,
        Err(e) => return fail(e),
    };
    let setting = args
        .instances
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let book_path = dir
        .join("knowledge_book")
        .join(&setting)
        .join(format!("seed={index}.txt"));
    let book = std::fs::read_to_string(&book_path).unwrap_or_else(|_| {
        format!(
            "(no knowledge book at `{}`; the rules of this instance:)\n\n{}",
            book_path.display(),
            rules_text(&domain, instance)
        )
    });

    let n_actions = instance.actions.len();
    let mut menu = String::new();
    menu.push_str(&format!("{}:\n", capital(&domain.action_plural)));
    for (i, a) in instance.actions.iter().enumerate() {
        menu.push_str(&format!("  {:>2}. {a}\n", i + 1));
    }
    menu.push_str(&format!("Possible {}:\n", domain.truth_plural));
    for (i, t) in instance.truths.iter().enumerate() {
        menu.push_str(&format!("  {:>2}. {t}\n", n_actions + i + 1));
    }
    out(&format!(
        "{}: {}.\nPick one {} per round; name the {} when you are sure, in as few rounds as you can.\n\n{book}\n\n{menu}",
        domain.title, domain.goal, domain.action_noun, domain.truth_noun
    ))?;

    let mut episode = Episode::new(instance, &judge);
    let stdin = io::stdin();
    let mut lines = stdin.lock().lines();
    let (truth, successful) = loop {
        out(&format!("round {}> ", episode.replies() + 1))?;
        let Some(line) = lines.next().transpose()? else {
            out("\n")?;
            eprintln!("game abandoned at end of input; nothing recorded");
            return Ok(EXIT_INPUT);
        };
        let input = line.trim();
        if input.is_empty() {
            continue;
        }
        if input.eq_ignore_ascii_case("quit") {
            eprintln!("game abandoned; nothing recorded");
            return Ok(EXIT_INPUT);
        }
        let choice = resolve(input, &instance.actions, &instance.truths);
        let Some(choice) = choice else {
            out(&format!(
                "`{input}` is not on the menu: give a number from 1 to {}, or a name\n",
                n_actions + instance.truths.len()
            ))?;
            continue;
        };
        match episode.respond(Some(&choice), Some(line.clone()), 0) {
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
            Step::Predicted { truth, successful } => break (truth, successful),
            Step::ParseError => unreachable!("resolve only returns menu entries"),
        }
    };
    let trial = episode.into_trial();
    let taken = trial.actions.len() - 2;
    let verdict = if successful {
        format!("correct: no observation rules out {truth}.")
    } else {
        format!(
            "wrong: the observations rule out {truth}; the answer was {}.",
            instance.valid_truths().join(" or ")
        )
    };
    let optimal = match (&instance.optimal, instance.expected_steps()) {
        (Some(o), Some(e)) => format!(
            "optimal play: {} action(s) on this instance ({}), {e:.2} expected",
            o.golden_actions.len(),
            if o.golden_actions.is_empty() {
                "the book alone decides".to_string()
            } else {
                o.golden_actions.join(", ")
            }
        ),
        _ => "optimal play: not labelled in this file".to_string(),
    };
    out(&format!(
        "\n{verdict}\nyou took {taken} action(s) (KUMO counts {}); {optimal}\n",
        taken + 2
    ))?;

    let dataset = Some(name_of(Some(dir))).filter(|n| !n.is_empty());
    let dataset = dataset.unwrap_or_else(|| domain.name.clone());
    let mut line = ResultLine::new(instance.seed, vec![trial]);
    line.model = Some(args.player.clone());
    line.agent = Some("HumanAgent".into());
    line.domain = Some(dataset.clone());
    line.setting = Some(setting.clone());
    let path = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("results")
            .join(&args.player)
            .join("HumanAgent")
            .join(&dataset)
            .join(&setting)
            .join("eval_times=1.jsonl")
    });
    let (mut file, _) = crate::eval::open_results(&path)?;
    use std::io::Write;
    file.write_all(line.to_jsonl().as_bytes())?;
    file.sync_data()?;
    out(&format!("trajectory appended to {}\n", path.display()))?;
    Ok(0)
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// A menu number, a name (any case), or `<ANSWER> name </ANSWER>`.
fn resolve(input: &str, actions: &[String], truths: &[String]) -> Option<String> {
    if let Ok(n) = input.parse::<usize>() {
        return actions.iter().chain(truths).nth(n.checked_sub(1)?).cloned();
    }
    let name = parse_answer(Some(input)).unwrap_or_default();
    actions
        .iter()
        .chain(truths)
        .find(|x| x.eq_ignore_ascii_case(&name))
        .cloned()
}
