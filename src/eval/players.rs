//! Offline players (DESIGN.md "Evaluation and scoring"): replies computed
//! from the instance itself, so `eval --player`, the Python package's
//! players and Inspect's `kumo/<player>` models run the whole loop with no
//! server and no model.
//!
//! - `golden`: the optimal trajectory (the line's `optimal` labels, which
//!   are the optimal policy played against this instance's observations),
//!   then the golden answer (docs/output.md, "The golden player's answer
//!   rule"). Needs a labelled line.
//! - `random`: a random *related* action not taken yet (one with a state
//!   that rules out a truth still consistent with what was observed); the
//!   answer once one candidate is left (a random candidate when no related
//!   action is left).
//! - `guess`: a random truth of the instance at once (the no-interaction
//!   baseline: success 1/N_truth in expectation with one valid truth).
//!
//! A player is stateless: it reads what happened so far from the request
//! (the assistant turns in eval's request are the earlier replies, parsed
//! as eval parses them), so it answers any request of any trial, in any
//! order. Random choices draw from a `ChaCha8Rng` seeded from (the
//! caller's seed, the instance seed) on the stream of the reply's number:
//! the same seed gives the same trial at any concurrency.
//!
//! Token usage is counted, not estimated by a tokenizer: one token per
//! whitespace-separated word ([`word_tokens`]), so callers that need usage
//! (Inspect) never download a tokenizer.

use std::str::FromStr;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use crate::domain::Domain;
use crate::game::InstanceLine;
use crate::render::LineMismatch;
use crate::render::protocol::{answer_tag, parse_answer};

/// An offline player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Player {
    Golden,
    Random,
    Guess,
}

/// The players' names, as `--player` and the Python package take them.
pub const PLAYER_NAMES: [&str; 3] = ["golden", "random", "guess"];

impl FromStr for Player {
    type Err = String;

    fn from_str(name: &str) -> Result<Player, String> {
        match name {
            "golden" => Ok(Player::Golden),
            "random" => Ok(Player::Random),
            "guess" => Ok(Player::Guess),
            _ => Err(format!(
                "no offline player `{name}`; use one of {}",
                PLAYER_NAMES.join(", ")
            )),
        }
    }
}

/// Why a player cannot reply.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlayerError {
    /// The instance line does not fit its domain.
    #[error(transparent)]
    Mismatch(#[from] LineMismatch),
    /// The golden player's instance has no golden answer.
    #[error(
        "the golden player needs labelled instances: seed {seed} has no `optimal.golden_answer` \
         (generate with labels, or run `kumo-gen label`)"
    )]
    Unlabelled { seed: u64 },
    /// No action or truth to choose from.
    #[error("nothing to choose from")]
    NoChoice,
    /// The instance cannot be played under the explore-then-predict
    /// protocol's rules.
    #[error(transparent)]
    Predict(#[from] crate::game::predict::PredictError),
}

/// An instance file an offline player cannot play (`file`: the
/// dataset's `<domain>/<setting>.jsonl`).
#[derive(Debug, thiserror::Error)]
#[error("{file}: {source}")]
pub struct UnplayableFile {
    pub file: String,
    #[source]
    pub source: PlayerError,
}

/// A reply and its token counts ([`word_tokens`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerReply {
    pub text: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl PlayerReply {
    /// An offline player's reply naming `name` in the answer tag, counted
    /// against the request's `messages`.
    pub fn naming(name: &str, messages: &[Value]) -> PlayerReply {
        let text = answer_tag(name);
        let input_tokens = messages
            .iter()
            .map(|m| word_tokens(m["content"].as_str().unwrap_or_default()))
            .sum();
        PlayerReply {
            output_tokens: word_tokens(&text),
            input_tokens,
            text,
        }
    }
}

impl Player {
    pub fn name(self) -> &'static str {
        match self {
            Player::Golden => "golden",
            Player::Random => "random",
            Player::Guess => "guess",
        }
    }

    /// Whether the player can play `instance`: `golden` needs its labels.
    pub fn check(self, instance: &InstanceLine) -> Result<(), PlayerError> {
        match self {
            Player::Golden => golden_answer(instance).map(|_| ()),
            Player::Random | Player::Guess => Ok(()),
        }
    }

    /// The reply to `messages` (eval's request for `instance` of `domain`).
    pub fn reply(
        self,
        domain: &Domain,
        instance: &InstanceLine,
        messages: &[Value],
        seed: u64,
    ) -> Result<PlayerReply, PlayerError> {
        let earlier: Vec<Option<String>> = messages
            .iter()
            .filter(|m| m["role"] == "assistant")
            .map(|m| parse_answer(m["content"].as_str()))
            .collect();
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ instance.seed.rotate_left(32));
        rng.set_stream(earlier.len() as u64);
        let name = match self {
            Player::Golden => golden_move(instance, earlier.len())?,
            Player::Guess => pick(&instance.truths, &mut rng)?.clone(),
            Player::Random => random_move(domain, instance, &earlier, &mut rng)?,
        };
        Ok(PlayerReply::naming(&name, messages))
    }
}

/// Token usage as the offline players count it: whitespace-separated words.
pub fn word_tokens(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

fn pick<'a, T>(items: &'a [T], rng: &mut ChaCha8Rng) -> Result<&'a T, PlayerError> {
    if items.is_empty() {
        return Err(PlayerError::NoChoice);
    }
    Ok(&items[rng.random_range(0..items.len())])
}

fn golden_answer(instance: &InstanceLine) -> Result<&str, PlayerError> {
    let optimal = instance.optimal.as_ref();
    optimal
        .and_then(|o| o.golden_answer.as_deref())
        .ok_or(PlayerError::Unlabelled {
            seed: instance.seed,
        })
}

fn golden_move(instance: &InstanceLine, reply: usize) -> Result<String, PlayerError> {
    let answer = golden_answer(instance)?;
    let trajectory = instance
        .optimal
        .as_ref()
        .map(|o| o.golden_trajectory.as_slice())
        .unwrap_or_default();
    Ok(trajectory
        .get(reply)
        .map_or(answer, String::as_str)
        .to_string())
}

fn random_move(
    domain: &Domain,
    instance: &InstanceLine,
    earlier: &[Option<String>],
    rng: &mut ChaCha8Rng,
) -> Result<String, PlayerError> {
    let resolved = instance.resolve(domain)?;
    let taken: Vec<usize> = earlier
        .iter()
        .filter_map(|a| {
            let a = a.as_deref()?;
            instance.actions.iter().position(|x| x == a)
        })
        .collect();
    let mut left = resolved.truths.clone();
    for &pos in &taken {
        if let Some(state) = resolved.observed[pos] {
            let rules_out = &domain.actions[resolved.actions[pos]].states[state].rules_out;
            left.retain(|&t| !rules_out.contains(t));
        }
    }
    let name_of = |t: usize| domain.truths[t].clone();
    if left.len() == 1 {
        return Ok(name_of(left[0]));
    }
    let related: Vec<usize> = (0..resolved.actions.len())
        .filter(|pos| !taken.contains(pos))
        .filter(|&pos| {
            domain.actions[resolved.actions[pos]]
                .states
                .iter()
                .any(|s| left.iter().any(|&t| s.rules_out.contains(t)))
        })
        .collect();
    if related.is_empty() {
        let pool = if left.is_empty() {
            &resolved.truths
        } else {
            &left
        };
        return Ok(name_of(*pick(pool, rng)?));
    }
    Ok(instance.actions[*pick(&related, rng)?].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for name in PLAYER_NAMES {
            assert_eq!(name.parse::<Player>().unwrap().name(), name);
        }
        assert!("oracle".parse::<Player>().unwrap_err().contains("golden"));
    }
}
