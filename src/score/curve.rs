//! Reduction curves (WILT's measure, exact): how many hypotheses (truths)
//! are left after each action, for a player's trials and for the optimal
//! policy's golden trajectory on the same instances.
//!
//! In: result files, and for their groups the instances and the domain
//! ([`Sources`]). A trial's actions are its string entries that name an
//! instance action, up to the first that names a truth; each rules out
//! what its observed state rules out. Curves are averaged per step over
//! the trials (a finished trial keeps its last count). Out: [`Curve`]s and
//! an SVG with one panel per group ([`render_curve_svg`]).

use std::fmt::Write as _;

use crate::results::{ResultFile, Sources};

/// The mean hypotheses left after each action, player and optimal, for
/// one result file's group.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// `model / domain / setting`.
    pub label: String,
    pub player: Vec<f64>,
    pub optimal: Vec<f64>,
    pub trials: usize,
}

/// The mean per step of curves of different lengths (each padded with its
/// last value).
pub fn mean_curve(curves: &[Vec<f64>]) -> Vec<f64> {
    let longest = curves.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest)
        .map(|k| {
            let sum: f64 = curves
                .iter()
                .map(|c| c.get(k).or(c.last()).copied().unwrap_or(0.0))
                .sum();
            sum / curves.len().max(1) as f64
        })
        .collect()
}

/// The curves of every result file whose instances and domain are known.
pub fn curves(files: &[ResultFile], sources: &Sources) -> Vec<Curve> {
    let mut out = Vec::new();
    for file in files {
        let (Some(set), Some(domain)) = (
            sources.instances(&file.key),
            sources.domains.get(&file.key.domain),
        ) else {
            continue;
        };
        let (mut player, mut optimal) = (Vec::new(), Vec::new());
        for line in &file.lines {
            let Some(instance) = line
                .seed
                .and_then(|seed| set.instances.iter().find(|i| i.seed == seed))
            else {
                continue;
            };
            let Ok(resolved) = instance.resolve(domain) else {
                continue;
            };
            if let Some(golden) = &resolved.golden {
                optimal.push(resolved.remaining_after(domain, golden));
            }
            for trial in &line.trials {
                let positions: Vec<usize> = trial
                    .said
                    .iter()
                    .map_while(|name| instance.actions.iter().position(|a| a == name))
                    .collect();
                player.push(resolved.remaining_after(domain, &positions));
            }
        }
        if player.is_empty() {
            continue;
        }
        out.push(Curve {
            label: format!(
                "{} / {} / {}",
                file.key.model, file.key.domain, file.key.setting
            ),
            trials: player.len(),
            player: mean_curve(&player),
            optimal: mean_curve(&optimal),
        });
    }
    out
}

/// One panel per curve: hypotheses left (y) after each action (x), the
/// player's mean solid, the optimal policy's dashed.
pub fn render_curve_svg(curves: &[Curve]) -> String {
    const W: f64 = 560.0;
    const H: f64 = 220.0;
    const PAD: f64 = 40.0;
    let mut svg = String::new();
    let height = H * curves.len().max(1) as f64;
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" font-family="sans-serif" font-size="11">"#
    );
    for (i, c) in curves.iter().enumerate() {
        let top = H * i as f64;
        let steps = c.player.len().max(c.optimal.len()).max(2) - 1;
        let most = c
            .player
            .iter()
            .chain(&c.optimal)
            .copied()
            .fold(1.0_f64, f64::max);
        let x = |k: usize| PAD + (W - 2.0 * PAD) * k as f64 / steps as f64;
        let y = |v: f64| top + H - PAD - (H - 2.0 * PAD) * v / most;
        let points = |values: &[f64]| {
            values
                .iter()
                .enumerate()
                .map(|(k, &v)| format!("{:.1},{:.1}", x(k), y(v)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let label = c
            .label
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        let _ = writeln!(
            svg,
            r#"<text x="{PAD}" y="{:.1}">{label} ({} trials): hypotheses left after each action</text>"#,
            top + 16.0,
            c.trials
        );
        let _ = writeln!(
            svg,
            r##"<line x1="{PAD}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#888"/><line x1="{PAD}" y1="{:.1}" x2="{PAD}" y2="{:.1}" stroke="#888"/>"##,
            y(0.0),
            W - PAD,
            y(0.0),
            y(0.0),
            y(most)
        );
        let _ = writeln!(
            svg,
            r#"<text x="4" y="{:.1}">{most:.0}</text><text x="4" y="{:.1}">0</text><text x="{:.1}" y="{:.1}">{steps} actions</text>"#,
            y(most) + 4.0,
            y(0.0),
            W - PAD - 40.0,
            y(0.0) + 14.0
        );
        let _ = writeln!(
            svg,
            r##"<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{}"/>"##,
            points(&c.player)
        );
        let _ = writeln!(
            svg,
            r##"<polyline fill="none" stroke="#d62728" stroke-width="2" stroke-dasharray="6 4" points="{}"/>"##,
            points(&c.optimal)
        );
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" fill="#1f77b4">player</text><text x="{:.1}" y="{:.1}" fill="#d62728">optimal</text>"##,
            W - PAD - 60.0,
            top + 32.0,
            W - PAD - 60.0,
            top + 46.0
        );
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means_pad_finished_curves() {
        assert_eq!(
            mean_curve(&[vec![4.0, 2.0, 1.0], vec![4.0, 1.0]]),
            [4.0, 1.5, 1.0]
        );
        assert!(mean_curve(&[]).is_empty());
    }
}
