//! Which result lines the report replays: a real evaluation has thousands
//! of lines (5 000 instances x several models), and every replayed move
//! carries its state's values, so the page replays a sample and says so
//! (docs/report.md "Size").
//!
//! The rule, a function of the result files alone (the page stays
//! byte-identical): per domain and setting, the seeds played by any
//! result file, sorted, and of those `n` spread evenly (the `i`-th of `n`
//! is seed number `i * seeds / n`); each model x agent x domain x setting
//! group replays its lines on those seeds, the same instances for every
//! model, so a reader compares players on one game. A group that did not
//! play some of them is topped up with its first other lines, up to `n`.
//! `--replays all` replays every line.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::results::{GroupKey, ResultFile};

/// How many result lines of each group the page replays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayLimit {
    /// At most this many per model x agent x domain x setting.
    PerGroup(usize),
    /// Every line.
    All,
}

impl ReplayLimit {
    /// The default: enough games to see how a player plays, few enough
    /// that a page of a 5 000-instance evaluation opens.
    pub const DEFAULT: ReplayLimit = ReplayLimit::PerGroup(20);
}

impl std::str::FromStr for ReplayLimit {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "all" {
            return Ok(ReplayLimit::All);
        }
        text.parse::<usize>()
            .map(ReplayLimit::PerGroup)
            .map_err(|_| format!("`{text}` is neither a number of lines nor `all`"))
    }
}

/// `n` of `seeds` spread evenly (all of them when there are at most `n`).
fn spread(seeds: &BTreeSet<u64>, n: usize) -> BTreeSet<u64> {
    let all: Vec<u64> = seeds.iter().copied().collect();
    if all.len() <= n {
        return seeds.clone();
    }
    (0..n).map(|i| all[i * all.len() / n]).collect()
}

/// For each file, for each of its lines, whether the page replays it.
pub fn chosen(files: &[ResultFile], limit: ReplayLimit) -> Vec<Vec<bool>> {
    let ReplayLimit::PerGroup(n) = limit else {
        return files.iter().map(|f| vec![true; f.lines.len()]).collect();
    };
    let mut seeds: BTreeMap<(&str, &str), BTreeSet<u64>> = BTreeMap::new();
    for file in files {
        let place = (file.key.domain.as_str(), file.key.setting.as_str());
        let played = seeds.entry(place).or_default();
        played.extend(file.lines.iter().filter_map(|l| l.seed));
    }
    let picked: BTreeMap<(&str, &str), BTreeSet<u64>> = seeds
        .iter()
        .map(|(place, all)| (*place, spread(all, n)))
        .collect();
    let mut taken: HashMap<&GroupKey, BTreeSet<u64>> = HashMap::new();
    let mut out: Vec<Vec<bool>> = files.iter().map(|f| vec![false; f.lines.len()]).collect();
    // The evenly spread seeds first, then any group still short is topped
    // up in file and line order.
    for top_up in [false, true] {
        for (file, marks) in files.iter().zip(out.iter_mut()) {
            let place = (file.key.domain.as_str(), file.key.setting.as_str());
            let group = taken.entry(&file.key).or_default();
            for (line, mark) in file.lines.iter().zip(marks.iter_mut()) {
                let Some(seed) = line.seed else { continue };
                if *mark || group.len() >= n || group.contains(&seed) {
                    continue;
                }
                if top_up || picked[&place].contains(&seed) {
                    *mark = true;
                    group.insert(seed);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::LineFacts;

    fn file(model: &str, seeds: impl IntoIterator<Item = u64>) -> ResultFile {
        ResultFile {
            path: format!("{model}.jsonl"),
            key: GroupKey {
                model: model.into(),
                agent: "VanillaAgent".into(),
                domain: "medical".into(),
                setting: "truth_num=4+action_num=6+valid_truth_num=1".into(),
            },
            lines: seeds
                .into_iter()
                .map(|seed| LineFacts {
                    seed: Some(seed),
                    trials: Vec::new(),
                })
                .collect(),
            repeated: Vec::new(),
        }
    }

    fn seeds_of(file: &ResultFile, marks: &[bool]) -> Vec<u64> {
        file.lines
            .iter()
            .zip(marks)
            .filter(|(_, m)| **m)
            .filter_map(|(l, _)| l.seed)
            .collect()
    }

    #[test]
    fn every_model_replays_the_same_evenly_spread_seeds() {
        let files = [file("a", 0..100), file("b", (0..100).rev())];
        let marks = chosen(&files, ReplayLimit::PerGroup(4));
        assert_eq!(seeds_of(&files[0], &marks[0]), [0, 25, 50, 75]);
        let mut b = seeds_of(&files[1], &marks[1]);
        b.sort_unstable();
        assert_eq!(b, [0, 25, 50, 75]);
    }

    #[test]
    fn a_group_that_missed_the_seeds_is_topped_up_and_all_means_all() {
        let files = [file("a", 0..10), file("b", [1, 3, 5])];
        let marks = chosen(&files, ReplayLimit::PerGroup(2));
        assert_eq!(seeds_of(&files[0], &marks[0]), [0, 5]);
        assert_eq!(seeds_of(&files[1], &marks[1]), [1, 5]);
        let every = chosen(&files, ReplayLimit::All);
        assert!(every.iter().flatten().all(|m| *m));
        assert!(
            chosen(&files, ReplayLimit::PerGroup(0))
                .iter()
                .flatten()
                .all(|m| !*m)
        );
        assert_eq!("all".parse(), Ok(ReplayLimit::All));
        assert_eq!("7".parse(), Ok(ReplayLimit::PerGroup(7)));
        assert!("some".parse::<ReplayLimit>().is_err());
    }
}
