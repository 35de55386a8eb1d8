//! The evaluation side of KUMO's VanillaAgent protocol: the system prompt
//! of an instance line (`templates/prompt.j2` with the instance's
//! knowledge book, playing the part of KUMO's `get_system_prompt`). The
//! messages themselves — instruction, observation, answer parsing, the
//! conversation KUMO keeps — are [`crate::render::protocol`]'s, shared
//! with the SFT records, and re-exported here.

pub use crate::python_repr::py_repr;
pub use crate::render::protocol::{
    Conversation, answer_tag, instruction, observation_message, parse_answer,
};

use crate::domain::Domain;
use crate::game::InstanceLine;
use crate::render::{Renderer, TemplateError};

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
    instance: &InstanceLine,
    book: &str,
) -> Result<String, TemplateError> {
    let truths: Vec<&str> = instance.truths.iter().map(String::as_str).collect();
    let actions: Vec<&str> = instance.actions.iter().map(String::as_str).collect();
    renderer.prompt_for_names(domain, &truths, &actions, Some(book), "prose")
}
