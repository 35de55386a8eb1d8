//! Expressions of the parser (see the parent module for the subset):
//! the precedence levels (`or`, `and`, `not`, comparisons, unary signs),
//! atoms, `set()` calls, the bracket displays with their comprehensions,
//! and loop targets. Every level checks the nesting bound on entry.

use super::{
    Clause, CmpOp, Expr, ExprKind, NOT_CODE, Parser, Result, Target, UNSUPPORTED_KEYWORDS,
    describe, error, unexpected,
};
use crate::import::Pos;
use crate::import::lexer::Tok;

impl Parser<'_> {
    /// `expr` or a bare tuple `expr, expr, ...`.
    pub(super) fn expr_list(&mut self) -> Result<Expr> {
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

    pub(super) fn ends_expr_list(&self) -> bool {
        matches!(self.tok(), Tok::Newline | Tok::End | Tok::Op("=" | ";"))
    }

    /// An expression: `or_test` (no conditional expressions, no lambdas).
    pub(super) fn expr(&mut self) -> Result<Expr> {
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

    pub(super) fn or_test(&mut self) -> Result<Expr> {
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

    pub(super) fn and_test(&mut self) -> Result<Expr> {
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

    pub(super) fn not_test(&mut self) -> Result<Expr> {
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

    pub(super) fn comparison(&mut self) -> Result<Expr> {
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

    pub(super) fn unary(&mut self) -> Result<Expr> {
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
    pub(super) fn check_postfix(&self, atom: &Expr) -> Result<()> {
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

    pub(super) fn atom(&mut self) -> Result<Expr> {
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

    pub(super) fn set_call(&mut self, pos: Pos) -> Result<Expr> {
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
    pub(super) fn expr_or_comprehension(&mut self, pos: Pos, set: bool) -> Result<Expr> {
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

    pub(super) fn paren(&mut self, pos: Pos) -> Result<Expr> {
        self.advance();
        self.enter()?;
        let r = self.paren_inner(pos);
        self.leave();
        r
    }

    pub(super) fn paren_inner(&mut self, pos: Pos) -> Result<Expr> {
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

    pub(super) fn bracket(&mut self, pos: Pos) -> Result<Expr> {
        self.advance();
        self.enter()?;
        let r = self.bracket_inner(pos);
        self.leave();
        r
    }

    pub(super) fn bracket_inner(&mut self, pos: Pos) -> Result<Expr> {
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

    pub(super) fn brace(&mut self, pos: Pos) -> Result<Expr> {
        self.advance();
        self.enter()?;
        let r = self.brace_inner(pos);
        self.leave();
        r
    }

    pub(super) fn brace_inner(&mut self, pos: Pos) -> Result<Expr> {
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

    pub(super) fn clauses(&mut self) -> Result<Vec<Clause>> {
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

    pub(super) fn target_list(&mut self) -> Result<Target> {
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

    pub(super) fn target(&mut self) -> Result<Target> {
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
