//! What a proposed domain must pass before it is written: the YAML cut out
//! of the model's reply, the validator (errors *and* warnings: a new
//! domain has no excuse for KUMO's published quirks, and the validator's
//! look-alike names and truths nothing rules out are warnings), and then
//! what the validator does not check: the requested name and sizes, names
//! compared case-insensitively, a short SAT sample at 4x6 and at the
//! requested setting, and a truth graph that is not one clique (so
//! `kumo-gen split` can split it).
//!
//! Every finding is a [`Diagnostic`], located where the validator locates
//! it, so the repair prompt and the user see one format.

use crate::domain::{Diagnostic, Domain, Kind, LoadError, Severity};
use crate::graph::DomainGraph;
use crate::synth::{Dedup, Params, Stats, Synthesizer};

/// Instances drawn at each checked setting.
pub const SAMPLE_INSTANCES: u64 = 20;

/// The small setting every proposed domain must synthesize at.
pub const SMALL_SETTING: (usize, usize) = (4, 6);

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wanted {
    /// The domain's `name:`.
    pub name: String,
    /// At least this many truths and actions; also the setting sampled.
    pub truths: usize,
    pub actions: usize,
}

/// The domain file in a reply: the first fenced code block (a cut-off
/// block runs to the end), else the whole reply.
pub fn extract_yaml(reply: &str) -> String {
    let Some(start) = reply.find("```") else {
        return format!("{}\n", reply.trim());
    };
    let after = &reply[start + 3..];
    // Skip the info string (`yaml`) up to the end of the fence line.
    let body = after.split_once('\n').map_or("", |(_, rest)| rest);
    let body = match body.find("\n```") {
        Some(end) => &body[..end + 1],
        None if body.starts_with("```") => "",
        None => body,
    };
    let mut text = body.trim_end().to_string();
    text.push('\n');
    text
}

/// Checks the domain file `text`; `file` names it in diagnostics. All
/// findings come back together; the domain only when there are none.
pub fn check(file: &str, text: &str, wanted: &Wanted) -> Result<Domain, Vec<Diagnostic>> {
    let (domain, warnings) = match Domain::from_yaml(file, text) {
        Ok(loaded) => loaded,
        Err(LoadError::Invalid(diagnostics)) => return Err(diagnostics),
        Err(other) => {
            return Err(vec![Diagnostic::error(
                Kind::File,
                file,
                "",
                other.to_string(),
            )]);
        }
    };
    let mut found: Vec<Diagnostic> = warnings
        .into_iter()
        .map(|w| Diagnostic {
            severity: Severity::Error,
            help: Some(format!(
                "{}a new domain must pass without warnings",
                w.help
                    .as_deref()
                    .map_or(String::new(), |h| format!("{h}; "))
            )),
            ..w
        })
        .collect();
    let error = |kind, path: &str, message: String, help: &str| {
        Diagnostic::error(kind, file, path, message).with_help(help)
    };
    if domain.name != wanted.name {
        found.push(error(
            Kind::Shape,
            "name",
            format!(
                "the domain is called `{}`, not `{}`",
                domain.name, wanted.name
            ),
            &format!("write `name: {}`", wanted.name),
        ));
    }
    if domain.document.case_sensitive_names {
        found.push(error(
            Kind::Name,
            "case_sensitive_names",
            "`case_sensitive_names: true` lets names differ only in letter case".into(),
            "remove the key and give every name a distinct spelling",
        ));
    }
    let sizes = [
        ("truths", domain.truths.len(), wanted.truths),
        ("actions", domain.actions.len(), wanted.actions),
    ];
    let mut big_enough = true;
    for (what, has, needs) in sizes {
        if has < needs {
            big_enough = false;
            found.push(error(
                Kind::Structure,
                what,
                format!("the domain has {has} {what}; at least {needs} were asked for"),
                &format!("add {} more {what}", needs - has),
            ));
        }
    }
    if let Some(d) = one_clique(file, &domain) {
        found.push(d);
    }
    if big_enough {
        let mut settings = vec![SMALL_SETTING];
        if (wanted.truths, wanted.actions) != SMALL_SETTING {
            settings.push((wanted.truths, wanted.actions));
        }
        for (truths, actions) in settings {
            if let Err(message) = sample(&domain, truths, actions) {
                found.push(error(
                    Kind::Coverage,
                    "",
                    format!("no {SAMPLE_INSTANCES} distinct games with {truths} truths and {actions} actions: {message}"),
                    "rule each truth out in several actions, with states that rule out few truths each",
                ));
            }
        }
    }
    if found.is_empty() {
        Ok(domain)
    } else {
        Err(found)
    }
}

/// A finding when every two truths co-occur in some action.
fn one_clique(file: &str, domain: &Domain) -> Option<Diagnostic> {
    let n = domain.truths.len();
    let graph = DomainGraph::build(domain);
    (n >= 2 && graph.edge_count() == n * (n - 1) / 2).then(|| {
        Diagnostic::error(
            Kind::Structure,
            file,
            "actions",
            format!("every two of the {n} truths are ruled out by states of one same action: the truth graph is one clique, so the domain cannot be split"),
        )
        .with_help("let each action rule out only a small group of related truths, not nearly all of them")
    })
}

/// Draws [`SAMPLE_INSTANCES`] distinct instances at one setting.
fn sample(domain: &Domain, truths: usize, actions: usize) -> Result<(), String> {
    let synth = Synthesizer::new(domain, Params::new(truths, actions, 1)).map_err(|e| e.message)?;
    synth.check_count(SAMPLE_INSTANCES).map_err(|e| e.message)?;
    synth
        .generate(
            0..SAMPLE_INSTANCES,
            &mut Dedup::new(),
            &mut Stats::default(),
        )
        .map(|_| ())
        .map_err(|e| e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_is_cut_out_of_fences() {
        assert_eq!(
            extract_yaml("Here:\n```yaml\nname: a\n```\nDone."),
            "name: a\n"
        );
        assert_eq!(
            extract_yaml("```\nname: a\ntruths: []"),
            "name: a\ntruths: []\n"
        );
        assert_eq!(extract_yaml("  name: a  \n"), "name: a\n");
    }

    fn ring(n: usize, extra: &str) -> String {
        let mut y = format!(
            "name: ring\ntruths: [{}]\nactions:\n",
            (0..n)
                .map(|i| format!("T{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for i in 0..n {
            y.push_str(&format!(
                "- name: A{i}\n  type: str\n  states:\n    x: [T{i}]\n    y: [T{}]\n    z: []\n",
                (i + 1) % n
            ));
        }
        y + extra
    }

    #[test]
    fn a_ring_passes_and_a_clique_or_small_domain_does_not() {
        let wanted = Wanted {
            name: "ring".into(),
            truths: 8,
            actions: 8,
        };
        check("r.yaml", &ring(8, ""), &wanted).unwrap();
        let all = (0..8)
            .map(|i| format!("T{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let clique = ring(
            8,
            &format!("- name: All\n  type: str\n  states:\n    x: [{all}]\n    y: []\n"),
        );
        let e = check("r.yaml", &clique, &wanted).unwrap_err();
        assert!(e.iter().any(|d| d.message.contains("one clique")), "{e:?}");
        let bigger = Wanted {
            truths: 9,
            ..wanted.clone()
        };
        let e = check("r.yaml", &ring(8, ""), &bigger).unwrap_err();
        assert!(
            e.iter()
                .any(|d| d.message.contains("has 8 truths; at least 9")),
            "{e:?}"
        );
        let renamed = Wanted {
            name: "other".into(),
            ..wanted
        };
        let e = check("r.yaml", &ring(8, ""), &renamed).unwrap_err();
        assert!(e.iter().any(|d| d.path == "name"), "{e:?}");
    }

    #[test]
    fn validator_warnings_are_errors_here() {
        // T8 is ruled out nowhere: a warning for the validator.
        let text = ring(8, "").replace("truths: [T0,", "truths: [T8, T0,");
        let wanted = Wanted {
            name: "ring".into(),
            truths: 8,
            actions: 8,
        };
        let e = check("r.yaml", &text, &wanted).unwrap_err();
        assert!(
            e.iter()
                .any(|d| d.is_error() && d.kind == Kind::Coverage && d.message.contains("T8")),
            "{e:?}"
        );
    }
}
