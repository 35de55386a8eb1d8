//! `puzzles` (interactive puzzles): a secret code and a modified
//! Bulls-and-Cows feedback rule, so a memorised Mastermind strategy does
//! not apply.
//!
//! The secret is a code of `L` digits from 1 to `D` (repeats allowed). A
//! probe is a guess of the same shape; the box answers two counts: *hits*,
//! the positions where the guess has the secret's digit, and *near*, the
//! other positions where the guess's digit is one more or one less than
//! the secret's there (positional, unlike a cow). Easy: `L = 3`, `D = 4`
//! (64 codes); hard: `L = 4`, `D = 6` (1296 codes, a seeded sample).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{BlackBox, FamilyError, FamilyParams, sample_indices};

/// The knowledge book of the family (see [`super::table`]).
pub const BOOK: &str = "A secret code is a row of digits (easy boxes: 3 digits from 1 to 4; hard boxes: 4 \
digits from 1 to 6; a digit may repeat). A probe is a guess of the same shape, and the box answers two \
counts. Hits: the positions where the guess has exactly the secret's digit. Near: the other positions \
where the guess's digit is one more or one less than the secret's digit in that same position. Unlike \
Bulls and Cows or Mastermind, a digit in the wrong position scores nothing; a guess far from the secret \
everywhere answers 0 hits, 0 near.";

/// (hits, near) of `guess` against `secret`.
pub fn feedback(secret: &[u32], guess: &[u32]) -> (usize, usize) {
    let hits = secret.iter().zip(guess).filter(|(s, g)| s == g).count();
    let near = secret
        .iter()
        .zip(guess)
        .filter(|&(&s, &g)| s.abs_diff(g) == 1)
        .count();
    (hits, near)
}

/// Code `index` of `length` digits from 1 to `digits`, first digit most
/// significant.
pub fn code(mut index: usize, length: u32, digits: u32) -> Vec<u32> {
    let mut out = vec![0; length as usize];
    for slot in out.iter_mut().rev() {
        *slot = (index % digits as usize) as u32 + 1;
        index /= digits as usize;
    }
    out
}

fn text(code: &[u32]) -> String {
    code.iter().map(u32::to_string).collect()
}

pub fn black_box(params: &FamilyParams) -> Result<BlackBox, FamilyError> {
    let (length, digits) = if params.hard { (4, 6) } else { (3, 4) };
    let space = (digits as usize).pow(length);
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    let secrets: Vec<Vec<u32>> = sample_indices(&mut rng, space, params.hypotheses)
        .into_iter()
        .map(|i| code(i, length, digits))
        .collect();
    let guesses: Vec<Vec<u32>> = sample_indices(&mut rng, space, params.probes)
        .into_iter()
        .map(|i| code(i, length, digits))
        .collect();
    let answers = guesses
        .iter()
        .map(|g| {
            secrets
                .iter()
                .map(|s| {
                    let (hits, near) = feedback(s, g);
                    format!("{hits} hits, {near} near")
                })
                .collect()
        })
        .collect();
    Ok(BlackBox {
        domain_name: "puzzles".into(),
        title: "Secret code with near-miss feedback".into(),
        truth_noun: "secret code".into(),
        action_noun: "guess".into(),
        goal: format!(
            "find the secret code of {length} digits from 1 to {digits}; a guess answers its hits (positions with the secret's digit) and near misses (other positions whose digit is one away from the secret's there)"
        ),
        hypotheses: secrets
            .iter()
            .map(|s| format!("code {}", text(s)))
            .collect(),
        probes: guesses
            .iter()
            .map(|g| format!("guess {}", text(g)))
            .collect(),
        answers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_are_positional() {
        assert_eq!(feedback(&[1, 2, 3], &[1, 3, 1]), (1, 1));
        // 3 2 1 against 1 2 3: the 3 and 1 are in the wrong places, not near.
        assert_eq!(feedback(&[1, 2, 3], &[3, 2, 1]), (1, 0));
        assert_eq!(code(0, 3, 4), [1, 1, 1]);
        assert_eq!(code(63, 3, 4), [4, 4, 4]);
    }
}
