//! Names a user gives folders and files inside an output (`--split`
//! parts, models and players of `eval`, proposed domains and topics, the
//! domain of a generated dataset) must not be names kumo-gen gives its own
//! folders, nor differ from each other only in letter case.
//!
//! Reserved (compared after case folding, so `HF` and `Hf` too):
//! `hf` (the Hugging Face export, the folder meant for publishing),
//! `SECRET-seeds` (private seed files), `level-K` for any number K
//! (curriculum levels), `shards`, `knowledge_book`, `sft` (a dataset's own
//! folders). A part named `hf` would put its private seed file inside the
//! published folder; a part named `level-1` would mix with a curriculum's
//! level. Two names that differ only in case (`Train`, `train`) are one
//! folder on a case-insensitive file system (macOS, Windows by default),
//! so one would overwrite or resume the other.

use caseless::Caseless;

/// The folder names kumo-gen writes inside an output, besides `level-K`.
pub const RESERVED: &[&str] = &["hf", "SECRET-seeds", "shards", "knowledge_book", "sft"];

/// `name` case-folded (Unicode default case folding): the key under which
/// a case-insensitive file system sees it.
pub fn folded(name: &str) -> String {
    name.chars().default_case_fold().collect()
}

/// Why `name` cannot name a folder inside an output, if it cannot: it is a
/// reserved name (after case folding).
pub fn reserved(name: &str) -> Option<String> {
    let key = folded(name);
    if let Some(own) = RESERVED.iter().find(|r| folded(r) == key) {
        return Some(format!(
            "`{name}` is the name of kumo-gen's own `{own}` folder in an output"
        ));
    }
    let level = key
        .strip_prefix("level-")
        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
    level.then(|| format!("`{name}` is the name of a curriculum level's folder (`level-K`)"))
}

/// The first name of `names` equal to an earlier one after case folding
/// (but not equal to it): `(earlier, later)`.
pub fn case_duplicate<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<(&'a str, &'a str)> {
    let mut seen: Vec<(String, &str)> = Vec::new();
    for name in names {
        let key = folded(name);
        if let Some((_, earlier)) = seen.iter().find(|(k, n)| *k == key && *n != name) {
            return Some((earlier, name));
        }
        seen.push((key, name));
    }
    None
}

/// The message for two names that differ only in letter case.
pub fn case_duplicate_message(what: &str, earlier: &str, later: &str) -> String {
    format!(
        "{what} `{later}` differs from `{earlier}` only in letter case: on a case-insensitive file system (macOS, Windows) they are one folder or file"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_names_are_refused_in_any_case() {
        for name in [
            "hf",
            "HF",
            "SECRET-seeds",
            "secret-SEEDS",
            "level-1",
            "Level-12",
            "sft",
        ] {
            assert!(reserved(name).is_some(), "{name}");
        }
        for name in ["train", "test", "level-", "level-a", "hf2", "levels-1"] {
            assert_eq!(reserved(name), None, "{name}");
        }
    }

    #[test]
    fn case_duplicates_are_found() {
        assert_eq!(case_duplicate(["train", "test"]), None);
        assert_eq!(
            case_duplicate(["Train", "test", "train"]),
            Some(("Train", "train"))
        );
        assert_eq!(
            case_duplicate(["Stra\u{df}e", "STRASSE"]),
            Some(("Stra\u{df}e", "STRASSE"))
        );
        // Exact duplicates are their callers' to report.
        assert_eq!(case_duplicate(["a", "a"]), None);
    }
}
