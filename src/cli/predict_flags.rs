//! The explore-then-predict protocol's flags, shared by `eval` and `play`
//! (docs/black-boxes.md "The explore-then-predict protocol"): `--turns`
//! opts in; `--tests`, `--attempts` and `--feedback` set the rest.

use crate::game::predict::{Feedback, MAX_PREDICT, PredictRules};

#[derive(clap::Args, Debug, Clone)]
pub struct PredictFlags {
    /// The explore-then-predict protocol (ORACLE's black boxes) instead of
    /// KUMO's: at most T exploration turns (reply `stop` to end early),
    /// then `--tests` held-out inputs (actions of the domain that are not
    /// the instance's) whose outputs are predicted. Results go under
    /// `VanillaAgent-predict=T@S` (`-end` with `--feedback end`).
    #[arg(long, value_name = "T", value_parser = parse_predict, conflicts_with = "budget")]
    pub turns: Option<usize>,
    /// Test inputs per trial (K), drawn from the instance seed alone.
    #[arg(long, value_name = "K", default_value_t = 5, value_parser = parse_predict, requires = "turns")]
    pub tests: usize,
    /// Attempts per test input (s: the shot of turn@shot).
    #[arg(long, value_name = "S", default_value_t = 1, value_parser = parse_predict, requires = "turns")]
    pub attempts: usize,
    /// When exploration outputs are shown: `each` (after each probe) or
    /// `end` (all after the last exploration turn: the non-adaptive
    /// control).
    #[arg(long, value_name = "WHEN", default_value = "each", value_parser = ["each", "end"], requires = "turns")]
    pub feedback: String,
}

fn parse_predict(text: &str) -> Result<usize, super::flags::BadValue> {
    super::flags::parse_count(text, "count", 1, MAX_PREDICT as u64).map(|n| n as usize)
}

impl PredictFlags {
    /// The rules, when `--turns` opts in.
    pub fn rules(&self) -> Option<PredictRules> {
        Some(PredictRules {
            turns: self.turns?,
            tests: self.tests,
            attempts: self.attempts,
            feedback: if self.feedback == "end" {
                Feedback::End
            } else {
                Feedback::Each
            },
        })
    }
}
