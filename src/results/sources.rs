//! What a scorer may consult besides the result files ([`Sources`]): the
//! instance sets the results were played on, the domains that judge their
//! answers, an oracle file's optimal steps; and which instance set holds a
//! group's instances (never one of several).

use std::collections::BTreeMap;

use super::GroupKey;
use crate::dataset::InstanceSet;
use crate::dataset::Setting;
use crate::domain::Domain;

/// One line of an oracle file (`oracle-medical.jsonl`'s format).
#[derive(Clone, Debug, serde::Deserialize)]
pub struct OracleEntry {
    pub env: String,
    pub truth_num: u64,
    pub action_num: u64,
    pub seed: u64,
    pub expected_steps: f64,
}

/// What the scorer may consult besides the result files.
#[derive(Default)]
pub struct Sources {
    pub instance_sets: Vec<InstanceSet>,
    /// Result domain name (as in the path) -> compiled domain.
    pub domains: BTreeMap<String, Domain>,
    pub oracle: Vec<OracleEntry>,
    /// Score every move against the exact optimum, each value's search
    /// under this budget (`score --moves`, [`crate::analysis`]).
    pub moves: Option<crate::search::SearchBudget>,
}

impl Sources {
    /// The instances for a group: the only file `<domain>/<setting>.jsonl`,
    /// else the only file with that setting. Never one of several: two
    /// files that could hold the group's instances (a curriculum's
    /// `level-k/medical/` beside `medical/`) give `None`, and
    /// [`Sources::ambiguity`] names them.
    pub fn instances(&self, key: &GroupKey) -> Option<&InstanceSet> {
        let candidates = self.candidates(key);
        match candidates.as_slice() {
            [only] => Some(only),
            _ => None,
        }
    }

    /// The instance sets that could hold `key`'s instances: those of its
    /// domain and setting, else those of its setting.
    fn candidates(&self, key: &GroupKey) -> Vec<&InstanceSet> {
        let named: Vec<&InstanceSet> = self
            .instance_sets
            .iter()
            .filter(|s| s.domain == key.domain && s.setting == key.setting)
            .collect();
        if !named.is_empty() {
            return named;
        }
        self.instance_sets
            .iter()
            .filter(|s| s.setting == key.setting)
            .collect()
    }

    /// The first group of `keys` whose instances more than one file could
    /// hold: what to refuse instead of matching results against the wrong
    /// instances.
    pub fn ambiguity<'a>(&self, keys: impl IntoIterator<Item = &'a GroupKey>) -> Option<String> {
        keys.into_iter().find_map(|key| {
            let candidates = self.candidates(key);
            (candidates.len() > 1).then(|| {
                let dirs: Vec<String> = candidates
                    .iter()
                    .map(|s| {
                        s.dir.as_ref().map_or_else(
                            || format!("`{}`", s.domain),
                            |d| format!("`{}`", d.display()),
                        )
                    })
                    .collect();
                format!(
                    "the results of `{}` on `{}` {} could be matched with the instances of {} directories: {}",
                    key.model,
                    key.domain,
                    key.setting,
                    candidates.len(),
                    dirs.join(", ")
                )
            })
        })
    }

    /// The optimal expected steps `E` the oracle file gives the line of
    /// `seed` in `key`'s group.
    pub fn oracle_steps(&self, key: &GroupKey, seed: u64) -> Option<f64> {
        let setting: Setting = key.setting.parse().ok()?;
        self.oracle
            .iter()
            .find(|o| {
                o.env == key.domain
                    && o.truth_num == setting.truths as u64
                    && o.action_num == setting.actions as u64
                    && o.seed == seed
            })
            .map(|o| o.expected_steps)
    }
}
