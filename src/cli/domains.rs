//! `kumo-gen validate` and `kumo-gen domains`: check domain files and list
//! the known domains.

use super::{Error, Globals, Report, out};
use crate::domain::{DomainSource, LoadError};

#[derive(clap::Args, Debug)]
pub struct ValidateArgs {
    /// Domain names or paths to .yaml files; none means every known domain.
    #[arg(value_name = "NAME|PATH")]
    domains: Vec<String>,
}

/// Validates the given domains (or all), printing every diagnostic.
pub fn validate(globals: &Globals, args: &ValidateArgs) -> Result<Report, Error> {
    let sources: Vec<Result<DomainSource, LoadError>> = if args.domains.is_empty() {
        match globals.registry.all() {
            Ok(all) => all.into_iter().map(|(_, s)| Ok(s)).collect(),
            Err(e) => vec![Err(e)],
        }
    } else {
        args.domains
            .iter()
            .map(|spec| globals.registry.resolve(spec))
            .collect()
    };
    let (mut passed, mut failed) = (0, 0);
    for source in sources {
        let name = source
            .as_ref()
            .map(DomainSource::display_name)
            .unwrap_or_default();
        match source.and_then(|s| s.load()) {
            Ok((domain, warnings)) => {
                for w in &warnings {
                    crate::stderr_line!("{w}\n");
                }
                passed += 1;
                out(&format!(
                    "ok    {:<24} {} truths, {} actions{}\n",
                    domain.name,
                    domain.truths.len(),
                    domain.actions.len(),
                    match warnings.len() {
                        0 => String::new(),
                        1 => ", 1 warning".into(),
                        n => format!(", {n} warnings"),
                    }
                ))?;
            }
            Err(e) => {
                failed += 1;
                crate::stderr_line!("{e}\n");
                out(&format!("FAIL  {name}\n"))?;
            }
        }
    }
    out(&format!("{passed} passed, {failed} failed\n"))?;
    Ok(Report::failed_if(failed > 0))
}

/// Lists every known domain as a table.
pub fn list(globals: &Globals) -> Result<Report, Error> {
    let all = globals.registry.all()?;
    let mut table = format!(
        "{:<24} {:>7} {:>8}  {}\n",
        "NAME", "TRUTHS", "ACTIONS", "TITLE"
    );
    let mut invalid = false;
    for (name, source) in all {
        match source.load() {
            Ok((d, _)) => table.push_str(&format!(
                "{:<24} {:>7} {:>8}  {}\n",
                d.name,
                d.truths.len(),
                d.actions.len(),
                d.title
            )),
            Err(e) => {
                crate::stderr_line!("{e}\n");
                table.push_str(&format!(
                    "{name:<24} {:>7} {:>8}  (invalid: run `kumo-gen validate {name}`)\n",
                    "-", "-"
                ));
                invalid = true;
            }
        }
    }
    out(&table)?;
    Ok(Report::failed_if(invalid))
}
