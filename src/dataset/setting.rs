//! A setting (truths, actions, valid truths per instance) and the names
//! it gives to files: KUMO's `truth_num=T+action_num=A+valid_truth_num=V`
//! (dataset files, book folders, result folders), the HF config form
//! `t4-a6-v1` and the table form `4x6`. The one place a setting name is
//! made or read, by the writers ([`crate::pipeline::write`]), the readers
//! ([`crate::dataset::Dataset`], [`crate::score`]) and the Python package.
//! It sits below both, so the writers never import the reading side.
//!
//! Also the one rule for the path of an instance's knowledge book:
//! `<domain dir>/knowledge_book/<setting>/seed=<i>.txt`, `i` the
//! instance's position in its file, which is its `seed` in every file
//! kumo-gen and KUMO write (DESIGN.md "Outputs").

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::synth::Params;

/// Truths, actions and valid truths per instance: what names a dataset
/// file of a domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Setting {
    /// N_truth (`truth_num`).
    pub truths: usize,
    /// N_action (`action_num`).
    pub actions: usize,
    /// N_valid (`valid_truth_num`).
    pub valid: usize,
}

impl Setting {
    pub fn new(truths: usize, actions: usize, valid: usize) -> Setting {
        Setting {
            truths,
            actions,
            valid,
        }
    }

    /// The name of the setting's dataset file: `<setting>.jsonl`.
    pub fn file_name(&self) -> String {
        format!("{self}.jsonl")
    }

    /// The HF config form: `t12-a16-v1`.
    pub fn hf_name(&self) -> String {
        format!("t{}-a{}-v{}", self.truths, self.actions, self.valid)
    }

    /// The table form: `12x16`, or `12x16v2` with more than one valid truth.
    pub fn short_name(&self) -> String {
        match self.valid {
            1 => format!("{}x{}", self.truths, self.actions),
            v => format!("{}x{}v{v}", self.truths, self.actions),
        }
    }
}

impl From<&Params> for Setting {
    fn from(params: &Params) -> Setting {
        Setting::new(params.truths, params.actions, params.valid)
    }
}

/// KUMO's name: `truth_num=T+action_num=A+valid_truth_num=V`.
impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "truth_num={}+action_num={}+valid_truth_num={}",
            self.truths, self.actions, self.valid
        )
    }
}

/// A name that is not a setting.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{text}` is not a setting name like `truth_num=4+action_num=6+valid_truth_num=1`: {reason}"
)]
pub struct SettingError {
    /// The name as given.
    pub text: String,
    pub reason: SettingProblem,
}

/// What is wrong with a setting name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingProblem {
    #[error("a part is not `key=number`")]
    NotKeyNumber,
    #[error("a key other than `truth_num`, `action_num` and `valid_truth_num`")]
    UnknownKey,
    #[error("`truth_num` or `action_num` is missing")]
    Missing,
}

/// Reads KUMO's name. The keys may come in any order and
/// `valid_truth_num` may be left out (1), as older KUMO files have it;
/// [`Setting`]'s `Display` always writes the full name in KUMO's order.
impl FromStr for Setting {
    type Err = SettingError;

    fn from_str(text: &str) -> Result<Setting, SettingError> {
        let fail = |reason| SettingError {
            text: text.to_string(),
            reason,
        };
        let (mut truths, mut actions, mut valid) = (None, None, 1);
        for part in text.split('+') {
            let (key, value) = part
                .split_once('=')
                .ok_or(fail(SettingProblem::NotKeyNumber))?;
            let value: usize = value
                .parse()
                .map_err(|_| fail(SettingProblem::NotKeyNumber))?;
            match key {
                "truth_num" => truths = Some(value),
                "action_num" => actions = Some(value),
                "valid_truth_num" => valid = value,
                _ => return Err(fail(SettingProblem::UnknownKey)),
            }
        }
        match (truths, actions) {
            (Some(truths), Some(actions)) => Ok(Setting::new(truths, actions, valid)),
            _ => Err(fail(SettingProblem::Missing)),
        }
    }
}

/// The folder of a setting's knowledge books in a domain's directory:
/// `<domain dir>/knowledge_book/<setting>/`. `setting` is the dataset
/// file's stem, as the writers have it.
pub fn books_dir(domain_dir: &Path, setting: &str) -> PathBuf {
    domain_dir.join("knowledge_book").join(setting)
}

/// The file name of the book of the instance at position `i` of its file
/// (its `seed`): `seed=<i>.txt`.
pub fn book_file_name(i: u64) -> String {
    format!("seed={i}.txt")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kumo_names_read_back_to_the_same_setting() {
        let s = Setting::new(12, 16, 1);
        assert_eq!(
            s.to_string(),
            "truth_num=12+action_num=16+valid_truth_num=1"
        );
        assert_eq!(s.to_string().parse::<Setting>(), Ok(s));
        assert_eq!(s.hf_name(), "t12-a16-v1");
        assert_eq!(s.short_name(), "12x16");
        assert_eq!(Setting::new(4, 6, 2).short_name(), "4x6v2");
        assert_eq!(
            s.file_name(),
            "truth_num=12+action_num=16+valid_truth_num=1.jsonl"
        );
    }

    #[test]
    fn older_kumo_names_without_valid_truths_read_as_one() {
        assert_eq!(
            "action_num=6+truth_num=4".parse::<Setting>(),
            Ok(Setting::new(4, 6, 1))
        );
    }

    #[test]
    fn names_that_are_not_settings_say_what_is_wrong() {
        let problem = |text: &str| text.parse::<Setting>().unwrap_err().reason;
        assert_eq!(problem("eval_times=5"), SettingProblem::UnknownKey);
        assert_eq!(problem("truth_num=4"), SettingProblem::Missing);
        assert_eq!(
            problem("truth_num=4+action_num=x"),
            SettingProblem::NotKeyNumber
        );
        assert_eq!(problem("steps"), SettingProblem::NotKeyNumber);
        let e = "train".parse::<Setting>().unwrap_err().to_string();
        assert!(e.starts_with("`train` is not a setting name like"), "{e}");
    }
}
