//! Python values of the evaluator and the Python semantics they need:
//! equality across numeric types (`1 == 1.0 == True`), hashable keys,
//! truthiness, `repr` as Python prints it, `in`, iteration, and the
//! first-wins / last-value rules of set and dict displays.

use std::collections::{HashMap, HashSet};

use super::{Duplicate, MAX_DUPLICATES, MAX_VALUE_DEPTH};
use crate::import::Pos;
use crate::import::SourceError;
use crate::python_repr::{py_float, py_str};

/// A Python value with the position of the expression that produced it.
#[derive(Clone, Debug)]
pub struct Value {
    pub kind: ValueKind,
    pub pos: Pos,
    pub(super) depth: u32,
    pub(super) size: u64,
}

/// The value kinds of the subset.
#[derive(Clone, Debug)]
pub enum ValueKind {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    Tuple(Vec<Value>),
    /// Elements in source order, without duplicates.
    Set(Vec<Value>),
    /// Pairs in source order of first key occurrence, keys unique.
    Dict(Vec<(Value, Value)>),
}

impl Value {
    pub(super) fn scalar(kind: ValueKind, pos: Pos) -> Value {
        Value {
            kind,
            pos,
            depth: 0,
            size: 1,
        }
    }

    pub(super) fn container(kind: ValueKind, pos: Pos) -> Result<Value, SourceError> {
        let (depth, size) = {
            let children: Box<dyn Iterator<Item = &Value>> = match &kind {
                ValueKind::List(v) | ValueKind::Tuple(v) | ValueKind::Set(v) => Box::new(v.iter()),
                ValueKind::Dict(p) => Box::new(p.iter().flat_map(|(k, v)| [k, v])),
                _ => Box::new(std::iter::empty()),
            };
            children.fold((0u32, 1u64), |(d, s), c| {
                (d.max(c.depth + 1), s.saturating_add(c.size))
            })
        };
        if depth > MAX_VALUE_DEPTH {
            return Err(SourceError::with_help(
                pos,
                "value is nested too deeply",
                format!("domain data needs a few levels; this exceeds {MAX_VALUE_DEPTH}"),
            ));
        }
        Ok(Value {
            kind,
            pos,
            depth,
            size,
        })
    }

    /// Python's name for the value's type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            ValueKind::None => "NoneType",
            ValueKind::Bool(_) => "bool",
            ValueKind::Int(_) => "int",
            ValueKind::Float(_) => "float",
            ValueKind::Str(_) => "str",
            ValueKind::List(_) => "list",
            ValueKind::Tuple(_) => "tuple",
            ValueKind::Set(_) => "set",
            ValueKind::Dict(_) => "dict",
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            ValueKind::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value as a number, if it is an int or float (not a bool).
    pub fn as_number(&self) -> Option<f64> {
        match self.kind {
            ValueKind::Int(i) => Some(i as f64),
            ValueKind::Float(f) => Some(f),
            _ => None,
        }
    }

    /// Elements of a list, tuple or set.
    pub fn elements(&self) -> Option<&[Value]> {
        match &self.kind {
            ValueKind::List(v) | ValueKind::Tuple(v) | ValueKind::Set(v) => Some(v),
            _ => None,
        }
    }

    /// The value as Python's `repr` would show it (strings quoted).
    pub fn repr(&self) -> String {
        match &self.kind {
            ValueKind::None => "None".into(),
            ValueKind::Bool(b) => if *b { "True" } else { "False" }.into(),
            ValueKind::Int(i) => i.to_string(),
            ValueKind::Float(f) => py_float(*f),
            ValueKind::Str(s) => py_str(s),
            ValueKind::List(v) => format!("[{}]", join_repr(v)),
            ValueKind::Tuple(v) if v.len() == 1 => format!("({},)", v[0].repr()),
            ValueKind::Tuple(v) => format!("({})", join_repr(v)),
            ValueKind::Set(v) if v.is_empty() => "set()".into(),
            ValueKind::Set(v) => format!("{{{}}}", join_repr(v)),
            ValueKind::Dict(p) => format!(
                "{{{}}}",
                p.iter()
                    .map(|(k, v)| format!("{}: {}", k.repr(), v.repr()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

fn join_repr(v: &[Value]) -> String {
    v.iter().map(Value::repr).collect::<Vec<_>>().join(", ")
}

/// Hashable identity of a value under Python equality.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum HKey {
    None,
    Int(i64),
    Float(u64),
    Str(String),
    Tuple(Vec<HKey>),
}

fn num_key(f: f64) -> HKey {
    // 2^63 as f64; integral floats in range equal the int of that value.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if f.fract() == 0.0 && (-LIMIT..LIMIT).contains(&f) {
        HKey::Int(f as i64)
    } else {
        HKey::Float(f.to_bits())
    }
}

fn hkey(v: &Value) -> Result<HKey, &'static str> {
    Ok(match &v.kind {
        ValueKind::None => HKey::None,
        ValueKind::Bool(b) => HKey::Int(i64::from(*b)),
        ValueKind::Int(i) => HKey::Int(*i),
        ValueKind::Float(f) => num_key(*f),
        ValueKind::Str(s) => HKey::Str(s.clone()),
        ValueKind::Tuple(items) => HKey::Tuple(items.iter().map(hkey).collect::<Result<_, _>>()?),
        ValueKind::List(_) | ValueKind::Set(_) | ValueKind::Dict(_) => return Err(v.type_name()),
    })
}

/// Python `==`.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    use ValueKind as K;
    match (&a.kind, &b.kind) {
        (K::None, K::None) => true,
        (K::Str(x), K::Str(y)) => x == y,
        (K::List(x), K::List(y)) | (K::Tuple(x), K::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (K::Set(x), K::Set(y)) => {
            let keys: HashSet<HKey> = y.iter().filter_map(|v| hkey(v).ok()).collect();
            x.len() == y.len() && x.iter().all(|v| hkey(v).is_ok_and(|k| keys.contains(&k)))
        }
        (K::Dict(x), K::Dict(y)) => {
            let map: HashMap<HKey, &Value> = y
                .iter()
                .filter_map(|(k, v)| hkey(k).ok().map(|k| (k, v)))
                .collect();
            x.len() == y.len()
                && x.iter().all(|(k, v)| {
                    hkey(k)
                        .ok()
                        .and_then(|k| map.get(&k))
                        .is_some_and(|w| py_eq(v, w))
                })
        }
        (K::Bool(_) | K::Int(_) | K::Float(_), K::Bool(_) | K::Int(_) | K::Float(_)) => {
            match (hkey(a), hkey(b)) {
                (Ok(x), Ok(y)) => x == y,
                _ => false,
            }
        }
        _ => false,
    }
}

pub(super) fn truthy(v: &Value) -> bool {
    match &v.kind {
        ValueKind::None => false,
        ValueKind::Bool(b) => *b,
        ValueKind::Int(i) => *i != 0,
        ValueKind::Float(f) => *f != 0.0,
        ValueKind::Str(s) => !s.is_empty(),
        ValueKind::List(v) | ValueKind::Tuple(v) | ValueKind::Set(v) => !v.is_empty(),
        ValueKind::Dict(p) => !p.is_empty(),
    }
}

/// Python `needle in haystack`, with its cost in work steps.
pub(super) fn contains(
    haystack: &Value,
    needle: &Value,
    pos: Pos,
) -> Result<(bool, u64), SourceError> {
    match &haystack.kind {
        ValueKind::Str(h) => {
            let Some(n) = needle.as_str() else {
                return Err(SourceError::with_help(
                    pos,
                    format!(
                        "`in <string>` requires a string on the left, not `{}`",
                        needle.type_name()
                    ),
                    "compare strings with strings",
                ));
            };
            Ok((h.contains(n), 1 + (h.len() as u64) / 16))
        }
        ValueKind::List(items) | ValueKind::Tuple(items) => Ok((
            items.iter().any(|v| py_eq(v, needle)),
            1 + items.len() as u64,
        )),
        ValueKind::Set(items) => {
            let key = hkey(needle).map_err(|t| unhashable(pos, t))?;
            Ok((
                items.iter().any(|v| hkey(v).is_ok_and(|k| k == key)),
                1 + items.len() as u64,
            ))
        }
        ValueKind::Dict(pairs) => {
            let key = hkey(needle).map_err(|t| unhashable(pos, t))?;
            Ok((
                pairs.iter().any(|(k, _)| hkey(k).is_ok_and(|k| k == key)),
                1 + pairs.len() as u64,
            ))
        }
        _ => Err(SourceError::with_help(
            pos,
            format!(
                "argument of type `{}` is not iterable",
                haystack.type_name()
            ),
            "`in` needs a list, tuple, set, dict or string on the right",
        )),
    }
}

fn unhashable(pos: Pos, type_name: &str) -> SourceError {
    SourceError::with_help(
        pos,
        format!("unhashable type: `{type_name}`"),
        "set elements and dict keys must be strings, numbers or tuples",
    )
}

/// The elements Python's `for` would visit.
pub(super) fn iterate(v: &Value) -> Result<Vec<Value>, SourceError> {
    Ok(match &v.kind {
        ValueKind::List(items) | ValueKind::Tuple(items) | ValueKind::Set(items) => items.clone(),
        ValueKind::Dict(pairs) => pairs.iter().map(|(k, _)| k.clone()).collect(),
        ValueKind::Str(s) => s
            .chars()
            .map(|c| Value::scalar(ValueKind::Str(c.to_string()), v.pos))
            .collect(),
        _ => {
            return Err(SourceError::with_help(
                v.pos,
                format!("`{}` object is not iterable", v.type_name()),
                "iterate over a list, tuple, set, dict or string",
            ));
        }
    })
}

/// Set semantics: the first of equal elements stays, in source order.
pub(super) fn dedupe(
    items: Vec<Value>,
    mut duplicates: Option<&mut Vec<Duplicate>>,
) -> Result<Vec<Value>, SourceError> {
    let mut seen: HashMap<HKey, usize> = HashMap::with_capacity(items.len());
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    for v in items {
        let key = hkey(&v).map_err(|t| unhashable(v.pos, t))?;
        match seen.get(&key) {
            Some(&i) => {
                if let Some(d) = duplicates.as_deref_mut()
                    && d.len() < MAX_DUPLICATES
                {
                    d.push(Duplicate {
                        dict_key: false,
                        first: out[i].pos,
                        repeat: v.pos,
                        repr: v.repr(),
                    });
                }
            }
            None => {
                seen.insert(key, out.len());
                out.push(v);
            }
        }
    }
    Ok(out)
}

/// Dict semantics: a repeated key keeps its first position and key object
/// and takes the last value.
pub(super) fn dedupe_dict(
    pairs: Vec<(Value, Value)>,
    duplicates: &mut Vec<Duplicate>,
) -> Result<Vec<(Value, Value)>, SourceError> {
    let mut index: HashMap<HKey, usize> = HashMap::with_capacity(pairs.len());
    let mut out: Vec<(Value, Value)> = Vec::with_capacity(pairs.len());
    for (k, v) in pairs {
        let key = hkey(&k).map_err(|t| unhashable(k.pos, t))?;
        match index.get(&key) {
            Some(&i) => {
                if duplicates.len() < MAX_DUPLICATES {
                    duplicates.push(Duplicate {
                        dict_key: true,
                        first: out[i].0.pos,
                        repeat: k.pos,
                        repr: k.repr(),
                    });
                }
                out[i].1 = v;
            }
            None => {
                index.insert(key, out.len());
                out.push((k, v));
            }
        }
    }
    Ok(out)
}
