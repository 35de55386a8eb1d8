//! KUMO's VanillaAgent protocol, message for message
//! (linhaowei1/kumo `agents/vanilla_agent.py`, `llm/base_llm.py`,
//! `env/*_env.py` `get_system_prompt`), with our platform prompt.
//!
//! - The system prompt is the rendering stage's platform prompt
//!   (`templates/prompt.j2`) with the instance's knowledge book
//!   ([`system_prompt`]); it plays the part of KUMO's `get_system_prompt`
//!   (game description, initial state, guidebook) and is the system
//!   message of our SFT records.
//! - The per-round instruction and the observation message are KUMO's,
//!   verbatim ([`instruction`], [`observation_message`]), not the
//!   renderer's `turn.j2`/`observation.j2`: those reword the instruction
//!   and print only the observed value, while KUMO's print Python lists and
//!   an `{'action': ..., 'observation': ...}` dict. Keeping KUMO's text
//!   keeps our numbers comparable with KUMO's published ones; the answer
//!   format (`<ANSWER> ... </ANSWER>`) is the same in both.
//! - The conversation starts with the system prompt (as a `user` message for
//!   `o1-preview`, `o1-mini` and `gemma`/`claude` models).
//! - First request: the system prompt and one user message, the per-round
//!   instruction. The kept history instead records `"Begin the game."` there
//!   (KUMO copies the history before appending it), so later requests show
//!   `"Begin the game."`, the replies, and the observations.
//! - Each later request: the history, whose last user message
//!   `Observation from previous action: {...}` gets `"\n\n"` and the
//!   instruction appended (in the request only).
//! - Lists and observations are printed as Python prints them
//!   (`['a', 'b']`, `{'action': 'X', 'observation': 0.31}`).
//! - Parsing: the text after the last `<ANSWER>`, before the next
//!   `</ANSWER>`, stripped; a `${name}` inside is unwrapped. The answer
//!   counts only when it is exactly one of the instance's actions or truths.

use serde_json::{Value, json};

use crate::domain::Domain;
use crate::game::Instance;
use crate::render::{Renderer, TemplateError};

/// The answer in a reply, KUMO's way (`None` only for a missing reply).
pub fn parse_answer(text: Option<&str>) -> Option<String> {
    let text = text?;
    let after = text.rsplit("<ANSWER>").next().unwrap_or(text);
    let inner = after.split("</ANSWER>").next().unwrap_or(after);
    let mut answer = py_strip(inner).to_string();
    if answer.contains("${") {
        let tail = answer.rsplit("${").next().unwrap_or("").to_string();
        answer = tail.split('}').next().unwrap_or("").to_string();
    }
    Some(answer)
}

/// Python's `str.strip()`: Unicode whitespace plus the separators
/// U+001C..U+001F.
fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// Python's `repr` of a string.
pub fn py_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !py_printable(c) => {
                let v = c as u32;
                if v < 0x100 {
                    out.push_str(&format!("\\x{v:02x}"));
                } else if v < 0x10000 {
                    out.push_str(&format!("\\u{v:04x}"));
                } else {
                    out.push_str(&format!("\\U{v:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.isprintable` for the characters that occur in practice:
/// controls, separators other than the space, and common format characters
/// are not printable.
fn py_printable(c: char) -> bool {
    !(c.is_control()
        || matches!(c, '\u{a0}' | '\u{ad}' | '\u{1680}' | '\u{2000}'..='\u{200f}'
            | '\u{2028}'..='\u{202f}' | '\u{205f}'..='\u{2064}' | '\u{3000}' | '\u{feff}'))
}

/// Python's `repr` of a float (shortest round-trip digits; scientific below
/// 1e-4 and from 1e16 on).
pub fn py_float(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let sci = format!("{:e}", v.abs());
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("integer exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if v < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let body = if exp < 0 {
            format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        } else if exp + 1 >= n {
            format!("{}{}.0", digits, "0".repeat((exp + 1 - n) as usize))
        } else {
            let (int, frac) = digits.split_at((exp + 1) as usize);
            format!("{int}.{frac}")
        };
        format!("{sign}{body}")
    } else {
        let (first, rest) = digits.split_at(1);
        let mant = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mant}e{esign}{:02}", exp.abs())
    }
}

/// Python's `repr` of a JSON value as KUMO holds it (dicts, lists, str,
/// int, float, bool, None).
pub fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() {
                n.to_string()
            } else {
                py_float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => py_str(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(py_repr).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", py_str(k), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn py_list(items: &[String]) -> String {
    format!(
        "[{}]",
        items
            .iter()
            .map(|s| py_str(s))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The observation message KUMO sends after an action.
pub fn observation_message(action: &str, value: &Value) -> String {
    // KUMO formats a dict {'action': ..., 'observation': ...} in that order.
    format!(
        "Observation from previous action: {{'action': {}, 'observation': {}}}",
        py_str(action),
        py_repr(value)
    )
}

/// The per-round instruction.
pub fn instruction(instance: &Instance) -> String {
    format!(
        "At this round, You need to select an `action_name` from the list: {} or predict a `truth_name` from the list: {}. \n\
         Reason and end your response with the format '<ANSWER> ${{action_name}} </ANSWER>' or '<ANSWER> ${{truth_name}} </ANSWER>'.",
        py_list(&instance.actions),
        py_list(&instance.truths)
    )
}

/// The platform (system) prompt: the renderer's `prompt.j2` with the
/// instance's truths and actions and its knowledge book.
///
/// This is the one place evaluation builds the prompt. For an instance of
/// a generated dataset it is the system message of the instance's SFT
/// record, byte for byte, so a model is evaluated on the prompt it may have
/// been trained on.
pub fn system_prompt(
    renderer: &Renderer,
    domain: &Domain,
    instance: &Instance,
    book: &str,
) -> Result<String, TemplateError> {
    let truths: Vec<&str> = instance.truths.iter().map(String::as_str).collect();
    let actions: Vec<&str> = instance.actions.iter().map(String::as_str).collect();
    renderer.prompt_for_names(domain, &truths, &actions, Some(book), "prose")
}

/// One agent's conversation, as KUMO's VanillaAgent keeps it.
#[derive(Clone, Debug)]
pub struct Conversation {
    model: String,
    history: Vec<Value>,
}

impl Conversation {
    pub fn new(model: &str, system_prompt: String) -> Self {
        let role = if model == "o1-preview"
            || model == "o1-mini"
            || model.contains("gemma")
            || model.contains("claude")
        {
            "user"
        } else {
            "system"
        };
        Conversation {
            model: model.to_string(),
            history: vec![json!({"role": role, "content": system_prompt})],
        }
    }

    /// The messages to send for the next reply, given what the previous
    /// action showed (`None` on the first round).
    pub fn request(
        &mut self,
        observation: Option<(&str, &Value)>,
        instruction: &str,
    ) -> Vec<Value> {
        let mut messages;
        match observation {
            Some((action, value)) => {
                self.history
                    .push(json!({"role": "user", "content": observation_message(action, value)}));
                messages = self.history.clone();
                if let Some(last) = messages.last_mut() {
                    let content = format!(
                        "{}\n\n{instruction}",
                        last["content"].as_str().unwrap_or_default()
                    );
                    last["content"] = Value::String(content);
                }
            }
            None => {
                messages = self.history.clone();
                self.history
                    .push(json!({"role": "user", "content": "Begin the game."}));
                messages.push(json!({"role": "user", "content": instruction}));
            }
        }
        if self.model.contains("gemma") {
            messages = alternate(messages);
        }
        messages
    }

    /// Records the model's reply (`None` when the call failed).
    pub fn reply(&mut self, text: Option<&str>) {
        self.history
            .push(json!({"role": "assistant", "content": text}));
    }
}

/// KUMO's `process_message` for models that need strictly alternating
/// user/assistant turns: a message out of turn is merged into the previous.
fn alternate(messages: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut role = "user";
    for m in messages {
        if m["role"] != role && !out.is_empty() {
            let last = out.last_mut().expect("not empty");
            let merged = format!(
                "{}\n{}",
                last["content"].as_str().unwrap_or_default(),
                m["content"].as_str().unwrap_or_default()
            );
            last["content"] = Value::String(merged);
        } else {
            out.push(m);
        }
        role = if role == "assistant" {
            "user"
        } else {
            "assistant"
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_answers_like_kumo() {
        let p = |s: &str| parse_answer(Some(s)).unwrap();
        assert_eq!(p("I think.\n<ANSWER> Brain MRI </ANSWER>"), "Brain MRI");
        assert_eq!(p("<ANSWER> a </ANSWER> then <ANSWER> b </ANSWER>"), "b");
        assert_eq!(p("no tags at all  "), "no tags at all");
        assert_eq!(p("<ANSWER> ${Chest X-Ray} </ANSWER>"), "Chest X-Ray");
        assert_eq!(p("<ANSWER> x"), "x");
        assert_eq!(p(""), "");
        assert_eq!(parse_answer(None), None);
    }

    #[test]
    fn prints_like_python() {
        assert_eq!(py_float(314.75288407570395), "314.75288407570395");
        assert_eq!(py_float(6.0), "6.0");
        assert_eq!(py_float(-1.006532746734306), "-1.006532746734306");
        assert_eq!(py_float(1e-5), "1e-05");
        assert_eq!(py_float(0.0001), "0.0001");
        assert_eq!(py_float(1.5e16), "1.5e+16");
        assert_eq!(py_float(1e15), "1000000000000000.0");
        assert_eq!(py_float(123456.0), "123456.0");
        assert_eq!(py_str("it's"), "\"it's\"");
        assert_eq!(py_str("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(py_str("Crohn's \"x\""), "'Crohn\\'s \"x\"'");
        assert_eq!(
            observation_message("D-Dimer Test", &json!("normal")),
            "Observation from previous action: {'action': 'D-Dimer Test', 'observation': 'normal'}"
        );
        assert_eq!(
            observation_message("K", &json!(0.3100216288396742)),
            "Observation from previous action: {'action': 'K', 'observation': 0.3100216288396742}"
        );
        assert_eq!(py_repr(&json!(3)), "3");
    }

    #[test]
    fn first_request_lacks_begin_the_game_later_ones_have_it() {
        let mut c = Conversation::new("gpt-4o", "SYS".into());
        let first = c.request(None, "INST");
        assert_eq!(first.len(), 2);
        assert_eq!(first[1]["content"], "INST");
        c.reply(Some("<ANSWER> A </ANSWER>"));
        let second = c.request(Some(("A", &json!("x"))), "INST");
        let roles: Vec<&str> = second.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        assert_eq!(second[1]["content"], "Begin the game.");
        assert_eq!(
            second[3]["content"],
            "Observation from previous action: {'action': 'A', 'observation': 'x'}\n\nINST"
        );
        let mut c = Conversation::new("claude-3.5-sonnet", "SYS".into());
        assert_eq!(c.request(None, "I")[0]["role"], "user");
    }
}
