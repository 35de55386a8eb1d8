//! A split as text: each half's YAML file with the header that says how
//! it was made ([`Split::half_yaml`]), the human-readable report
//! ([`SplitReport::text`]) and the JSON report with the files written
//! ([`SplitReport::json`]), as `kumo-gen split` prints them.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::{SideReport, Split, SplitReport};
use crate::domain::DomainDoc;

impl Split {
    /// The YAML file of `half` (`self.ind` or `self.ood`), opening with a
    /// comment that names the domain, the method and the seed.
    pub fn half_yaml(&self, half: &DomainDoc) -> String {
        let header = format!(
            "# Split of domain `{}` by `kumo-gen split --method {} --seed {}` ({}).\n",
            self.report.domain,
            self.report.method.as_str(),
            self.report.seed,
            if half.name == self.ind.name {
                "in-domain half"
            } else {
                "out-of-domain half"
            }
        );
        header + &half.to_yaml()
    }
}

impl SplitReport {
    /// The report as pretty JSON with the `files` written, ending in a
    /// newline.
    pub fn json(&self, files: &[PathBuf]) -> serde_json::Result<String> {
        let mut value = serde_json::to_value(self)?;
        value["files"] = files
            .iter()
            .map(|p| serde_json::Value::String(p.display().to_string()))
            .collect();
        let mut text = serde_json::to_string_pretty(&value)?;
        text.push('\n');
        Ok(text)
    }

    /// The human-readable report, ending with the `files` written.
    pub fn text(&self, files: &[PathBuf]) -> String {
        let r = self;
        let mut s = String::new();
        let _ = writeln!(s, "domain     {}", r.domain);
        let _ = write!(s, "method     {}", r.method.as_str());
        if let (Some(gamma), Some(q)) = (r.resolution, r.modularity) {
            let _ = write!(s, " (resolution {gamma}, Q = {q:.4}, seed {}", r.seed);
            if let Some(a) = r.assignment {
                let _ = write!(s, ", {} assignment", a.as_str());
            }
            s.push(')');
        }
        s.push('\n');
        if let Some(reason) = &r.fallback {
            let _ = writeln!(
                s,
                "fallback   {} requested, but {reason}",
                r.requested.as_str()
            );
        }
        let sizes: Vec<String> = r
            .groups
            .iter()
            .map(|g| format!("{}:{}", g.side, g.truths.len()))
            .collect();
        let _ = writeln!(s, "groups     {} ({})", r.groups.len(), sizes.join(" "));
        let side = |s: &mut String, label: &str, side: &SideReport| {
            let _ = writeln!(
                s,
                "{label:<10} {:<28} {} truths, {} actions ({} dropped)",
                side.name,
                side.truths.len(),
                side.actions.len(),
                side.dropped_actions.len()
            );
        };
        side(&mut s, "ind", &r.ind);
        side(&mut s, "ood", &r.ood);
        let _ = writeln!(
            s,
            "balance    truths {:.2}, actions {:.2} (smaller / larger)",
            r.truth_balance, r.action_balance
        );
        let _ = writeln!(
            s,
            "cut        {} edges (weight {}), {} actions span both sides",
            r.cut.edges,
            r.cut.weight,
            r.cut.actions.len()
        );
        for a in &r.cut.actions {
            let _ = writeln!(s, "  spans: {a} (kept in ood, restricted)");
        }
        for (label, side) in [("ind", &r.ind), ("ood", &r.ood)] {
            for d in &side.dropped_actions {
                let _ = writeln!(s, "  dropped from {label}: {} ({})", d.action, d.reason);
            }
            for d in &side.dropped_rule_outs {
                let _ = writeln!(
                    s,
                    "  {label}: removed rule-outs of `{}` from action `{}` (ruled out by every state)",
                    d.truth, d.action
                );
            }
            if !side.unruled_truths.is_empty() {
                let _ = writeln!(
                    s,
                    "  {label}: no state rules out {}",
                    side.unruled_truths.join(", ")
                );
            }
        }
        for f in files {
            let _ = writeln!(s, "wrote      {}", f.display());
        }
        s
    }
}
