//! The domain document: the YAML format of DESIGN.md as plain Rust values.
//!
//! [`DomainDoc`] is what a domain file says, before validation and
//! without source positions. Loading builds it from the spanned YAML tree
//! (see `compile`); the importer and the splitter build it and write it
//! with [`DomainDoc::to_yaml`]. Field order in the output is the format's.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Serialize, Serializer};

/// A domain file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DomainDoc {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truth_noun: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truth_plural: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_noun: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_plural: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// `true`: names of one kind that differ only in letter case are a
    /// warning, not an error (answers are compared exactly). KUMO's
    /// published data has such pairs (e.g. `Horse acts` and `Horse Acts`);
    /// the importer sets it for those domains only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub case_sensitive_names: bool,
    pub truths: Vec<String>,
    pub actions: Vec<ActionDoc>,
}

/// One action of a domain file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionDoc {
    pub name: String,
    /// `str`, `float` or `int`.
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    pub states: StatesDoc,
}

/// The states of an action: a mapping label -> rule-outs for `str`, a list
/// of ranges for `float`/`int`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum StatesDoc {
    Named(#[serde(with = "ordered_pairs")] Vec<(String, Vec<String>)>),
    Ranges(Vec<RangeStateDoc>),
}

/// One range state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RangeStateDoc {
    #[serde(serialize_with = "flow_range")]
    pub range: [f64; 2],
    pub rules_out: Vec<String>,
}

/// Writes a range as `[lo, hi]` on one line, integral bounds without `.0`.
fn flow_range<S: Serializer>(range: &[f64; 2], serializer: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    #[serde(untagged)]
    enum Bound {
        Int(i64),
        Real(f64),
    }
    let bound = |x: f64| {
        if x.fract() == 0.0 && x.abs() < 9.0e15 {
            Bound::Int(x as i64)
        } else {
            Bound::Real(x)
        }
    };
    serde_saphyr::FlowSeq([bound(range[0]), bound(range[1])]).serialize(serializer)
}

impl Serialize for StatesDoc {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            StatesDoc::Named(pairs) => {
                let mut map = serializer.serialize_map(Some(pairs.len()))?;
                for (label, rules_out) in pairs {
                    map.serialize_entry(label, rules_out)?;
                }
                map.end()
            }
            StatesDoc::Ranges(ranges) => {
                let mut seq = serializer.serialize_seq(Some(ranges.len()))?;
                for range in ranges {
                    seq.serialize_element(range)?;
                }
                seq.end()
            }
        }
    }
}

impl DomainDoc {
    /// The document as YAML text in the format of DESIGN.md.
    pub fn to_yaml(&self) -> String {
        // Serialising plain strings, numbers and sequences cannot fail.
        serde_saphyr::to_string(self).unwrap_or_else(|e| format!("# serialisation failed: {e}\n"))
    }
}

/// A mapping read and written as an ordered list of pairs.
mod ordered_pairs {
    use serde::de::{MapAccess, Visitor};
    use serde::{Deserialize, Deserializer};
    use std::fmt;

    pub fn deserialize<'de, D, V>(deserializer: D) -> Result<Vec<(String, V)>, D::Error>
    where
        D: Deserializer<'de>,
        V: Deserialize<'de>,
    {
        struct Pairs<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Pairs<V> {
            type Value = Vec<(String, V)>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(pair) = map.next_entry()? {
                    out.push(pair);
                }
                Ok(out)
            }
        }
        deserializer.deserialize_map(Pairs(std::marker::PhantomData))
    }
}
