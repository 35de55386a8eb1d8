//! `eval` under the explore-then-predict protocol
//! ([`crate::game::predict`]): one trial per [`PredictGame`], the replies
//! from the API or an offline player ([`predict_move`]).
//!
//! The offline players read only the game's public state (the instance's
//! candidates and probes, the outputs shown so far, the current test and
//! its attempts), never the valid truth:
//! - `golden`: under `--feedback each` the golden trajectory (the exact
//!   labels' optimal policy on this instance; its first `T` probes, then
//!   `stop`); under `--feedback end`, where no output comes back to adapt
//!   to, a fixed plan: each turn the untaken probe that splits the most
//!   pairs of candidates its earlier probes left together, `stop` once
//!   none splits any. Predictions: the Bayes prediction
//!   ([`bayes::ranked_outputs`]), then the next-ranked output per attempt.
//! - `random`: uniformly random untaken probes for all `T` turns, then the
//!   Bayes predictions (a random explorer with the best predictor).
//! - `guess`: `stop` at once, then a random untried listed output.

use std::sync::Arc;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::client::{self, CallError, Client};
use super::players::{Player, PlayerError, PlayerReply};
use super::{RunConfig, Suite};
use crate::domain::Domain;
use crate::game::predict::prompt::STOP;
use crate::game::predict::{Feedback, Phase, PredictGame, PredictRules, bayes};
use crate::game::{Task, Trial};

/// Plays one explore-then-predict trial of `task`; `seed` seeds an offline
/// player's choices.
pub fn play_trial(
    client: &mut Client,
    config: &RunConfig,
    suite: &Suite,
    task: &Arc<Task>,
    rules: PredictRules,
    seed: u64,
    retried: &mut u64,
) -> Result<Trial, CallError> {
    let model = &config.client.model;
    let mut game = PredictGame::new(Arc::clone(task), &suite.domain, rules, model)
        .map_err(|e| CallError::Fatal(e.to_string()))?;
    while let Some(messages) = game.request() {
        let reply = match config.player {
            None => client.complete(&messages)?,
            Some(player) => {
                let r = predict_reply(player, &suite.domain, &game, &messages, seed)
                    .map_err(|e| CallError::Fatal(e.to_string()))?;
                client::Reply {
                    text: Some(r.text),
                    tokens: r.input_tokens + r.output_tokens,
                    retried: 0,
                }
            }
        };
        *retried += u64::from(reply.retried);
        game.respond(reply.text.as_deref(), reply.tokens);
    }
    Ok(game.trial())
}

/// An offline player's reply to `messages` (the game's request).
pub fn predict_reply(
    player: Player,
    domain: &Domain,
    game: &PredictGame,
    messages: &[serde_json::Value],
    seed: u64,
) -> Result<PlayerReply, PlayerError> {
    let name = predict_move(player, domain, game, seed)?;
    Ok(PlayerReply::naming(&name, messages))
}

/// What an offline player names next: a probe or `stop` while exploring,
/// an output while predicting.
pub fn predict_move(
    player: Player,
    domain: &Domain,
    game: &PredictGame,
    seed: u64,
) -> Result<String, PlayerError> {
    let instance = &game.task().instance;
    let replies = game.trial().generated_text.len() as u64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ instance.seed.rotate_left(32));
    rng.set_stream(replies);
    match game.phase() {
        Phase::Explore { .. } => match player {
            Player::Guess => Ok(STOP.to_string()),
            Player::Random => {
                let taken: Vec<&str> = game.probes().collect();
                let left: Vec<&String> = instance
                    .actions
                    .iter()
                    .filter(|a| !taken.contains(&a.as_str()))
                    .collect();
                if left.is_empty() {
                    return Ok(STOP.to_string());
                }
                Ok(left[rng.random_range(0..left.len())].clone())
            }
            Player::Golden => golden_probe(domain, game),
        },
        Phase::Predict { test, .. } => {
            let input = &game.tests()[test];
            let tried = game.tried();
            let untried = |s: &usize| {
                !tried
                    .iter()
                    .any(|t| t.as_deref() == Some(input.outputs[*s].as_str()))
            };
            let state = match player {
                Player::Guess => {
                    let left: Vec<usize> = (0..input.outputs.len()).filter(untried).collect();
                    if left.is_empty() {
                        return Err(PlayerError::NoChoice);
                    }
                    left[rng.random_range(0..left.len())]
                }
                Player::Golden | Player::Random => {
                    let left = bayes::candidates(domain, game.truths(), game.shown());
                    bayes::ranked_outputs(domain, &left, input.action)
                        .into_iter()
                        .find(untried)
                        .ok_or(PlayerError::NoChoice)?
                }
            };
            Ok(input.outputs[state].clone())
        }
        Phase::Over => Err(PlayerError::NoChoice),
    }
}

/// The golden explorer's next probe (see the module doc).
fn golden_probe(domain: &Domain, game: &PredictGame) -> Result<String, PlayerError> {
    let instance = &game.task().instance;
    let taken: Vec<&str> = game.probes().collect();
    if game.rules().feedback == Feedback::Each {
        let optimal = instance.optimal.as_ref();
        let trajectory = optimal
            .filter(|o| o.golden_answer.is_some())
            .map(|o| &o.golden_trajectory)
            .ok_or(PlayerError::Unlabelled {
                seed: instance.seed,
            })?;
        return Ok(trajectory
            .get(taken.len())
            .cloned()
            .unwrap_or_else(|| STOP.to_string()));
    }
    // The fixed plan: the probe splitting the most pairs still together.
    let shows = |a: usize, t: usize| {
        domain.actions[a]
            .states
            .iter()
            .position(|s| !s.rules_out.contains(t))
    };
    let positions: Vec<usize> = taken
        .iter()
        .filter_map(|name| instance.actions.iter().position(|a| a == name))
        .collect();
    let (truths, actions) = (game.truths(), game.actions());
    let together = |i: usize, j: usize| {
        positions
            .iter()
            .all(|&p| shows(actions[p], truths[i]) == shows(actions[p], truths[j]))
    };
    let mut best: Option<(usize, usize)> = None;
    for (p, &a) in actions.iter().enumerate() {
        if positions.contains(&p) {
            continue;
        }
        let mut split = 0;
        for i in 0..truths.len() {
            for j in i + 1..truths.len() {
                split += usize::from(together(i, j) && shows(a, truths[i]) != shows(a, truths[j]));
            }
        }
        if split > 0 && best.is_none_or(|(_, most)| split > most) {
            best = Some((p, split));
        }
    }
    Ok(best.map_or_else(|| STOP.to_string(), |(p, _)| instance.actions[p].clone()))
}
