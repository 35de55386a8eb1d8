//! `kumo-gen import FILE.py`: converts a KUMO Python domain file to domain
//! YAML with [`crate::import`], printing a note per change on stderr.
//!
//! The YAML goes to stdout, or to `-o OUT.yaml` written atomically (a
//! temporary file in the same directory, then a rename). The result is
//! validated like any domain file before it is written. Exit codes: 0 ok,
//! 1 the file cannot be read or imported or the result is invalid, 2 the
//! output cannot be written.

use std::path::{Path, PathBuf};

use super::{Error, Report, out};
use crate::domain::{Diagnostic, compile};
use crate::import::{ImportOptions, import_python};

/// Largest Python file accepted (KUMO's largest is about 40 KB).
const MAX_SOURCE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(clap::Args, Debug, Clone)]
pub struct ImportArgs {
    /// The KUMO Python data file, e.g. `medical_data.py`.
    #[arg(value_name = "FILE.py")]
    pub file: PathBuf,
    /// Write the YAML here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT.yaml")]
    pub output: Option<PathBuf>,
    /// Domain name (default: the file name without `_data.py`).
    #[arg(long)]
    pub name: Option<String>,
    /// Human-readable title.
    #[arg(long)]
    pub title: Option<String>,
    /// What a truth is, singular (e.g. `disease`).
    #[arg(long, value_name = "NOUN")]
    pub truth_noun: Option<String>,
    /// Plural of the truth noun (default: derived).
    #[arg(long, value_name = "PLURAL")]
    pub truth_plural: Option<String>,
    /// What an action is, singular (e.g. `diagnostic test`).
    #[arg(long, value_name = "NOUN")]
    pub action_noun: Option<String>,
    /// Plural of the action noun (default: derived).
    #[arg(long, value_name = "PLURAL")]
    pub action_plural: Option<String>,
    /// The player's goal (e.g. `identify the disease affecting the patient`).
    #[arg(long)]
    pub goal: Option<String>,
    /// Variable holding the truths (default: found by shape).
    #[arg(long, value_name = "V")]
    pub truths_var: Option<String>,
    /// Variable holding the action names (default: found by shape).
    #[arg(long, value_name = "W")]
    pub actions_var: Option<String>,
    /// Variable holding the outcomes dict (default: found by shape).
    #[arg(long, value_name = "O")]
    pub outcomes_var: Option<String>,
}

impl ImportArgs {
    fn options(&self) -> ImportOptions {
        ImportOptions {
            name: self.name.clone(),
            title: self.title.clone(),
            truth_noun: self.truth_noun.clone(),
            truth_plural: self.truth_plural.clone(),
            action_noun: self.action_noun.clone(),
            action_plural: self.action_plural.clone(),
            goal: self.goal.clone(),
            truths_var: self.truths_var.clone(),
            actions_var: self.actions_var.clone(),
            outcomes_var: self.outcomes_var.clone(),
        }
    }
}

/// Runs the import.
pub fn run(args: &ImportArgs) -> Result<Report, Error> {
    let file = args.file.display().to_string();
    let source = match read_source(&args.file) {
        Ok(Ok(text)) => text,
        Ok(Err(diagnostic)) => return Err(Error::Located(diagnostic.to_string())),
        // A missing or unreadable input named by the user is bad input.
        Err(source) => {
            return Err(crate::dataset::DatasetError::Io {
                path: args.file.clone(),
                source,
            }
            .into());
        }
    };
    if let Some(output) = &args.output {
        let input = [crate::files::target::Input::file("Python file", &args.file)];
        let written = crate::files::target::Written::File;
        if let Err(e) = crate::files::target::check("-o", output, written, &input) {
            return Err(Error::input_with_help(
                e.to_string(),
                format!(
                    "write the YAML to another file, e.g. `-o {}`",
                    args.file.with_extension("yaml").display()
                ),
            ));
        }
    }
    let imported = import_python(&file, &source, &args.options())
        .map_err(|e| Error::Located(e.to_string()))?;
    for note in &imported.notes {
        crate::stderr_line!("note: {file}:{note}");
    }
    crate::stderr_line!("{}", imported.summary(&file));
    let target = args.output.as_ref().map_or_else(
        || format!("{}.yaml", imported.doc.name),
        |p| p.display().to_string(),
    );
    if let Err(e) = compile(&target, &imported.doc) {
        return Err(Error::Located(format!(
            "{e}\nerror: the imported domain does not validate; fix the Python file or report this"
        )));
    }
    let yaml = imported.doc.to_yaml();
    let written = match &args.output {
        Some(path) => write_atomic(path, &yaml),
        None => out(&yaml),
    };
    written.map_err(|e| std::io::Error::new(e.kind(), format!("cannot write `{target}`: {e}")))?;
    Ok(Report::Done)
}

/// Reads the file as UTF-8; a decoding problem is a located diagnostic.
fn read_source(path: &Path) -> std::io::Result<Result<String, Box<Diagnostic>>> {
    let bytes = crate::files::read::read_at_most(path, MAX_SOURCE_BYTES, "a KUMO domain file")?;
    Ok(crate::import::decode_source(
        &path.display().to_string(),
        bytes,
    ))
}

/// Writes `text` to `path` atomically (the crate's one atomic writer).
fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    crate::files::write_atomic_with(path, |w| w.write_all(text.as_bytes()), |_, e| e)
}
