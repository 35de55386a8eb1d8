//! A served episode under the explore-then-predict protocol (`reset`'s
//! `protocol`; docs/serve.md "Explore, then predict"): the rules, prompts
//! and record are [`crate::game::predict`]'s ([`PredictGame`], the game
//! eval and `play` drive); here only what the server shows of it.
//!
//! Before the end a client sees what eval's model sees (the system prompt
//! with the rules, candidates and probes; each round's user message) and
//! what the last reply led to ([`shown`]): a probe's output only when the
//! rules show it then (never under `feedback: "end"` before the last
//! exploration turn), a prediction's verdict only with more than one
//! attempt (as the prompt tells it). The valid truth and the tests' right
//! outputs are only in the final observation ([`final_fields`]). The
//! reward is 0 on every step but the last, then the accuracy over the
//! tests (the `predict` record's).

use serde_json::{Map, Value, json};

use crate::game::predict::{Phase, PredictGame, PredictRules, PredictStep};

/// The reward of the step just taken: the accuracy over the tests once
/// the episode is over, else 0.
pub fn reward(game: &PredictGame) -> f64 {
    game.trial().predict.map_or(0.0, |record| record.accuracy)
}

/// What the last reply led to, as the player may see it now.
pub fn shown(game: &PredictGame, step: &PredictStep) -> Value {
    match step {
        PredictStep::Probe { action, shown } => match shown {
            Some(value) => json!({"kind": "probe", "action": action, "observation": value}),
            None => json!({"kind": "probe", "action": action}),
        },
        PredictStep::Stopped => json!({"kind": "stop"}),
        PredictStep::Unusable => json!({"kind": "parse_error"}),
        PredictStep::Predicted {
            test,
            answer,
            right,
            ..
        } => {
            let mut shown = json!({"kind": "prediction", "test": test, "predicted_output": answer});
            // With one attempt no verdict is shown (the rules').
            if game.rules().attempts > 1 {
                shown["right"] = json!(right);
            }
            shown
        }
    }
}

/// Where the episode is: `{"phase": "explore", "turn"}` or `{"phase":
/// "predict", "test", "attempt", "input"}` (the test input's name is in
/// the prompt too), with the names a reply may give (`menu`).
pub fn phase_fields(game: &PredictGame, o: &mut Map<String, Value>) {
    match game.phase() {
        Phase::Explore { turn } => {
            o.insert("phase".into(), json!("explore"));
            o.insert("exploration_turn".into(), json!(turn));
        }
        Phase::Predict { test, attempt } => {
            o.insert("phase".into(), json!("predict"));
            o.insert("test".into(), json!(test));
            o.insert("attempt".into(), json!(attempt));
            o.insert("input".into(), json!(game.tests()[test].name));
        }
        Phase::Over => {
            o.insert("phase".into(), json!("over"));
        }
    }
    if !game.is_finished() {
        o.insert("menu".into(), json!(game.menu()));
    }
}

/// The final observation's outcome: `successful` (every test right, as
/// eval's record), `parse_error`, the valid truth (`answer`) and the
/// `predict` record (the rules, per-test outcomes with the right outputs,
/// `accuracy`).
pub fn final_fields(game: &PredictGame, o: &mut Map<String, Value>) {
    let trial = game.trial();
    o.insert("successful".into(), json!(trial.successful));
    o.insert("parse_error".into(), json!(trial.parse_error));
    o.insert("answer".into(), json!(game.task().instance.valid_truths()));
    o.insert("predict".into(), json!(trial.predict));
}

/// `state`'s `protocol`: the rules.
pub fn rules_json(rules: &PredictRules) -> Value {
    json!({
        "turns": rules.turns,
        "tests": rules.tests,
        "attempts": rules.attempts,
        "feedback": rules.feedback.name(),
    })
}
