//! The prompts `propose` sends, as minijinja templates: shipped in
//! `templates/propose*.j2` (embedded in the binary) and overridable file
//! by file from the same `--templates-dir DIR` the renderer reads
//! (`DIR/propose_repair.j2` replaces the shipped repair prompt). Undefined
//! variables are errors, and every template is test-rendered when loaded,
//! so a typo fails at start-up with its file and line.

use std::path::Path;

use minijinja::{Environment, UndefinedBehavior, context};

/// The templates `propose` uses, by stem (`propose` is `propose.j2`).
pub use crate::render::PROPOSE_TEMPLATE_NAMES as TEMPLATE_NAMES;

static SHIPPED: &[(&str, &str)] = &[
    ("propose", include_str!("../../templates/propose.j2")),
    (
        "propose_repair",
        include_str!("../../templates/propose_repair.j2"),
    ),
    (
        "propose_continue",
        include_str!("../../templates/propose_continue.j2"),
    ),
    (
        "propose_review",
        include_str!("../../templates/propose_review.j2"),
    ),
];

/// Why the prompt templates do not load or render.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    /// An override file cannot be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Unreadable {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A template (`origin`: its file) does not compile or render.
    #[error("template `{origin}`: {source}")]
    Template {
        origin: String,
        #[source]
        source: minijinja::Error,
    },
}

/// The compiled prompt templates.
pub struct Prompts {
    env: Environment<'static>,
}

impl Prompts {
    /// The shipped prompts, overridden by `dir`'s `propose*.j2` files when
    /// a directory is given. The renderer's templates in `dir` are left to
    /// the renderer; any other `.j2` file is an error there already.
    pub fn load(dir: Option<&Path>) -> Result<Prompts, PromptError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_syntax(
            minijinja::syntax::SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .build()
                .expect("default delimiters are valid"),
        );
        for &(name, shipped) in SHIPPED {
            let (text, origin) = match dir.map(|d| d.join(format!("{name}.j2"))) {
                Some(path) if path.exists() => (
                    crate::files::read::read_text_at_most(
                        &path,
                        crate::files::read::MAX_TEMPLATE_BYTES,
                        "a template file",
                    )
                    .map_err(|source| PromptError::Unreadable {
                        path: path.clone(),
                        source,
                    })?,
                    path.display().to_string(),
                ),
                _ => (
                    shipped.to_string(),
                    format!("<shipped>/templates/{name}.j2"),
                ),
            };
            env.add_template_owned(name, text)
                .map_err(|source| PromptError::Template { origin, source })?;
        }
        let prompts = Prompts { env };
        prompts.probe()?;
        Ok(prompts)
    }

    fn render(&self, name: &str, ctx: minijinja::Value) -> Result<String, PromptError> {
        self.env
            .get_template(name)
            .and_then(|t| t.render(ctx))
            .map_err(|source| PromptError::Template {
                origin: format!("{name}.j2"),
                source,
            })
    }

    /// The first request: the topic, the format, the rules and an example.
    pub fn propose(
        &self,
        topic: &str,
        name: &str,
        truths: usize,
        actions: usize,
        example: (&str, &str),
    ) -> Result<String, PromptError> {
        self.render(
            "propose",
            context! {topic, name, truths, actions,
            example_name => example.0, example => example.1.trim_end()},
        )
    }

    /// A repair request listing `errors` (`round` of `rounds`).
    pub fn repair(
        &self,
        errors: &[String],
        round: usize,
        rounds: usize,
    ) -> Result<String, PromptError> {
        self.render(
            "propose_repair",
            context! {errors => errors.to_vec(), round, rounds},
        )
    }

    /// Asks to continue a reply cut off for length (`attempt` of `attempts`).
    pub fn continuation(&self, attempt: usize, attempts: usize) -> Result<String, PromptError> {
        self.render("propose_continue", context! {attempt, attempts})
    }

    /// Asks for the rules of a finished domain that look doubtful.
    pub fn review(&self, topic: &str, domain: &str) -> Result<String, PromptError> {
        self.render(
            "propose_review",
            context! {topic, domain => domain.trim_end()},
        )
    }

    /// Renders every template once, so a broken override fails at load.
    fn probe(&self) -> Result<(), PromptError> {
        self.propose("probe topic", "probe", 4, 6, ("example", "name: example"))?;
        self.repair(&["error: probe".to_string()], 1, 3)?;
        self.continuation(1, 3)?;
        self.review("probe topic", "name: probe")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_prompts_carry_the_request() {
        let p = Prompts::load(None).unwrap();
        let text = p
            .propose("Edible mushrooms", "mushrooms", 9, 11, ("ex", "name: ex"))
            .unwrap();
        for want in [
            "Edible mushrooms",
            "name: mushrooms",
            "at least 9 truths",
            "at least 11 actions",
            "name: ex",
        ] {
            assert!(text.contains(want), "{want} missing from\n{text}");
        }
        let repair = p.repair(&["error: A at 3:5".into()], 2, 3).unwrap();
        assert!(repair.contains("error: A at 3:5") && repair.contains("repair 2 of at most 3"));
    }

    #[test]
    fn overrides_replace_by_name_and_typos_fail_at_load() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("propose_repair.j2"),
            "Fix: {{ errors | join(';') }}",
        )
        .unwrap();
        let p = Prompts::load(Some(dir.path())).unwrap();
        assert_eq!(
            p.repair(&["a".into(), "b".into()], 1, 3).unwrap(),
            "Fix: a;b"
        );
        std::fs::write(
            dir.path().join("propose_review.j2"),
            "{{ no_such_variable }}",
        )
        .unwrap();
        let e = Prompts::load(Some(dir.path())).err().unwrap().to_string();
        assert!(e.contains("propose_review"), "{e}");
    }
}
