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

pub use super::ast::{Clause, CmpOp, Expr, ExprKind, Stmt, Target};
use super::lexer::{Tok, Token};
use super::{Pos, SourceError};

mod expr;

/// Deepest nesting of brackets and operators accepted (Python's own parser
/// stops at 200 nested parentheses).
pub const MAX_DEPTH: usize = 200;

type Result<T> = std::result::Result<T, SourceError>;

fn error(pos: Pos, message: impl Into<String>, help: impl Into<String>) -> SourceError {
    SourceError::with_help(pos, message, help)
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

fn unexpected(pos: Pos, tok: &Tok, expected: &str) -> SourceError {
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
