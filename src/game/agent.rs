//! Who played a trial, as results name it (the agent folder of a results
//! path and a result line's `agent`): KUMO's `VanillaAgent` for a model or
//! an offline player, `HumanAgent` for a person (`play`, `serve`'s page),
//! with `-budget=N` after it under the budgeted protocol, so the two
//! protocols never share a results file and `score` gives each its rows.
//! `eval`, `play` and `serve` name agents here, and `report` and
//! `serve` tell a person's results by [`is_human`].

/// KUMO's agent name: a model's (or an offline player's) trials.
pub const MODEL_AGENT: &str = "VanillaAgent";

/// A person's trials.
pub const HUMAN_AGENT: &str = "HumanAgent";

/// Who played.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agent {
    /// A model over the API, or an offline player.
    Model,
    /// A person (`play`, `serve`'s page).
    Person,
}

impl Agent {
    /// The agent's name under KUMO's protocol (`budget` `None`) or the
    /// budgeted protocol with `budget` turns: `VanillaAgent`,
    /// `HumanAgent-budget=3`.
    pub fn name(self, budget: Option<usize>) -> String {
        let base = match self {
            Agent::Model => MODEL_AGENT,
            Agent::Person => HUMAN_AGENT,
        };
        match budget {
            None => base.to_string(),
            Some(n) => format!("{base}-budget={n}"),
        }
    }
}

impl Agent {
    /// The agent's name under the explore-then-predict protocol:
    /// `VanillaAgent-predict=10@1`, `HumanAgent-predict=20@2-end`.
    pub fn predict_name(self, rules: &super::predict::PredictRules) -> String {
        format!("{}-{}", self.name(None), rules.agent_suffix())
    }
}

/// Whether an agent name (a results path's folder, a line's `agent`) is a
/// person's.
pub fn is_human(agent: &str) -> bool {
    agent.starts_with(HUMAN_AGENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_named_per_protocol() {
        assert_eq!(Agent::Model.name(None), "VanillaAgent");
        assert_eq!(Agent::Model.name(Some(5)), "VanillaAgent-budget=5");
        assert_eq!(Agent::Person.name(None), "HumanAgent");
        assert_eq!(Agent::Person.name(Some(3)), "HumanAgent-budget=3");
        assert!(is_human("HumanAgent-budget=3"));
        assert!(!is_human("VanillaAgent"));
    }
}
