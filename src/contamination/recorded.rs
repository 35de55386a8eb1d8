//! Instances as other files record them, by name: KUMO's published
//! instance lines and ours (`truths`, `actions`, `observations` object,
//! `valid_truth`), our Hugging Face rows (`observations` as a list of
//! `{action, observation}`, `valid_truths`), and SFT chat records (ours
//! and the HF `-sft` rows: `messages`).
//!
//! An SFT record holds the instance's truths and actions (KUMO's round
//! message lists both as Python lists) and the golden answer (the last
//! assistant turn), but only the observations of the actions the golden
//! player took; it therefore yields the *context* key only (truths,
//! actions, valid truth), with the answer as the one valid truth. See
//! [`super::KeyKind`].
//!
//! Reading never panics: a line that is none of these is an error naming
//! what is missing.

use std::borrow::Cow;

use serde::Deserialize;

use crate::dataset::record::{ObservationsVisitor, ValidTruth};
use crate::python_repr::py_strip;

pub use crate::dataset::record::{ObservationPairs as Pairs, Observed};

/// One instance as a file records it.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded<'a> {
    pub truths: Vec<Cow<'a, str>>,
    pub valid: Vec<Cow<'a, str>>,
    pub actions: Vec<Cow<'a, str>>,
    /// `(action, observation)` pairs; `None` when the file does not record
    /// every action's observation (SFT records).
    pub observations: Option<Pairs<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(borrow)]
    content: Cow<'a, str>,
}

/// Every field any of the formats uses; unknown fields are skipped.
#[derive(Deserialize)]
struct AnyLine<'a> {
    #[serde(borrow, default)]
    truths: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow, default)]
    actions: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow, default, deserialize_with = "observations")]
    observations: Option<Pairs<'a>>,
    #[serde(borrow, default)]
    valid_truth: Option<ValidTruth<'a>>,
    #[serde(borrow, default)]
    valid_truths: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow, default)]
    messages: Option<Vec<Message<'a>>>,
}

/// Why a line is no instance of any supported format.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    #[error("not an instance line: {0}")]
    NotInstance(#[source] serde_json::Error),
    #[error("not one JSON value: {0}")]
    NotOneValue(#[source] serde_json::Error),
    /// A field every instance format has is missing.
    #[error("no `{0}`: not a KUMO or kumo-gen instance line, a Hugging Face row or an SFT record")]
    Missing(&'static str),
    #[error(
        "an SFT record without KUMO's round message (\"select an `action_name` from the list: [...]\")"
    )]
    NoRoundMessage,
    /// The round message lacks one of its lists' markers.
    #[error("the round message has no {0:?}")]
    NoList(&'static str),
    #[error("an SFT record without an assistant turn")]
    NoAssistantTurn,
    #[error("the last assistant turn has no `<ANSWER> ... </ANSWER>`")]
    NoAnswer,
    #[error(transparent)]
    NotPythonList(#[from] PythonListError),
}

/// Why text is no Python list of string literals.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PythonListError {
    #[error("expected a Python list of strings: no `[`")]
    NoOpening,
    #[error("expected a Python list of strings: no `,` between items")]
    NoComma,
    #[error("expected a Python list of strings: an item is not a string")]
    NotAString,
}

/// Reads one line of any supported format.
pub fn parse_line(line: &[u8]) -> Result<Recorded<'_>, LineError> {
    let mut de = serde_json::Deserializer::from_slice(line);
    let any = AnyLine::deserialize(&mut de).map_err(LineError::NotInstance)?;
    de.end().map_err(LineError::NotOneValue)?;
    if let Some(messages) = any.messages {
        return from_messages(&messages);
    }
    let missing = LineError::Missing;
    let truths = any.truths.ok_or_else(|| missing("truths"))?;
    let actions = any.actions.ok_or_else(|| missing("actions"))?;
    let observations = any.observations.ok_or_else(|| missing("observations"))?;
    let valid = match (any.valid_truth, any.valid_truths) {
        (Some(ValidTruth::One(t)), _) => vec![t],
        (Some(ValidTruth::Many(ts)), _) | (None, Some(ts)) => ts,
        (None, None) => return Err(missing("valid_truth")),
    };
    Ok(Recorded {
        truths,
        valid,
        actions,
        observations: Some(observations),
    })
}

const ACTIONS_AT: &str = "`action_name` from the list: ";
const TRUTHS_AT: &str = "`truth_name` from the list: ";

/// Truths and actions from the first round message (KUMO's protocol, as
/// `eval` and SFT records send it), the valid truth from the last
/// assistant turn's `<ANSWER> ... </ANSWER>`.
fn from_messages<'a>(messages: &[Message<'a>]) -> Result<Recorded<'a>, LineError> {
    let round = messages
        .iter()
        .find(|m| m.role == "user" && m.content.contains(ACTIONS_AT))
        .ok_or(LineError::NoRoundMessage)?;
    let list_after = |marker: &'static str| -> Result<Vec<Cow<'a, str>>, LineError> {
        let at = round
            .content
            .find(marker)
            .ok_or(LineError::NoList(marker))?;
        let (items, _) = python_str_list(&round.content[at + marker.len()..])?;
        Ok(items.into_iter().map(Cow::Owned).collect())
    };
    let actions = list_after(ACTIONS_AT)?;
    let truths = list_after(TRUTHS_AT)?;
    let last = messages
        .iter()
        .rev()
        .find(|m| m.role == "assistant")
        .ok_or(LineError::NoAssistantTurn)?;
    let answer = answer_of(&last.content).ok_or(LineError::NoAnswer)?;
    Ok(Recorded {
        truths,
        valid: vec![Cow::Owned(answer.to_string())],
        actions,
        observations: None,
    })
}

/// The text of the last `<ANSWER> ... </ANSWER>` of a reply, stripped as
/// KUMO strips it.
fn answer_of(reply: &str) -> Option<&str> {
    let start = reply.rfind("<ANSWER>")? + "<ANSWER>".len();
    let end = reply[start..].find("</ANSWER>")? + start;
    Some(py_strip(&reply[start..end]))
}

/// A Python list of string literals (`['a', "b'c"]`, as Python's `repr`
/// prints it) at the start of `text`; the strings and the rest of `text`.
pub fn python_str_list(text: &str) -> Result<(Vec<String>, &str), PythonListError> {
    let mut rest = text.strip_prefix('[').ok_or(PythonListError::NoOpening)?;
    let mut items = Vec::new();
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix(']') {
            return Ok((items, after));
        }
        if !items.is_empty() {
            rest = rest
                .strip_prefix(',')
                .ok_or(PythonListError::NoComma)?
                .trim_start();
        }
        let (item, after) = python_str(rest).ok_or(PythonListError::NotAString)?;
        items.push(item);
        rest = after;
    }
}

/// One Python string literal in `'` or `"` with the escapes `repr` writes.
fn python_str(text: &str) -> Option<(String, &str)> {
    let mut chars = text.char_indices();
    let (_, quote) = chars.next().filter(|(_, c)| *c == '\'' || *c == '"')?;
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c == quote => return Some((out, &text[i + 1..])),
            '\\' => {
                let (_, e) = chars.next()?;
                match e {
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'x' | 'u' | 'U' => {
                        let digits = match e {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let hex: String = (0..digits)
                            .filter_map(|_| chars.next())
                            .map(|(_, c)| c)
                            .collect();
                        out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    other => out.push(other),
                }
            }
            c => out.push(c),
        }
    }
    None
}

/// `observations`: an object of action -> observation (KUMO, ours) or a
/// list of `{action, observation}` (our HF rows).
fn observations<'de, D>(de: D) -> Result<Option<Pairs<'de>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    de.deserialize_any(ObservationsVisitor { lists: true })
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kumo_hf_and_sft_lines_read_to_the_same_instance() {
        let kumo = br#"{"truths": ["A", "B"], "actions": ["x", "y"], "observations": {"x": 1.5, "y": "no"}, "seed": 0, "valid_truth": "B"}"#;
        let hf = br#"{"id":"d/s/0","truths":["A","B"],"actions":["x","y"],"observations":[{"action":"x","observation":"1.5"},{"action":"y","observation":"no"}],"valid_truths":["B"],"knowledge_book":"..."}"#;
        let sft = br#"{"messages":[{"role":"system","content":"..."},{"role":"user","content":"At this round, You need to select an `action_name` from the list: ['x', \"y'z\"] or predict a `truth_name` from the list: ['A', 'B']. \nReason ..."},{"role":"assistant","content":"<ANSWER> x </ANSWER>","weight":1},{"role":"user","content":"Observation ..."},{"role":"assistant","content":"so <ANSWER>  B </ANSWER>","weight":1}]}"#;
        let kumo = parse_line(kumo).unwrap();
        let hf = parse_line(hf).unwrap();
        assert_eq!(
            (&kumo.truths, &kumo.valid, &kumo.actions),
            (&hf.truths, &hf.valid, &hf.actions)
        );
        assert_eq!(
            kumo.observations.as_ref().unwrap()[0].1,
            Observed::Number(1.5)
        );
        assert_eq!(
            hf.observations.as_ref().unwrap()[0].1,
            Observed::Label("1.5".into())
        );
        let sft = parse_line(sft).unwrap();
        assert_eq!(sft.truths, vec!["A", "B"]);
        assert_eq!(sft.actions, vec!["x", "y'z"]);
        assert_eq!(sft.valid, vec!["B"]);
        assert_eq!(sft.observations, None);
    }

    #[test]
    fn other_lines_are_errors_that_say_what_is_missing() {
        assert!(
            parse_line(b"{\"truths\": [\"A\"]}")
                .unwrap_err()
                .to_string()
                .contains("`actions`")
        );
        assert!(parse_line(b"[1, 2]").is_err());
        assert!(parse_line(b"{\"messages\": []}").is_err());
        assert_eq!(
            python_str_list(r"['a\'b', '\x41\u00e9'] rest").unwrap(),
            (vec!["a'b".to_string(), "Aé".to_string()], " rest")
        );
        assert!(python_str_list("['a' 'b']").is_err());
        assert!(python_str_list("['a").is_err());
    }
}
