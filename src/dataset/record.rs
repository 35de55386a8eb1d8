//! Instance lines: the KUMO-compatible JSONL record, and reading one back.
//!
//! In: an [`Instance`] (and optional labels). Out: one line of JSON with
//! KUMO's fields in KUMO's order — `truths`, `actions`, `observations`
//! (action name -> state label, or the number for `float`/`int`), `seed`,
//! `valid_truth` (a string when N_valid = 1, else a list) — then our
//! `structure` (the instance's structure signature, for `kumo-gen stats`),
//! and `optimal` and `difficulty` when labels are attached. Reading a line
//! back gives its
//! canonical [`Key`], which is all that resume and merge need.
//!
//! The search hands over a typed [`Label`] (or the [`SearchError`] that
//! left an instance unlabelled); [`Optimal`] is the one place that turns
//! it into the line's `optimal` object, for the main command, merge, the
//! in-memory pipeline and `kumo-gen label` alike.
//!
//! Numbers are written by serde_json (shortest round-trip form), so the
//! same instance always gives the same bytes.

use crate::difficulty::Reference;
use crate::domain::{ActionKind, Domain};
use crate::search::{Label, SearchError};
use crate::synth::{Instance, Key};
use serde::Deserialize;
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::borrow::Cow;

/// What the optimal search gave one instance: its label, or why it has
/// none (the search ran over budget).
pub type Labelled = Result<Label, SearchError>;

/// Renders the line of `instance` (without the trailing newline), with
/// `optimal` when given; a labelled line's `difficulty` carries its
/// `percentile` in `reference` (the setting's reference sample, when
/// given).
pub fn render(
    domain: &Domain,
    instance: &Instance,
    optimal: Option<&Labelled>,
    reference: Option<&Reference>,
) -> Vec<u8> {
    let record = Record {
        domain,
        instance,
        optimal,
        reference,
    };
    // Strings, integers and finite floats always serialise.
    serde_json::to_vec(&record).unwrap_or_default()
}

struct Record<'a> {
    domain: &'a Domain,
    instance: &'a Instance,
    optimal: Option<&'a Labelled>,
    reference: Option<&'a Reference>,
}

/// The `optimal` object of an instance line (DESIGN.md "Outputs") for a
/// search result: `expected_steps`, `first_action` (name or null),
/// `golden_actions` (the number of actions the golden trajectory takes
/// before predicting), `golden_trajectory` (the names of those actions, in
/// order), `golden_answer` (the predicted truth; null only if the
/// observations rule out every truth) and `exact`; a certified label
/// (`exact: false`, DESIGN.md "Certified labels") adds `lower_bound`, and
/// its `expected_steps` is then the proven upper bound that the golden
/// trajectory's strategy achieves or beats. An unlabelled instance gets
/// `{"unlabelled": "budget exceeded", "memo_entries": .., "search_nodes":
/// ..}` (no timing: output must not depend on the machine). `truths` and
/// `actions` are the instance's domain indices, in instance order.
pub struct Optimal<'a> {
    pub labelled: &'a Labelled,
    pub domain: &'a Domain,
    pub truths: &'a [usize],
    pub actions: &'a [usize],
}

impl Optimal<'_> {
    /// The object as compact JSON text.
    pub fn to_json(&self) -> String {
        // Strings, integers and finite floats always serialise.
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl Serialize for Optimal<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let action_name = |a: usize| self.domain.actions[self.actions[a]].name.as_str();
        let mut map = s.serialize_map(None)?;
        match self.labelled {
            Ok(label) => {
                map.serialize_entry("expected_steps", &label.expected_steps)?;
                map.serialize_entry("first_action", &label.first_action.map(action_name))?;
                map.serialize_entry("golden_actions", &label.golden_actions.len())?;
                let trajectory: Vec<&str> = label
                    .golden_actions
                    .iter()
                    .map(|&a| action_name(a))
                    .collect();
                map.serialize_entry("golden_trajectory", &trajectory)?;
                let answer = label
                    .answer()
                    .map(|t| self.domain.truths[self.truths[t]].as_str());
                map.serialize_entry("golden_answer", &answer)?;
                map.serialize_entry("exact", &label.is_exact())?;
                if let Some(lower) = label.lower_bound {
                    map.serialize_entry("lower_bound", &lower)?;
                }
            }
            Err(SearchError::BudgetExceeded {
                memo_entries,
                nodes,
                ..
            }) => {
                map.serialize_entry("unlabelled", "budget exceeded")?;
                map.serialize_entry("memo_entries", memo_entries)?;
                map.serialize_entry("search_nodes", nodes)?;
            }
            Err(other) => map.serialize_entry("unlabelled", &other.to_string())?,
        }
        map.end()
    }
}

/// The `difficulty` object of a labelled instance line (DESIGN.md
/// "Outputs"): `expected_steps` (the optimal expected number of
/// actions, averaged over every truth that could be the valid one: exact,
/// or a certified upper bound, see below),
/// `golden_length` (the actions the golden player takes on this instance's
/// own observations) and `consistent_at_answer` (the instance truths that
/// no observation along the golden trajectory rules out when the golden
/// player answers: 1 when it answers with a single candidate left, more
/// when it relies on KUMO's guarantee that every wrong candidate is ruled
/// out by some action's actual outcome, so that no remaining action could
/// rule out a survivor) and `percentile` (of `expected_steps` in the
/// setting's reference sample, [`crate::difficulty::reference`]; absent
/// when the setting has none, as for `kumo-gen label` of a setting the
/// domain cannot synthesize). A certified label (DESIGN.md "Certified
/// labels") makes `expected_steps` its upper bound and adds, after it,
/// `exact: false` and `lower_bound`, and after `percentile` the
/// `percentile_lower` of the lower bound: the line's percentile lies
/// between the two. An exact line has none of these three.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Difficulty {
    pub expected_steps: f64,
    #[serde(skip_serializing_if = "is_true")]
    pub exact: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower_bound: Option<f64>,
    pub golden_length: usize,
    pub consistent_at_answer: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentile: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentile_lower: Option<f64>,
}

fn is_true(b: &bool) -> bool {
    *b
}

impl Difficulty {
    /// The difficulty of the instance with domain `truths` and `actions`
    /// (instance order), `observed` state per instance action (`None`: a
    /// value in no state's range, which rules out nothing), `label`, and
    /// the setting's `reference` sample.
    pub fn of(
        label: &Label,
        domain: &Domain,
        truths: &[usize],
        actions: &[usize],
        observed: &[Option<usize>],
        reference: Option<&Reference>,
    ) -> Self {
        let consistent_at_answer = truths
            .iter()
            .filter(|&&t| {
                !label.golden_actions.iter().any(|&pos| {
                    observed[pos].is_some_and(|state| {
                        domain.actions[actions[pos]].states[state]
                            .rules_out
                            .contains(t)
                    })
                })
            })
            .count();
        Difficulty {
            expected_steps: label.expected_steps,
            exact: label.is_exact(),
            lower_bound: label.lower_bound,
            golden_length: label.golden_actions.len(),
            consistent_at_answer,
            percentile: reference.map(|r| r.percentile(label.expected_steps)),
            percentile_lower: reference
                .zip(label.lower_bound)
                .map(|(r, lower)| r.percentile(lower)),
        }
    }

    /// The object as compact JSON text.
    pub fn to_json(&self) -> String {
        // Integers and finite floats always serialise.
        serde_json::to_string(self).unwrap_or_default()
    }
}

struct Names<'a>(&'a [String], &'a [usize]);

impl Serialize for Names<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.1.iter().map(|&i| &self.0[i]))
    }
}

struct ActionNames<'a>(&'a Domain, &'a [usize]);

impl Serialize for ActionNames<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.1.iter().map(|&a| &self.0.actions[a].name))
    }
}

struct Observations<'a>(&'a Domain, &'a Instance);

impl Serialize for Observations<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Observations(domain, instance) = *self;
        let mut map = s.serialize_map(Some(instance.actions.len()))?;
        for (&a, o) in instance.actions.iter().zip(&instance.observations) {
            let action = &domain.actions[a];
            match (action.kind, o.value) {
                (ActionKind::Int, Some(v)) => map.serialize_entry(&action.name, &(v as i64))?,
                (_, Some(v)) => map.serialize_entry(&action.name, &v)?,
                (_, None) => {
                    map.serialize_entry(&action.name, &action.states[o.state].label.to_string())?
                }
            }
        }
        map.end()
    }
}

impl Serialize for Record<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (domain, instance) = (self.domain, self.instance);
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("truths", &Names(&domain.truths, &instance.truths))?;
        map.serialize_entry("actions", &ActionNames(domain, &instance.actions))?;
        map.serialize_entry("observations", &Observations(domain, instance))?;
        map.serialize_entry("seed", &instance.index)?;
        if instance.valid.len() == 1 {
            map.serialize_entry("valid_truth", &domain.truths[instance.valid[0]])?;
        } else {
            map.serialize_entry("valid_truth", &Names(&domain.truths, &instance.valid))?;
        }
        // The instance's structure signature (sorted degree sequences of its
        // truth-action graph), for `kumo-gen stats`.
        let signature =
            crate::domain::structure_signature(domain, &instance.truths, &instance.actions);
        map.serialize_entry("structure", &signature)?;
        if let Some(labelled) = self.optimal {
            let optimal = Optimal {
                labelled,
                domain,
                truths: &instance.truths,
                actions: &instance.actions,
            };
            map.serialize_entry("optimal", &optimal)?;
            if let Ok(label) = labelled {
                let observed: Vec<Option<usize>> = instance
                    .observations
                    .iter()
                    .map(|o| Some(o.state))
                    .collect();
                let difficulty = Difficulty::of(
                    label,
                    domain,
                    &instance.truths,
                    &instance.actions,
                    &observed,
                    self.reference,
                );
                map.serialize_entry("difficulty", &difficulty)?;
            }
        }
        map.end()
    }
}

/// The fields of a line that identify its instance.
#[derive(Deserialize)]
struct Parsed<'a> {
    #[serde(borrow)]
    truths: Vec<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "observation_object")]
    observations: ObservationPairs<'a>,
    seed: u64,
    #[serde(borrow)]
    valid_truth: ValidTruth<'a>,
}

/// One observation as a file records it: the number of a `float`/`int`
/// action, or a state label.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Observed<'a> {
    Number(f64),
    #[serde(borrow)]
    Label(Cow<'a, str>),
}

/// `(action, observation)` pairs in file order.
pub type ObservationPairs<'a> = Vec<(Cow<'a, str>, Observed<'a>)>;

/// `valid_truth` as a borrowing reader reads it: one name (KUMO's string)
/// or a list (`read_key` here, `contamination`'s recorded lines).
#[derive(Deserialize)]
#[serde(untagged)]
pub enum ValidTruth<'a> {
    #[serde(borrow)]
    One(Cow<'a, str>),
    #[serde(borrow)]
    Many(Vec<Cow<'a, str>>),
}

/// A line that does not read back in its domain: what does not match.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Not an instance line's JSON.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    #[error("unknown truth `{0}`")]
    UnknownTruth(String),
    #[error("unknown action `{0}`")]
    UnknownAction(String),
    /// The observation of the action matches none of its states.
    #[error("no state of `{0}` matches the observation")]
    NoState(String),
}

/// Reads the seed and canonical key of a line written by [`render`] for
/// `domain`; an error says what does not match the domain.
pub fn read_key(domain: &Domain, names: &NameIndex, line: &[u8]) -> Result<(u64, Key), KeyError> {
    let mut de = serde_json::Deserializer::from_slice(line);
    let parsed = Parsed::deserialize(&mut de)?;
    de.end()?;
    let truth = |name: &str| {
        names
            .truth(name)
            .ok_or_else(|| KeyError::UnknownTruth(name.to_string()))
    };
    let truths = parsed
        .truths
        .iter()
        .map(|t| truth(t))
        .collect::<Result<Vec<_>, _>>()?;
    let valid = match &parsed.valid_truth {
        ValidTruth::One(t) => vec![truth(t)?],
        ValidTruth::Many(ts) => ts.iter().map(|t| truth(t)).collect::<Result<_, _>>()?,
    };
    let mut pairs = Vec::with_capacity(parsed.observations.len());
    for (name, observed) in &parsed.observations {
        let a = names
            .action(name)
            .ok_or_else(|| KeyError::UnknownAction(name.to_string()))?;
        let action = &domain.actions[a];
        // Read as every reader does (`Action::observed_state`).
        let seen = match observed {
            Observed::Number(v) => serde_json::Value::from(*v),
            Observed::Label(l) => serde_json::Value::from(l.as_ref()),
        };
        let state = action
            .observed_state(&seen)
            .flatten()
            .ok_or_else(|| KeyError::NoState(name.to_string()))?;
        pairs.push((a, state));
    }
    Ok((parsed.seed, Key::from_parts(&truths, &valid, pairs)))
}

/// Our lines' (and KUMO's) `observations`: an object of action ->
/// observation, read into pairs in file order.
fn observation_object<'de, D>(de: D) -> Result<ObservationPairs<'de>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    de.deserialize_map(ObservationsVisitor { lists: false })
}

/// The one reader of an `observations` value into [`ObservationPairs`] in
/// file order: an object of action -> observation (KUMO's lines, ours)
/// and, when `lists`, a list of `{action, observation}` (our HF rows).
pub struct ObservationsVisitor {
    /// Whether the list form is read too.
    pub lists: bool,
}

impl<'de> serde::de::Visitor<'de> for ObservationsVisitor {
    type Value = ObservationPairs<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(if self.lists {
            "an object or a list of observations"
        } else {
            "an object of observations"
        })
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(pair) = map.next_entry()? {
            out.push(pair);
        }
        Ok(out)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        #[derive(Deserialize)]
        struct Pair<'a> {
            #[serde(borrow)]
            action: Cow<'a, str>,
            #[serde(borrow)]
            observation: Observed<'a>,
        }
        if !self.lists {
            return Err(serde::de::Error::invalid_type(
                serde::de::Unexpected::Seq,
                &self,
            ));
        }
        let mut out = Vec::new();
        while let Some(Pair {
            action,
            observation,
        }) = seq.next_element()?
        {
            out.push((action, observation));
        }
        Ok(out)
    }
}

/// Name -> index maps of one domain, for reading lines back.
pub struct NameIndex {
    truths: std::collections::HashMap<String, usize>,
    actions: std::collections::HashMap<String, usize>,
}

impl NameIndex {
    pub fn new(domain: &Domain) -> NameIndex {
        NameIndex {
            truths: domain
                .truths
                .iter()
                .enumerate()
                .map(|(i, t)| (t.clone(), i))
                .collect(),
            actions: domain
                .actions
                .iter()
                .enumerate()
                .map(|(i, a)| (a.name.clone(), i))
                .collect(),
        }
    }

    fn truth(&self, name: &str) -> Option<usize> {
        self.truths.get(name).copied()
    }

    fn action(&self, name: &str) -> Option<usize> {
        self.actions.get(name).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{Dedup, Params, Stats, Synthesizer, fixture};

    #[test]
    fn lines_read_back_to_their_keys() {
        let domain = fixture::random(5, 12, 10, 0.3);
        let synth = Synthesizer::new(&domain, Params::new(4, 5, 2)).unwrap();
        let instances = synth
            .generate(0..40, &mut Dedup::new(), &mut Stats::default())
            .unwrap();
        let names = NameIndex::new(&domain);
        for instance in &instances {
            let line = render(&domain, instance, None, None);
            let (seed, key) = read_key(&domain, &names, &line).unwrap();
            assert_eq!((seed, key), (instance.index, Key::of(instance)));
            let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
            assert_eq!(value["valid_truth"].as_array().map(Vec::len), Some(2));
        }
    }

    #[test]
    fn field_order_and_optimal_hook() {
        let domain = fixture::random(1, 6, 4, 0.3);
        let synth = Synthesizer::new(&domain, Params::new(3, 2, 1)).unwrap();
        let instance = synth.candidate(0).unwrap().instance;
        let optimal = Err(SearchError::BudgetExceeded {
            memo_entries: 3,
            nodes: 4,
            elapsed: std::time::Duration::from_secs(1),
        });
        let line = String::from_utf8(render(&domain, &instance, Some(&optimal), None)).unwrap();
        assert!(
            line.ends_with(
                r#""optimal":{"unlabelled":"budget exceeded","memo_entries":3,"search_nodes":4}}"#
            ),
            "{line}"
        );
        let order: Vec<usize> = [
            "\"truths\"",
            "\"actions\"",
            "\"observations\"",
            "\"seed\"",
            "\"valid_truth\"",
            "\"optimal\"",
        ]
        .iter()
        .map(|k| line.find(k).unwrap())
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{line}");
        assert!(line.contains("\"valid_truth\":\""), "{line}");
        let names = NameIndex::new(&domain);
        assert!(read_key(&domain, &names, b"{\"truths\":[\"nope\"]}").is_err());
        assert!(read_key(&domain, &names, &line.as_bytes()[..line.len() - 3]).is_err());
    }
}
