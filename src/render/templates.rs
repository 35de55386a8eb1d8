//! `Templates`: the compiled minijinja environment for rendering.
//!
//! The shipped `templates/*.j2` are embedded at build time (build.rs). A
//! user directory (`--templates-dir DIR`) overrides them file by file:
//! `DIR/book.j2` replaces the shipped book template, templates the
//! directory lacks stay shipped, and a `.j2` file with an unknown name is an
//! error (a misspelt override would otherwise be ignored silently).
//!
//! Undefined variables are errors (`UndefinedBehavior::Strict`), and every
//! template is compiled here and test-rendered against a built-in probe
//! instance by the constructors in `load.rs`
//! when loaded, so a typo in a template fails at start-up with its file
//! and line, not as blank text in the middle of a run.

use minijinja::syntax::SyntaxConfig;
use minijinja::{Environment, UndefinedBehavior, Value};

use super::error::TemplateError;

/// The templates a set must have, by stem (`book` is `book.j2`). The
/// per-round game messages are not templates: they are KUMO's text, the
/// same for SFT and `eval` ([`super::protocol`]).
pub const TEMPLATE_NAMES: &[&str] = &["book", "prompt", "symbolic", "rationale"];

/// The templates of `kumo-gen propose` (`crate::propose::prompts`), by
/// stem: they may share a `--templates-dir` with the renderer's, which
/// leaves them to `propose`. Listed here, below both, so the renderer need
/// not import `propose`.
pub const PROPOSE_TEMPLATE_NAMES: &[&str] = &[
    "propose",
    "propose_repair",
    "propose_continue",
    "propose_review",
];

/// The origin of a shipped template in errors.
const SHIPPED_ORIGIN: &str = "<shipped>";

static SHIPPED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/shipped_templates.rs"));

/// The compiled template set.
pub struct Templates {
    env: Environment<'static>,
    /// Where each template came from, by stem: `<shipped>` or a path.
    origins: Vec<(&'static str, String)>,
    /// FNV-1a 64 of every template's name and text: derived files made
    /// with other templates are stale.
    fingerprint: String,
}

impl std::fmt::Debug for Templates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Templates")
            .field("origins", &self.origins)
            .finish()
    }
}

impl Templates {
    /// The shipped templates with `(stem, text, origin)` overrides, each
    /// compiled (the origin names the source in errors); not yet
    /// test-rendered (see `load`).
    pub(super) fn compile_overrides(
        overrides: Vec<(String, String, String)>,
    ) -> Result<Templates, TemplateError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_syntax(
            SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .keep_trailing_newline(true)
                .build()
                .expect("default delimiters are valid"),
        );
        env.add_filter("ucfirst", |s: String| super::vocab::ucfirst(&s));
        env.add_filter("english", |items: Vec<String>| {
            let mut out = String::new();
            super::vocab::join_names(items.iter().map(String::as_str), &mut out);
            out
        });
        let mut origins = Vec::new();
        let mut all = Vec::new();
        for &name in TEMPLATE_NAMES {
            if let Some(pos) = overrides.iter().position(|(stem, ..)| stem == name) {
                let (_, text, origin) = &overrides[pos];
                all.extend_from_slice(format!("{name}\0{text}\0").as_bytes());
                add(&mut env, name, text.clone(), origin)?;
                origins.push((name, origin.clone()));
            } else {
                let text = SHIPPED
                    .iter()
                    .find(|(stem, _)| *stem == name)
                    .map(|(_, text)| *text)
                    .ok_or_else(|| TemplateError::Missing(name.to_string()))?;
                all.extend_from_slice(format!("{name}\0{text}\0").as_bytes());
                add(&mut env, name, text.to_string(), SHIPPED_ORIGIN)?;
                origins.push((name, SHIPPED_ORIGIN.to_string()));
            }
        }
        let templates = Templates {
            env,
            origins,
            fingerprint: crate::fnv::fnv1a_hex(&all),
        };
        Ok(templates)
    }

    /// A digest of every template's text (changes when any template does).
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// Where template `name` came from: `None` for the shipped one, else
    /// the user's file.
    pub fn user_origin(&self, name: &str) -> Option<&str> {
        self.origins
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, o)| o.as_str())
            .filter(|o| *o != SHIPPED_ORIGIN)
    }

    /// Renders template `name` (a stem from [`TEMPLATE_NAMES`]).
    pub(crate) fn render(&self, name: &'static str, ctx: Value) -> Result<String, TemplateError> {
        let template = self
            .env
            .get_template(name)
            .map_err(|e| self.error(name, &e))?;
        template.render(ctx).map_err(|e| self.error(name, &e))
    }

    fn error(&self, name: &str, e: &minijinja::Error) -> TemplateError {
        TemplateError::Template {
            name: name.to_string(),
            origin: self
                .origins
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, o)| o.clone())
                .unwrap_or_default(),
            detail: describe(e),
        }
    }
}

impl TemplateError {
    /// Whether the error comes from a user's template (an override
    /// directory) rather than from the shipped set.
    pub fn is_user_template(&self) -> bool {
        matches!(self, TemplateError::Template { origin, .. } if origin != SHIPPED_ORIGIN)
            || matches!(
                self,
                TemplateError::Io { .. } | TemplateError::Unknown { .. }
            )
    }
}

fn add(
    env: &mut Environment<'static>,
    name: &'static str,
    text: String,
    origin: &str,
) -> Result<(), TemplateError> {
    env.add_template_owned(name, text)
        .map_err(|e| TemplateError::Template {
            name: name.to_string(),
            origin: origin.to_string(),
            detail: describe(&e),
        })
}

/// The error with its line, and the chain of causes.
fn describe(e: &minijinja::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

pub(super) fn expected_list() -> String {
    TEMPLATE_NAMES
        .iter()
        .map(|n| format!("`{n}.j2`"))
        .collect::<Vec<_>>()
        .join(", ")
}
