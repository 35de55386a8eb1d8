//! `kumo-gen split`: split a domain into `<name>-ind.yaml` and
//! `<name>-ood.yaml` (see `graph::split` for the rule), and report sizes,
//! balance, the cut and what was dropped (text, or JSON with `--json`).

use std::fmt::Write as _;
use std::io;
use std::path::PathBuf;

use super::graph::write_atomic;
use super::{Error, Globals, Report, out};
use crate::graph::split::{SideReport, SplitMethod, SplitOptions, SplitReport, split};

#[derive(clap::Args, Debug)]
pub struct SplitArgs {
    /// Domain name or path to a .yaml file.
    #[arg(long, value_name = "NAME|PATH")]
    domain: String,
    /// Directory for `<name>-ind.yaml` and `<name>-ood.yaml` (created if missing).
    #[arg(long, value_name = "DIR")]
    out_dir: PathBuf,
    /// How to group truths: connected components (falling back to Louvain
    /// when one component holds more than 80% of the truths) or Louvain.
    #[arg(long, value_enum, default_value_t = MethodFlag::Components)]
    method: MethodFlag,
    /// Seed of the Louvain runs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// `--method`'s values: the library's [`SplitMethod`], as the command
/// line names and explains them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum MethodFlag {
    /// Connected components, falling back to Louvain (see the module docs).
    Components,
    /// Louvain communities.
    Louvain,
}

impl From<MethodFlag> for SplitMethod {
    fn from(flag: MethodFlag) -> SplitMethod {
        match flag {
            MethodFlag::Components => SplitMethod::Components,
            MethodFlag::Louvain => SplitMethod::Louvain,
        }
    }
}

/// Runs `kumo-gen split`.
pub fn run(globals: &Globals, args: &SplitArgs) -> Result<Report, Error> {
    super::flags::check_out_dir(&args.out_dir, "--out-dir")?;
    let (domain, _warnings) = globals.registry.load(&args.domain)?;
    let options = SplitOptions {
        method: args.method.into(),
        seed: args.seed,
        ..SplitOptions::default()
    };
    let split = split(&domain, &options)?;
    std::fs::create_dir_all(&args.out_dir)
        .map_err(|e| crate::files::FileError::io(&args.out_dir, e))?;
    // Refuse before writing either half.
    for doc in [&split.ind, &split.ood] {
        let path = args.out_dir.join(format!("{}.yaml", doc.name));
        super::flags::refuse_overwriting_domain(
            &globals.registry,
            &args.domain,
            &path,
            "--out-dir",
        )?;
    }
    let mut files = Vec::new();
    for doc in [&split.ind, &split.ood] {
        let path = args.out_dir.join(format!("{}.yaml", doc.name));
        let header = format!(
            "# Split of domain `{}` by `kumo-gen split --method {} --seed {}` ({}).\n",
            domain.name,
            split.report.method.as_str(),
            split.report.seed,
            if doc.name == split.ind.name {
                "in-domain half"
            } else {
                "out-of-domain half"
            }
        );
        let text = header + &doc.to_yaml();
        write_atomic(&path, text.as_bytes())?;
        files.push(path);
    }
    if args.json {
        let mut value = serde_json::to_value(&split.report).map_err(io::Error::other)?;
        value["files"] = files
            .iter()
            .map(|p| serde_json::Value::String(p.display().to_string()))
            .collect();
        let mut text = serde_json::to_string_pretty(&value).map_err(io::Error::other)?;
        text.push('\n');
        out(&text)?;
    } else {
        out(&text_report(&split.report, &files))?;
    }
    Ok(Report::Done)
}

/// The human-readable report.
fn text_report(r: &SplitReport, files: &[PathBuf]) -> String {
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
