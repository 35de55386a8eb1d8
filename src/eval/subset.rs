//! Which instances of a file `eval` plays: all of them, the first N
//! (`--limit`), or a deterministic sample of N (`--sample N --sample-seed
//! S`). The choice depends only on the file's line count and these
//! numbers, never on the model, the player or the retry seed, so every
//! model evaluated with the same flags plays the same instances and their
//! scores compare line for line.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// A subset of a file's lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Subset {
    /// Only the first `limit` lines (applied first).
    pub limit: Option<usize>,
    /// Then `(count, seed)`: `count` lines drawn without replacement with
    /// ChaCha8 seeded by `seed` (all of them when there are fewer).
    pub sample: Option<(usize, u64)>,
}

impl Subset {
    /// The chosen line indices of a file with `lines` lines, ascending.
    pub fn indices(&self, lines: usize) -> Vec<usize> {
        let lines = self.limit.map_or(lines, |limit| limit.min(lines));
        match self.sample {
            Some((count, seed)) if count < lines => {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let mut chosen = rand::seq::index::sample(&mut rng, lines, count).into_vec();
                chosen.sort_unstable();
                chosen
            }
            _ => (0..lines).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_takes_the_first_lines() {
        let s = Subset {
            limit: Some(3),
            sample: None,
        };
        assert_eq!(s.indices(10), [0, 1, 2]);
        assert_eq!(s.indices(2), [0, 1]);
        assert_eq!(Subset::default().indices(4), [0, 1, 2, 3]);
    }

    #[test]
    fn sample_is_a_fixed_function_of_count_and_seed() {
        let s = |count, seed| Subset {
            limit: None,
            sample: Some((count, seed)),
        };
        let a = s(5, 7).indices(100);
        assert_eq!(a.len(), 5);
        assert!(a.windows(2).all(|w| w[0] < w[1]) && a[4] < 100);
        assert_eq!(a, s(5, 7).indices(100), "same flags, same lines");
        assert_ne!(a, s(5, 8).indices(100), "another seed, other lines");
        assert_eq!(s(50, 1).indices(10), (0..10).collect::<Vec<_>>());
        // The limit applies first: the sample is drawn from the first 20.
        let both = Subset {
            limit: Some(20),
            sample: Some((5, 7)),
        };
        assert!(both.indices(100).iter().all(|&i| i < 20));
    }
}
