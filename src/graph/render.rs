//! Renderings of a domain graph: a text summary, JSON, Graphviz DOT and a
//! self-contained SVG picture, all from a [`GraphReport`].
//!
//! In: a [`GraphReport`] (the graph, its components and Louvain
//! communities, by truth name). Out: strings; the CLI writes them.
//!
//! The SVG layout is deterministic and needs no solver (`layout`): each
//! community is a circle of its truths with horizontal labels, lone
//! truths share one block, the cells fill a landscape page in shelves
//! under a legend that names each community by a member. Nodes are
//! coloured by community; edges inside a community take its colour, edges
//! between communities are grey, and width grows with weight. Hovering a
//! node or an edge shows its name (SVG `<title>`).

use std::fmt::Write as _;

use super::layout::{LABEL_GAP, Layout, Side};
use super::report::GraphReport;

impl GraphReport {
    /// Total edge weight.
    fn weight(&self) -> u64 {
        self.edges.iter().map(|e| u64::from(e.2)).sum()
    }

    /// A human-readable summary.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let sizes = |groups: &[Vec<String>]| {
            groups
                .iter()
                .map(|g| g.len().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let _ = writeln!(s, "domain       {} ({})", self.domain, self.title);
        let _ = writeln!(s, "nodes        {}", self.nodes.len());
        let _ = writeln!(
            s,
            "edges        {} (total weight {})",
            self.edges.len(),
            self.weight()
        );
        let _ = writeln!(
            s,
            "components   {} (sizes {})",
            self.components.len(),
            sizes(&self.components)
        );
        let _ = writeln!(
            s,
            "communities  {} (sizes {})",
            self.communities.len(),
            sizes(&self.communities)
        );
        let _ = writeln!(
            s,
            "modularity   {:.4} (Louvain, best of {} runs, seed {})",
            self.modularity, self.runs, self.seed
        );
        for (c, members) in self.communities.iter().enumerate() {
            let _ = writeln!(s, "\ncommunity {c} ({}):", members.len());
            for m in members {
                let _ = writeln!(s, "  {m}");
            }
        }
        s
    }

    /// JSON (pretty, with a final newline).
    pub fn json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{e}"));
        s.push('\n');
        s
    }

    /// Graphviz DOT: one cluster per community.
    pub fn dot(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "graph {} {{", dot_id(&self.domain));
        let _ = writeln!(
            s,
            "  label={};\n  labelloc=t;\n  node [shape=ellipse, style=filled, fontname=\"Helvetica\"];",
            dot_id(&format!(
                "{}: {} communities, Q = {:.4}",
                self.title,
                self.communities.len(),
                self.modularity
            ))
        );
        for (c, members) in self.communities.iter().enumerate() {
            let _ = writeln!(s, "  subgraph cluster_{c} {{");
            let _ = writeln!(
                s,
                "    label={};\n    color=\"{}\";",
                dot_id(&format!("community {c} ({})", members.len())),
                colour(c)
            );
            for m in members {
                let _ = writeln!(s, "    {} [fillcolor=\"{}\"];", dot_id(m), light_colour(c));
            }
            let _ = writeln!(s, "  }}");
        }
        for (a, b, w) in &self.edges {
            let _ = writeln!(
                s,
                "  {} -- {} [weight={w}, label=\"{w}\", penwidth={:.1}];",
                dot_id(a),
                dot_id(b),
                1.0 + (f64::from(*w)).ln()
            );
        }
        s.push_str("}\n");
        s
    }

    /// A self-contained SVG picture (see the module docs for the layout).
    pub fn svg(&self) -> String {
        let layout = Layout::new(self);
        let mut s = String::new();
        let (w, h) = (layout.width, layout.height);
        let _ = writeln!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"Helvetica, Arial, sans-serif\">"
        );
        let _ = writeln!(
            s,
            "<title>{}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
            xml(&format!("{} domain graph", self.domain))
        );
        let _ = writeln!(
            s,
            "<text x=\"20\" y=\"32\" font-size=\"20\" font-weight=\"bold\">{}</text>",
            xml(&self.title)
        );
        let _ = writeln!(
            s,
            "<text x=\"20\" y=\"54\" font-size=\"13\" fill=\"#444\">{}, {}, {}, {}, modularity Q = {:.4}</text>",
            count(self.nodes.len(), "node", "nodes"),
            count(self.edges.len(), "edge", "edges"),
            count(self.components.len(), "component", "components"),
            count(self.communities.len(), "community", "communities"),
            self.modularity
        );
        // Legend: each community named by its best-connected member.
        for (i, &(c, x, y)) in layout.legend.iter().enumerate() {
            let _ = writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"6\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\">{}</text>",
                x + 8.0,
                y - 4.0,
                colour(c),
                x + 20.0,
                y,
                xml(&layout.legend_member[i])
            );
        }
        if let Some((x, y, _, _)) = layout.loose {
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" fill=\"#555\">truths alone in their community</text>",
                x + 14.0,
                y + 24.0
            );
        }
        self.svg_edges(&mut s, &layout);
        s.push_str("</g>\n<g font-size=\"12\">\n");
        for (c, members) in self.communities.iter().enumerate() {
            if members.len() > 1 {
                let (cx, cy, r) = layout.circle[c];
                let _ = writeln!(
                    s,
                    "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"{:.1}\" fill=\"{}\" fill-opacity=\"0.12\" stroke=\"none\"/>",
                    r + 10.0,
                    colour(c)
                );
            }
        }
        for (t, name) in self.nodes.iter().enumerate() {
            let c = self.membership[t];
            let (x, y) = layout.pos[t];
            let _ = writeln!(
                s,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"{}\" stroke=\"#333\" stroke-width=\"0.8\"><title>{} (community {c})</title></circle>",
                colour(c),
                xml(name)
            );
            // Horizontal labels, outward: right of a node on the right
            // side of its circle, left of one on the left side.
            let (lx, anchor) = match layout.side[t] {
                Side::Right => (x + LABEL_GAP, "start"),
                Side::Left => (x - LABEL_GAP, "end"),
            };
            let _ = writeln!(
                s,
                "<text x=\"{lx:.1}\" y=\"{y:.1}\" dy=\"0.35em\" text-anchor=\"{anchor}\">{}</text>",
                xml(name)
            );
        }
        s.push_str("</g>\n</svg>\n");
        s
    }

    /// The edges: coloured by their community inside one, grey between
    /// two, wider with weight.
    fn svg_edges(&self, s: &mut String, layout: &Layout) {
        let max_w = self.edge_index.iter().map(|e| e.2).max().unwrap_or(1);
        s.push_str("<g stroke-linecap=\"round\">\n");
        for &(a, b, wt) in &self.edge_index {
            let (ca, cb) = (self.membership[a], self.membership[b]);
            let (stroke, opacity) = if ca == cb {
                (colour(ca), 0.55)
            } else {
                ("#999999", 0.35)
            };
            let width = 0.6 + 2.4 * f64::from(wt) / f64::from(max_w);
            let (p, q) = (layout.pos[a], layout.pos[b]);
            let _ = writeln!(
                s,
                "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{stroke}\" stroke-opacity=\"{opacity}\" stroke-width=\"{width:.2}\"><title>{} — {} (weight {wt})</title></line>",
                p.0,
                p.1,
                q.0,
                q.1,
                xml(&self.nodes[a]),
                xml(&self.nodes[b])
            );
        }
    }
}

/// A categorical palette (Tableau 10, then 10 darker variants), cycling.
const PALETTE: [&str; 20] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#2b5c8a", "#b8620f", "#a8292b", "#3f8580", "#2f6f2a", "#b39a14",
    "#7b4a6f", "#c7606c", "#6a4a37", "#7f7773",
];

fn colour(c: usize) -> &'static str {
    PALETTE[c % PALETTE.len()]
}

/// The palette colour mixed halfway with white, for DOT fills.
fn light_colour(c: usize) -> String {
    let hex = &colour(c)[1..];
    let channel = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0);
    let mix = |v: u8| (u16::from(v) + 255) / 2;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(channel(0)),
        mix(channel(2)),
        mix(channel(4))
    )
}

/// `1 node`, `2 nodes`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A quoted DOT identifier.
fn dot_id(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text escaped for XML content and attributes.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(dot_id("a \"b\" \\"), "\"a \\\"b\\\" \\\\\"");
        assert_eq!(xml("<a & 'b'>"), "&lt;a &amp; &apos;b&apos;&gt;");
        assert_eq!(light_colour(0), "#a6bcd3");
    }
}
