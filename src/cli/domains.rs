//! `kumo-gen validate` and `kumo-gen domains`: check domain files and list
//! the known domains.

use super::{Error, Globals, Report, out};
use crate::domain::{DomainSource, LoadError, expected_warnings_note, validated_line};

#[derive(clap::Args, Debug)]
pub struct ValidateArgs {
    /// Domain names or paths to .yaml files; none means every known domain.
    #[arg(value_name = "NAME|PATH")]
    domains: Vec<String>,
    /// Print every warning of the shipped domains too (without it, checking
    /// every domain sums up the shipped ones' expected warnings in one line).
    #[arg(long)]
    list_warnings: bool,
}

/// Validates the given domains (or all), printing every diagnostic, except
/// that checking every domain sums up the warnings of the shipped domains
/// (KUMO's published data, kept as KUMO has it: overlapping ranges, truths
/// no state rules out, case-only name pairs) unless `--list-warnings`.
pub fn validate(globals: &Globals, args: &ValidateArgs) -> Result<Report, Error> {
    let every = args.domains.is_empty();
    let sources: Vec<Result<DomainSource, LoadError>> = if every {
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
    let (mut expected, mut expected_domains) = (0, 0);
    for source in sources {
        let name = source
            .as_ref()
            .map(DomainSource::display_name)
            .unwrap_or_default();
        let shipped = matches!(source, Ok(DomainSource::Shipped(_)));
        match source.and_then(|s| s.load()) {
            Ok((domain, warnings)) => {
                let summed = every && shipped && !args.list_warnings;
                if summed && !warnings.is_empty() {
                    expected += warnings.len();
                    expected_domains += 1;
                } else {
                    for w in &warnings {
                        crate::stderr_line!("{w}\n");
                    }
                }
                passed += 1;
                out(&validated_line(&domain, warnings.len(), summed))?;
            }
            Err(e) => {
                failed += 1;
                crate::stderr_line!("{}\n", Error::from(e).report());
                out(&format!("FAIL  {name}\n"))?;
            }
        }
    }
    out(&format!("{passed} passed, {failed} failed\n"))?;
    if expected > 0 {
        crate::stderr_line!("{}", expected_warnings_note(expected, expected_domains));
    }
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
                crate::stderr_line!("{}\n", Error::from(e).report());
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
