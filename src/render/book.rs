//! The knowledge book, the symbolic rule table and the platform prompt of
//! one instance.
//!
//! Template variables (all templates also get the domain vocabulary:
//! `title`, `goal`, `truth_noun`, `truth_plural`, `action_noun`,
//! `action_plural`):
//! - `book.j2`: `truths` [{`name`, `sentence`}], `truths_sentence`,
//!   `guarantee_sentence` (KUMO's guarantee, checked like the rules; empty
//!   for an instance it is not true of),
//!   `actions` [{`name`, `kind`, `unit`, `states` [{`label`, `lo`, `hi`,
//!   `rules_out` (list of names), `sentence`}]}]. `sentence`s are the canonical
//!   sentences of [`super::vocab`]; the book checker requires each on a
//!   line of its own (a leading `- ` is allowed) and rejects any other line
//!   in their forms, and any other item of a list that holds them (see
//!   [`super::check_book`]).
//! - `symbolic.j2`: `actions` as above.
//! - `prompt.j2`: `truths`, `actions` (names), `book` (text or none),
//!   `book_kind` (`prose`, `symbolic` or `none`).

use minijinja::Value;
use serde::Serialize;

use super::error::TemplateError;
use super::options::RenderOptions;
use super::task::{TaskView, format_number};
use super::templates::Templates;
use super::vocab;
use crate::domain::{Domain, StateLabel};

/// Renders the texts of instances with one template set and options.
/// Cheap to create; `Sync`, so one renderer serves every thread.
#[derive(Clone, Copy, Debug)]
pub struct Renderer<'t> {
    pub(crate) templates: &'t Templates,
    pub(crate) options: RenderOptions,
}

#[derive(Serialize)]
pub(crate) struct Words<'a> {
    title: &'a str,
    goal: &'a str,
    truth_noun: &'a str,
    truth_plural: &'a str,
    action_noun: &'a str,
    action_plural: &'a str,
}

impl<'a> Words<'a> {
    pub(crate) fn of(d: &'a Domain) -> Self {
        Words {
            title: &d.title,
            goal: &d.goal,
            truth_noun: &d.truth_noun,
            truth_plural: &d.truth_plural,
            action_noun: &d.action_noun,
            action_plural: &d.action_plural,
        }
    }
}

#[derive(Serialize)]
struct TruthCtx<'a> {
    name: &'a str,
    sentence: String,
}

#[derive(Serialize)]
struct StateCtx<'a> {
    label: String,
    lo: Option<f64>,
    hi: Option<f64>,
    rules_out: Vec<&'a str>,
    sentence: String,
}

#[derive(Serialize)]
struct ActionCtx<'a> {
    name: &'a str,
    kind: &'static str,
    unit: Option<&'a str>,
    states: Vec<StateCtx<'a>>,
}

#[derive(Serialize)]
struct BookCtx<'a> {
    #[serde(flatten)]
    words: Words<'a>,
    truths: Vec<TruthCtx<'a>>,
    truths_sentence: String,
    guarantee_sentence: String,
    actions: Vec<ActionCtx<'a>>,
}

#[derive(Serialize)]
struct PromptCtx<'a> {
    #[serde(flatten)]
    words: Words<'a>,
    truths: Vec<&'a str>,
    actions: Vec<&'a str>,
    book: Option<&'a str>,
    book_kind: &'static str,
}

fn actions_ctx<'a>(task: &TaskView<'a>, sentences: bool) -> Vec<ActionCtx<'a>> {
    let d = task.domain;
    task.actions
        .iter()
        .enumerate()
        .map(|(pos, &a)| {
            let action = &d.actions[a];
            ActionCtx {
                name: &action.name,
                kind: action.kind.as_str(),
                unit: action.unit.as_deref(),
                states: action
                    .states
                    .iter()
                    .enumerate()
                    .map(|(s, state)| {
                        let (label, lo, hi) = match &state.label {
                            StateLabel::Named(n) => (n.clone(), None, None),
                            StateLabel::Range { lo, hi } => (
                                format!("{}-{}", format_number(*lo), format_number(*hi)),
                                Some(*lo),
                                Some(*hi),
                            ),
                        };
                        StateCtx {
                            label,
                            lo,
                            hi,
                            rules_out: task
                                .ruled_out(pos, s)
                                .map(|t| d.truths[t].as_str())
                                .collect(),
                            sentence: if sentences {
                                vocab::rule_sentence(task, pos, s)
                            } else {
                                String::new()
                            },
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}

impl<'t> Renderer<'t> {
    pub fn new(templates: &'t Templates, options: RenderOptions) -> Self {
        Renderer { templates, options }
    }

    /// What the rendered text depends on besides the instance: the
    /// generator version, the templates and the options.
    pub fn signature(&self) -> String {
        format!(
            "kumo-gen {} templates {} {:?}",
            env!("CARGO_PKG_VERSION"),
            self.templates.fingerprint(),
            self.options
        )
    }

    /// The knowledge book: every action, every state, what it rules out.
    pub fn book(&self, task: &TaskView) -> Result<String, TemplateError> {
        let d = task.domain;
        let ctx = BookCtx {
            words: Words::of(d),
            truths: task
                .truths
                .iter()
                .map(|&t| TruthCtx {
                    name: &d.truths[t],
                    sentence: vocab::index_sentence(task, t),
                })
                .collect(),
            truths_sentence: vocab::truths_sentence(task),
            guarantee_sentence: if task.every_wrong_truth_ruled_out() {
                vocab::guarantee_sentence(task)
            } else {
                String::new()
            },
            actions: actions_ctx(task, true),
        };
        self.templates
            .render("book", Value::from(minijinja::value::Serde(&ctx)))
    }

    /// The compact symbolic rule table (KUMO's SFT experiments gave the
    /// model the rule-out mapping instead of a prose book).
    pub fn symbolic(&self, task: &TaskView) -> Result<String, TemplateError> {
        let ctx = BookCtx {
            words: Words::of(task.domain),
            truths: Vec::new(),
            truths_sentence: String::new(),
            guarantee_sentence: String::new(),
            actions: actions_ctx(task, false),
        };
        self.templates
            .render("symbolic", Value::from(minijinja::value::Serde(&ctx)))
    }

    /// The platform (system) prompt: the game, its truths and actions, how
    /// to answer, then `book` (a knowledge book or a symbolic table, as
    /// `book_kind` says) when given.
    pub fn prompt(
        &self,
        task: &TaskView,
        book: Option<&str>,
        book_kind: &'static str,
    ) -> Result<String, TemplateError> {
        let d = task.domain;
        let truths: Vec<&str> = task.truths.iter().map(|&t| d.truths[t].as_str()).collect();
        let actions: Vec<&str> = task
            .actions
            .iter()
            .map(|&a| d.actions[a].name.as_str())
            .collect();
        self.prompt_for_names(d, &truths, &actions, book, book_kind)
    }

    /// [`Renderer::prompt`] from the names of the instance's truths and
    /// actions (instance order). The prompt needs nothing else of the
    /// instance, so evaluation renders it for any instance line, KUMO's own
    /// included, whose observations need not fit the domain's states; for
    /// the same names and book the text is the same as `prompt`'s.
    pub fn prompt_for_names(
        &self,
        domain: &Domain,
        truths: &[&str],
        actions: &[&str],
        book: Option<&str>,
        book_kind: &'static str,
    ) -> Result<String, TemplateError> {
        let ctx = PromptCtx {
            words: Words::of(domain),
            truths: truths.to_vec(),
            actions: actions.to_vec(),
            book,
            book_kind: if book.is_some() { book_kind } else { "none" },
        };
        let mut text = self
            .templates
            .render("prompt", Value::from(minijinja::value::Serde(&ctx)))?;
        trim_end_in_place(&mut text);
        Ok(text)
    }
}

/// Drops trailing whitespace without reallocating.
pub(crate) fn trim_end_in_place(text: &mut String) {
    let len = text.trim_end().len();
    text.truncate(len);
}
