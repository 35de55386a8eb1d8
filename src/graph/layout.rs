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
//!   tallest first, the shelf width chosen for a landscape page; a shelf's
//!   spare width is shared out between its cells so rows end flush.
//! - The legend runs across the top in columns, naming each community by
//!   its best-connected member (and its component).

use std::collections::BTreeMap;

use super::render::GraphReport;

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
        // Weighted degree: a community is named by its best-connected member.
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

        // Circles: right side first half, left side the rest.
        let split = |g: &[usize]| g.len().div_ceil(2);
        let radius = |g: &[usize]| (split(g) as f64 * ROW / 2.0 + 10.0).max(26.0);
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
            let longest = |side: &[usize]| {
                side.iter()
                    .map(|&t| label_width(&report.nodes[t]))
                    .fold(0.0, f64::max)
            };
            let r = radius(g);
            let w = 2.0 * r + longest(right) + longest(left) + 2.0 * (LABEL_GAP + MARGIN);
            let h = 2.0 * r + 2.0 * MARGIN;
            cells.push(Cell {
                w,
                h,
                community: Some(c),
            });
        }
        // Lone truths: columns of labels, about as tall as wide.
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
        // Tallest first; ties by community order (lone block last).
        cells.sort_by(|a, b| {
            b.h.total_cmp(&a.h)
                .then(a.community.unwrap_or(usize::MAX).cmp(&b.community.unwrap_or(usize::MAX)))
        });
        let area: f64 = cells.iter().map(|c| c.w * c.h).sum();
        let widest = cells.iter().map(|c| c.w).fold(0.0, f64::max);
        let shelf_width = (area * 1.5).sqrt().max(widest).max(LEGEND_COLUMN * 2.0);

        // Shelves.
        let mut shelves: Vec<Vec<usize>> = vec![Vec::new()];
        let mut used = 0.0;
        for (i, cell) in cells.iter().enumerate() {
            if used > 0.0 && used + cell.w > shelf_width {
                shelves.push(Vec::new());
                used = 0.0;
            }
            shelves.last_mut().expect("one shelf").push(i);
            used += cell.w;
        }
        let width = shelf_width + 2.0 * MARGIN;

        // Legend across the top.
        let legend_columns = ((width - 2.0 * MARGIN) / LEGEND_COLUMN).floor().max(1.0) as usize;
        let legend_rows = k.div_ceil(legend_columns);
        let mut legend = Vec::with_capacity(k);
        let mut legend_member = Vec::with_capacity(k);
        for c in 0..k {
            let (col, row) = (c / legend_rows.max(1), c % legend_rows.max(1));
            legend.push((
                c,
                MARGIN + col as f64 * LEGEND_COLUMN,
                TITLE + 12.0 + row as f64 * LEGEND_ROW,
            ));
            let best = groups[c]
                .iter()
                .copied()
                .max_by(|&a, &b| degree[a].cmp(&degree[b]).then(b.cmp(&a)));
            let name = best.map(|t| report.nodes[t].clone()).unwrap_or_default();
            let size = groups[c].len();
            let component = best.map(|t| component_of[t]).unwrap_or(0);
            legend_member.push(if size > 1 {
                format!("{name} + {} more (component {component})", size - 1)
            } else {
                format!("{name} (alone, component {component})")
            });
        }
        let top = TITLE + 12.0 + legend_rows as f64 * LEGEND_ROW + MARGIN;

        let mut pos = vec![(0.0, 0.0); n];
        let mut side = vec![Side::Right; n];
        let mut circle = vec![(0.0, 0.0, 0.0); k];
        let mut loose = None;
        let mut y = top;
        for shelf in &shelves {
            let row_h = shelf.iter().map(|&i| cells[i].h).fold(0.0, f64::max);
            let row_w: f64 = shelf.iter().map(|&i| cells[i].w).sum();
            // Share the spare width out between the cells when the shelf
            // is mostly full (a short last shelf stays left-aligned).
            let spare = shelf_width - row_w;
            let extra = if row_w > 0.6 * shelf_width {
                spare / shelf.len() as f64
            } else {
                0.0
            };
            let mut x = MARGIN;
            for &i in shelf {
                let cell = &cells[i];
                let w = cell.w + extra;
                match cell.community {
                    Some(c) => {
                        let g = &groups[c];
                        let (right, left) = g.split_at(split(g));
                        let longest = |side: &[usize]| {
                            side.iter()
                                .map(|&t| label_width(&report.nodes[t]))
                                .fold(0.0, f64::max)
                        };
                        let r = radius(g);
                        // The circle sits where its labels balance.
                        let cx = x
                            + (w - (2.0 * r + longest(right) + longest(left))) / 2.0
                            + longest(left)
                            + r;
                        let cy = y + row_h / 2.0;
                        circle[c] = (cx, cy, r);
                        let place = |count: usize, k: usize| -> f64 {
                            (k as f64 - (count as f64 - 1.0) / 2.0) * ROW
                        };
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
                    }
                    None => {
                        loose = Some((x, y, w, cell.h));
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
                x += w;
            }
            y += row_h;
        }
        Layout {
            pos,
            side,
            circle,
            legend,
            legend_member,
            loose,
            width,
            height: y + MARGIN,
        }
    }
}
