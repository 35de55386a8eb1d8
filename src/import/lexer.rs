//! Tokenizer for the subset of Python that KUMO's domain data files use.
//!
//! In: the source text. Out: [`Token`]s with 1-based line and column (in
//! characters), ending with [`Tok::End`]. It follows Python's lexical rules
//! where the data files need them: comments, implicit line joining inside
//! brackets, backslash continuation, string prefixes and escapes, triple
//! quotes, numeric literals with underscores, exponents and radix prefixes.
//! Statements must start in column 1 (there are no blocks to indent).
//! Anything it does not know is an error at its position; it never panics
//! and runs in time linear in the input.

use super::{Pos, SourceError};

/// One token kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// An identifier or keyword (`Truths`, `set`, `True`, `for`, `not`, ...).
    Name(String),
    /// A string literal after escape processing.
    Str(String),
    Int(i64),
    Float(f64),
    /// An operator or delimiter, e.g. `(`, `,`, `=`, `==`, `.`.
    Op(&'static str),
    /// End of a logical line at bracket depth 0.
    Newline,
    /// Leading whitespace before a statement (Python would open a block);
    /// the parser reports it, after any error earlier in the file.
    Indent,
    End,
}

/// A token with the position of its first character.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub pos: Pos,
}

/// Operators, longest first so that `==` wins over `=`.
const OPS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "==", "!=", "<=", ">=", "**", "//", "<<", ">>",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "(", ")", "[", "]", "{", "}", ",", ":",
    ";", "=", ".", "-", "+", "*", "/", "%", "@", "<", ">", "~", "&", "|", "^",
];

struct Lexer {
    chars: Vec<char>,
    i: usize,
    line: u32,
    col: u32,
    depth: usize,
    /// Open brackets and where they opened, for "unclosed `(`" errors.
    open: Vec<(char, Pos)>,
    tokens: Vec<Token>,
}

/// Splits `source` into tokens.
pub fn tokenize(source: &str) -> Result<Vec<Token>, SourceError> {
    let mut chars: Vec<char> = source.chars().collect();
    if chars.first() == Some(&'\u{feff}') {
        chars.remove(0);
    }
    let mut lx = Lexer {
        chars,
        i: 0,
        line: 1,
        col: 1,
        depth: 0,
        open: Vec::new(),
        tokens: Vec::new(),
    };
    lx.run()?;
    Ok(lx.tokens)
}

impl Lexer {
    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.col,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    /// Consumes one character, tracking line and column; `\r\n` and a lone
    /// `\r` count as one line break.
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        if c == '\r' && self.peek() == Some('\n') {
            self.i += 1;
        }
        if c == '\n' || c == '\r' {
            self.line = self.line.saturating_add(1);
            self.col = 1;
            Some('\n')
        } else {
            self.col = self.col.saturating_add(1);
            Some(c)
        }
    }

    fn push(&mut self, tok: Tok, pos: Pos) {
        self.tokens.push(Token { tok, pos });
    }

    fn at_line_start(&self) -> bool {
        matches!(
            self.tokens.last(),
            None | Some(Token {
                tok: Tok::Newline,
                ..
            })
        )
    }

    fn run(&mut self) -> Result<(), SourceError> {
        // Whether the current physical line began a new logical line.
        let mut line_start = true;
        loop {
            if line_start && self.depth == 0 && self.at_line_start() {
                // Leading whitespace of a statement is an indent error,
                // unless the line is blank or only a comment.
                let start = self.pos();
                let mut k = 0;
                while matches!(self.peek_at(k), Some(' ' | '\t' | '\x0c')) {
                    k += 1;
                }
                let next = self.peek_at(k);
                let blank = matches!(next, None | Some('\n' | '\r' | '#'))
                    || (next == Some('\\') && matches!(self.peek_at(k + 1), Some('\n' | '\r')));
                if k > 0 && !blank {
                    self.push(Tok::Indent, start);
                }
            }
            line_start = false;
            let Some(c) = self.peek() else { break };
            let pos = self.pos();
            match c {
                ' ' | '\t' | '\x0c' => {
                    self.bump();
                }
                '\n' | '\r' => {
                    self.bump();
                    line_start = true;
                    if self.depth == 0 && !self.at_line_start() {
                        self.push(Tok::Newline, pos);
                    }
                }
                '#' => {
                    while !matches!(self.peek(), None | Some('\n' | '\r')) {
                        self.bump();
                    }
                }
                '\\' => {
                    self.bump();
                    match self.peek() {
                        Some('\n' | '\r') => {
                            self.bump();
                        }
                        None => {
                            return Err(SourceError::new(pos, "unexpected end of file after `\\`")
                                .help("a line continuation needs a following line"));
                        }
                        Some(_) => {
                            return Err(SourceError::new(
                                pos,
                                "unexpected character `\\` after line continuation",
                            )
                            .help("a `\\` outside a string must end its line"));
                        }
                    }
                }
                '0'..='9' => self.number(pos)?,
                '.' if matches!(self.peek_at(1), Some('0'..='9')) => self.number(pos)?,
                '\'' | '"' => self.string(pos, String::new())?,
                c if c == '_' || c.is_alphabetic() => {
                    let mut name = String::new();
                    while let Some(c) = self.peek() {
                        if c == '_' || c.is_alphanumeric() {
                            name.push(c);
                            self.bump();
                        } else {
                            break;
                        }
                    }
                    if matches!(self.peek(), Some('\'' | '"')) && is_string_prefix(&name) {
                        self.string(pos, name)?;
                    } else {
                        self.push(Tok::Name(name), pos);
                    }
                }
                _ => self.operator(pos, c)?,
            }
        }
        if let Some((bracket, at)) = self.open.last() {
            return Err(
                SourceError::new(*at, format!("unclosed `{bracket}`")).help(format!(
                    "add the matching `{}` before the end of the file",
                    closing(*bracket)
                )),
            );
        }
        let end = self.pos();
        if !self.at_line_start() {
            self.push(Tok::Newline, end);
        }
        self.push(Tok::End, end);
        Ok(())
    }

    fn operator(&mut self, pos: Pos, c: char) -> Result<(), SourceError> {
        let op = OPS.iter().find(|op| {
            op.chars()
                .enumerate()
                .all(|(k, oc)| self.peek_at(k) == Some(oc))
        });
        let Some(&op) = op else {
            let shown = if c.is_control() {
                format!("U+{:04X}", c as u32)
            } else {
                format!("`{c}`")
            };
            return Err(
                SourceError::new(pos, format!("unexpected character {shown}"))
                    .help("the importer reads Python data literals only"),
            );
        };
        for _ in 0..op.chars().count() {
            self.bump();
        }
        match op {
            "(" | "[" | "{" => {
                self.depth += 1;
                self.open.push((op.chars().next().unwrap_or('('), pos));
            }
            ")" | "]" | "}" => {
                let close = op.chars().next().unwrap_or(')');
                match self.open.pop() {
                    Some((open, _)) if closing(open) == close => {}
                    Some((open, at)) => {
                        return Err(SourceError::new(
                            pos,
                            format!(
                                "closing `{close}` does not match `{open}` opened at line {}, column {}",
                                at.line, at.column
                            ),
                        )
                        .help(format!("close the `{open}` with `{}`", closing(open))));
                    }
                    None => {
                        return Err(SourceError::new(pos, format!("unmatched `{close}`"))
                            .help("remove it or add the opening bracket"));
                    }
                }
                self.depth -= 1;
            }
            _ => {}
        }
        self.push(Tok::Op(op), pos);
        Ok(())
    }

    fn number(&mut self, pos: Pos) -> Result<(), SourceError> {
        let mut text = String::new();
        while let Some(c) = self.peek() {
            let exp_sign = matches!(c, '+' | '-')
                && matches!(text.chars().last(), Some('e' | 'E'))
                && !text.starts_with("0x")
                && !text.starts_with("0X");
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' || exp_sign {
                text.push(c);
                self.bump();
            } else {
                break;
            }
        }
        let bad = || {
            SourceError::new(pos, format!("invalid number literal `{text}`"))
                .help("write numbers as Python literals, e.g. `12`, `-3.5`, `1e-3`")
        };
        if text.contains("__") || text.ends_with('_') || text.contains("_.") || text.contains("._")
        {
            return Err(bad());
        }
        let lower = text.to_ascii_lowercase();
        if lower.ends_with('j') {
            return Err(SourceError::new(
                pos,
                format!("complex literal `{text}` is not supported"),
            )
            .help("use a real number"));
        }
        let digits: String = lower.chars().filter(|&c| c != '_').collect();
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
            if let Some(rest) = digits.strip_prefix(prefix) {
                if lower[2..].starts_with('_') && rest.is_empty() {
                    return Err(bad());
                }
                let value = i64::from_str_radix(rest, radix).map_err(|_| {
                    if !rest.is_empty() && rest.chars().all(|c| c.is_digit(radix)) {
                        too_large(pos, &text)
                    } else {
                        bad()
                    }
                })?;
                self.push(Tok::Int(value), pos);
                return Ok(());
            }
        }
        let is_float = digits.contains('.') || digits.contains('e');
        if is_float {
            let valid = {
                let (mantissa, exponent) = match digits.split_once('e') {
                    Some((m, e)) => (m, Some(e)),
                    None => (digits.as_str(), None),
                };
                let m_ok = !mantissa.is_empty()
                    && mantissa != "."
                    && mantissa.chars().all(|c| c.is_ascii_digit() || c == '.')
                    && mantissa.matches('.').count() <= 1;
                let e_ok = exponent.is_none_or(|e| {
                    let e = e.strip_prefix(['+', '-']).unwrap_or(e);
                    !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
                });
                m_ok && e_ok
            };
            if !valid {
                return Err(bad());
            }
            // Rust parses "5." and ".5" like Python does.
            let value: f64 = digits.parse().map_err(|_| bad())?;
            self.push(Tok::Float(value), pos);
        } else {
            if !digits.chars().all(|c| c.is_ascii_digit()) {
                return Err(bad());
            }
            if digits.len() > 1 && digits.starts_with('0') && digits.chars().any(|c| c != '0') {
                return Err(SourceError::new(
                    pos,
                    format!("leading zeros in `{text}` are not allowed"),
                )
                .help("Python rejects them; write the number without leading zeros"));
            }
            let value: i64 = digits.parse().map_err(|_| too_large(pos, &text))?;
            self.push(Tok::Int(value), pos);
        }
        Ok(())
    }

    fn string(&mut self, pos: Pos, prefix: String) -> Result<(), SourceError> {
        let p = prefix.to_ascii_lowercase();
        if p.contains('f') {
            return Err(SourceError::new(pos, "f-strings are not supported")
                .help("f-strings run code; write a plain string literal"));
        }
        if p.contains('b') {
            return Err(SourceError::new(pos, "bytes literals are not supported")
                .help("write a plain string literal without the `b` prefix"));
        }
        let raw = p.contains('r');
        let Some(quote) = self.bump() else {
            return Err(SourceError::new(pos, "unterminated string"));
        };
        let triple = self.peek() == Some(quote) && self.peek_at(1) == Some(quote);
        if triple {
            self.bump();
            self.bump();
        }
        let mut value = String::new();
        loop {
            let here = self.pos();
            let Some(c) = self.peek() else {
                return Err(unterminated(pos, triple));
            };
            if c == quote {
                if !triple {
                    self.bump();
                    break;
                }
                if self.peek_at(1) == Some(quote) && self.peek_at(2) == Some(quote) {
                    self.bump();
                    self.bump();
                    self.bump();
                    break;
                }
                value.push(c);
                self.bump();
                continue;
            }
            if matches!(c, '\n' | '\r') && !triple {
                return Err(unterminated(pos, false));
            }
            if c != '\\' {
                let c = self.bump().unwrap_or(c);
                value.push(c);
                continue;
            }
            self.bump();
            let Some(e) = self.peek() else {
                return Err(unterminated(pos, triple));
            };
            if raw {
                // Raw strings keep the backslash; it still protects a quote.
                value.push('\\');
                let e = self.bump().unwrap_or(e);
                value.push(e);
                continue;
            }
            self.escape(e, here, &mut value)?;
        }
        // Adjacent string literals are one string, as in Python.
        if let Some(Token {
            tok: Tok::Str(prev),
            ..
        }) = self.tokens.last_mut()
        {
            prev.push_str(&value);
        } else {
            self.push(Tok::Str(value), pos);
        }
        Ok(())
    }

    /// The escape after a backslash, `e` (not yet consumed; `here`: where
    /// the backslash is), appended to `value` as Python reads it in a
    /// plain string.
    fn escape(&mut self, e: char, here: Pos, value: &mut String) -> Result<(), SourceError> {
        match e {
            '\n' | '\r' => {
                self.bump();
            }
            '\\' | '\'' | '"' => {
                self.bump();
                value.push(e);
            }
            'a' | 'b' | 'f' | 'n' | 'r' | 't' | 'v' => {
                self.bump();
                value.push(match e {
                    'a' => '\x07',
                    'b' => '\x08',
                    'f' => '\x0c',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    _ => '\x0b',
                });
            }
            '0'..='7' => {
                let mut code = 0u32;
                let mut k = 0;
                while k < 3 {
                    match self.peek() {
                        Some(d @ '0'..='7') => {
                            code = code * 8 + d.to_digit(8).unwrap_or(0);
                            self.bump();
                            k += 1;
                        }
                        _ => break,
                    }
                }
                value.push(char::from_u32(code).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                self.bump();
                let n = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut code = 0u32;
                for _ in 0..n {
                    match self.peek().and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            code = code.saturating_mul(16).saturating_add(d);
                            self.bump();
                        }
                        None => {
                            return Err(SourceError::new(
                                here,
                                format!("truncated `\\{e}` escape: it needs {n} hex digits"),
                            )
                            .help("write the full escape or the character itself"));
                        }
                    }
                }
                match char::from_u32(code) {
                    Some(ch) => value.push(ch),
                    None => {
                        return Err(SourceError::new(
                            here,
                            format!("escape `\\{e}` names no character (code {code:#x})"),
                        )
                        .help("surrogates and codes above U+10FFFF cannot be imported"));
                    }
                }
            }
            'N' => {
                return Err(
                    SourceError::new(here, "named escapes `\\N{...}` are not supported")
                        .help("write the character itself or a `\\u` escape"),
                );
            }
            _ => {
                // Python keeps unknown escapes as written.
                value.push('\\');
            }
        }
        Ok(())
    }
}

fn is_string_prefix(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "r" | "u" | "b" | "br" | "rb" | "f" | "fr" | "rf"
    )
}

fn closing(open: char) -> char {
    match open {
        '(' => ')',
        '[' => ']',
        _ => '}',
    }
}

fn unterminated(pos: Pos, triple: bool) -> SourceError {
    if triple {
        SourceError::new(pos, "unterminated triple-quoted string")
            .help("close the string with the same three quotes")
    } else {
        SourceError::new(pos, "unterminated string")
            .help("close the string on the same line, or use triple quotes for several lines")
    }
}

fn too_large(pos: Pos, text: &str) -> SourceError {
    SourceError::new(pos, format!("integer `{text}` is too large"))
        .help("integers must fit in 64 bits")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        tokenize(src).unwrap().into_iter().map(|t| t.tok).collect()
    }

    fn err(src: &str) -> (u32, u32, String) {
        let e = tokenize(src).unwrap_err();
        (e.pos.line, e.pos.column, e.message)
    }

    #[test]
    fn strings_escapes_and_concatenation() {
        assert_eq!(
            toks(r#"x = 'a\'b' "c\"d" '''e'f''' r'\n' '\x41\u00e9\101\q'"#),
            vec![
                Tok::Name("x".into()),
                Tok::Op("="),
                Tok::Str("a'bc\"de'f\\nAéA\\q".into()),
                Tok::Newline,
                Tok::End
            ]
        );
        assert_eq!(
            toks("x = ('a'\n  'b')\n"),
            vec![
                Tok::Name("x".into()),
                Tok::Op("="),
                Tok::Op("("),
                Tok::Str("ab".into()),
                Tok::Op(")"),
                Tok::Newline,
                Tok::End
            ]
        );
        assert_eq!(toks("'a\\\nb'")[0], Tok::Str("ab".into()));
        assert_eq!(toks("\"\"\"a\nb\"\"\"")[0], Tok::Str("a\nb".into()));
    }

    #[test]
    fn numbers() {
        let t = toks("1 -2 3.5 1e3 1E-2 .5 5. 1_000 0x1F 0o17 0b101 0 00 2.5e+1");
        let nums: Vec<Tok> = t
            .into_iter()
            .filter(|t| !matches!(t, Tok::Op(_) | Tok::Newline | Tok::End))
            .collect();
        assert_eq!(
            nums,
            vec![
                Tok::Int(1),
                Tok::Int(2),
                Tok::Float(3.5),
                Tok::Float(1000.0),
                Tok::Float(0.01),
                Tok::Float(0.5),
                Tok::Float(5.0),
                Tok::Int(1000),
                Tok::Int(31),
                Tok::Int(15),
                Tok::Int(5),
                Tok::Int(0),
                Tok::Int(0),
                Tok::Float(25.0),
            ]
        );
        assert_eq!(toks("1e999")[0], Tok::Float(f64::INFINITY));
    }

    #[test]
    fn comments_continuations_and_newlines() {
        assert_eq!(
            toks("# head\n\nx = [1, # one\n 2]\ny = \\\n 3\n"),
            vec![
                Tok::Name("x".into()),
                Tok::Op("="),
                Tok::Op("["),
                Tok::Int(1),
                Tok::Op(","),
                Tok::Int(2),
                Tok::Op("]"),
                Tok::Newline,
                Tok::Name("y".into()),
                Tok::Op("="),
                Tok::Int(3),
                Tok::Newline,
                Tok::End
            ]
        );
    }

    #[test]
    fn errors_have_positions() {
        assert_eq!(err("x = 'abc\n").0, 1);
        assert_eq!(err("x = 'abc\n"), (1, 5, "unterminated string".into()));
        assert_eq!(
            err("x = [1,\n  2)\n"),
            (
                2,
                4,
                "closing `)` does not match `[` opened at line 1, column 5".into()
            )
        );
        assert_eq!(err("x = (1,\n"), (1, 5, "unclosed `(`".into()));
        assert_eq!(
            err("x = f'{y}'"),
            (1, 5, "f-strings are not supported".into())
        );
        assert_eq!(
            err("x = b'y'"),
            (1, 5, "bytes literals are not supported".into())
        );
        assert_eq!(
            err("x = 012"),
            (1, 5, "leading zeros in `012` are not allowed".into())
        );
        assert_eq!(
            err("x = 1__0"),
            (1, 5, "invalid number literal `1__0`".into())
        );
        assert_eq!(
            err("x = 99999999999999999999"),
            (1, 5, "integer `99999999999999999999` is too large".into())
        );
        assert_eq!(err("x = 'a' $"), (1, 9, "unexpected character `$`".into()));
        assert_eq!(
            err("x = '\\N{DASH}'"),
            (1, 6, "named escapes `\\N{...}` are not supported".into())
        );
        assert_eq!(
            err("x = '\\ud800'"),
            (1, 6, "escape `\\u` names no character (code 0xd800)".into())
        );
        assert_eq!(
            err("x = 1j"),
            (1, 5, "complex literal `1j` is not supported".into())
        );
        assert_eq!(
            err("x = '''abc"),
            (1, 5, "unterminated triple-quoted string".into())
        );
    }

    #[test]
    fn columns_count_characters() {
        let t = tokenize("é = 'ü' $").unwrap_err();
        assert_eq!((t.pos.line, t.pos.column), (1, 9));
    }
}
