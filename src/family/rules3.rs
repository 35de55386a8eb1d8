//! `rules3`: WILT-style hidden rules over integer triples `(a, b, c)`.
//!
//! Hypotheses come from a grammar with a size bound: atoms — comparisons
//! of two variables (`a < b`, `a = c`, ...), a variable against a constant
//! (`b > 4`), parity (`c is even`), sums (`a + b > c`, `a + b + c is
//! even`), orderings (`a < b < c`) — and `and`/`or` of two different atoms
//! (size 2). The atoms come first, in grammar order, then the pairs; the
//! hypotheses drawn are a seeded sample of that list. A probe is a triple
//! with entries in `0..=max_value`; the box answers `True` or `False`.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{BlackBox, FamilyError, FamilyParams, check_range, sample_indices};

/// The knowledge book of the family (see [`super::table`]).
pub const BOOK: &str = "A hidden rule says whether a triple of whole numbers (a, b, c) passes. Rules \
are comparisons of the numbers or of sums of two of them (a < b, a + b > c, a = c), parity (c is even), \
orderings (a < b < c), bounds (b > 4), and an `and` or `or` of two such atoms. A probe is a triple; the \
box answers True when it passes, False otherwise.";

/// One rule: a predicate over a triple, with its name.
#[derive(Clone, Debug)]
pub struct Rule {
    pub name: String,
    pub expr: Expr,
}

/// The rule grammar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// `x < y` (variables by index 0..3).
    Less(usize, usize),
    Equal(usize, usize),
    /// `x > k`.
    Above(usize, i64),
    Even(usize),
    /// `x + y > z`.
    SumAbove(usize, usize, usize),
    /// `a + b + c is even`.
    TotalEven,
    /// `a < b < c`.
    Increasing,
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

const VARS: [&str; 3] = ["a", "b", "c"];

impl Expr {
    /// The rule's answer on `(a, b, c)`.
    pub fn eval(&self, t: [i64; 3]) -> bool {
        match self {
            Expr::Less(x, y) => t[*x] < t[*y],
            Expr::Equal(x, y) => t[*x] == t[*y],
            Expr::Above(x, k) => t[*x] > *k,
            Expr::Even(x) => t[*x] % 2 == 0,
            Expr::SumAbove(x, y, z) => t[*x] + t[*y] > t[*z],
            Expr::TotalEven => (t[0] + t[1] + t[2]) % 2 == 0,
            Expr::Increasing => t[0] < t[1] && t[1] < t[2],
            Expr::And(l, r) => l.eval(t) && r.eval(t),
            Expr::Or(l, r) => l.eval(t) || r.eval(t),
        }
    }

    /// The rule in words: `both a < b and c is even`. A conjunction says
    /// "both", so its name never reads as a list of two other rules in a
    /// book's sentences ("rules out c > 1 and b + c > a").
    pub fn text(&self) -> String {
        match self {
            Expr::Less(x, y) => format!("{} < {}", VARS[*x], VARS[*y]),
            Expr::Equal(x, y) => format!("{} = {}", VARS[*x], VARS[*y]),
            Expr::Above(x, k) => format!("{} > {k}", VARS[*x]),
            Expr::Even(x) => format!("{} is even", VARS[*x]),
            Expr::SumAbove(x, y, z) => format!("{} + {} > {}", VARS[*x], VARS[*y], VARS[*z]),
            Expr::TotalEven => "a + b + c is even".into(),
            Expr::Increasing => "a < b < c".into(),
            Expr::And(l, r) => format!("both {} and {}", l.text(), r.text()),
            Expr::Or(l, r) => format!("{} or {}", l.text(), r.text()),
        }
    }
}

/// Every atom of the grammar for probe values in `0..=max_value`, in
/// grammar order.
pub fn atoms(max_value: u32) -> Vec<Expr> {
    let mut out = Vec::new();
    for x in 0..3 {
        for y in 0..3 {
            if x != y {
                out.push(Expr::Less(x, y));
            }
        }
    }
    for (x, y) in [(0, 1), (0, 2), (1, 2)] {
        out.push(Expr::Equal(x, y));
    }
    for x in 0..3 {
        for k in 1..max_value as i64 {
            out.push(Expr::Above(x, k));
        }
    }
    for x in 0..3 {
        out.push(Expr::Even(x));
    }
    for (x, y, z) in [(0, 1, 2), (0, 2, 1), (1, 2, 0)] {
        out.push(Expr::SumAbove(x, y, z));
    }
    out.push(Expr::TotalEven);
    out.push(Expr::Increasing);
    out
}

/// Every rule of size at most 2: the atoms, then `and`, then `or` of
/// each pair of different atoms (in atom order).
pub fn grammar(max_value: u32) -> Vec<Expr> {
    let atoms = atoms(max_value);
    let mut out = atoms.clone();
    for combine in [0, 1] {
        for i in 0..atoms.len() {
            for j in i + 1..atoms.len() {
                let (l, r) = (Box::new(atoms[i].clone()), Box::new(atoms[j].clone()));
                out.push(if combine == 0 {
                    Expr::And(l, r)
                } else {
                    Expr::Or(l, r)
                });
            }
        }
    }
    out
}

/// The triple of probe `index` in `0..(max_value + 1)^3`.
pub fn triple(index: usize, max_value: u32) -> [i64; 3] {
    let base = max_value as usize + 1;
    [
        (index / (base * base)) as i64,
        ((index / base) % base) as i64,
        (index % base) as i64,
    ]
}

/// The `rules3` black box.
/// The largest probe numbers `--max-value` accepts.
pub const MAX_VALUE_RANGE: std::ops::RangeInclusive<usize> = 2..=20;

pub fn black_box(params: &FamilyParams) -> Result<BlackBox, FamilyError> {
    check_range("--max-value", params.max_value as usize, MAX_VALUE_RANGE)?;
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    let all = grammar(params.max_value);
    let rules: Vec<Expr> = sample_indices(&mut rng, all.len(), params.hypotheses)
        .into_iter()
        .map(|i| all[i].clone())
        .collect();
    let base = params.max_value as usize + 1;
    let triples: Vec<[i64; 3]> = sample_indices(&mut rng, base * base * base, params.probes)
        .into_iter()
        .map(|i| triple(i, params.max_value))
        .collect();
    let answers = triples
        .iter()
        .map(|&t| {
            rules
                .iter()
                .map(|r| if r.eval(t) { "True" } else { "False" }.to_string())
                .collect()
        })
        .collect();
    Ok(BlackBox {
        domain_name: "rules3".into(),
        title: "Hidden rule over three numbers".into(),
        truth_noun: "rule".into(),
        action_noun: "test triple".into(),
        goal: "find the hidden rule that says whether a triple (a, b, c) passes".into(),
        hypotheses: rules.iter().map(Expr::text).collect(),
        probes: triples
            .iter()
            .map(|t| format!("({}, {}, {})", t[0], t[1], t[2]))
            .collect(),
        answers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_and_evaluate() {
        let rule = Expr::And(Box::new(Expr::Less(0, 1)), Box::new(Expr::Even(2)));
        assert_eq!(rule.text(), "both a < b and c is even");
        assert!(rule.eval([1, 2, 4]));
        assert!(!rule.eval([1, 2, 3]));
        assert_eq!(triple(123, 9), [1, 2, 3]);
        let n = atoms(9).len();
        assert_eq!(grammar(9).len(), n + n * (n - 1));
    }
}
