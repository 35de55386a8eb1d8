//! Stage 1 of the pipeline: domain loading, validation and the compiled
//! domain model.
//!
//! In: a YAML domain file (DESIGN.md "Domain config"), from `domains/`, a
//! user directory or a path. Out: a [`Domain`] whose truths, actions and
//! states are indexed in file order and whose rule-out sets are
//! [`TruthSet`] bitsets, which every later stage uses directly.
//!
//! Invariants of a compiled `Domain` (checked by [`compile`]):
//! - names of truths, of actions and of the states of one action are
//!   unique and non-empty;
//! - every action has at least one state (two unless the validator
//!   warned); a truth ruled out by every state of an action is allowed
//!   with a warning (synthesis never makes it valid with that action);
//! - range bounds are finite. As in KUMO, a value reads as the first
//!   range in state order with `lo <= value <= hi` ([`Action::state_containing`]):
//!   an inverted range (`lo > hi`) holds no value and overlapping ranges
//!   resolve by order (both warned about).
//!
//! Of this module only `registry` touches the file system (it reads
//! domain files and `--domains-dir`); ARCHITECTURE.md lists every other
//! module that does.

mod compile;
mod context;
mod diagnostic;
mod document;
mod names;
mod node;
mod read;
mod registry;
mod states;
mod structure;
mod truthset;
mod yaml_budget;

pub use compile::{MAX_FILE_BYTES, compile, load_bytes, plural};
pub use diagnostic::{
    Diagnostic, Kind, LoadError, Severity, expected_warnings_note, validated_line, warning_lines,
};
pub use document::{ActionDoc, DomainDoc, RangeStateDoc, StatesDoc};
pub use names::{case_only_lookalikes, truths_ambiguous_in_sentences};
pub use registry::{DomainSource, Registry, ShippedDomain, kumo_env_domain};
pub use structure::{StructureSignature, structure_signature, structure_signature_by_name};
pub use truthset::TruthSet;
pub use yaml_budget::{DEFAULT_YAML_NODES, set_yaml_node_budget};

/// The kind of values an action's observation takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    /// Named states (`positive`, `negative`, ...).
    Str,
    /// Real-valued measurement; states are ranges.
    Float,
    /// Integer measurement (counts); states are ranges with integer bounds.
    Int,
}

impl ActionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Str => "str",
            ActionKind::Float => "float",
            ActionKind::Int => "int",
        }
    }

    /// Whether the states are numeric ranges.
    pub fn is_numeric(self) -> bool {
        !matches!(self, ActionKind::Str)
    }
}

/// What distinguishes one state of an action from the others.
#[derive(Clone, Debug, PartialEq)]
pub enum StateLabel {
    /// A named outcome of a `str` action.
    Named(String),
    /// A closed range `[lo, hi]` of a `float` or `int` action.
    Range { lo: f64, hi: f64 },
}

impl StateLabel {
    /// The range, if this is a range state.
    pub fn range(&self) -> Option<(f64, f64)> {
        match *self {
            StateLabel::Range { lo, hi } => Some((lo, hi)),
            StateLabel::Named(_) => None,
        }
    }
}

impl std::fmt::Display for StateLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StateLabel::Named(name) => f.write_str(name),
            StateLabel::Range { lo, hi } => write!(f, "[{lo}, {hi}]"),
        }
    }
}

/// One outcome state of an action.
#[derive(Clone, Debug)]
pub struct State {
    pub label: StateLabel,
    /// Truths that observing this state rules out.
    pub rules_out: TruthSet,
}

/// One action with its outcome states, in file order.
#[derive(Clone, Debug)]
pub struct Action {
    pub name: String,
    pub kind: ActionKind,
    pub unit: Option<String>,
    pub states: Vec<State>,
    /// Union of the rule-out sets of all states: the truths this action is
    /// *related* to (DESIGN.md "Optimal search").
    pub related: TruthSet,
}

impl Action {
    /// Index of the state whose label is `name` (str actions).
    pub fn state_named(&self, name: &str) -> Option<usize> {
        self.states
            .iter()
            .position(|s| matches!(&s.label, StateLabel::Named(n) if n == name))
    }

    /// Index of the first range state containing `value` (numeric actions):
    /// DESIGN.md's rule for reading a float observation.
    pub fn state_containing(&self, value: f64) -> Option<usize> {
        self.states.iter().position(|s| match s.label {
            StateLabel::Range { lo, hi } => lo <= value && value <= hi,
            StateLabel::Named(_) => false,
        })
    }

    /// The state an observation shows, exactly as KUMO reads it: a label
    /// names a state; a number of a numeric action falls in the first range
    /// in state order with `lo <= value <= hi` (DESIGN.md), and in none when
    /// no range holds it (`Some(None)`: an inverted range such as KUMO's
    /// `(2, 1)` holds no value, so the observation rules nothing out); a
    /// number of a `str` action names a state whose label is that number
    /// (imported `int`/`dict` keys) or the first `[lo, hi]` label holding it;
    /// a pair `[lo, hi]` (KUMO's tuple keys) names the state with that range.
    /// `None`: the observation names no state at all.
    pub fn observed_state(&self, seen: &serde_json::Value) -> Option<Option<usize>> {
        use serde_json::Value;
        let action = self;
        if let Value::Number(n) = seen
            && action.kind.is_numeric()
        {
            return Some(action.state_containing(n.as_f64()?));
        }
        let found = match seen {
            Value::Array(pair) => {
                let [lo, hi] = pair.as_slice() else {
                    return None;
                };
                let (lo, hi) = (lo.as_f64()?, hi.as_f64()?);
                action.states.iter().position(|s| match &s.label {
                    StateLabel::Range { lo: a, hi: b } => *a == lo && *b == hi,
                    StateLabel::Named(label) => label_range(label) == Some((lo, hi)),
                })
            }
            Value::String(label) => action.state_named(label).or_else(|| {
                let v: f64 = label.trim().parse().ok()?;
                action.state_containing(v)
            }),
            Value::Number(n) => {
                let v = n.as_f64()?;
                // Numeric labels (`1`), else the first `[lo, hi]` label
                // holding the value (ranges of a `str` action, as labels).
                action.state_named(&n.to_string()).or_else(|| {
                    action.states.iter().position(|s| match &s.label {
                        StateLabel::Named(label) => {
                            label_range(label).is_some_and(|(lo, hi)| lo <= v && v <= hi)
                        }
                        StateLabel::Range { .. } => false,
                    })
                })
            }
            _ => None,
        };
        found.map(Some)
    }
}

/// The range of a `[lo, hi]` label.
fn label_range(label: &str) -> Option<(f64, f64)> {
    let inner = label.trim().strip_prefix('[')?.strip_suffix(']')?;
    let (lo, hi) = inner.split_once(',')?;
    Some((lo.trim().parse().ok()?, hi.trim().parse().ok()?))
}

/// A compiled, validated domain.
#[derive(Clone, Debug)]
pub struct Domain {
    pub name: String,
    pub title: String,
    pub truth_noun: String,
    pub truth_plural: String,
    pub action_noun: String,
    pub action_plural: String,
    pub goal: String,
    pub truths: Vec<String>,
    pub actions: Vec<Action>,
    /// Some truth is named `nothing`, or splits at `, ` / ` and ` into
    /// other truths' names: the book's rule sentences then quote every
    /// truth name so that each reads one way only.
    pub quote_truths: bool,
    /// The document the domain was compiled from, for manifests and splits.
    pub document: DomainDoc,
    /// FNV-1a 64 of the source bytes, hex; identifies the file in manifests.
    pub source_hash: String,
}

impl Domain {
    /// Index of the truth called `name`.
    pub fn truth_index(&self, name: &str) -> Option<usize> {
        self.truths.iter().position(|t| t == name)
    }

    /// Index of the action called `name`.
    pub fn action_index(&self, name: &str) -> Option<usize> {
        self.actions.iter().position(|a| a.name == name)
    }

    /// Loads and compiles a domain from YAML text; `file` names it in
    /// diagnostics. Warnings come back beside the domain.
    pub fn from_yaml(file: &str, text: &str) -> Result<(Domain, Vec<Diagnostic>), LoadError> {
        compile::load_str(file, text)
    }
}
