//! The explore-then-predict protocol's messages (docs/black-boxes.md "The
//! explore-then-predict protocol"): the system prompt stating the rules,
//! the exploration instruction, the outputs revealed, each test's
//! question and the verdict of a wrong attempt.
//!
//! Every message is a function of public facts (the domain's goal and
//! nouns, the instance's candidate truths and actions, its knowledge book,
//! the rules, a test input's name and its listed outputs) and of what the
//! player was already shown; none names the valid truth or a test input's
//! output. Observations are printed as KUMO prints them
//! ([`crate::render::protocol::observation_message`]).

use serde_json::Value;

use super::{Feedback, PredictRules, TestInput};
use crate::domain::Domain;
use crate::python_repr::py_list;
use crate::render::protocol::observation_message;

/// The reply that ends exploration early.
pub const STOP: &str = "stop";

/// Where the knowledge book starts in the platform prompt (`prompt.j2`).
const BOOK_HEADING: &str = "Here is the knowledge book";

/// The system prompt: the box, the rules, the candidates and probes, and
/// the instance's knowledge book (the book section of `platform_prompt`,
/// the KUMO system prompt of the same instance, when it has one).
pub fn system_prompt(
    domain: &Domain,
    truths: &[String],
    actions: &[String],
    rules: &PredictRules,
    platform_prompt: &str,
) -> String {
    let PredictRules {
        turns,
        tests,
        attempts,
        feedback,
    } = *rules;
    let (truth, truths_word) = (&domain.truth_noun, &domain.truth_plural);
    let (action, actions_word) = (&domain.action_noun, &domain.action_plural);
    let shown = match feedback {
        Feedback::Each => format!("Each {action} shows its outcome at once."),
        Feedback::End => format!(
            "Outcomes are not shown as you go: the outcomes of all your {actions_word} are shown together after your last exploration turn, so choose your {actions_word} without them."
        ),
    };
    let attempts_rule = if attempts == 1 {
        "You have one attempt per test, and no verdict is shown.".to_string()
    } else {
        format!(
            "You have {attempts} attempts per test; a wrong prediction is told \"wrong\" and uses an attempt."
        )
    };
    let mut text = format!(
        "This game hides a black box: one {truth} from the candidates below, which one is not told. The box's rule family: {goal}.\n\n\
         How to play:\n\n\
         (1) Exploration: you have at most {turns} turns. Each turn, select one {action} from the list to observe the box's outcome for it. {shown} Reply `{STOP}` to end exploration early.\n\n\
         (2) Prediction: then you are given {tests} test {actions_word}, one at a time, none of them in the list (you never observed them). For each, predict the outcome the hidden {truth} gives, naming one of the outcomes listed with it. {attempts_rule} The right outcome of a test is never shown.\n\n\
         Your score is the share of tests you predict right.\n\n\
         Each round, end your response with `<ANSWER> name </ANSWER>`, where name is one {action} from the list or `{STOP}` while exploring, and one listed outcome while predicting, spelt exactly as listed.\n\n\
         Candidate {truths_word}: {}\n\n\
         {} you may explore: {}",
        truths.join(", "),
        crate::render::vocab::ucfirst(actions_word),
        actions.join(", "),
        goal = domain.goal,
    );
    if let Some(at) = platform_prompt.find(BOOK_HEADING) {
        text.push_str("\n\n");
        text.push_str(platform_prompt[at..].trim_end());
    }
    text
}

/// The exploration instruction of turn `turn` (1-based).
pub fn explore_instruction(actions: &[String], turn: usize, turns: usize) -> String {
    format!(
        "Exploration turn {turn} of {turns}. Select an `action_name` from the list: {} or reply `{STOP}` to end exploration. \n\
         Reason and end your response with the format '<ANSWER> ${{action_name}} </ANSWER>' or '<ANSWER> {STOP} </ANSWER>'.",
        py_list(actions)
    )
}

/// What an exploration reply is shown before the next turn: KUMO's
/// observation message under [`Feedback::Each`]; under [`Feedback::End`]
/// only that the probe was noted.
pub fn after_probe(feedback: Feedback, action: &str, value: &Value) -> String {
    match feedback {
        Feedback::Each => observation_message(action, value),
        Feedback::End => {
            format!("Noted: {action}. Its outcome is shown after your last exploration turn.")
        }
    }
}

/// The outputs revealed after the last exploration turn under
/// [`Feedback::End`]: one observation line per probe, in the order taken.
pub fn reveal(probes: &[(String, Value)]) -> String {
    if probes.is_empty() {
        return "Exploration is over. You observed nothing.".to_string();
    }
    let lines: Vec<String> = probes
        .iter()
        .map(|(action, value)| observation_message(action, value))
        .collect();
    format!(
        "Exploration is over. The outcomes of your {} probes:\n{}",
        probes.len(),
        lines.join("\n")
    )
}

/// The question of test `index` (0-based) of `tests`, attempt `attempt`
/// (1-based) of `attempts`.
pub fn test_question(
    test: &TestInput,
    index: usize,
    tests: usize,
    attempt: usize,
    attempts: usize,
) -> String {
    format!(
        "Test {} of {tests}, attempt {attempt} of {attempts}: predict the outcome of `{}` for the hidden box, naming one of: {}. \n\
         Reason and end your response with the format '<ANSWER> ${{outcome}} </ANSWER>'.",
        index + 1,
        test.name,
        py_list(&test.outputs)
    )
}

/// What a wrong attempt is told.
pub fn wrong(answer: Option<&str>) -> String {
    match answer {
        Some(a) => format!("Wrong: `{a}` is not the outcome."),
        None => "Wrong: that names none of the listed outcomes.".to_string(),
    }
}
