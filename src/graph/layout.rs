//! Where the SVG picture of a domain graph puts things: deterministic, no
//! solver, chosen so that the page is filled and every label is horizontal.
//!
//! - A community of two or more truths is a circle whose nodes sit at equal
//!   vertical steps ([`ROW`] pixels), the first half down the right side,
//!   the rest up the left: labels are horizontal, to the right of a node on
//!   the right side and to the left on the left side, and never overlap
//!   (each has its own row).
//! - Communities of one truth (truths linked to nothing, or alone in their
//!   community) share one block of horizontal labels in columns, instead of
//!   a cell each.
//! - The cells (each wide enough for its labels) are packed in shelves,
//!   tallest first, small cells stacked in columns beside tall ones; of 41
//!   shelf widths the one with the smallest landscape page is kept, and a
//!   shelf's spare width is shared out between its columns so rows end
//!   flush.
//! - The legend runs across the top in columns, naming each community by
//!   its best-connected member (and its component).

use std::collections::BTreeMap;

use super::report::GraphReport;

/// Vertical step between two nodes on one side of a circle (a label's
/// height plus air).
pub(super) const ROW: f64 = 16.0;
/// Approximate width of one label character at font size 12.
pub(super) const CHAR_WIDTH: f64 = 6.6;
/// Gap between a node and its label.
pub(super) const LABEL_GAP: f64 = 9.0;
/// Margin around each cell.
const MARGIN: f64 = 14.0;
/// Height of the title lines.
const TITLE: f64 = 66.0;
/// Height of one legend line, and the width of a legend column.
pub(super) const LEGEND_ROW: f64 = 18.0;
const LEGEND_COLUMN: f64 = 330.0;

/// Which side of its node a label is written on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    Right,
    Left,
}

/// The placed picture.
pub(super) struct Layout {
    pub pos: Vec<(f64, f64)>,
    pub side: Vec<Side>,
    /// Per community `(cx, cy, r)` of its circle (`r = 0` for one truth).
    pub circle: Vec<(f64, f64, f64)>,
    /// Legend lines in order: `(community, x, y)`.
    pub legend: Vec<(usize, f64, f64)>,
    /// The community each legend line names, by member.
    pub legend_member: Vec<String>,
    /// The block of lone truths: `(x, y, w, h)`, if any.
    pub loose: Option<(f64, f64, f64, f64)>,
    pub width: f64,
    pub height: f64,
}

fn label_width(name: &str) -> f64 {
    name.chars().count() as f64 * CHAR_WIDTH
}

/// One cell to pack: its size and what to place inside it at `(x, y)`.
struct Cell {
    w: f64,
    h: f64,
    /// Community index, or `None` for the block of lone truths.
    community: Option<usize>,
}

impl Layout {
    pub fn new(report: &GraphReport) -> Self {
        let n = report.nodes.len();
        let k = report.communities.len();
        let mut groups: Vec<Vec<usize>> = vec![Vec::new(); k];
        for (t, &c) in report.membership.iter().enumerate() {
            groups[c].push(t);
        }
        let (degree, component_of) = degrees_and_components(report);

        let mut cells: Vec<Cell> = Vec::new();
        let lone: Vec<usize> = groups
            .iter()
            .filter(|g| g.len() == 1)
            .map(|g| g[0])
            .collect();
        for (c, g) in groups.iter().enumerate() {
            if g.len() < 2 {
                continue;
            }
            let (right, left) = g.split_at(split(g));
            let r = radius(g);
            let w = 2.0 * r
                + longest(report, right)
                + longest(report, left)
                + 2.0 * (LABEL_GAP + MARGIN);
            let h = 2.0 * r + 2.0 * MARGIN;
            cells.push(Cell {
                w,
                h,
                community: Some(c),
            });
        }
        let (lone_column, lone_rows) = lone_block(report, &lone, &mut cells);
        // Tallest first; ties by community order (lone block last).
        cells.sort_by(|a, b| {
            b.h.total_cmp(&a.h).then(
                a.community
                    .unwrap_or(usize::MAX)
                    .cmp(&b.community.unwrap_or(usize::MAX)),
            )
        });
        let shelf_width = best_shelf_width(&cells);
        let (boxes, used, _) = pack(&cells, shelf_width);
        let shelf_width = used.max(LEGEND_COLUMN * 2.0);
        let width = shelf_width + 2.0 * MARGIN;

        // Legend across the top.
        let (legend, legend_member, legend_rows) =
            legend_entries(report, &groups, (&degree, &component_of), width);
        let top = TITLE + 12.0 + legend_rows as f64 * LEGEND_ROW + MARGIN;

        let mut pos = vec![(0.0, 0.0); n];
        let mut side = vec![Side::Right; n];
        let mut circle = vec![(0.0, 0.0, 0.0); k];
        let mut loose = None;
        for (cell, &(bx, by, w, h)) in cells.iter().zip(&boxes) {
            let (x, y) = (MARGIN + bx, top + by);
            match cell.community {
                Some(c) => {
                    circle[c] = place_circle(report, &groups[c], (x, y, w, h), &mut pos, &mut side);
                }
                None => {
                    loose = Some((x, y, w, h));
                    for (j, &t) in lone.iter().enumerate() {
                        let (col, row) = (j / lone_rows, j % lone_rows);
                        pos[t] = (
                            x + MARGIN + col as f64 * lone_column,
                            y + MARGIN + ROW * 1.5 + row as f64 * ROW,
                        );
                        side[t] = Side::Right;
                        circle[report.membership[t]] = (pos[t].0, pos[t].1, 0.0);
                    }
                }
            }
        }
        let height = top + boxes.iter().map(|b| b.1 + b.3).fold(0.0, f64::max);
        Layout {
            pos,
            side,
            circle,
            legend,
            legend_member,
            loose,
            width,
            height: height + MARGIN,
        }
    }
}

/// The block of truths alone in their community: columns of labels,
/// about as tall as wide, added to `cells`; its column width and rows.
fn lone_block(report: &GraphReport, lone: &[usize], cells: &mut Vec<Cell>) -> (f64, usize) {
    let lone_column = lone
        .iter()
        .map(|&t| label_width(&report.nodes[t]))
        .fold(0.0, f64::max)
        + LABEL_GAP
        + 2.0 * MARGIN;
    let lone_columns = if lone.is_empty() {
        0
    } else {
        ((lone.len() as f64 * ROW / lone_column).sqrt().ceil() as usize).clamp(1, lone.len())
    };
    let lone_rows = lone.len().div_ceil(lone_columns.max(1));
    if !lone.is_empty() {
        cells.push(Cell {
            w: lone_columns as f64 * lone_column,
            h: lone_rows as f64 * ROW + 2.0 * MARGIN + ROW,
            community: None,
        });
    }
    (lone_column, lone_rows)
}

/// A circle's truths: the right side holds the first half, the left the
/// rest.
fn split(g: &[usize]) -> usize {
    g.len().div_ceil(2)
}

/// The radius of a community's circle.
fn radius(g: &[usize]) -> f64 {
    (split(g) as f64 * ROW / 2.0 + 10.0).max(26.0)
}

/// The widest label of `side`'s truths.
fn longest(report: &GraphReport, side: &[usize]) -> f64 {
    side.iter()
        .map(|&t| label_width(&report.nodes[t]))
        .fold(0.0, f64::max)
}

/// Places community `g`'s truths round its circle in the cell `(x, y, w,
/// h)`: down the right side, then up the left (clockwise), each at its
/// side's label; the circle sits where its labels balance. Returns the
/// circle `(cx, cy, r)`.
fn place_circle(
    report: &GraphReport,
    g: &[usize],
    (x, y, w, h): CellBox,
    pos: &mut [(f64, f64)],
    side: &mut [Side],
) -> (f64, f64, f64) {
    let (right, left) = g.split_at(split(g));
    let r = radius(g);
    let cx = x
        + (w - (2.0 * r + longest(report, right) + longest(report, left))) / 2.0
        + longest(report, left)
        + r;
    let cy = y + h / 2.0;
    let place = |count: usize, k: usize| -> f64 { (k as f64 - (count as f64 - 1.0) / 2.0) * ROW };
    for (k, &t) in right.iter().enumerate() {
        let dy = place(right.len(), k);
        pos[t] = (cx + (r * r - dy * dy).max(0.0).sqrt(), cy + dy);
        side[t] = Side::Right;
    }
    // Up the left side (clockwise round the circle).
    for (k, &t) in left.iter().rev().enumerate() {
        let dy = place(left.len(), k);
        pos[t] = (cx - (r * r - dy * dy).max(0.0).sqrt(), cy + dy);
        side[t] = Side::Left;
    }
    (cx, cy, r)
}

/// Each truth's weighted degree (a community is named by its
/// best-connected member) and the index of its component.
fn degrees_and_components(report: &GraphReport) -> (Vec<u64>, Vec<usize>) {
    let n = report.nodes.len();
    let mut degree = vec![0u64; n];
    for &(a, b, w) in &report.edge_index {
        degree[a] += u64::from(w);
        degree[b] += u64::from(w);
    }
    let mut component_of = vec![0usize; n];
    let position: BTreeMap<&str, usize> = report
        .nodes
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    for (i, members) in report.components.iter().enumerate() {
        for m in members {
            if let Some(&t) = position.get(m.as_str()) {
                component_of[t] = i;
            }
        }
    }
    (degree, component_of)
}

/// The shelf width whose packing of `cells` is smallest on a landscape
/// page.
fn best_shelf_width(cells: &[Cell]) -> f64 {
    let widest = cells.iter().map(|c| c.w).fold(0.0, f64::max);
    let total: f64 = cells.iter().map(|c| c.w).sum();
    let floor = widest.max(LEGEND_COLUMN * 2.0);
    let mut best: Option<(f64, f64)> = None;
    for step in 0..=40 {
        let candidate = floor + (total - floor).max(0.0) * step as f64 / 40.0;
        let (_, used, height) = pack(cells, candidate);
        let aspect = used / height.max(1.0);
        let penalty = 1.0 + 2.0 * (1.2 - aspect).max(0.0) + (aspect - 2.2).max(0.0);
        let score = used * height * penalty;
        if best.is_none_or(|(s, _)| score < s - 1e-9) {
            best = Some((score, candidate));
        }
    }
    best.map_or(floor, |(_, w)| w)
}

/// The legend across the top: each community's place, and its name (its
/// best-connected member, its size and component); the legend's rows.
fn legend_entries(
    report: &GraphReport,
    groups: &[Vec<usize>],
    (degree, component_of): (&[u64], &[usize]),
    width: f64,
) -> (Vec<(usize, f64, f64)>, Vec<String>, usize) {
    let k = groups.len();
    let legend_columns = ((width - 2.0 * MARGIN) / LEGEND_COLUMN).floor().max(1.0) as usize;
    let legend_rows = k.div_ceil(legend_columns);
    let mut legend = Vec::with_capacity(k);
    let mut legend_member = Vec::with_capacity(k);
    for (c, group) in groups.iter().enumerate() {
        let (col, row) = (c / legend_rows.max(1), c % legend_rows.max(1));
        legend.push((
            c,
            MARGIN + col as f64 * LEGEND_COLUMN,
            TITLE + 12.0 + row as f64 * LEGEND_ROW,
        ));
        let best = group
            .iter()
            .copied()
            .max_by(|&a, &b| degree[a].cmp(&degree[b]).then(b.cmp(&a)));
        let name = best.map(|t| report.nodes[t].clone()).unwrap_or_default();
        let size = group.len();
        let component = best.map(|t| component_of[t]).unwrap_or(0);
        legend_member.push(if size > 1 {
            format!("{name} + {} more (component {component})", size - 1)
        } else {
            format!("{name} (alone, component {component})")
        });
    }
    (legend, legend_member, legend_rows)
}

/// Where a cell goes: `(x, y, w, h)`.
type CellBox = (f64, f64, f64, f64);

/// Packs cells (tallest first) into shelves `width` wide: a shelf is as
/// tall as its first cell; cells go into columns, stacked while they fit
/// the shelf's height, a new column while the shelf has width left. A
/// full shelf shares its spare width out between its columns, a column
/// its spare height between its cells. Returns each cell's box `(x, y, w,
/// h)`, the width used and the height.
fn pack(cells: &[Cell], width: f64) -> (Vec<CellBox>, f64, f64) {
    // shelves -> columns -> cell indices
    let mut shelves: Vec<(f64, Vec<Vec<usize>>)> = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let column_width = |col: &Vec<usize>| cells_width(cells, col);
        let placed = shelves.last_mut().is_some_and(|(height, columns)| {
            let used: f64 = columns.iter().map(column_width).sum();
            let last = columns.last_mut().expect("a shelf has a column");
            let stacked: f64 = last.iter().map(|&j| cells[j].h).sum();
            let last_width = cells_width(cells, last);
            if stacked + cell.h <= *height + 1e-9 && cell.w <= last_width.max(1.0) * 1.25 {
                let grown = used - last_width + last_width.max(cell.w);
                if grown <= width + 1e-9 {
                    last.push(i);
                    return true;
                }
            }
            if used + cell.w <= width + 1e-9 {
                columns.push(vec![i]);
                return true;
            }
            false
        });
        if !placed {
            shelves.push((cell.h, vec![vec![i]]));
        }
    }
    let mut boxes = vec![(0.0, 0.0, 0.0, 0.0); cells.len()];
    let (mut y, mut used_width) = (0.0, 0.0f64);
    for (height, columns) in &shelves {
        let widths: Vec<f64> = columns.iter().map(|c| cells_width(cells, c)).collect();
        let row: f64 = widths.iter().sum();
        let extra = if row > 0.6 * width && shelves.len() > 1 {
            (width - row).max(0.0) / columns.len() as f64
        } else {
            0.0
        };
        let mut x = 0.0;
        for (column, w) in columns.iter().zip(&widths) {
            let stacked: f64 = column.iter().map(|&j| cells[j].h).sum();
            let spare = (height - stacked) / column.len() as f64;
            let mut cy = y;
            for &j in column {
                let h = cells[j].h + spare;
                boxes[j] = (x, cy, w + extra, h);
                cy += h;
            }
            x += w + extra;
        }
        used_width = used_width.max(x);
        y += height;
    }
    (boxes, used_width, y)
}

/// The width of a column: its widest cell.
fn cells_width(cells: &[Cell], column: &[usize]) -> f64 {
    column.iter().map(|&j| cells[j].w).fold(0.0, f64::max)
}
