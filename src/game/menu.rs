//! A person's choice from the menu of an instance's actions and truths:
//! what `play` (typed in the terminal) and the server's page (clicked or
//! typed in a browser) read from a person's input. A model's reply is read
//! by [`crate::render::protocol::parse_answer`] instead; a person who
//! mistypes is asked again rather than ending the trial with a parse error.

use crate::render::protocol::parse_answer;

/// The action or truth `input` names: a menu number (actions first, from
/// 1, then truths), a name in any case, or `<ANSWER> name </ANSWER>`;
/// `None` when it names nothing on the menu.
pub fn menu_choice(input: &str, actions: &[String], truths: &[String]) -> Option<String> {
    let input = input.trim();
    if let Ok(n) = input.parse::<usize>() {
        return actions.iter().chain(truths).nth(n.checked_sub(1)?).cloned();
    }
    let name = parse_answer(Some(input)).unwrap_or_default();
    actions
        .iter()
        .chain(truths)
        .find(|x| x.eq_ignore_ascii_case(&name))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_names_and_tags_pick_from_the_menu() {
        let actions = vec!["Voltage".to_string(), "Continuity check".to_string()];
        let truths = vec!["Lamp".to_string()];
        let pick = |s: &str| menu_choice(s, &actions, &truths);
        assert_eq!(pick("2").as_deref(), Some("Continuity check"));
        assert_eq!(pick("3").as_deref(), Some("Lamp"));
        assert_eq!(pick("voltage").as_deref(), Some("Voltage"));
        assert_eq!(pick("<ANSWER> lamp </ANSWER>").as_deref(), Some("Lamp"));
        assert_eq!(pick("0"), None);
        assert_eq!(pick("4"), None);
        assert_eq!(pick("fuse"), None);
    }
}
