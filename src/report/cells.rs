//! The page's table cells and JSON, shared by every section (`html`'s
//! results table, `moves_page`'s move table): cells carry `data-key` and
//! `data-value` (the number as `score --json` prints it), the text shown
//! rounds them.

use serde::Serialize;

use super::figures::esc;
use crate::score::interval::Interval;

/// A JSON value as `score --json` prints it.
pub(super) fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("values serialize")
}

/// JSON safe inside `<script>`: no `<`, `>` or `&` left to end the element.
pub(super) fn script_json<T: Serialize>(value: &T) -> String {
    json(value)
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

pub(super) fn interval_text(i: Option<Interval>, digits: usize) -> String {
    i.map_or(String::new(), |i| {
        format!(
            r#" <span class="ci">[{:.digits$}, {:.digits$}]</span>"#,
            i.low, i.high
        )
    })
}

/// A numeric cell: exact value in `data-value`, rounded in the text.
/// The interval's ends, exact, in `data-low` and `data-high`.
pub(super) fn cell(
    key: &str,
    value: Option<f64>,
    digits: usize,
    interval: Option<Interval>,
) -> String {
    let text = value.map_or_else(|| "n/a".to_string(), |v| format!("{v:.digits$}"));
    let ends = interval.map_or(String::new(), |i| {
        format!(
            r#" data-low="{}" data-high="{}""#,
            json(&i.low),
            json(&i.high)
        )
    });
    format!(
        r#"<td class="num" data-key="{key}" data-value="{}"{ends}>{text}{}</td>"#,
        json(&value),
        interval_text(interval, 2)
    )
}

/// [`cell`] of a number that certified labels make a range
/// (docs/output.md, "Certified labels"): with `least`, the text shows
/// `least..value` (or `value..least`, whichever is ascending) and says in
/// its title how many labels are certified; `data-value` stays the
/// number `score --json` prints and `data-least` holds the other end.
pub(super) fn range_cell(
    key: &str,
    value: Option<f64>,
    least: Option<f64>,
    certified: usize,
    digits: usize,
    interval: Option<Interval>,
) -> String {
    let (Some(v), Some(other)) = (value, least) else {
        return cell(key, value, digits, interval);
    };
    let (lo, hi) = if other <= v { (other, v) } else { (v, other) };
    let ends = interval.map_or(String::new(), |i| {
        format!(
            r#" data-low="{}" data-high="{}""#,
            json(&i.low),
            json(&i.high)
        )
    });
    format!(
        r#"<td class="num certified" data-key="{key}" data-value="{}" data-least="{}"{ends} title="{certified} certified label(s): a range, not a value">{lo:.digits$}..{hi:.digits$}{}</td>"#,
        json(&v),
        json(&other),
        interval_text(interval, 2)
    )
}

/// A count cell: the number in `data-value` and the text.
pub(super) fn count_cell(key: &str, value: usize) -> String {
    format!(r#"<td class="num" data-key="{key}" data-value="{value}">{value}</td>"#)
}

/// A text cell: `value` in `data-value` (what sorting uses), `shown` in
/// the text, both escaped.
pub(super) fn text_cell(key: &str, value: &str, shown: &str) -> String {
    format!(
        r#"<td data-key="{key}" data-value="{}">{}</td>"#,
        esc(value),
        esc(shown)
    )
}
