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
    // Interval ends to 2 decimals, or none for large numbers (tokens),
    // so the table fits a 1280 px screen.
    let ci_digits = if value.is_some_and(|v| v.abs() >= 100.0) {
        0
    } else {
        2
    };
    format!(
        r#"<td class="num" data-key="{key}" data-value="{}"{ends}>{text}{}</td>"#,
        json(&value),
        interval_text(interval, ci_digits)
    )
}

/// [`cell`] (three digits; `signed`: with the sign, as [`signed_cell`])
/// of a number that certified labels make a range (docs/output.md,
/// "Certified labels"): with `least`, the text shows `least..value` (or
/// `value..least`, whichever is ascending) and says in its title how many
/// labels are certified; `data-value` stays the number `score --json`
/// prints and `data-least` holds the other end.
pub(super) fn range_cell(
    key: &str,
    value: Option<f64>,
    least: Option<f64>,
    certified: usize,
    signed: bool,
    interval: Option<Interval>,
) -> String {
    let (Some(v), Some(other)) = (value, least) else {
        return if signed {
            signed_cell(key, value, interval)
        } else {
            cell(key, value, 3, interval)
        };
    };
    let (lo, hi) = if other <= v { (other, v) } else { (v, other) };
    let shown = |x: f64| {
        if signed {
            format!("{x:+.3}")
        } else {
            format!("{x:.3}")
        }
    };
    let ends = interval.map_or(String::new(), |i| {
        format!(
            r#" data-low="{}" data-high="{}""#,
            json(&i.low),
            json(&i.high)
        )
    });
    format!(
        r#"<td class="num certified" data-key="{key}" data-value="{}" data-least="{}"{ends} title="{certified} certified label(s): a range, not a value">{}..{}{}</td>"#,
        json(&v),
        json(&other),
        shown(lo),
        shown(hi),
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

/// [`cell`] for a figure shown with its sign (the relative action count,
/// `+1.409`, as `score` prints it), to 3 decimals.
pub(super) fn signed_cell(key: &str, value: Option<f64>, interval: Option<Interval>) -> String {
    let plain = cell(key, value, 3, interval);
    match value {
        Some(v) if v >= 0.0 => plain.replacen(&format!(">{v:.3}"), &format!(">+{v:.3}"), 1),
        _ => plain,
    }
}
