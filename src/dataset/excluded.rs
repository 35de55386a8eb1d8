//! What a dataset's manifest records of the `--exclude` sets it was made
//! with ([`ExcludedSet`], keyed by a [`KeyKind`]), and whether two runs'
//! sets allow one to continue the other ([`sets_conflict`]). Reading and
//! keying the sets themselves is [`crate::contamination`]'s.

use serde::{Deserialize, Serialize};

/// Which instances count as the same (`--exclude-key`, `overlap --key`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyKind {
    /// Same truths, valid truths, actions and observed state per action.
    #[default]
    Exact,
    /// Same truths, actions and valid truths, whatever was observed.
    Context,
    /// Same truths and actions, whatever the valid truth and observations.
    Book,
}

impl KeyKind {
    pub fn name(self) -> &'static str {
        match self {
            KeyKind::Exact => "exact",
            KeyKind::Context => "context",
            KeyKind::Book => "book",
        }
    }
}

/// What the manifest records of one `--exclude` path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExcludedSet {
    /// The path as given.
    pub path: String,
    pub key: KeyKind,
    /// FNV-1a 64 of the file (as the manifest's dataset `digest`), or for a
    /// directory of the sorted list of its instance files' names and digests.
    pub digest: String,
    /// Distinct instances read, by the set's key (a directory holding a
    /// dataset and its HF export counts each instance once; manifests
    /// written before this rule counted lines).
    pub instances: u64,
    /// Of those, SFT records' contexts: they give the context key only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub context_only: u64,
}

impl ExcludedSet {
    /// The line a run that excludes this set prints for it:
    /// `excluding `PATH`: N instances (exact key), digest D`.
    pub fn excluding_line(&self) -> String {
        format!(
            "excluding `{}`: {} instances ({} key{}), digest {}",
            self.path,
            self.instances,
            self.key.name(),
            if self.context_only > 0 {
                format!("; {} SFT records by the context key", self.context_only)
            } else {
                String::new()
            },
            self.digest
        )
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The first difference between two runs' excluded sets that forbids
/// continuing one with the other (paths may differ; content and key may not).
pub fn sets_conflict(made: &[ExcludedSet], now: &[ExcludedSet]) -> Option<String> {
    let describe = |sets: &[ExcludedSet]| {
        if sets.is_empty() {
            return "no `--exclude`".to_string();
        }
        let list: Vec<String> = sets
            .iter()
            .map(|s| format!("`{}` ({} key, digest {})", s.path, s.key.name(), s.digest))
            .collect();
        format!("`--exclude` {}", list.join(", "))
    };
    // The digest fixes the content; the count is only reported (older
    // manifests counted lines, not distinct instances).
    let same = made.len() == now.len()
        && made
            .iter()
            .zip(now)
            .all(|(a, b)| (a.key, &a.digest) == (b.key, &b.digest));
    (!same).then(|| {
        format!(
            "it was made with {}, this run has {}",
            describe(made),
            describe(now)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_conflict_on_content_not_on_path() {
        let set = |path: &str, digest: &str| ExcludedSet {
            path: path.into(),
            key: KeyKind::Exact,
            digest: digest.into(),
            instances: 3,
            context_only: 0,
        };
        assert_eq!(sets_conflict(&[set("a", "1")], &[set("b", "1")]), None);
        assert!(sets_conflict(&[set("a", "1")], &[set("a", "2")]).is_some());
        assert!(
            sets_conflict(&[], &[set("a", "1")])
                .unwrap()
                .contains("no `--exclude`")
        );
    }
}
