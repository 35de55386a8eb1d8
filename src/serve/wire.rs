//! The OpenEnv contract as openenv-core's client speaks it (checked
//! against the openenv-core 0.3.0 wheel): the messages of a WebSocket
//! session, the typed errors, the arguments of `reset` and `step`, and the
//! `/schema` and `/metadata` documents. No game here: these are shapes.
//!
//! - Client to server: `{"type": "reset", "data": {...}}`, `{"type":
//!   "step", "data": {"message": "..."}}`, `{"type": "state"}`, `{"type":
//!   "close"}`.
//! - Server to client: `{"type": "observation", "data": {"observation",
//!   "reward", "done"}}`, `{"type": "state", "data": {...}}`, `{"type":
//!   "error", "data": {"message", "code"}}` with OpenEnv's codes
//!   ([`Code`]).
//! - `reset`'s arguments (all optional): `env`, `split`, `index`, `seed`,
//!   `task_id` (which line: [`super::catalog::Catalog::pick`]),
//!   `episode_id` (the client's name of the episode), `model` (the results
//!   folder, and the system message's role as in eval), `budget` (the
//!   budgeted protocol; below the line's truths and at most `--max-steps`,
//!   as eval's), `messages` (observations carry eval's whole request),
//!   `reward` (`"outcome"`, the default, or `"dense"`: every
//!   step earns the dense reward, docs/analytics.md), `protocol` (the
//!   explore-then-predict protocol, `{"turns": T, "tests": K, "attempts":
//!   s, "feedback": "each"|"end"}`, each count 1 to
//!   [`crate::game::predict::MAX_PREDICT`], `tests` 5, `attempts` 1 and
//!   `feedback` `each` by default, as eval's flags; not with `budget` or
//!   dense rewards). Others are ignored, as OpenEnv ignores arguments
//!   `reset` does not take.

use serde_json::{Map, Value, json};

use super::catalog::Selection;
use super::episode::Rewards;
use crate::game::predict::{Feedback, MAX_PREDICT, PredictRules};

/// OpenEnv's error codes (`WSErrorCode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    InvalidJson,
    UnknownType,
    ValidationError,
    ExecutionError,
    CapacityReached,
    SessionError,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidJson => "INVALID_JSON",
            Code::UnknownType => "UNKNOWN_TYPE",
            Code::ValidationError => "VALIDATION_ERROR",
            Code::ExecutionError => "EXECUTION_ERROR",
            Code::CapacityReached => "CAPACITY_REACHED",
            Code::SessionError => "SESSION_ERROR",
        }
    }
}

/// A typed error for a client.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub code: Code,
    pub message: String,
}

/// A `reset` that names no line: the client's request, in its words.
impl From<super::catalog::PickError> for Refusal {
    fn from(e: super::catalog::PickError) -> Refusal {
        Refusal::invalid(e.to_string())
    }
}

impl Refusal {
    pub fn new(code: Code, message: impl Into<String>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Refusal {
        Refusal::new(Code::ValidationError, message)
    }

    /// The WebSocket message.
    pub fn to_ws(&self) -> Value {
        json!({"type": "error", "data": {"message": self.message, "code": self.code.as_str()}})
    }
}

/// A client's WebSocket message.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    Reset(ResetArgs),
    Step(StepArgs),
    State,
    Close,
}

/// Reads one WebSocket text frame.
pub fn parse_message(text: &str) -> Result<Message, Refusal> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Refusal::new(Code::InvalidJson, format!("Invalid JSON: {e}")))?;
    let Value::Object(mut message) = value else {
        return Err(Refusal::invalid(
            "a message is a JSON object with a `type`: reset, step, state or close",
        ));
    };
    let kind = match message.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(_) => return Err(Refusal::invalid("`type` is a string")),
        None => String::new(),
    };
    let data = message.remove("data");
    match kind.as_str() {
        "reset" => Ok(Message::Reset(ResetArgs::from_data(data.as_ref())?)),
        "step" => Ok(Message::Step(StepArgs::from_action(data.as_ref())?)),
        "state" => Ok(Message::State),
        "close" => Ok(Message::Close),
        other => Err(Refusal::new(
            Code::UnknownType,
            format!("Unknown message type: {other}"),
        )),
    }
}

/// The arguments of `reset`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResetArgs {
    pub selection: Selection,
    pub episode_id: Option<String>,
    pub model: Option<String>,
    pub budget: Option<usize>,
    pub messages: bool,
    /// `reward`: the 0/1 outcome (default) or dense per-turn rewards.
    pub rewards: Rewards,
    /// `protocol`: the explore-then-predict rules instead of KUMO's.
    pub protocol: Option<PredictRules>,
    /// The page's: the participant's name (a person plays).
    pub participant: Option<String>,
    /// The page's: the first line of the split no person has played.
    pub next_unplayed: bool,
}

/// Longest name a client may give (an episode id, a model, a participant).
const NAME_LEN: usize = 255;

impl ResetArgs {
    /// Reads `reset`'s data (absent or `null`: no arguments).
    pub fn from_data(data: Option<&Value>) -> Result<ResetArgs, Refusal> {
        let empty = Map::new();
        let data = match data {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(map)) => map,
            Some(_) => return Err(Refusal::invalid("reset's `data` is a JSON object")),
        };
        let text = |key: &str| -> Result<Option<String>, Refusal> {
            match data.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if s.chars().count() <= NAME_LEN => Ok(Some(s.clone())),
                Some(Value::String(_)) => Err(Refusal::invalid(format!(
                    "`{key}` is longer than {NAME_LEN} characters"
                ))),
                Some(_) => Err(Refusal::invalid(format!("`{key}` is a string"))),
            }
        };
        let number = |key: &str| -> Result<Option<u64>, Refusal> {
            match data.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v.as_u64().map(Some).ok_or_else(|| {
                    Refusal::invalid(format!("`{key}` is a whole number, 0 or more"))
                }),
            }
        };
        let flag = |key: &str| -> Result<bool, Refusal> {
            match data.get(key) {
                None | Some(Value::Null) => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(_) => Err(Refusal::invalid(format!("`{key}` is true or false"))),
            }
        };
        // The line's own rule (below its truths, at most --max-steps) is
        // checked when the line is known ([`crate::game::check_budget`]).
        let budget = match number("budget")? {
            None => None,
            Some(b) if (1..=crate::game::MAX_REPLIES as u64).contains(&b) => Some(b as usize),
            Some(_) => {
                return Err(Refusal::invalid(format!(
                    "`budget` is 1 to {} turns, at most the server's --max-steps and below the line's truths",
                    crate::game::MAX_REPLIES
                )));
            }
        };
        let rewards = match text("reward")?.as_deref() {
            None | Some("outcome") => Rewards::Outcome,
            Some("dense") => Rewards::Dense,
            Some(other) => {
                return Err(Refusal::invalid(format!(
                    "`reward` is \"outcome\" (1 for a success at the end, the default) or \"dense\" (every turn's dense reward), not `{other}`"
                )));
            }
        };
        let protocol = protocol(data.get("protocol"))?;
        if protocol.is_some() && budget.is_some() {
            return Err(Refusal::invalid(
                "`protocol` and `budget` are two protocols: give one of them",
            ));
        }
        if protocol.is_some() && rewards == Rewards::Dense {
            return Err(Refusal::invalid(
                "`reward: \"dense\"` is not defined under `protocol` (its reward is the accuracy over the tests, at the end): drop `reward` or `protocol`",
            ));
        }
        let participant = text("participant")?;
        if participant.as_deref().is_some_and(|p| p.trim().is_empty()) {
            return Err(Refusal::invalid("`participant` is a name: give one"));
        }
        Ok(ResetArgs {
            selection: Selection {
                env: text("env")?,
                split: text("split")?,
                index: number("index")?,
                seed: number("seed")?,
                task_id: text("task_id")?,
            },
            episode_id: text("episode_id")?,
            model: text("model")?.filter(|m| !m.is_empty()),
            budget,
            messages: flag("messages")?,
            rewards,
            protocol,
            participant: participant.map(|p| p.trim().to_string()),
            next_unplayed: flag("next_unplayed")?,
        })
    }
}

/// `reset`'s `protocol` (absent or `null`: KUMO's protocol).
fn protocol(value: Option<&Value>) -> Result<Option<PredictRules>, Refusal> {
    let fields = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(fields)) => fields,
        Some(_) => {
            return Err(Refusal::invalid(
                "`protocol` is a JSON object: {\"turns\": T, \"tests\": K, \"attempts\": s, \"feedback\": \"each\" or \"end\"}",
            ));
        }
    };
    if let Some(key) = fields
        .keys()
        .find(|k| !matches!(k.as_str(), "turns" | "tests" | "attempts" | "feedback"))
    {
        return Err(Refusal::invalid(format!(
            "`protocol` has no field `{key}`: its fields are `turns`, `tests`, `attempts` and `feedback`"
        )));
    }
    let count = |key: &str, default: Option<usize>| -> Result<usize, Refusal> {
        let out_of_range = || {
            Refusal::invalid(format!(
                "`protocol.{key}` is a whole number from 1 to {MAX_PREDICT}"
            ))
        };
        match fields.get(key) {
            None | Some(Value::Null) => default.ok_or_else(|| {
                Refusal::invalid(format!(
                    "`protocol` needs `{key}`: the exploration turns at most, 1 to {MAX_PREDICT}"
                ))
            }),
            Some(v) => match v.as_u64() {
                Some(n) if (1..=MAX_PREDICT as u64).contains(&n) => Ok(n as usize),
                _ => Err(out_of_range()),
            },
        }
    };
    let feedback = match fields.get("feedback") {
        None | Some(Value::Null) => Feedback::Each,
        Some(Value::String(f)) => f
            .parse()
            .map_err(|e| Refusal::invalid(format!("`protocol.feedback`: {e}")))?,
        Some(_) => {
            return Err(Refusal::invalid(
                "`protocol.feedback` is \"each\" or \"end\"",
            ));
        }
    };
    Ok(Some(PredictRules {
        turns: count("turns", None)?,
        tests: count("tests", Some(5))?,
        attempts: count("attempts", Some(1))?,
        feedback,
    }))
}

/// The action of `step`: the model's reply (`message`), and optionally
/// what it cost (`tokens`, recorded as eval records them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepArgs {
    pub message: String,
    pub tokens: u64,
}

impl StepArgs {
    pub fn from_action(action: Option<&Value>) -> Result<StepArgs, Refusal> {
        let Some(Value::Object(action)) = action else {
            return Err(Refusal::invalid(
                "step's action is a JSON object: {\"message\": \"<the model's reply>\"}",
            ));
        };
        if let Some(key) = action
            .keys()
            .find(|k| !matches!(k.as_str(), "message" | "tokens" | "metadata"))
        {
            return Err(Refusal::invalid(format!(
                "the action has no field `{key}`: its fields are `message` (the reply) and `tokens`"
            )));
        }
        let message = match action.get("message") {
            Some(Value::String(m)) => m.clone(),
            Some(_) => return Err(Refusal::invalid("`message` is a string")),
            None => {
                return Err(Refusal::invalid(
                    "the action needs `message`: the model's reply",
                ));
            }
        };
        let tokens = match action.get("tokens") {
            None | Some(Value::Null) => 0,
            Some(v) => v
                .as_u64()
                .ok_or_else(|| Refusal::invalid("`tokens` is a whole number, 0 or more"))?,
        };
        Ok(StepArgs { message, tokens })
    }
}

/// `GET /schema`: the action, observation and state, as JSON Schema.
pub fn schema() -> Value {
    json!({
        "action": {
            "title": "KumoAction",
            "description": "The model's reply, read as `kumo-gen eval` reads it: the name after the last <ANSWER>, e.g. `<ANSWER> Chest X-Ray </ANSWER>`.",
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "The model's reply."},
                "tokens": {"type": "integer", "minimum": 0, "description": "Tokens the reply cost (recorded in the results)."}
            },
            "required": ["message"],
            "additionalProperties": false
        },
        "observation": {
            "title": "KumoObservation",
            "type": "object",
            "properties": {
                "system_prompt": {"type": "string", "description": "eval's system message: the platform prompt with the knowledge book (reset's observation only)."},
                "prompt": {"type": ["string", "null"], "description": "eval's user message of this turn (null once done)."},
                "task_id": {"type": "string"},
                "episode_id": {"type": "string"},
                "turn": {"type": "integer", "description": "Replies so far."},
                "last": {"type": "object", "description": "What the last reply led to."},
                "messages": {"type": "array", "description": "eval's whole request (reset with messages=true)."},
                "successful": {"type": "boolean", "description": "Final only."},
                "parse_error": {"type": "boolean", "description": "Final only."},
                "answer": {"type": "array", "items": {"type": "string"}, "description": "Final only: the valid truths."},
                "action_count": {"type": "integer", "description": "Final only: KUMO's action count."},
                "expected_steps": {"type": "number", "description": "Final only: optimal play's expected actions over the line's truths (labelled lines); an upper bound when `exact` is false."},
                "exact": {"type": "boolean", "description": "Final only, certified labels: false (`expected_steps` is then an upper bound and `golden_actions` the certified strategy's); absent when the label is exact."},
                "lower_bound": {"type": "number", "description": "Final only, certified labels: the proven lower bound of optimal play's expected actions."},
                "golden_actions": {"type": "integer", "description": "Final only: the actions optimal play takes on this very game (labelled lines; for a certified label, the certified strategy's)."},
                "phase": {"type": "string", "enum": ["explore", "predict", "over"], "description": "Under reset's `protocol` only: where the episode is (with `exploration_turn`, or `test`, `attempt` and `input`)."},
                "menu": {"type": "array", "items": {"type": "string"}, "description": "Under reset's `protocol` only: the names a reply may give now."},
                "predict": {"type": "object", "description": "Final only, under reset's `protocol`: eval's `predict` record (the rules, each test's outcome, `accuracy`)."}
            },
            "required": ["prompt", "task_id", "episode_id", "turn"]
        },
        "state": {
            "title": "KumoState",
            "type": "object",
            "properties": {
                "episode_id": {"type": "string"},
                "step_count": {"type": "integer", "minimum": 0},
                "task_id": {"type": "string"},
                "env": {"type": "string"},
                "split": {"type": "string"},
                "index": {"type": "integer"},
                "seed": {"type": "integer"},
                "player": {"type": "string"},
                "budget": {"type": ["integer", "null"]},
                "reward": {"type": "string", "enum": ["outcome", "dense"], "description": "reset's `reward`: the 0/1 outcome at the end, or every turn's dense reward."},
                "protocol": {"type": ["object", "null"], "description": "reset's `protocol`: the explore-then-predict rules (`turns`, `tests`, `attempts`, `feedback`), null under KUMO's."},
                "done": {"type": "boolean"}
            }
        }
    })
}

/// `GET /metadata`.
pub fn metadata() -> Value {
    json!({
        "name": "kumo-gen",
        "description": "KUMO-style interactive reasoning games: read the knowledge book, choose actions, observe outcomes, name the truth. Episodes are `kumo-gen eval`'s, line for line.",
        "version": env!("CARGO_PKG_VERSION"),
        "author": null,
        "documentation_url": null,
        "readme_content": include_str!("../../docs/serve.md"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_as_openenv_sends_them() {
        assert_eq!(parse_message(r#"{"type":"state"}"#), Ok(Message::State));
        assert_eq!(parse_message(r#"{"type":"close"}"#), Ok(Message::Close));
        let Ok(Message::Reset(r)) =
            parse_message(r#"{"type":"reset","data":{"split":"12x16","index":3,"seed":9}}"#)
        else {
            panic!("a reset")
        };
        assert_eq!(r.selection.split.as_deref(), Some("12x16"));
        assert_eq!((r.selection.index, r.selection.seed), (Some(3), Some(9)));
        assert_eq!(
            parse_message(r#"{"type":"step","data":{"message":"<ANSWER> A </ANSWER>"}}"#),
            Ok(Message::Step(StepArgs {
                message: "<ANSWER> A </ANSWER>".into(),
                tokens: 0
            }))
        );
    }

    #[test]
    fn bad_messages_get_openenv_codes() {
        let code = |s: &str| parse_message(s).unwrap_err().code;
        assert_eq!(code("{not json"), Code::InvalidJson);
        assert_eq!(code(r#"{"type":"dance"}"#), Code::UnknownType);
        assert_eq!(code(r#"{"data":{}}"#), Code::UnknownType);
        assert_eq!(code("[1,2]"), Code::ValidationError);
        assert_eq!(code(r#"{"type":"step","data":{}}"#), Code::ValidationError);
        assert_eq!(
            code(r#"{"type":"step","data":{"message":3}}"#),
            Code::ValidationError
        );
        assert_eq!(
            code(r#"{"type":"step","data":{"message":"a","x":1}}"#),
            Code::ValidationError
        );
        assert_eq!(
            code(r#"{"type":"reset","data":{"index":-1}}"#),
            Code::ValidationError
        );
        assert_eq!(
            code(r#"{"type":"reset","data":{"budget":0}}"#),
            Code::ValidationError
        );
        assert_eq!(
            code(r#"{"type":"reset","data":[1]}"#),
            Code::ValidationError
        );
        for bad in [
            r#"{"turns":0}"#,
            r#"{"turns":1001}"#,
            r#"{"turns":3,"tests":0}"#,
            r#"{"turns":3,"attempts":-1}"#,
            r#"{"turns":3,"feedback":"later"}"#,
            r#"{"tests":3}"#,
            r#"{"turns":3,"shots":2}"#,
            r#"[3]"#,
        ] {
            let reset = format!(r#"{{"type":"reset","data":{{"protocol":{bad}}}}}"#);
            assert_eq!(code(&reset), Code::ValidationError, "{bad}");
        }
        assert_eq!(
            code(r#"{"type":"reset","data":{"protocol":{"turns":3},"budget":2}}"#),
            Code::ValidationError
        );
        assert_eq!(
            code(r#"{"type":"reset","data":{"protocol":{"turns":3},"reward":"dense"}}"#),
            Code::ValidationError
        );
    }

    #[test]
    fn protocols_read_with_eval_defaults() {
        let Ok(Message::Reset(r)) = parse_message(
            r#"{"type":"reset","data":{"protocol":{"turns":4,"attempts":2,"feedback":"end"}}}"#,
        ) else {
            panic!("a reset")
        };
        assert_eq!(
            r.protocol,
            Some(PredictRules {
                turns: 4,
                tests: 5,
                attempts: 2,
                feedback: Feedback::End
            })
        );
    }
}
