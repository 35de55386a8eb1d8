//! Loading a template set: the shipped templates, overridden by name
//! (`--templates-dir`), compiled ([`Templates`]) and then test-rendered
//! once against a built-in probe instance, so a typo in any template fails
//! when the set is loaded, not half way through a run.

use std::path::{Path, PathBuf};

use super::book::Renderer;
use super::error::TemplateError;
use super::options::{RenderOptions, SftBook};
use super::task::TaskView;
use super::templates::{PROPOSE_TEMPLATE_NAMES, TEMPLATE_NAMES, Templates, expected_list};
use crate::domain::Domain;

impl Templates {
    /// The shipped templates.
    pub fn shipped() -> Result<Templates, TemplateError> {
        Templates::from_overrides(Vec::new())
    }

    /// What `--templates-dir` asks for: the shipped templates, overridden
    /// by the directory's when one is given.
    pub fn resolve(dir: Option<&Path>) -> Result<Templates, TemplateError> {
        match dir {
            Some(dir) => Templates::load_dir(dir),
            None => Templates::shipped(),
        }
    }

    /// The shipped templates, overridden by the `.j2` files of `dir`.
    pub fn load_dir(dir: &Path) -> Result<Templates, TemplateError> {
        let io = |source| TemplateError::Io {
            dir: dir.to_path_buf(),
            source,
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(io)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(io)?;
        files.sort();
        let mut overrides = Vec::new();
        for path in files {
            let Some(file) = path.file_name().and_then(|f| f.to_str()) else {
                continue;
            };
            let Some(stem) = file.strip_suffix(".j2") else {
                continue;
            };
            // `propose`'s prompts may share the directory; they are its own.
            if PROPOSE_TEMPLATE_NAMES.contains(&stem) {
                continue;
            }
            if !TEMPLATE_NAMES.contains(&stem) {
                return Err(TemplateError::Unknown {
                    dir: dir.to_path_buf(),
                    file: file.to_string(),
                    expected: expected_list(),
                });
            }
            let text = crate::files::read::read_text_at_most(
                &path,
                crate::files::read::MAX_TEMPLATE_BYTES,
                "a template file",
            )
            .map_err(|source| TemplateError::Io {
                dir: path.clone(),
                source,
            })?;
            overrides.push((stem.to_string(), text, path.display().to_string()));
        }
        Templates::from_overrides(overrides)
    }

    /// The shipped templates with `(stem, text, origin)` overrides; the
    /// origin names the source in errors. Every template is test-rendered.
    pub fn from_overrides(
        overrides: Vec<(String, String, String)>,
    ) -> Result<Templates, TemplateError> {
        let templates = Templates::compile_overrides(overrides)?;
        probe(&templates)?;
        Ok(templates)
    }
}

/// The probe domain every template set is test-rendered against on load:
/// one action of each kind, a state that rules out nothing, a unit.
const PROBE_DOMAIN: &str = "\
name: probe
title: Probe
truth_noun: fault
action_noun: check
goal: find the fault
truths: [A, B, C]
actions:
  - name: Look
    type: str
    states:
      dark: [A]
      lit: []
  - name: Volts
    type: float
    unit: V
    states:
      - range: [0.0, 5.0]
        rules_out: [B]
      - range: [5.0, 9.5]
        rules_out: [C]
  - name: Count
    type: int
    states:
      - range: [0, 2]
        rules_out: [C]
      - range: [3, 9]
        rules_out: [A]
";

/// Renders every template once against the probe instance (valid truth C
/// is ruled out by nothing observed; golden: Look, Volts).
fn probe(templates: &Templates) -> Result<(), TemplateError> {
    let (domain, _) = Domain::from_yaml("<probe>", PROBE_DOMAIN).expect("probe domain is valid");
    let task = TaskView {
        domain: &domain,
        truths: &[0, 1, 2],
        valid: &[2],
        actions: &[0, 1, 2],
        observed: &[0, 0, 1],
        values: &[None, Some(2.5), Some(4.0)],
        seed: 0,
    };
    let rationale = RenderOptions {
        sft_book: SftBook::Symbolic,
        rationale: true,
    };
    Renderer::new(templates, RenderOptions::default()).render(&task, &[0, 1])?;
    Renderer::new(templates, rationale).render(&task, &[0, 1])?;
    // A prediction while two truths remain: B is related to no remaining
    // action once `Look` ruled out A.
    let task = TaskView {
        truths: &[0, 1],
        valid: &[1],
        actions: &[0],
        observed: &[0],
        values: &[None],
        ..task
    };
    Renderer::new(templates, rationale).render(&task, &[])?;
    Ok(())
}
