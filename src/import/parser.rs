//! Parser for the Python subset of KUMO's domain data files.
//!
//! In: [`Token`]s from the lexer. Out: a list of [`Stmt`]s: top-level
//! assignments `NAME = expr` (chains `a = b = expr` too) and bare
//! expressions (docstrings). Expressions are literals (str, int, float,
//! `True`/`False`/`None`), list/tuple/set/dict displays, names, unary `-`/`+`,
//! `set()`/`set(x)`, list and set comprehensions with `for`/`if`, `not`,
//! `and`, `or` and the comparisons `in`, `not in`, `==`, `!=`.
//!
//! Everything else that Python has (calls, attribute access, subscripts,
//! arithmetic, imports, definitions, blocks) is rejected with its position
//! and a reason; nothing is ever executed. Nesting is bounded by
//! [`MAX_DEPTH`] so deep input gets an error, not a stack overflow. The
//! tree's types are in [`super::ast`].

use super::Pos;
pub use super::ast::{Clause, CmpOp, Expr, ExprKind, Stmt, Target};
use super::lexer::{Tok, Token};

/// Deepest nesting of brackets and operators accepted (Python's own parser
/// stops at 200 nested parentheses).
pub const MAX_DEPTH: usize = 200;

/// A syntax error: where, what, and how to fix it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub pos: Pos,
    pub message: String,
    pub help: Option<String>,
}

type Result<T> = std::result::Result<T, ParseError>;

fn error(pos: Pos, message: impl Into<String>, help: impl Into<String>) -> ParseError {
    ParseError {
        pos,
        message: message.into(),
        help: Some(help.into()),
    }
}

const NOT_CODE: &str = "the importer reads data literals only and never runs code";

/// Python keywords that start statements or expressions this subset lacks.
const UNSUPPORTED_KEYWORDS: &[&str] = &[
    "import", "from", "def", "class", "if", "elif", "else", "for", "while", "with", "try",
    "except", "finally", "return", "yield", "lambda", "del", "global", "nonlocal", "assert",
    "raise", "async", "await", "pass", "break", "continue", "is", "as", "match", "case",
];

/// Parses a whole file.
pub fn parse(tokens: &[Token]) -> Result<Vec<Stmt>> {
    let mut p = Parser {
        tokens,
        i: 0,
        depth: 0,
    };
    let mut stmts = Vec::new();
    while !p.at_end() {
        if p.eat_newline() {
            continue;
        }
        stmts.push(p.statement()?);
    }
    Ok(stmts)
}

struct Parser<'t> {
    tokens: &'t [Token],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn tok(&self) -> &Tok {
        self.tokens.get(self.i).map_or(&Tok::End, |t| &t.tok)
    }

    fn pos(&self) -> Pos {
        self.tokens
            .get(self.i)
            .or(self.tokens.last())
            .map_or(Pos { line: 1, column: 1 }, |t| t.pos)
    }

    fn at_end(&self) -> bool {
        matches!(self.tok(), Tok::End)
    }

    fn advance(&mut self) {
        if self.i < self.tokens.len() {
            self.i += 1;
        }
    }

    fn eat_newline(&mut self) -> bool {
        if matches!(self.tok(), Tok::Newline) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.tok(), Tok::Op(o) if *o == op)
    }

    fn is_keyword(&self, kw: &str) -> bool {
        matches!(self.tok(), Tok::Name(n) if n == kw)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        if self.is_op(op) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect_op(&mut self, op: &str, context: &str) -> Result<()> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(error(
                self.pos(),
                format!("expected `{op}` {context}, found {}", describe(self.tok())),
                format!("add `{op}`"),
            ))
        }
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(error(
                self.pos(),
                "expression is nested too deeply",
                "flatten the data; domain files need only a few levels",
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn statement(&mut self) -> Result<Stmt> {
        let stmt = self.simple_statement()?;
        match self.tok() {
            Tok::Newline => {
                self.advance();
            }
            Tok::Op(";") => {
                self.advance();
            }
            Tok::End => {}
            other => {
                return Err(unexpected(self.pos(), other, "the end of the statement"));
            }
        }
        Ok(stmt)
    }

    fn simple_statement(&mut self) -> Result<Stmt> {
        if matches!(self.tok(), Tok::Indent) {
            return Err(error(
                self.pos(),
                "unexpected indent",
                "top-level assignments must start in column 1; blocks (`if`, `for`, `def`) are not supported",
            ));
        }
        if let Tok::Name(name) = self.tok()
            && UNSUPPORTED_KEYWORDS.contains(&name.as_str())
        {
            let pos = self.pos();
            return Err(error(
                pos,
                format!("`{name}` statements are not supported"),
                format!("{NOT_CODE}; only `NAME = literal` assignments are allowed"),
            ));
        }
        let first = self.expr_list()?;
        if self.is_op(":")
            && let ExprKind::Name(name) = &first.kind
        {
            // `NAME: annotation = value`: the annotation is a type hint and is
            // skipped unevaluated.
            let name = (name.clone(), first.pos);
            self.advance();
            self.skip_annotation()?;
            if !self.eat_op("=") {
                return Ok(Stmt::Expr(Expr {
                    kind: ExprKind::None,
                    pos: first.pos,
                }));
            }
            let value = self.expr_list()?;
            return Ok(Stmt::Assign {
                names: vec![name],
                value,
            });
        }
        if !self.is_op("=") {
            if let Tok::Op(op) = self.tok()
                && op.ends_with('=')
                && !matches!(*op, "==" | "!=" | "<=" | ">=")
            {
                return Err(error(
                    self.pos(),
                    format!("augmented assignment `{op}` is not supported"),
                    "assign each variable once with `NAME = literal`",
                ));
            }
            return Ok(Stmt::Expr(first));
        }
        let mut targets = vec![first];
        while self.eat_op("=") {
            targets.push(self.expr_list()?);
        }
        let value = targets.pop().unwrap_or(Expr {
            kind: ExprKind::None,
            pos: self.pos(),
        });
        let mut names = Vec::new();
        for t in targets {
            match t.kind {
                ExprKind::Name(n) => names.push((n, t.pos)),
                _ => {
                    return Err(error(
                        t.pos,
                        "only a plain name can be assigned to",
                        "write `NAME = literal`; unpacking, subscripts and attributes are not supported",
                    ));
                }
            }
        }
        Ok(Stmt::Assign { names, value })
    }

    /// Skips a type annotation: tokens up to `=` or the end of the
    /// statement outside brackets.
    fn skip_annotation(&mut self) -> Result<()> {
        let start = self.pos();
        let mut depth = 0usize;
        loop {
            match self.tok() {
                Tok::Op("(" | "[" | "{") => depth += 1,
                Tok::Op(")" | "]" | "}") => depth = depth.saturating_sub(1),
                Tok::Op("=") if depth == 0 => break,
                Tok::Op(";") | Tok::Newline | Tok::End | Tok::Indent if depth == 0 => break,
                Tok::End => break,
                _ => {}
            }
            self.advance();
        }
        if self.pos() == start {
            return Err(error(
                start,
                "expected a type annotation after `:`",
                "write `NAME = value` or `NAME: type = value`",
            ));
        }
        Ok(())
    }

    /// `expr` or a bare tuple `expr, expr, ...`.
    fn expr_list(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let first = self.expr()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.ends_expr_list() {
                break;
            }
            items.push(self.expr()?);
        }
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            pos,
        })
    }

    fn ends_expr_list(&self) -> bool {
        matches!(self.tok(), Tok::Newline | Tok::End | Tok::Op("=" | ";"))
    }

    /// An expression: `or_test` (no conditional expressions, no lambdas).
    fn expr(&mut self) -> Result<Expr> {
        self.enter()?;
        let result = self.or_test();
        self.leave();
        let e = result?;
        if self.is_keyword("if") {
            // `x if c else y`; comprehension filters are read by `clauses`.
            return Err(error(
                self.pos(),
                "conditional expressions are not supported",
                NOT_CODE,
            ));
        }
        Ok(e)
    }

    fn or_test(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let first = self.and_test()?;
        if !self.is_keyword("or") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.is_keyword("or") {
            self.advance();
            items.push(self.and_test()?);
        }
        Ok(Expr {
            kind: ExprKind::Or(items),
            pos,
        })
    }

    fn and_test(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let first = self.not_test()?;
        if !self.is_keyword("and") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.is_keyword("and") {
            self.advance();
            items.push(self.not_test()?);
        }
        Ok(Expr {
            kind: ExprKind::And(items),
            pos,
        })
    }

    fn not_test(&mut self) -> Result<Expr> {
        if self.is_keyword("not") {
            let pos = self.pos();
            self.advance();
            self.enter()?;
            let inner = self.not_test();
            self.leave();
            return Ok(Expr {
                kind: ExprKind::Not(Box::new(inner?)),
                pos,
            });
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let first = self.unary()?;
        let mut ops = Vec::new();
        loop {
            let op = if self.is_keyword("in") {
                self.advance();
                CmpOp::In
            } else if self.is_keyword("not") {
                let at = self.pos();
                self.advance();
                if !self.is_keyword("in") {
                    return Err(error(at, "expected `in` after `not`", "write `x not in y`"));
                }
                self.advance();
                CmpOp::NotIn
            } else if self.eat_op("==") {
                CmpOp::Eq
            } else if self.eat_op("!=") {
                CmpOp::NotEq
            } else if let Tok::Op(op @ ("<" | ">" | "<=" | ">=")) = self.tok() {
                return Err(error(
                    self.pos(),
                    format!("comparison `{op}` is not supported"),
                    "filters may use `in`, `not in`, `==` and `!=`",
                ));
            } else if self.is_keyword("is") {
                return Err(error(
                    self.pos(),
                    "comparison `is` is not supported",
                    "filters may use `in`, `not in`, `==` and `!=`",
                ));
            } else {
                break;
            };
            ops.push((op, self.unary()?));
        }
        if ops.is_empty() {
            return Ok(first);
        }
        Ok(Expr {
            kind: ExprKind::Compare(Box::new(first), ops),
            pos,
        })
    }

    fn unary(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let neg = if self.eat_op("-") {
            Some(true)
        } else if self.eat_op("+") {
            Some(false)
        } else {
            None
        };
        if let Some(neg) = neg {
            self.enter()?;
            let inner = self.unary();
            self.leave();
            let inner = Box::new(inner?);
            return Ok(Expr {
                kind: if neg {
                    ExprKind::Neg(inner)
                } else {
                    ExprKind::Plus(inner)
                },
                pos,
            });
        }
        let atom = self.atom()?;
        self.check_postfix(&atom)?;
        Ok(atom)
    }

    /// Rejects what may follow an atom in Python but not in data files.
    fn check_postfix(&self, atom: &Expr) -> Result<()> {
        let pos = self.pos();
        match self.tok() {
            Tok::Op(".") => Err(error(pos, "attribute access is not supported", NOT_CODE)),
            Tok::Op("(") => Err(error(
                atom.pos,
                match &atom.kind {
                    ExprKind::Name(n) => format!("calling `{n}` is not supported"),
                    _ => "calls are not supported".to_string(),
                },
                format!("{NOT_CODE}; the only call allowed is `set()` / `set([...])`"),
            )),
            Tok::Op("[") => Err(error(pos, "subscripts are not supported", NOT_CODE)),
            Tok::Op(
                op @ ("+" | "-" | "*" | "/" | "//" | "%" | "**" | "@" | "&" | "|" | "^" | "<<"
                | ">>" | "~"),
            ) => Err(error(
                pos,
                format!("operator `{op}` is not supported"),
                "write the value as a literal",
            )),
            Tok::Op(":=") => Err(error(
                pos,
                "assignment expressions (`:=`) are not supported",
                NOT_CODE,
            )),
            _ => Ok(()),
        }
    }

    fn atom(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let tok = self.tok().clone();
        let kind = match tok {
            Tok::Str(s) => {
                self.advance();
                ExprKind::Str(s)
            }
            Tok::Int(i) => {
                self.advance();
                ExprKind::Int(i)
            }
            Tok::Float(f) => {
                self.advance();
                ExprKind::Float(f)
            }
            Tok::Name(name) => {
                self.advance();
                match name.as_str() {
                    "True" => ExprKind::Bool(true),
                    "False" => ExprKind::Bool(false),
                    "None" => ExprKind::None,
                    "set" if self.is_op("(") => return self.set_call(pos),
                    _ if UNSUPPORTED_KEYWORDS.contains(&name.as_str())
                        || matches!(name.as_str(), "and" | "or" | "not" | "in") =>
                    {
                        return Err(error(
                            pos,
                            format!("`{name}` is not supported here"),
                            NOT_CODE,
                        ));
                    }
                    _ => ExprKind::Name(name),
                }
            }
            Tok::Op("(") => return self.paren(pos),
            Tok::Op("[") => return self.bracket(pos),
            Tok::Op("{") => return self.brace(pos),
            Tok::Op("*") | Tok::Op("**") => {
                return Err(error(
                    pos,
                    "unpacking with `*` is not supported",
                    "write the elements out",
                ));
            }
            Tok::Op("...") => {
                return Err(error(
                    pos,
                    "`...` is not supported",
                    "write a literal value",
                ));
            }
            ref other => return Err(unexpected(pos, other, "a value")),
        };
        Ok(Expr { kind, pos })
    }

    fn set_call(&mut self, pos: Pos) -> Result<Expr> {
        self.advance(); // (
        if self.eat_op(")") {
            return Ok(Expr {
                kind: ExprKind::SetCall(None),
                pos,
            });
        }
        self.enter()?;
        let arg = self.expr_or_comprehension(pos, false);
        self.leave();
        let arg = arg?;
        self.eat_op(",");
        if !self.is_op(")") {
            return Err(error(
                self.pos(),
                "`set` takes at most one argument",
                "write `set([a, b, ...])`",
            ));
        }
        self.advance();
        Ok(Expr {
            kind: ExprKind::SetCall(Some(Box::new(arg))),
            pos,
        })
    }

    /// An expression, or a generator expression `x for x in y` (as in
    /// `set(x for x in y)`), read as a list comprehension.
    fn expr_or_comprehension(&mut self, pos: Pos, set: bool) -> Result<Expr> {
        let elt = self.expr()?;
        if self.is_keyword("for") {
            let clauses = self.clauses()?;
            return Ok(Expr {
                kind: ExprKind::Comprehension {
                    set,
                    elt: Box::new(elt),
                    clauses,
                },
                pos,
            });
        }
        Ok(elt)
    }

    fn paren(&mut self, pos: Pos) -> Result<Expr> {
        self.advance();
        self.enter()?;
        let r = self.paren_inner(pos);
        self.leave();
        r
    }

    fn paren_inner(&mut self, pos: Pos) -> Result<Expr> {
        if self.eat_op(")") {
            return Ok(Expr {
                kind: ExprKind::Tuple(Vec::new()),
                pos,
            });
        }
        let first = self.expr_or_comprehension(pos, false)?;
        if matches!(first.kind, ExprKind::Comprehension { .. }) {
            self.expect_op(")", "to close the generator expression")?;
            return Ok(first);
        }
        if self.eat_op(")") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.is_op(")") {
                break;
            }
            items.push(self.expr()?);
        }
        self.expect_op(")", "to close the tuple")?;
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            pos,
        })
    }

    fn bracket(&mut self, pos: Pos) -> Result<Expr> {
        self.advance();
        self.enter()?;
        let r = self.bracket_inner(pos);
        self.leave();
        r
    }

    fn bracket_inner(&mut self, pos: Pos) -> Result<Expr> {
        if self.eat_op("]") {
            return Ok(Expr {
                kind: ExprKind::List(Vec::new()),
                pos,
            });
        }
        let first = self.expr_or_comprehension(pos, false)?;
        if matches!(first.kind, ExprKind::Comprehension { .. }) {
            self.expect_op("]", "to close the list comprehension")?;
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.is_op("]") {
                break;
            }
            items.push(self.expr()?);
        }
        self.expect_op("]", "to close the list")?;
        Ok(Expr {
            kind: ExprKind::List(items),
            pos,
        })
    }

    fn brace(&mut self, pos: Pos) -> Result<Expr> {
        self.advance();
        self.enter()?;
        let r = self.brace_inner(pos);
        self.leave();
        r
    }

    fn brace_inner(&mut self, pos: Pos) -> Result<Expr> {
        if self.eat_op("}") {
            return Ok(Expr {
                kind: ExprKind::Dict(Vec::new()),
                pos,
            });
        }
        let first = self.expr()?;
        if self.eat_op(":") {
            let value = self.expr()?;
            if self.is_keyword("for") {
                return Err(error(
                    self.pos(),
                    "dict comprehensions are not supported",
                    "write the dict out as a literal",
                ));
            }
            let mut pairs = vec![(first, value)];
            while self.eat_op(",") {
                if self.is_op("}") {
                    break;
                }
                let k = self.expr()?;
                self.expect_op(":", "between a dict key and its value")?;
                let v = self.expr()?;
                pairs.push((k, v));
            }
            self.expect_op("}", "to close the dict")?;
            return Ok(Expr {
                kind: ExprKind::Dict(pairs),
                pos,
            });
        }
        if self.is_keyword("for") {
            let clauses = self.clauses()?;
            self.expect_op("}", "to close the set comprehension")?;
            return Ok(Expr {
                kind: ExprKind::Comprehension {
                    set: true,
                    elt: Box::new(first),
                    clauses,
                },
                pos,
            });
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.is_op("}") {
                break;
            }
            items.push(self.expr()?);
        }
        self.expect_op("}", "to close the set")?;
        Ok(Expr {
            kind: ExprKind::Set(items),
            pos,
        })
    }

    fn clauses(&mut self) -> Result<Vec<Clause>> {
        let mut clauses = Vec::new();
        while self.is_keyword("for") {
            self.advance();
            let target = self.target_list()?;
            if !self.is_keyword("in") {
                return Err(error(
                    self.pos(),
                    format!(
                        "expected `in` in the comprehension, found {}",
                        describe(self.tok())
                    ),
                    "write `[x for x in NAME if ...]`",
                ));
            }
            self.advance();
            let iter = self.or_test()?;
            let mut conditions = Vec::new();
            while self.is_keyword("if") {
                self.advance();
                conditions.push(self.or_test()?);
            }
            clauses.push(Clause {
                target,
                iter,
                conditions,
            });
        }
        if self.is_keyword("async") {
            return Err(error(self.pos(), "`async` is not supported", NOT_CODE));
        }
        Ok(clauses)
    }

    fn target_list(&mut self) -> Result<Target> {
        let pos = self.pos();
        let first = self.target()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.is_keyword("in") {
                break;
            }
            items.push(self.target()?);
        }
        Ok(Target::Tuple(items, pos))
    }

    fn target(&mut self) -> Result<Target> {
        let pos = self.pos();
        match self.tok().clone() {
            Tok::Name(n)
                if !UNSUPPORTED_KEYWORDS.contains(&n.as_str())
                    && !matches!(
                        n.as_str(),
                        "and" | "or" | "not" | "in" | "True" | "False" | "None"
                    ) =>
            {
                self.advance();
                Ok(Target::Name(n, pos))
            }
            Tok::Op(open @ ("(" | "[")) => {
                self.advance();
                self.enter()?;
                let close = if open == "(" { ")" } else { "]" };
                let mut items = Vec::new();
                let r = (|| {
                    while !self.is_op(close) {
                        items.push(self.target()?);
                        if !self.eat_op(",") {
                            break;
                        }
                    }
                    self.expect_op(close, "to close the loop target")
                })();
                self.leave();
                r?;
                Ok(Target::Tuple(items, pos))
            }
            other => Err(error(
                pos,
                format!("expected a loop variable, found {}", describe(&other)),
                "write `for NAME in ...`",
            )),
        }
    }
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Name(n) => format!("`{n}`"),
        Tok::Str(_) => "a string".to_string(),
        Tok::Int(_) | Tok::Float(_) => "a number".to_string(),
        Tok::Op(op) => format!("`{op}`"),
        Tok::Newline => "the end of the line".to_string(),
        Tok::Indent => "an indented line".to_string(),
        Tok::End => "the end of the file".to_string(),
    }
}

fn unexpected(pos: Pos, tok: &Tok, expected: &str) -> ParseError {
    let help = match tok {
        Tok::Op(op) if op.ends_with('=') && op.len() > 1 => {
            "assign each variable once with `NAME = literal`"
        }
        Tok::Op(",") => "a comma must separate two values",
        Tok::Newline | Tok::End => "the statement is incomplete",
        _ => "check for a missing comma or bracket",
    };
    error(
        pos,
        format!("expected {expected}, found {}", describe(tok)),
        help,
    )
}

#[cfg(test)]
mod tests {
    use super::super::lexer::tokenize;
    use super::*;

    fn parse_src(src: &str) -> Result<Vec<Stmt>> {
        parse(&tokenize(src).expect("lexes"))
    }

    /// (line, column, message) of the error for `src`.
    fn err(src: &str) -> (u32, u32, String) {
        let e = parse_src(src).unwrap_err();
        (e.pos.line, e.pos.column, e.message)
    }

    #[test]
    fn parses_the_subset() {
        let stmts = parse_src(
            "\"\"\"doc\"\"\"\nA = {'x', 'y'}\nB = [a for a in A if a not in ['x'] and not 'z' in a]\nC = D = {(0, 1.5): set(), 'k': set([1, -2])}; E = 1, 2\n",
        )
        .unwrap();
        assert_eq!(stmts.len(), 5);
        let annotated = parse_src("T: dict[str, list] = {'a': []}\nU: int\n").unwrap();
        assert!(matches!(&annotated[0], Stmt::Assign { names, .. } if names[0].0 == "T"));
        assert!(matches!(&annotated[1], Stmt::Expr(_)));
        assert!(matches!(&stmts[0], Stmt::Expr(_)));
        let Stmt::Assign { names, value } = &stmts[3] else {
            panic!("assignment expected")
        };
        assert_eq!(names.len(), 2);
        assert!(matches!(value.kind, ExprKind::Dict(ref p) if p.len() == 2));
        let Stmt::Assign { value, .. } = &stmts[4] else {
            panic!("assignment expected")
        };
        assert!(matches!(value.kind, ExprKind::Tuple(ref t) if t.len() == 2));
    }

    #[test]
    fn rejects_code_with_positions() {
        let table: &[(&str, (u32, u32, &str))] = &[
            (
                "import os\n",
                (1, 1, "`import` statements are not supported"),
            ),
            (
                "x = 1\nfrom a import b\n",
                (2, 1, "`from` statements are not supported"),
            ),
            ("x = os.path\n", (1, 7, "attribute access is not supported")),
            ("x = open('f')\n", (1, 5, "calling `open` is not supported")),
            ("x = [1][0]\n", (1, 8, "subscripts are not supported")),
            ("x = 1 + 2\n", (1, 7, "operator `+` is not supported")),
            (
                "x += 1\n",
                (1, 3, "augmented assignment `+=` is not supported"),
            ),
            ("x = lambda: 1\n", (1, 5, "`lambda` is not supported here")),
            ("def f():\n", (1, 1, "`def` statements are not supported")),
            ("x = 1\n  y = 2\n", (2, 1, "unexpected indent")),
            (
                "x = [1, 2\n 3]\n",
                (2, 2, "expected `]` to close the list, found a number"),
            ),
            (
                "x = {1: 2, 3}\n",
                (
                    1,
                    13,
                    "expected `:` between a dict key and its value, found `}`",
                ),
            ),
            (
                "x = [a for a in b if a < 2]\n",
                (1, 24, "comparison `<` is not supported"),
            ),
            (
                "x = set(1, 2)\n",
                (1, 12, "`set` takes at most one argument"),
            ),
            ("x = [*a]\n", (1, 6, "unpacking with `*` is not supported")),
            ("x.y = 1\n", (1, 2, "attribute access is not supported")),
            ("x[0] = 1\n", (1, 2, "subscripts are not supported")),
            (
                "(a, b) = 1, 2\n",
                (1, 1, "only a plain name can be assigned to"),
            ),
            (
                "x = 1 2\n",
                (1, 7, "expected the end of the statement, found a number"),
            ),
            (
                "x = \n",
                (1, 5, "expected a value, found the end of the line"),
            ),
            (
                "x = {k: v for k in y}\n",
                (1, 11, "dict comprehensions are not supported"),
            ),
            (
                "x = a if b else c\n",
                (1, 7, "conditional expressions are not supported"),
            ),
        ];
        for (src, (line, column, message)) in table {
            assert_eq!(err(src), (*line, *column, message.to_string()), "{src}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let src = format!("x = {}{}\n", "[".repeat(5000), "]".repeat(5000));
        let (line, _, message) = err(&src);
        assert_eq!(line, 1);
        assert!(message.contains("nested too deeply"), "{message}");
        let src = format!("x = {}1\n", "not ".repeat(5000));
        assert!(err(&src).2.contains("nested too deeply"));
        let src = format!("x = {}1\n", "-".repeat(5000));
        assert!(err(&src).2.contains("nested too deeply"));
    }
}
