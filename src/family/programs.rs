//! `programs` (code intent): a hidden straight-line program over one
//! integer input `x`, read by running it.
//!
//! A program is `y = x OP c` followed by lines `y = y OP c`, each `OP` and
//! constant `c` from a grid; the hypotheses drawn are a seeded sample of
//! every such program. Easy: 2 lines, `OP` in `+ - * %`, `c` in 1..=5,
//! inputs 0..=15, a probe reads `y` at the end. Hard: 3 lines, `OP` in
//! `+ - * // % ^` (`^` is bitwise XOR), `c` in 1..=9, inputs 0..=31, and a
//! probe may read `y` after any line (a checkpoint). Arithmetic is on
//! integers as in Python: `//` and `%` round toward negative infinity.
//! Programs that agree on every probe are merged by [`super::compile`].

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{BlackBox, FamilyError, FamilyParams, sample_indices};

/// The knowledge book of the family (see [`super::table`]).
pub const BOOK: &str = "A hidden program reads one whole number x and runs a few lines in order. \
The first line is `y = x OP c`, every later line `y = y OP c`, where OP is one of + (add), - (subtract), \
* (multiply), // (divide and round down), % (remainder, never negative for a positive c) or ^ (bitwise \
exclusive or), and c is a small positive constant; easy boxes use 2 lines with + - * % and c from 1 to 5, \
hard boxes 3 lines with every operator and c from 1 to 9. A probe runs the program on an input and reads \
y, at the end or (hard boxes) right after a given line. Every line changes y the same way whatever the \
input, so a few well-chosen inputs pin the operators and constants down.";

const EASY_OPS: [&str; 4] = ["+", "-", "*", "%"];
const HARD_OPS: [&str; 6] = ["+", "-", "*", "//", "%", "^"];

/// One line's operation on `y`.
pub fn apply(op: &str, y: i64, c: i64) -> i64 {
    match op {
        "+" => y + c,
        "-" => y - c,
        "*" => y * c,
        "//" => y.div_euclid(c),
        "%" => y.rem_euclid(c),
        _ => y ^ c,
    }
}

/// `y` after each line of `program` (its `(op, c)` lines) run on `x`.
pub fn trace(program: &[(&str, i64)], x: i64) -> Vec<i64> {
    let mut y = x;
    program
        .iter()
        .map(|&(op, c)| {
            y = apply(op, y, c);
            y
        })
        .collect()
}

/// A program as text: `y = x * 3; y = y + 2`.
pub fn text(program: &[(&str, i64)]) -> String {
    program
        .iter()
        .enumerate()
        .map(|(i, (op, c))| format!("y = {} {op} {c}", if i == 0 { "x" } else { "y" }))
        .collect::<Vec<_>>()
        .join("; ")
}

pub fn black_box(params: &FamilyParams) -> Result<BlackBox, FamilyError> {
    let (ops, consts, lines, inputs): (&[&str], i64, u32, i64) = if params.hard {
        (&HARD_OPS, 9, 3, 32)
    } else {
        (&EASY_OPS, 5, 2, 16)
    };
    let per_line = ops.len() * consts as usize;
    let space = per_line.pow(lines);
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    let programs: Vec<Vec<(&str, i64)>> = sample_indices(&mut rng, space, params.hypotheses)
        .into_iter()
        .map(|mut index| {
            (0..lines)
                .map(|_| {
                    let cell = index % per_line;
                    index /= per_line;
                    (
                        ops[cell / consts as usize],
                        (cell % consts as usize) as i64 + 1,
                    )
                })
                .collect()
        })
        .collect();
    // Probes: (input, line read); easy boxes read the last line only.
    let reads: Vec<u32> = if params.hard {
        (1..=lines).collect()
    } else {
        vec![lines]
    };
    let all: Vec<(i64, u32)> = (0..inputs)
        .flat_map(|x| reads.iter().map(move |&r| (x, r)))
        .collect();
    let probes: Vec<(i64, u32)> = sample_indices(&mut rng, all.len(), params.probes)
        .into_iter()
        .map(|i| all[i])
        .collect();
    let traces: Vec<Vec<Vec<i64>>> = probes
        .iter()
        .map(|&(x, _)| programs.iter().map(|p| trace(p, x)).collect())
        .collect();
    let answers = probes
        .iter()
        .zip(&traces)
        .map(|(&(_, read), per_program)| {
            per_program
                .iter()
                .map(|t| format!("y = {}", t[read as usize - 1]))
                .collect()
        })
        .collect();
    let probe_names = probes
        .iter()
        .map(|&(x, read)| {
            if params.hard {
                format!("run x = {x}, read y after line {read}")
            } else {
                format!("run x = {x}")
            }
        })
        .collect();
    Ok(BlackBox {
        domain_name: "programs".into(),
        title: "Hidden program".into(),
        truth_noun: "program".into(),
        action_noun: "program run".into(),
        goal: format!(
            "find the hidden program of {lines} lines (the first `y = x OP c`, then `y = y OP c`; OP one of {}; c from 1 to {consts}; integer arithmetic as in Python) by running it on inputs x from 0 to {}",
            ops.join(" "),
            inputs - 1
        ),
        hypotheses: programs.iter().map(|p| text(p)).collect(),
        probes: probe_names,
        answers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_run_as_python_would() {
        let p = [("-", 7), ("//", 2), ("%", 5)];
        assert_eq!(text(&p), "y = x - 7; y = y // 2; y = y % 5");
        // 3 - 7 = -4; -4 // 2 = -2; -2 % 5 = 3.
        assert_eq!(trace(&p, 3), [-4, -2, 3]);
        assert_eq!(apply("^", 6, 3), 5);
    }
}
