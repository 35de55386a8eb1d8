//! `ciphers`: hidden keys of classical ciphers over a small alphabet
//! (`A`, `B`, ... of size `alphabet`).
//!
//! Key kinds, in this order: shift (`shift 3`), affine (`affine 5x+2`, `a`
//! coprime to the alphabet size), Vigenère with a two-letter key
//! (`Vigenère BD`), and substitution (`substitution CADBFE`: the cipher
//! letter of `A`, `B`, ...). Every shift, affine and Vigenère key is a
//! candidate, plus as many random substitutions; the hypotheses drawn are a
//! seeded sample of that list. A probe is a plaintext of `length` letters;
//! the box answers its ciphertext.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::{BlackBox, FamilyError, FamilyParams, check_range, sample_indices};

/// The knowledge book of the family (see [`super::table`]).
pub const BOOK: &str = "A hidden key encrypts plaintexts over a small alphabet A, B, C, ... (letter \
values 0, 1, 2, ...). Keys are shifts (add k), affine maps (multiply by a coprime to the alphabet size, \
then add b), two-letter Vigenère keys (add the key's letters in turn) and substitutions (a fixed letter \
per letter). A probe is a plaintext; the box answers its ciphertext.";

/// A cipher key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    Shift(u32),
    Affine(u32, u32),
    Vigenere(Vec<u32>),
    /// The cipher letter of each plain letter.
    Substitution(Vec<u32>),
}

fn letter(i: u32) -> char {
    char::from(b'A' + i as u8)
}

impl Key {
    /// The ciphertext of `plain` (letters `0..n`).
    pub fn encrypt(&self, plain: &[u32], n: u32) -> Vec<u32> {
        plain
            .iter()
            .enumerate()
            .map(|(i, &p)| match self {
                Key::Shift(k) => (p + k) % n,
                Key::Affine(a, b) => (a * p + b) % n,
                Key::Vigenere(key) => (p + key[i % key.len()]) % n,
                Key::Substitution(table) => table[p as usize],
            })
            .collect()
    }

    pub fn text(&self) -> String {
        match self {
            Key::Shift(k) => format!("shift {k}"),
            Key::Affine(a, b) => format!("affine {a}x+{b}"),
            Key::Vigenere(key) => format!("Vigenère {}", word(key)),
            Key::Substitution(table) => format!("substitution {}", word(table)),
        }
    }
}

/// Letters as a word.
pub fn word(letters: &[u32]) -> String {
    letters.iter().map(|&l| letter(l)).collect()
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Every candidate key: shifts, affine keys, two-letter Vigenère keys, and
/// `substitutions` random permutations.
pub fn keys(n: u32, substitutions: usize, rng: &mut ChaCha8Rng) -> Vec<Key> {
    let mut out: Vec<Key> = (0..n).map(Key::Shift).collect();
    for a in 2..n {
        if gcd(a, n) == 1 {
            for b in 0..n {
                out.push(Key::Affine(a, b));
            }
        }
    }
    for k1 in 0..n {
        for k2 in 0..n {
            if k1 != k2 {
                out.push(Key::Vigenere(vec![k1, k2]));
            }
        }
    }
    for _ in 0..substitutions {
        let mut table: Vec<u32> = (0..n).collect();
        table.shuffle(rng);
        out.push(Key::Substitution(table));
    }
    out
}

/// Plaintext `index` of `length` letters in `0..n^length`.
pub fn plaintext(index: usize, n: u32, length: u32) -> Vec<u32> {
    let mut rest = index;
    let mut out = vec![0; length as usize];
    for slot in out.iter_mut().rev() {
        *slot = (rest % n as usize) as u32;
        rest /= n as usize;
    }
    out
}

/// The `ciphers` black box.
/// The alphabet sizes `--alphabet` accepts.
pub const ALPHABET_RANGE: std::ops::RangeInclusive<usize> = 3..=26;

/// The plaintext lengths `--length` accepts.
pub const LENGTH_RANGE: std::ops::RangeInclusive<usize> = 1..=6;

pub fn black_box(params: &FamilyParams) -> Result<BlackBox, FamilyError> {
    check_range("--alphabet", params.alphabet as usize, ALPHABET_RANGE)?;
    check_range("--length", params.length as usize, LENGTH_RANGE)?;
    let n = params.alphabet;
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    let all = keys(n, params.hypotheses, &mut rng);
    let chosen: Vec<Key> = sample_indices(&mut rng, all.len(), params.hypotheses)
        .into_iter()
        .map(|i| all[i].clone())
        .collect();
    let space = (n as usize).saturating_pow(params.length);
    let plains: Vec<Vec<u32>> = sample_indices(&mut rng, space, params.probes)
        .into_iter()
        .map(|i| plaintext(i, n, params.length))
        .collect();
    let answers = plains
        .iter()
        .map(|p| chosen.iter().map(|k| word(&k.encrypt(p, n))).collect())
        .collect();
    Ok(BlackBox {
        domain_name: "ciphers".into(),
        title: "Hidden cipher key".into(),
        truth_noun: "key".into(),
        action_noun: "plaintext".into(),
        goal: format!(
            "find the hidden cipher key over the letters A to {}",
            letter(n - 1)
        ),
        hypotheses: chosen.iter().map(Key::text).collect(),
        probes: plains
            .iter()
            .map(|p| format!("encrypt {}", word(p)))
            .collect(),
        answers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_encrypt() {
        assert_eq!(word(&Key::Shift(2).encrypt(&[0, 1, 5], 6)), "CDB");
        assert_eq!(word(&Key::Affine(5, 1).encrypt(&[0, 1, 2], 6)), "BAF");
        assert_eq!(
            word(&Key::Vigenere(vec![1, 3]).encrypt(&[0, 0, 0], 6)),
            "BDB"
        );
        assert_eq!(Key::Affine(5, 2).text(), "affine 5x+2");
        assert_eq!(plaintext(7, 6, 3), [0, 1, 1]);
    }
}
