//! How a dataset's lines are labelled (docs/output.md, "Certified
//! labels"): exact or certified, counted for the summary line and the HF
//! card, and each line's [`Steps`] read as the line states them; an HF
//! data file's row labels ([`FileLabels`]), read by the card and written
//! in a Parquet file's footer.

use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::DerivedError;
use crate::game::Steps;

/// How a dataset's lines are labelled: exact or certified, and how wide
/// the certified intervals are.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LabelCounts {
    pub exact: u64,
    pub certified: u64,
    /// Sum of the certified lines' relative gaps (their mean is this over
    /// `certified`).
    pub gap_sum: f64,
    /// The largest relative gap (0 without certified lines).
    pub gap_max: f64,
}

impl LabelCounts {
    /// Counts one line's label.
    pub fn add(&mut self, steps: Steps) {
        if steps.is_exact() {
            self.exact += 1;
        } else {
            let gap = steps.relative_gap();
            self.certified += 1;
            self.gap_sum += gap;
            self.gap_max = self.gap_max.max(gap);
        }
    }

    /// The mean relative gap of the certified lines (0 without one).
    pub fn mean_gap(&self) -> f64 {
        if self.certified == 0 {
            0.0
        } else {
            self.gap_sum / self.certified as f64
        }
    }
}

/// What the label of a dataset line proves (`None`: unlabelled, or no
/// line at all).
pub(super) fn line_steps(value: &Value) -> Option<Steps> {
    value
        .get("optimal")
        .and_then(|o| crate::game::Optimal::deserialize(o).ok())
        .and_then(|o| o.steps())
}

/// `steps` with its ends read again from the text of `line`'s `optimal`
/// object by the standard library's correctly rounded parser: the JSON
/// reader may miss the last bit of a long number, and a certified bound
/// must be carried to the HF rows and SFT records exactly as the line
/// states it.
pub(super) fn precise(line: &str, steps: Option<Steps>) -> Option<Steps> {
    let optimal = &line[line.find("\"optimal\":")?..];
    let number = |key: &str| -> Option<f64> {
        let at = optimal.find(key)? + key.len();
        let text = optimal[at..].trim_start();
        let end = text
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')))
            .unwrap_or(text.len());
        text[..end].parse().ok()
    };
    match steps? {
        Steps::Certified { lower, upper } => Some(Steps::Certified {
            lower: number("\"lower_bound\":").unwrap_or(lower),
            upper: number("\"expected_steps\":").unwrap_or(upper),
        }),
        exact => Some(exact),
    }
}

/// Whether some line of `dataset` has a certified label. Only lines that
/// say `"exact":false` are parsed.
pub(super) fn holds_certified(dataset: &Path) -> Result<bool, DerivedError> {
    let file = crate::files::read::open(dataset).map_err(|e| DerivedError::io(dataset, e))?;
    let mut reader = BufReader::new(file);
    let mut line = String::new();
    loop {
        line.clear();
        if reader
            .read_line(&mut line)
            .map_err(|e| DerivedError::io(dataset, e))?
            == 0
        {
            return Ok(false);
        }
        if line.contains("\"exact\":false")
            && serde_json::from_str::<Value>(&line)
                .ok()
                .and_then(|v| line_steps(&v))
                .is_some_and(|s| !s.is_exact())
        {
            return Ok(true);
        }
    }
}

/// How the rows of one instance file are labelled (docs/output.md,
/// "Certified labels").
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FileLabels {
    pub counts: LabelCounts,
    pub unlabelled: u64,
}

/// The key of a Parquet instance file's footer metadata that holds its
/// [`FileLabels`] (as JSON), written when some row is not exact.
#[cfg(feature = "parquet")]
pub(super) const LABELS_KEY: &str = "kumo-gen.labels";

impl FileLabels {
    /// The labels of JSON Lines instance rows: every row counted as
    /// exact unless the file has the label columns or an unlabelled row,
    /// which are then read row by row (Parquet files keep theirs in the
    /// footer instead).
    #[cfg(not(feature = "parquet"))]
    pub(super) fn of_lines(
        path: &Path,
        bytes: &[u8],
        rows: u64,
    ) -> Result<FileLabels, DerivedError> {
        let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
        if !has(b"\"lower_bound\":") && !has(b"\"expected_steps\":null") {
            return Ok(FileLabels {
                counts: LabelCounts {
                    exact: rows,
                    ..LabelCounts::default()
                },
                unlabelled: 0,
            });
        }
        let mut labels = FileLabels::default();
        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let row: serde_json::Value = serde_json::from_slice(line)
                .map_err(|e| DerivedError::corrupt(path, format!("an HF row is not JSON: {e}")))?;
            labels.add_row(
                row["expected_steps"].as_f64(),
                row["exact"].as_bool().unwrap_or(true),
                row["lower_bound"].as_f64(),
            );
        }
        Ok(labels)
    }

    /// Counts one row: its `expected_steps` (null: unlabelled), `exact`
    /// and `lower_bound` columns.
    #[cfg(not(feature = "parquet"))]
    pub fn add_row(&mut self, upper: Option<f64>, exact: bool, lower: Option<f64>) {
        let optimal = crate::game::Optimal {
            expected_steps: upper,
            exact,
            lower_bound: lower,
            ..crate::game::Optimal::default()
        };
        match optimal.steps() {
            Some(steps) => self.counts.add(steps),
            None => self.unlabelled += 1,
        }
    }
}
