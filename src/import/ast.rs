//! The syntax tree of the Python subset the importer reads (see
//! [`super::parser`]): statements, expressions with positions, targets of
//! comprehensions. Plain data; [`super::eval`] gives it values.

use super::Pos;

/// An expression with the position of its first token.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub pos: Pos,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Name(String),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Set(Vec<Expr>),
    Dict(Vec<(Expr, Expr)>),
    /// `[elt for ... in ... if ...]`, or `{...}` when `set` is true.
    Comprehension {
        set: bool,
        elt: Box<Expr>,
        clauses: Vec<Clause>,
    },
    Neg(Box<Expr>),
    Plus(Box<Expr>),
    Not(Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    /// A comparison chain `a op b op c`.
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    /// `set()` or `set(x)`.
    SetCall(Option<Box<Expr>>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    In,
    NotIn,
    Eq,
    NotEq,
}

/// One `for target in iter if cond...` clause of a comprehension.
#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    pub target: Target,
    pub iter: Expr,
    pub conditions: Vec<Expr>,
}

/// A comprehension's loop target: a name or a tuple of targets.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    Name(String, Pos),
    Tuple(Vec<Target>, Pos),
}

/// A top-level statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `a = b = value`: the names with their positions.
    Assign {
        names: Vec<(String, Pos)>,
        value: Expr,
    },
    /// A bare expression, e.g. a docstring.
    Expr(Expr),
}
