//! One instance to play ([`Task`]): its instance line, its system prompt
//! (the platform prompt with the knowledge book, [`super::protocol`]) and
//! the judge of its answers; the book of a line rendered from its domain
//! ([`render_book`]); and the rule of the budgeted protocol
//! ([`budget_rule`]) and the one check of a turn budget and a reply
//! limit ([`check_budget`], [`MAX_REPLIES`]). Every player (eval, play, the Python `Env`) plays a
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

/// Most replies one trial may take: the bound of eval's and play's
/// `--max-steps` and `--budget`, serve's `--max-steps`, and a served
/// `budget`. A trial keeps each reply (at most
/// [`crate::render::protocol::MAX_KEPT_REPLY`] bytes) until it ends, so this bounds its
/// memory too.
pub const MAX_REPLIES: usize = 10_000;

/// Why a turn budget cannot be played ([`check_budget`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    #[error("a budget of 0 turns plays nothing")]
    Zero,
    #[error("a budget of {budget} turns is over the {max_replies} replies a trial may take here")]
    OverReplies { budget: usize, max_replies: usize },
    #[error(
        "a budget of {budget} turns is at least the {truths} truths of the instance: naming every truth in turn would win within the budget without one action"
    )]
    AtLeastTruths { budget: usize, truths: usize },
}

/// The largest budget [`check_budget`] accepts for an instance of
/// `truths` truths and a reply limit of `max_replies` (0: none does, an
/// instance of one truth).
pub fn largest_budget(truths: usize, max_replies: usize) -> usize {
    truths.saturating_sub(1).min(max_replies)
}

/// The one rule of the budgeted protocol's budget, for every player
/// (eval, play, serve, the Python `Session`): at least 1 turn, at most
/// `max_replies` (the player's reply limit: serve's `--max-steps`, else
/// [`MAX_REPLIES`]) and fewer than the instance's `truths` (with a turn
/// per truth, naming every truth in turn wins without one action, so the
/// budget would measure nothing).
pub fn check_budget(budget: usize, truths: usize, max_replies: usize) -> Result<(), BudgetError> {
    if budget == 0 {
        return Err(BudgetError::Zero);
    }
    if budget >= truths {
        return Err(BudgetError::AtLeastTruths { budget, truths });
    }
    if budget > max_replies {
        return Err(BudgetError::OverReplies {
            budget,
            max_replies,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_below_the_truths_and_within_the_reply_limit() {
        assert_eq!(check_budget(3, 4, 50), Ok(()));
        assert_eq!(check_budget(0, 4, 50), Err(BudgetError::Zero));
        assert_eq!(
            check_budget(4, 4, 50),
            Err(BudgetError::AtLeastTruths {
                budget: 4,
                truths: 4
            })
        );
        assert!(matches!(
            check_budget(51, 100, 50),
            Err(BudgetError::OverReplies { .. })
        ));
        assert_eq!(check_budget(largest_budget(100, 50), 100, 50), Ok(()));
        assert_eq!(check_budget(largest_budget(4, 50), 4, 50), Ok(()));
        assert_eq!(largest_budget(2_000_000, MAX_REPLIES), MAX_REPLIES);
        assert_eq!(largest_budget(1, 50), 0);
    }
}
