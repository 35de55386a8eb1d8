//! KUMO's game messages, message for message
//! (linhaowei1/kumo `agents/vanilla_agent.py`, `llm/base_llm.py`,
//! `env/*_env.py`): the text `kumo-gen eval` sends and the text of our SFT
//! records, from this one module, so a model is trained on exactly the
//! messages it is evaluated with.
//!
//! - The per-round instruction and the observation message are KUMO's,
//!   verbatim ([`instruction`], [`observation_message`]): Python lists of
//!   names and an `{'action': ..., 'observation': ...}` dict, printed as
//!   Python prints them ([`crate::python_repr`]). Keeping KUMO's text keeps
//!   our numbers comparable with KUMO's published ones.
//! - The system message is the platform prompt (`templates/prompt.j2`)
//!   with the knowledge book; the conversation starts with it (as a `user`
//!   message for `o1-preview`, `o1-mini` and `gemma`/`claude` models).
//! - First request: the system prompt and one user message, the per-round
//!   instruction. The kept history instead records `"Begin the game."` there
//!   (KUMO copies the history before appending it), so later requests show
//!   `"Begin the game."`, the replies, and the observations.
//! - Each later request: the history, whose last user message
//!   `Observation from previous action: {...}` gets `"\n\n"` and the
//!   instruction appended (in the request only).
//! - Answers: `<ANSWER> name </ANSWER>` ([`answer_tag`]); parsing takes the
//!   text after the last `<ANSWER>`, before the next `</ANSWER>`, stripped;
//!   a `${name}` inside is unwrapped ([`parse_answer`]). The answer counts
//!   only when it is exactly one of the instance's actions or truths.

use serde_json::{Value, json};

use crate::python_repr::{py_list, py_repr, py_str, py_strip};

/// `<ANSWER> name </ANSWER>`.
pub fn answer_tag(name: &str) -> String {
    format!("<ANSWER> {name} </ANSWER>")
}

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

/// The observation message KUMO sends after an action.
pub fn observation_message(action: &str, value: &Value) -> String {
    // KUMO formats a dict {'action': ..., 'observation': ...} in that order.
    format!(
        "Observation from previous action: {{'action': {}, 'observation': {}}}",
        py_str(action),
        py_repr(value)
    )
}

/// The per-round instruction, listing the instance's actions and truths.
pub fn instruction<A: AsRef<str>, T: AsRef<str>>(actions: &[A], truths: &[T]) -> String {
    format!(
        "At this round, You need to select an `action_name` from the list: {} or predict a `truth_name` from the list: {}. \n\
         Reason and end your response with the format '<ANSWER> ${{action_name}} </ANSWER>' or '<ANSWER> ${{truth_name}} </ANSWER>'.",
        py_list(actions),
        py_list(truths)
    )
}

/// One agent's conversation, as KUMO's VanillaAgent keeps it.
#[derive(Clone, Debug)]
pub struct Conversation {
    model: String,
    history: Vec<Value>,
    /// Whether the next request is the first (its user message is the
    /// instruction alone; the history says "Begin the game." there).
    opening: bool,
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
            opening: false,
        }
    }

    /// The messages to send for the next reply, given what the previous
    /// action showed (`None` on the first round): [`Conversation::observe`]
    /// then [`Conversation::messages`].
    pub fn request(
        &mut self,
        observation: Option<(&str, &Value)>,
        instruction: &str,
    ) -> Vec<Value> {
        self.observe(observation);
        self.messages(instruction)
    }

    /// Records what the previous action showed (`None`: the game begins),
    /// as KUMO's history keeps it, in time of that message alone.
    pub fn observe(&mut self, observation: Option<(&str, &Value)>) {
        let content = match observation {
            Some((action, value)) => observation_message(action, value),
            None => "Begin the game.".to_string(),
        };
        self.opening = observation.is_none();
        self.history
            .push(json!({"role": "user", "content": content}));
    }

    /// The request for the reply to the last [`Conversation::observe`]:
    /// the history, whose last user message gets `"\n\n"` and the
    /// instruction (the first request: the instruction in place of "Begin
    /// the game."). A copy of the whole history: built when asked.
    pub fn messages(&self, instruction: &str) -> Vec<Value> {
        let mut messages = self.history.clone();
        if let Some(last) = messages.last_mut() {
            last["content"] = Value::String(self.with_instruction(last, instruction));
        }
        if self.model.contains("gemma") {
            messages = alternate(messages);
        }
        messages
    }

    /// The last message of [`Conversation::messages`] alone (the user
    /// message of this round), in time of that message (of the whole
    /// history for gemma models, whose messages KUMO merges into one).
    pub fn last_message(&self, instruction: &str) -> Option<Value> {
        if self.model.contains("gemma") {
            return self.messages(instruction).pop();
        }
        let last = self.history.last()?;
        let mut message = last.clone();
        message["content"] = Value::String(self.with_instruction(last, instruction));
        Some(message)
    }

    fn with_instruction(&self, last: &Value, instruction: &str) -> String {
        if self.opening {
            instruction.to_string()
        } else {
            format!(
                "{}\n\n{instruction}",
                last["content"].as_str().unwrap_or_default()
            )
        }
    }

    /// Records the model's reply (`None` when the call failed), at most
    /// [`MAX_KEPT_REPLY`] bytes of it.
    pub fn reply(&mut self, text: Option<&str>) {
        let kept = text.map(kept_reply);
        self.opening = false;
        self.history
            .push(json!({"role": "assistant", "content": kept}));
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

/// The most bytes of one reply a trial keeps (in its results line) and
/// resends (as the previous turn of the next request): a KUMO reply is a
/// few hundred bytes, a reasoning model's some tens of KB. A longer reply
/// is kept to this length and marked, so a 9 MB reply costs 64 KiB per
/// later request instead of 9 MB; its answer is read from the whole reply.
pub const MAX_KEPT_REPLY: usize = 64 * 1024;

/// `text` cut to [`MAX_KEPT_REPLY`] bytes (at a character boundary), with
/// a note of how much was cut.
pub fn kept_reply(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_KEPT_REPLY {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut end = MAX_KEPT_REPLY;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!(
        "{}\n[kumo-gen: {} more bytes of this reply not kept]",
        &text[..end],
        text.len() - end
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_is_kept_to_its_bound_at_a_character_boundary() {
        assert_eq!(kept_reply("<ANSWER> a </ANSWER>"), "<ANSWER> a </ANSWER>");
        let huge = "é".repeat(MAX_KEPT_REPLY);
        let kept = kept_reply(&huge);
        assert!(kept.len() < MAX_KEPT_REPLY + 64, "{}", kept.len());
        assert!(kept.ends_with(&format!(
            "{} more bytes of this reply not kept]",
            huge.len() - MAX_KEPT_REPLY
        )));
    }

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
    fn observations_print_like_python() {
        assert_eq!(
            observation_message("D-Dimer Test", &json!("normal")),
            "Observation from previous action: {'action': 'D-Dimer Test', 'observation': 'normal'}"
        );
        assert_eq!(
            observation_message("K", &json!(0.3100216288396742)),
            "Observation from previous action: {'action': 'K', 'observation': 0.3100216288396742}"
        );
        assert_eq!(
            instruction(&["A", "B'c"], &["T"]),
            "At this round, You need to select an `action_name` from the list: ['A', \"B'c\"] or predict a `truth_name` from the list: ['T']. \n\
             Reason and end your response with the format '<ANSWER> ${action_name} </ANSWER>' or '<ANSWER> ${truth_name} </ANSWER>'."
        );
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
