//! Evaluator for the parsed Python subset: turns statements into the values
//! Python would bind, without running any code.
//!
//! In: [`Stmt`]s. Out: a [`Module`], the top-level names in order of first
//! assignment with their final [`Value`]s, each value carrying the source
//! position of the literal that produced it (so later errors and notes can
//! point into the Python file).
//!
//! Semantics follow Python where the data files rely on them: sets and dict
//! keys use Python equality (`1 == 1.0 == True`, tuples element-wise),
//! duplicate set elements keep the first occurrence, duplicate dict keys
//! keep the first key's position and the last value; `and`/`or` return an
//! operand; `in` is substring search on strings and membership otherwise.
//! Unlike Python, sets keep source order (there is no order to reproduce).
//! Work is bounded: values deeper than [`MAX_VALUE_DEPTH`] and evaluations
//! costing more than [`MAX_WORK`] steps are errors, never hangs or
//! exhausted memory.

use std::collections::HashMap;

use super::parser::{Clause, CmpOp, Expr, ExprKind, Stmt, Target};
use super::{Pos, SourceError};

mod value;
pub use value::{Value, ValueKind, py_eq};
use value::{contains, dedupe, dedupe_dict, iterate, truthy};

/// Deepest value nesting accepted (names can nest values built earlier).
pub const MAX_VALUE_DEPTH: u32 = 100;
/// Upper bound on evaluation steps and value nodes built: generous for any
/// real domain (the largest KUMO file needs well under a million).
pub const MAX_WORK: u64 = 5_000_000;

/// A top-level name and its final value.
#[derive(Clone, Debug)]
pub struct Binding {
    pub name: String,
    /// Where the name was last assigned.
    pub pos: Pos,
    pub value: Value,
}

/// A repeated element of a set display or key of a dict display: Python
/// silently keeps one, the importer says so.
#[derive(Clone, Debug)]
pub struct Duplicate {
    /// True for a dict key (the last value wins), false for a set element.
    pub dict_key: bool,
    /// The first occurrence, which Python keeps.
    pub first: Pos,
    /// The repeated occurrence.
    pub repeat: Pos,
    /// Python's `repr` of the element or key.
    pub repr: String,
}

/// At most this many duplicates are recorded (the rest are still removed).
const MAX_DUPLICATES: usize = 1000;

/// The evaluated file: its top-level names in order of first assignment.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub bindings: Vec<Binding>,
    /// Repeated set elements and dict keys of displays, in source order.
    pub duplicates: Vec<Duplicate>,
}

impl Module {
    /// The binding called `name`.
    pub fn get(&self, name: &str) -> Option<&Binding> {
        self.bindings.iter().find(|b| b.name == name)
    }
}

/// Evaluates the statements of a file.
pub fn evaluate(stmts: &[Stmt]) -> Result<Module, SourceError> {
    let mut ev = Evaluator {
        module: Module::default(),
        index: HashMap::new(),
        locals: Vec::new(),
        work: 0,
    };
    for stmt in stmts {
        match stmt {
            Stmt::Assign { names, value } => {
                let v = ev.eval(value)?;
                for (name, pos) in names {
                    ev.charge(v.size, *pos)?;
                    match ev.index.get(name) {
                        Some(&i) => {
                            ev.module.bindings[i].value = v.clone();
                            ev.module.bindings[i].pos = *pos;
                        }
                        None => {
                            ev.index.insert(name.clone(), ev.module.bindings.len());
                            ev.module.bindings.push(Binding {
                                name: name.clone(),
                                pos: *pos,
                                value: v.clone(),
                            });
                        }
                    }
                }
            }
            Stmt::Expr(e) => {
                ev.eval(e)?;
            }
        }
    }
    Ok(ev.module)
}

struct Evaluator {
    module: Module,
    index: HashMap<String, usize>,
    /// Comprehension variables, innermost last.
    locals: Vec<(String, Value)>,
    work: u64,
}

impl Evaluator {
    fn charge(&mut self, cost: u64, pos: Pos) -> Result<(), SourceError> {
        self.work = self.work.saturating_add(cost);
        if self.work > MAX_WORK {
            return Err(SourceError::with_help(
                pos,
                "the file builds too much data",
                format!("evaluation stopped after {MAX_WORK} steps; domain files are far smaller"),
            ));
        }
        Ok(())
    }

    fn lookup(&self, name: &str) -> Option<&Value> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .or_else(|| {
                self.index
                    .get(name)
                    .map(|&i| &self.module.bindings[i].value)
            })
    }

    fn eval(&mut self, e: &Expr) -> Result<Value, SourceError> {
        self.charge(1, e.pos)?;
        let pos = e.pos;
        Ok(match &e.kind {
            ExprKind::None => Value::scalar(ValueKind::None, pos),
            ExprKind::Bool(b) => Value::scalar(ValueKind::Bool(*b), pos),
            ExprKind::Int(i) => Value::scalar(ValueKind::Int(*i), pos),
            ExprKind::Float(f) => Value::scalar(ValueKind::Float(*f), pos),
            ExprKind::Str(s) => Value::scalar(ValueKind::Str(s.clone()), pos),
            ExprKind::Name(name) => self.eval_name(name, pos)?,
            ExprKind::List(items) => {
                let items = self.eval_all(items)?;
                Value::container(ValueKind::List(items), pos)?
            }
            ExprKind::Tuple(items) => {
                let items = self.eval_all(items)?;
                Value::container(ValueKind::Tuple(items), pos)?
            }
            ExprKind::Set(items) => {
                let items = self.eval_all(items)?;
                let items = dedupe(items, Some(&mut self.module.duplicates))?;
                Value::container(ValueKind::Set(items), pos)?
            }
            ExprKind::Dict(pairs) => self.eval_dict(pairs, pos)?,
            ExprKind::SetCall(_) if self.lookup("set").is_some() => {
                return Err(SourceError::with_help(
                    pos,
                    "`set` is reassigned in this file, so `set(...)` would run code",
                    "do not assign to `set`; the importer only knows the builtin",
                ));
            }
            ExprKind::SetCall(None) => Value::container(ValueKind::Set(Vec::new()), pos)?,
            ExprKind::SetCall(Some(arg)) => {
                let arg = self.eval(arg)?;
                let items = iterate(&arg)?;
                Value::container(ValueKind::Set(dedupe(items, None)?), pos)?
            }
            ExprKind::Comprehension { set, elt, clauses } => {
                let mut out = Vec::new();
                self.comprehend(elt, clauses, &mut out)?;
                if *set {
                    Value::container(ValueKind::Set(dedupe(out, None)?), pos)?
                } else {
                    Value::container(ValueKind::List(out), pos)?
                }
            }
            ExprKind::Neg(inner) => self.eval_sign(true, inner, pos)?,
            ExprKind::Plus(inner) => self.eval_sign(false, inner, pos)?,
            ExprKind::Not(inner) => {
                let v = self.eval(inner)?;
                Value::scalar(ValueKind::Bool(!truthy(&v)), pos)
            }
            ExprKind::And(items) => self.eval_short_circuit(true, items, pos)?,
            ExprKind::Or(items) => self.eval_short_circuit(false, items, pos)?,
            ExprKind::Compare(first, ops) => self.eval_compare(first, ops, pos)?,
        })
    }

    /// The value a name is bound to (a comprehension variable first); an
    /// unbound name is an error saying what to do.
    fn eval_name(&mut self, name: &str, pos: Pos) -> Result<Value, SourceError> {
        let Some(v) = self.lookup(name) else {
            let help = match name {
                "list" | "dict" | "tuple" | "frozenset" | "sorted" | "range" | "len" => {
                    "the only builtin allowed is `set`".to_string()
                }
                _ => format!("assign `{name}` earlier in the file, before this use"),
            };
            return Err(SourceError::with_help(
                pos,
                format!("name `{name}` is not defined"),
                help,
            ));
        };
        let v = v.clone();
        self.charge(v.size, pos)?;
        Ok(v)
    }

    /// A dict display: keys and values in order, a repeated key keeping
    /// the last value (noted as a duplicate).
    fn eval_dict(&mut self, pairs: &[(Expr, Expr)], pos: Pos) -> Result<Value, SourceError> {
        let mut out = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            let k = self.eval(k)?;
            let v = self.eval(v)?;
            out.push((k, v));
        }
        let out = dedupe_dict(out, &mut self.module.duplicates)?;
        Value::container(ValueKind::Dict(out), pos)
    }

    /// Unary `-` (`neg`) or `+` of a number (a bool counts as 0 or 1).
    fn eval_sign(&mut self, neg: bool, inner: &Expr, pos: Pos) -> Result<Value, SourceError> {
        let v = self.eval(inner)?;
        let op = if neg { '-' } else { '+' };
        let kind = match v.kind {
            ValueKind::Int(i) => ValueKind::Int(if neg {
                i.checked_neg().ok_or_else(|| {
                    SourceError::with_help(
                        pos,
                        "integer is too large",
                        "integers must fit in 64 bits",
                    )
                })?
            } else {
                i
            }),
            ValueKind::Bool(b) => ValueKind::Int(if neg { -i64::from(b) } else { i64::from(b) }),
            ValueKind::Float(f) => ValueKind::Float(if neg { -f } else { f }),
            _ => {
                return Err(SourceError::with_help(
                    pos,
                    format!("bad operand type for unary `{op}`: `{}`", v.type_name()),
                    "only numbers can be negated",
                ));
            }
        };
        Ok(Value::scalar(kind, pos))
    }

    /// `and` (`is_and`) or `or` as Python has them: the operand that
    /// decides, evaluated left to right and no further.
    fn eval_short_circuit(
        &mut self,
        is_and: bool,
        items: &[Expr],
        pos: Pos,
    ) -> Result<Value, SourceError> {
        let mut last = None;
        for item in items {
            let v = self.eval(item)?;
            let t = truthy(&v);
            last = Some(v);
            if t != is_and {
                break;
            }
        }
        Ok(last.unwrap_or_else(|| Value::scalar(ValueKind::None, pos)))
    }

    /// A chain of comparisons (`a == b != c`, `x in y`), true when every
    /// link holds, evaluated no further than the first that does not.
    fn eval_compare(
        &mut self,
        first: &Expr,
        ops: &[(CmpOp, Expr)],
        pos: Pos,
    ) -> Result<Value, SourceError> {
        // `x in NAME`: test against the bound value without copying it
        // (comprehension filters do this once per element).
        if let [(op @ (CmpOp::In | CmpOp::NotIn), right)] = ops
            && let ExprKind::Name(name) = &right.kind
            && self.lookup(name).is_some()
        {
            let left = self.eval(first)?;
            let Some(haystack) = self.lookup(name) else {
                return Err(SourceError::with_help(pos, "internal: name vanished", ""));
            };
            let (found, cost) = contains(haystack, &left, pos)?;
            self.charge(cost, pos)?;
            let holds = if *op == CmpOp::In { found } else { !found };
            return Ok(Value::scalar(ValueKind::Bool(holds), pos));
        }
        let mut left = self.eval(first)?;
        for (op, right) in ops {
            let right = self.eval(right)?;
            let holds = match op {
                CmpOp::Eq => py_eq(&left, &right),
                CmpOp::NotEq => !py_eq(&left, &right),
                CmpOp::In | CmpOp::NotIn => {
                    let (found, cost) = contains(&right, &left, pos)?;
                    self.charge(cost, pos)?;
                    found == (*op == CmpOp::In)
                }
            };
            if !holds {
                return Ok(Value::scalar(ValueKind::Bool(false), pos));
            }
            left = right;
        }
        Ok(Value::scalar(ValueKind::Bool(true), pos))
    }

    fn eval_all(&mut self, items: &[Expr]) -> Result<Vec<Value>, SourceError> {
        items.iter().map(|e| self.eval(e)).collect()
    }

    fn comprehend(
        &mut self,
        elt: &Expr,
        clauses: &[Clause],
        out: &mut Vec<Value>,
    ) -> Result<(), SourceError> {
        let Some((clause, rest)) = clauses.split_first() else {
            let v = self.eval(elt)?;
            self.charge(v.size, elt.pos)?;
            out.push(v);
            return Ok(());
        };
        let iterable = self.eval(&clause.iter)?;
        let items = iterate(&iterable)?;
        for item in items {
            self.charge(1, clause.iter.pos)?;
            let mark = self.locals.len();
            let result = (|| {
                self.bind(&clause.target, item)?;
                for cond in &clause.conditions {
                    let c = self.eval(cond)?;
                    if !truthy(&c) {
                        return Ok(());
                    }
                }
                self.comprehend(elt, rest, out)
            })();
            self.locals.truncate(mark);
            result?;
        }
        Ok(())
    }

    fn bind(&mut self, target: &Target, value: Value) -> Result<(), SourceError> {
        match target {
            Target::Name(name, _) => {
                self.locals.push((name.clone(), value));
                Ok(())
            }
            Target::Tuple(targets, pos) => {
                let items = iterate(&value)?;
                if items.len() != targets.len() {
                    return Err(SourceError::with_help(
                        *pos,
                        format!(
                            "cannot unpack {} values into {} loop variables",
                            items.len(),
                            targets.len()
                        ),
                        "use as many loop variables as each element has items",
                    ));
                }
                for (t, v) in targets.iter().zip(items) {
                    self.bind(t, v)?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::lexer::tokenize;
    use super::super::parser::parse;
    use super::*;
    use crate::python_repr::py_float;

    fn run(src: &str) -> Result<Module, SourceError> {
        evaluate(&parse(&tokenize(src).unwrap()).unwrap())
    }

    fn value(src: &str, name: &str) -> String {
        run(src).unwrap().get(name).unwrap().value.repr()
    }

    #[test]
    fn float_repr_matches_python() {
        let table = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1.5, "1.5"),
            (100.0, "100.0"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1e15, "1000000000000000.0"),
            (123456.789, "123456.789"),
            (-2.5e-7, "-2.5e-07"),
            (1e300, "1e+300"),
            (0.30000000000000004, "0.30000000000000004"),
            (f64::INFINITY, "inf"),
        ];
        for (f, want) in table {
            assert_eq!(py_float(f), want, "{f}");
        }
    }

    #[test]
    fn python_semantics() {
        assert_eq!(value("x = {'b', 'a', 'b'}", "x"), "{'b', 'a'}");
        assert_eq!(value("x = {1, 1.0, True, 2}", "x"), "{1, 2}");
        assert_eq!(
            value("x = {'a': 1, 'b': 2, 'a': 3}", "x"),
            "{'a': 3, 'b': 2}"
        );
        assert_eq!(
            value("x = {(0, 1): 'p', (0.0, 1.0): 'q'}", "x"),
            "{(0, 1): 'q'}"
        );
        assert_eq!(value("x = set()", "x"), "set()");
        assert_eq!(value("x = set(['a', 'a', 'b'])", "x"), "{'a', 'b'}");
        assert_eq!(value("x = set('aba')", "x"), "{'a', 'b'}");
        assert_eq!(value("x = -5, +2.5, -True", "x"), "(-5, 2.5, -1)");
        assert_eq!(value("a = ['p', 'q']\nx = a", "x"), "['p', 'q']");
        assert_eq!(value("x = 'a' 'b'", "x"), "'ab'");
        assert_eq!(value("x = [] or 'd'", "x"), "'d'");
        assert_eq!(value("x = 1 and 0", "x"), "0");
        assert_eq!(value("x = 'a' in 'cat' in ['cat']", "x"), "True");
        assert_eq!(value("x = (1,)", "x"), "(1,)");
        assert_eq!(value("x = [1] == [1.0]", "x"), "True");
        assert_eq!(value("x = {1, 2} == {2, 1}", "x"), "True");
        assert_eq!(value("x = [1] == (1,)", "x"), "False");
        assert_eq!(value("x = 1\nx = 2", "x"), "2");
    }

    #[test]
    fn comprehension_values() {
        let src = "T = ['Sword of A', 'Orb of B', 'Staff C', 'Ring D']\n\
                   X = [t for t in T if t not in ['Ring D']]\n\
                   Y = [t for t in T if 'Sword' not in t and 'Staff' not in t]\n\
                   Z = [t for t in T if not ('Orb' in t or t == 'Ring D')]\n\
                   W = {u for t in T for u in ['x', 'y'] if u == 'y'}\n\
                   V = [a for (a, b) in [(1, 2), (3, 4)] if b != 2]\n";
        assert_eq!(value(src, "X"), "['Sword of A', 'Orb of B', 'Staff C']");
        assert_eq!(value(src, "Y"), "['Orb of B', 'Ring D']");
        assert_eq!(value(src, "Z"), "['Sword of A', 'Staff C']");
        assert_eq!(value(src, "W"), "{'y'}");
        assert_eq!(value(src, "V"), "[3]");
    }

    #[test]
    fn runtime_errors_have_positions() {
        let table: &[(&str, (u32, u32, &str))] = &[
            ("x = y\n", (1, 5, "name `y` is not defined")),
            ("x = {[1]}\n", (1, 6, "unhashable type: `list`")),
            ("x = {'a': 1, {}: 2}\n", (1, 14, "unhashable type: `dict`")),
            (
                "x = -'a'\n",
                (1, 5, "bad operand type for unary `-`: `str`"),
            ),
            (
                "x = [t for t in 5]\n",
                (1, 17, "`int` object is not iterable"),
            ),
            (
                "x = 1 in 'abc'\n",
                (
                    1,
                    5,
                    "`in <string>` requires a string on the left, not `int`",
                ),
            ),
            (
                "x = 1 in 2\n",
                (1, 5, "argument of type `int` is not iterable"),
            ),
            (
                "x = [1 for (a, b) in [(1, 2, 3)]]\n",
                (1, 12, "cannot unpack 3 values into 2 loop variables"),
            ),
        ];
        for (src, (line, column, message)) in table {
            let e = run(src).unwrap_err();
            assert_eq!(
                (e.pos.line, e.pos.column, e.message.as_str()),
                (*line, *column, *message),
                "{src}"
            );
        }
    }

    #[test]
    fn work_and_depth_are_bounded() {
        // Doubling through names: 2^60 elements if evaluated naively.
        let mut src = String::from("a0 = [1, 1]\n");
        for i in 1..60 {
            src.push_str(&format!("a{i} = [a{p}, a{p}]\n", p = i - 1));
        }
        let e = run(&src).unwrap_err();
        assert!(
            e.message.contains("too deeply") || e.message.contains("too much"),
            "{e:?}"
        );
        // Nesting through names.
        let mut src = String::from("a0 = [1]\n");
        for i in 1..150 {
            src.push_str(&format!("a{i} = [a{}]\n", i - 1));
        }
        assert!(run(&src).unwrap_err().message.contains("too deeply"));
        // Quadratic comprehension.
        let src = "a = [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30]\n\
                   b = [x for x in a for y in a for z in a for w in a for v in a for u in a]\n";
        assert!(run(src).unwrap_err().message.contains("too much"));
    }
}
