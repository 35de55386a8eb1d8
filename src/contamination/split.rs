//! `--split train=0.9,test=0.1`: disjoint parts in one run, by
//! construction.
//!
//! Every *context* (truths, actions, valid truths; [`super::KeyKind`])
//! belongs to exactly one part: the top 64 bits of its key hash, read as a
//! fraction of 2^64, fall into one part's interval of `[0, 1)` (intervals
//! in the order the parts are named, as wide as their fractions). Part `P`
//! is then an ordinary dataset whose draws outside `P`'s interval count as
//! taken, exactly like `--exclude`d ones: instance `i` of `P` is the first
//! draw of stream `i` whose context is `P`'s and whose key is new. So the
//! parts share no context (hence no instance), and each keeps the
//! determinism of a dataset: the same bytes at any thread count or resume,
//! and instance `i` of a part depends only on the part and `0..i`.
//!
//! `--split-key book` assigns parts by the *book* key instead (truths and
//! actions, whatever the valid truth): then no two parts share a knowledge
//! book either, where by context a test line can share its book and its
//! optimal first action with a training line that only names another
//! valid truth (most test lines do in settings as small as 4x6). The
//! manifest's label then ends in ` by book`.
//!
//! The parts' sizes split `-n` by largest remainder (they sum to `n`).
//! The fractions say how many instances each part gets; the contexts are
//! spread by the same fractions, so a part's capacity is about its
//! fraction of the setting's contexts (the capacity check reports it).

use super::{KeyKind, LineKeys};

/// One named part and its fraction.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub name: String,
    pub fraction: f64,
}

/// Why a `--split` value is refused; each says the fix.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SplitError {
    /// An item without `=`.
    #[error("`{0}` is not NAME=FRACTION (e.g. `train=0.9,test=0.1`)")]
    NotNameFraction(String),
    /// A part name with a character a folder name must not have.
    #[error("part name `{0}`: use letters, digits, `-` and `_` (it names a directory)")]
    BadName(String),
    /// The same part named twice.
    #[error("part `{0}` is named twice")]
    NamedTwice(String),
    /// A part named like one of kumo-gen's own folders (the reason, in
    /// [`crate::dataset::reserved`]'s words).
    #[error("part name {0}; name the part otherwise (a part is a folder of `--out`)")]
    Reserved(String),
    /// Two part names equal but for letter case (the message, in
    /// [`crate::dataset::reserved`]'s words).
    #[error("{0}; name the parts apart")]
    CaseDuplicate(String),
    /// A fraction that is no number in (0, 1]; the item.
    #[error("`{0}`: the fraction must be a number in (0, 1]")]
    BadFraction(String),
    /// Fewer than two parts.
    #[error("a split needs at least two parts, e.g. `train=0.9,test=0.1`")]
    TooFewParts,
    /// Fractions that do not sum to 1; their sum.
    #[error("the fractions sum to {0}, not 1")]
    SumNotOne(f64),
}

// `SumNotOne` holds a finite sum (each fraction is finite), so equality is
// an equivalence on the values it holds.
impl Eq for SplitError {}

/// Reads `train=0.9,test=0.1`: names of letters, digits, `-` and `_`,
/// distinct even in letter case and none of kumo-gen's own folder names
/// ([`crate::dataset::reserved`]: a part is a folder of `--out`); fractions
/// above 0 that sum to 1.
pub fn parse_split(text: &str) -> Result<Vec<Part>, SplitError> {
    let mut parts: Vec<Part> = Vec::new();
    for item in text.split(',') {
        let (name, fraction) = item
            .split_once('=')
            .ok_or_else(|| SplitError::NotNameFraction(item.to_string()))?;
        let name = name.trim();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(SplitError::BadName(name.to_string()));
        }
        if parts.iter().any(|p| p.name == name) {
            return Err(SplitError::NamedTwice(name.to_string()));
        }
        if let Some(why) = crate::dataset::reserved::reserved(name) {
            return Err(SplitError::Reserved(why));
        }
        let names = parts.iter().map(|p| p.name.as_str());
        if let Some((earlier, _)) = crate::dataset::reserved::case_duplicate(names.chain([name])) {
            return Err(SplitError::CaseDuplicate(
                crate::dataset::reserved::case_duplicate_message("part", earlier, name),
            ));
        }
        let fraction: f64 = fraction
            .trim()
            .parse()
            .ok()
            .filter(|f: &f64| f.is_finite() && *f > 0.0 && *f <= 1.0)
            .ok_or_else(|| SplitError::BadFraction(item.to_string()))?;
        parts.push(Part {
            name: name.to_string(),
            fraction,
        });
    }
    if parts.len() < 2 {
        return Err(SplitError::TooFewParts);
    }
    let sum: f64 = parts.iter().map(|p| p.fraction).sum();
    if (sum - 1.0).abs() > 1e-9 {
        return Err(SplitError::SumNotOne(sum));
    }
    Ok(parts)
}

/// The instances of each part: `n` split by largest remainder.
pub fn part_sizes(parts: &[Part], n: u64) -> Vec<u64> {
    let exact: Vec<f64> = parts.iter().map(|p| p.fraction * n as f64).collect();
    let mut sizes: Vec<u64> = exact.iter().map(|e| e.floor() as u64).collect();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    // Largest remainder first; ties by part order.
    order.sort_by(|&a, &b| {
        let (ra, rb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
        rb.total_cmp(&ra).then(a.cmp(&b))
    });
    let mut left = n - sizes.iter().sum::<u64>();
    for i in order {
        if left == 0 {
            break;
        }
        sizes[i] += 1;
        left -= 1;
    }
    sizes
}

/// The contexts of one part: an interval of `[0, 1)`.
#[derive(Clone, Debug, PartialEq)]
pub struct PartFilter {
    /// The part's name (`test`).
    pub name: String,
    /// `test of train=0.9,test=0.1`, as the manifest records it.
    pub label: String,
    /// The key whose hash places an instance: context, or book.
    key: KeyKind,
    lo: f64,
    hi: f64,
}

/// What a label of a split by book ends in.
const BY_BOOK: &str = " by book";

/// A manifest's `split` label that names no part filter.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("its `split` `{label}` is not `PART of NAME=FRACTION,...`: {why}")]
pub struct LabelError {
    pub label: String,
    pub why: LabelProblem,
}

/// What is wrong with a `split` label.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LabelProblem {
    #[error("no ` of `")]
    NoOf,
    /// The `NAME=FRACTION,...` list does not parse (`parse_split`'s words).
    #[error("{0}")]
    Split(SplitError),
    #[error("`{0}` is not one of its parts")]
    NotAPart(String),
    #[error("it does not read back as written")]
    ReadsBackOtherwise,
}

impl PartFilter {
    /// The filter of part `index` of `parts`, by context.
    pub fn new(parts: &[Part], index: usize) -> PartFilter {
        PartFilter::by(parts, index, KeyKind::Context)
    }

    /// The filter of part `index` of `parts` by `key` (`Context` or
    /// `Book`; `Exact` would let parts share contexts and is read as
    /// `Context`).
    pub fn by(parts: &[Part], index: usize, key: KeyKind) -> PartFilter {
        let key = match key {
            KeyKind::Book => KeyKind::Book,
            KeyKind::Exact | KeyKind::Context => KeyKind::Context,
        };
        let lo: f64 = parts[..index].iter().map(|p| p.fraction).sum();
        let last = index + 1 == parts.len();
        let hi = if last {
            1.0
        } else {
            lo + parts[index].fraction
        };
        let spec: Vec<String> = parts
            .iter()
            .map(|p| format!("{}={}", p.name, p.fraction))
            .collect();
        PartFilter {
            name: parts[index].name.clone(),
            label: format!(
                "{} of {}{}",
                parts[index].name,
                spec.join(","),
                if key == KeyKind::Book { BY_BOOK } else { "" }
            ),
            key,
            lo,
            hi,
        }
    }

    /// The filter a manifest's `split` label (`test of train=0.9,test=0.1`)
    /// names: `merge` rebuilds a part's filter from its shards' manifests.
    pub fn from_label(label: &str) -> Result<PartFilter, LabelError> {
        let bad = |why: LabelProblem| LabelError {
            label: label.to_string(),
            why,
        };
        let (name, spec) = label
            .split_once(" of ")
            .ok_or_else(|| bad(LabelProblem::NoOf))?;
        let (spec, key) = match spec.strip_suffix(BY_BOOK) {
            Some(spec) => (spec, KeyKind::Book),
            None => (spec, KeyKind::Context),
        };
        let parts = parse_split(spec).map_err(|e| bad(LabelProblem::Split(e)))?;
        let index = parts
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| bad(LabelProblem::NotAPart(name.to_string())))?;
        let filter = PartFilter::by(&parts, index, key);
        if filter.label != label {
            return Err(bad(LabelProblem::ReadsBackOtherwise));
        }
        Ok(filter)
    }

    /// The key this split places instances by.
    pub fn key(&self) -> KeyKind {
        self.key
    }

    /// Whether the instance with `keys` belongs to the part.
    pub fn holds(&self, keys: &LineKeys) -> bool {
        let at = (keys.get(self.key) >> 64) as u64 as f64 / 18_446_744_073_709_551_616.0;
        at >= self.lo && at < self.hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_parse_and_sizes_sum_to_n() {
        let parts = parse_split("train=0.9,test=0.1").unwrap();
        assert_eq!(part_sizes(&parts, 2_001), vec![1_801, 200]);
        let three = parse_split("a=0.5, b=0.25,c=0.25").unwrap();
        assert_eq!(part_sizes(&three, 3), vec![1, 1, 1]);
        assert_eq!(part_sizes(&three, 4), vec![2, 1, 1]);
        for bad in [
            "train=0.9",
            "a=0.5,a=0.5",
            "a=0.5,b=0.4",
            "a/b=0.5,c=0.5",
            "a=x,b=1",
        ] {
            assert!(parse_split(bad).is_err(), "{bad}");
        }
        // Every context is in exactly one part.
        let filters: Vec<PartFilter> = (0..3).map(|i| PartFilter::new(&three, i)).collect();
        for k in 0..1000u128 {
            let context = k.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
            let keys = LineKeys {
                exact: None,
                context,
                book: !context,
            };
            assert_eq!(filters.iter().filter(|f| f.holds(&keys)).count(), 1);
        }
        assert_eq!(filters[1].label, "b of a=0.5,b=0.25,c=0.25");
        // Merge rebuilds a part's filter from the label its manifest records.
        for f in &filters {
            assert_eq!(PartFilter::from_label(&f.label).as_ref(), Ok(f));
        }
        assert!(PartFilter::from_label("d of a=0.5,b=0.25,c=0.25").is_err());
        // A split by book reads back as one, and places by the book key.
        let by_book = PartFilter::by(&three, 1, KeyKind::Book);
        assert_eq!(by_book.label, "b of a=0.5,b=0.25,c=0.25 by book");
        assert_eq!(PartFilter::from_label(&by_book.label), Ok(by_book.clone()));
        let keys = |context: u128, book: u128| LineKeys {
            exact: None,
            context,
            book,
        };
        let middle = 5u128 << 125; // 0.625 of the way: part `b`
        assert!(by_book.holds(&keys(0, middle)) && !by_book.holds(&keys(middle, 0)));
        assert!(filters[1].holds(&keys(middle, 0)) && !filters[1].holds(&keys(0, middle)));
        assert!(PartFilter::from_label("a=0.5,b=0.5").is_err());
    }
}
