//! `circuits`: boolean circuits over `k` inputs `x1..xk`.
//!
//! A circuit is a chain of at most `gates` gates from the grammar `NOT`,
//! `AND`, `OR`, `XOR`, `NAND`; each gate reads inputs or earlier gates, and
//! the last gate is the output. Circuits are drawn from a seeded stream
//! and written as expressions (`(x1 AND x2) XOR x3`); circuits with the
//! same truth table are merged by [`super::compile`]. A probe is an input
//! vector (`1011`); the box answers the output bit, `0` or `1`.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{BlackBox, FamilyError, FamilyParams, check_range, sample_indices};

/// The knowledge book of the family (see [`super::table`]).
pub const BOOK: &str = "A hidden boolean circuit reads input bits x1, x2, ... and outputs one bit. It \
is a chain of a few gates, each NOT, AND, OR, XOR or NAND of inputs or earlier gates; the last gate is \
the output. A probe is an input vector such as 1011 (x1 first); the box answers the output, 0 or 1.";

/// A circuit: an expression tree over the inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Circuit {
    Input(usize),
    Not(Box<Circuit>),
    Gate(Op, Box<Circuit>, Box<Circuit>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    And,
    Or,
    Xor,
    Nand,
}

const OPS: [Op; 4] = [Op::And, Op::Or, Op::Xor, Op::Nand];

impl Circuit {
    /// The output on input bits `x` (`x[0]` is `x1`).
    pub fn eval(&self, x: &[bool]) -> bool {
        match self {
            Circuit::Input(i) => x[*i],
            Circuit::Not(c) => !c.eval(x),
            Circuit::Gate(op, l, r) => {
                let (l, r) = (l.eval(x), r.eval(x));
                match op {
                    Op::And => l && r,
                    Op::Or => l || r,
                    Op::Xor => l != r,
                    Op::Nand => !(l && r),
                }
            }
        }
    }

    /// The circuit as an expression; the outermost gate without brackets.
    pub fn text(&self) -> String {
        self.text_at(true)
    }

    fn text_at(&self, outer: bool) -> String {
        match self {
            Circuit::Input(i) => format!("x{}", i + 1),
            Circuit::Not(c) => format!("NOT {}", c.text_at(false)),
            Circuit::Gate(op, l, r) => {
                let op = match op {
                    Op::And => "AND",
                    Op::Or => "OR",
                    Op::Xor => "XOR",
                    Op::Nand => "NAND",
                };
                let body = format!("{} {op} {}", l.text_at(false), r.text_at(false));
                if outer { body } else { format!("({body})") }
            }
        }
    }
}

/// A random circuit with exactly `gates` gates (a `NOT` counts as one).
fn random_circuit(rng: &mut ChaCha8Rng, inputs: usize, gates: u32) -> Circuit {
    // Wires: the inputs, then each gate's output.
    let mut wires: Vec<Circuit> = (0..inputs).map(Circuit::Input).collect();
    for _ in 0..gates {
        let pick = |rng: &mut ChaCha8Rng, wires: &Vec<Circuit>| {
            // Prefer the newest wire so gates chain into one output.
            if wires.len() > inputs && rng.random_range(0..3) > 0 {
                wires[wires.len() - 1].clone()
            } else {
                wires[rng.random_range(0..wires.len())].clone()
            }
        };
        let gate = if rng.random_range(0..6) == 0 {
            Circuit::Not(Box::new(pick(rng, &wires)))
        } else {
            let op = OPS[rng.random_range(0..OPS.len())];
            let l = pick(rng, &wires);
            let mut r = wires[rng.random_range(0..wires.len())].clone();
            if r == l {
                r = wires[(rng.random_range(0..wires.len()) + 1) % wires.len()].clone();
            }
            Circuit::Gate(op, Box::new(l), Box::new(r))
        };
        wires.push(gate);
    }
    wires.pop().unwrap_or(Circuit::Input(0))
}

/// Input vector `index` as bits, `x1` first (`1011`).
pub fn input_bits(index: usize, inputs: usize) -> Vec<bool> {
    (0..inputs)
        .map(|i| index >> (inputs - 1 - i) & 1 == 1)
        .collect()
}

/// The `circuits` black box.
/// The input counts `--inputs` accepts.
pub const INPUTS_RANGE: std::ops::RangeInclusive<usize> = 2..=10;

/// The gate counts `--gates` accepts.
pub const GATES_RANGE: std::ops::RangeInclusive<usize> = 1..=12;

pub fn black_box(params: &FamilyParams) -> Result<BlackBox, FamilyError> {
    check_range("--inputs", params.inputs as usize, INPUTS_RANGE)?;
    check_range("--gates", params.gates as usize, GATES_RANGE)?;
    let inputs = params.inputs as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    // Draw circuits of 1..=gates gates; an expression drawn twice is kept
    // once (truth-table equivalents are merged later, by `compile`).
    let mut circuits: Vec<Circuit> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut tries = 0;
    while circuits.len() < params.hypotheses && tries < params.hypotheses * 50 {
        tries += 1;
        let gates = rng.random_range(1..=params.gates);
        let c = random_circuit(&mut rng, inputs, gates);
        let name = c.text();
        if !names.contains(&name) {
            names.push(name);
            circuits.push(c);
        }
    }
    let vectors: Vec<Vec<bool>> = sample_indices(&mut rng, 1 << inputs, params.probes)
        .into_iter()
        .map(|i| input_bits(i, inputs))
        .collect();
    let answers = vectors
        .iter()
        .map(|x| {
            circuits
                .iter()
                .map(|c| if c.eval(x) { "1" } else { "0" }.to_string())
                .collect()
        })
        .collect();
    Ok(BlackBox {
        domain_name: "circuits".into(),
        title: "Hidden boolean circuit".into(),
        truth_noun: "circuit".into(),
        action_noun: "input vector".into(),
        goal: format!("find the hidden circuit over the inputs x1 to x{inputs}"),
        hypotheses: names,
        probes: vectors
            .iter()
            .map(|x| {
                let bits: String = x.iter().map(|&b| if b { '1' } else { '0' }).collect();
                format!("input {bits}")
            })
            .collect(),
        answers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn circuits_read_and_evaluate() {
        let c = Circuit::Gate(
            Op::Xor,
            Box::new(Circuit::Gate(
                Op::And,
                Box::new(Circuit::Input(0)),
                Box::new(Circuit::Input(1)),
            )),
            Box::new(Circuit::Not(Box::new(Circuit::Input(2)))),
        );
        assert_eq!(c.text(), "(x1 AND x2) XOR NOT x3");
        assert!(c.eval(&[true, true, true]));
        assert!(!c.eval(&[true, true, false]));
        assert_eq!(input_bits(0b1011, 4), [true, false, true, true]);
    }
}
