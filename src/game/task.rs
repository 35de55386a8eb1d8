//! One instance to play ([`Task`]): its instance line, its system prompt
//! (the platform prompt with the knowledge book, [`super::protocol`]) and
//! the judge of its answers; the book of a line rendered from its domain
//! ([`render_book`]); and the rule of the budgeted protocol
//! ([`budget_rule`]). Every player (eval, play, the Python `Env`) plays a
//! `Task`.

use crate::domain::Domain;
use crate::render::{Renderer, TaskError};

use super::{InstanceLine, Judge};

/// One instance to play.
pub struct Task {
    pub instance: InstanceLine,
    /// The platform prompt with the book ([`super::protocol::system_prompt`]).
    pub system_prompt: String,
    pub judge: Judge,
}

/// The knowledge book of an instance line rendered from its domain: the
/// book the generator writes for it (`knowledge_book/<setting>/seed=<i>.txt`)
/// with the same templates. For datasets whose book files are missing.
pub fn render_book(
    renderer: &Renderer,
    domain: &Domain,
    instance: &InstanceLine,
) -> Result<String, TaskError> {
    let line = serde_json::json!({
        "truths": instance.truths,
        "actions": instance.actions,
        "observations": instance.observations,
        "seed": instance.seed,
        "valid_truth": instance.valid_truth,
    });
    let task = crate::game::task_from_json(domain, &line).map_err(|e| TaskError::Book {
        seed: instance.seed,
        domain: domain.name.clone(),
        source: Box::new(e),
    })?;
    Ok(renderer.book(&task.view(domain))?)
}

/// The rule of the budgeted protocol, appended to the system prompt.
pub fn budget_rule(budget: usize) -> String {
    format!(
        "You have {budget} turns. Each reply uses one turn. A wrong answer is told \"wrong\" and \
         the game goes on until you name the right answer or the turns run out."
    )
}
