//! `opponents` (game strategies): a fixed strategy in repeated
//! rock-paper-scissors, read from its replies to our moves.
//!
//! A probe is a whole game: a sequence of our moves (`R P S`); the box
//! answers the opponent's moves in the same rounds (each round both move
//! at once, so round `r`'s reply depends on rounds before `r` only).
//! Strategies, each with its opening move(s): always the same move;
//! cycling forwards (R, P, S, R, ...) or backwards; copying our last
//! move; playing what beats or what loses to our last move;
//! win-stay/lose-shift (keep a winning move, else play what beats our
//! last move); and (hard boxes) playing what beats our most frequent move
//! so far, and copying our move from two rounds back. Easy games last 3
//! rounds, hard ones 5. Strategies that reply alike to every probe are
//! merged by [`super::compile`].

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{BlackBox, FamilyError, FamilyParams, sample_indices};

/// The knowledge book of the family (see [`super::table`]).
pub const BOOK: &str = "You play rock-paper-scissors (R beats S, S beats P, P beats R) against an \
opponent with a fixed strategy. A probe is a whole game: the moves you will play, one per round; the box \
answers the opponent's moves in those rounds. Both sides move at once, so the opponent's reply in a \
round depends only on earlier rounds. The opponent opens with a fixed move and then follows one rule: \
always the same move; cycle forwards (R, P, S, R, ...) or backwards (R, S, P, ...); copy your last move; \
play what beats your last move; play what loses to your last move; win-stay/lose-shift (keep its move \
after a win, otherwise play what beats your last move); and in hard boxes also: play what beats your most \
frequent move so far (ties go to the most recent of them), or copy your move from two rounds back (with \
two fixed opening moves). Easy games last 3 rounds, hard games 5.";

const MOVES: [char; 3] = ['R', 'P', 'S'];

/// The move that beats `m` (moves as 0 = R, 1 = P, 2 = S).
pub fn beats(m: usize) -> usize {
    (m + 1) % 3
}

/// A strategy rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    Always,
    CycleForward,
    CycleBackward,
    Copy,
    Beat,
    Lose,
    WinStay,
    BeatMostFrequent,
    CopyTwoBack,
}

const EASY_RULES: [Rule; 7] = [
    Rule::Always,
    Rule::CycleForward,
    Rule::CycleBackward,
    Rule::Copy,
    Rule::Beat,
    Rule::Lose,
    Rule::WinStay,
];
const HARD_RULES: [Rule; 9] = [
    Rule::Always,
    Rule::CycleForward,
    Rule::CycleBackward,
    Rule::Copy,
    Rule::Beat,
    Rule::Lose,
    Rule::WinStay,
    Rule::BeatMostFrequent,
    Rule::CopyTwoBack,
];

/// A strategy: its rule and opening moves (two for `CopyTwoBack`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Strategy {
    pub rule: Rule,
    pub opening: Vec<usize>,
}

impl Strategy {
    /// The opponent's moves against ours.
    pub fn replies(&self, ours: &[usize]) -> Vec<usize> {
        let mut theirs: Vec<usize> = Vec::with_capacity(ours.len());
        for r in 0..ours.len() {
            let reply = if r < self.opening.len() {
                self.opening[r]
            } else {
                let (mine, last) = (ours[r - 1], theirs[r - 1]);
                match self.rule {
                    Rule::Always => last,
                    Rule::CycleForward => (last + 1) % 3,
                    Rule::CycleBackward => (last + 2) % 3,
                    Rule::Copy => mine,
                    Rule::Beat => beats(mine),
                    Rule::Lose => (mine + 2) % 3,
                    Rule::WinStay => {
                        if last == beats(mine) {
                            last
                        } else {
                            beats(mine)
                        }
                    }
                    Rule::BeatMostFrequent => {
                        let mut count = [0usize; 3];
                        let mut latest = [0usize; 3];
                        for (i, &m) in ours[..r].iter().enumerate() {
                            count[m] += 1;
                            latest[m] = i;
                        }
                        let most = (0..3)
                            .filter(|&m| count[m] > 0)
                            .max_by_key(|&m| (count[m], latest[m]))
                            .unwrap_or(0);
                        beats(most)
                    }
                    Rule::CopyTwoBack => ours[r - 2],
                }
            };
            theirs.push(reply);
        }
        theirs
    }

    pub fn text(&self) -> String {
        let open: String = self
            .opening
            .iter()
            .map(|&m| MOVES[m].to_string())
            .collect::<Vec<_>>()
            .join(" ");
        let rule = match self.rule {
            Rule::Always => "then repeats it",
            Rule::CycleForward => "then cycles R, P, S",
            Rule::CycleBackward => "then cycles R, S, P",
            Rule::Copy => "then copies your last move",
            Rule::Beat => "then beats your last move",
            Rule::Lose => "then loses to your last move",
            Rule::WinStay => "then win-stay/lose-shift",
            Rule::BeatMostFrequent => "then beats your most frequent move",
            Rule::CopyTwoBack => "then copies your move two rounds back",
        };
        format!("opens {open}, {rule}")
    }
}

fn moves_text(moves: &[usize]) -> String {
    moves
        .iter()
        .map(|&m| MOVES[m].to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn black_box(params: &FamilyParams) -> Result<BlackBox, FamilyError> {
    let (rules, rounds): (&[Rule], u32) = if params.hard {
        (&HARD_RULES, 5)
    } else {
        (&EASY_RULES, 3)
    };
    let mut all = Vec::new();
    for &rule in rules {
        let openings = if rule == Rule::CopyTwoBack { 9 } else { 3 };
        for o in 0..openings {
            let opening = if rule == Rule::CopyTwoBack {
                vec![o / 3, o % 3]
            } else {
                vec![o]
            };
            all.push(Strategy { rule, opening });
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    let strategies: Vec<Strategy> = sample_indices(&mut rng, all.len(), params.hypotheses)
        .into_iter()
        .map(|i| all[i].clone())
        .collect();
    let games: Vec<Vec<usize>> = sample_indices(&mut rng, 3usize.pow(rounds), params.probes)
        .into_iter()
        .map(|mut i| {
            let mut g = vec![0; rounds as usize];
            for slot in g.iter_mut().rev() {
                *slot = i % 3;
                i /= 3;
            }
            g
        })
        .collect();
    let answers = games
        .iter()
        .map(|g| {
            strategies
                .iter()
                .map(|s| format!("replies {}", moves_text(&s.replies(g))))
                .collect()
        })
        .collect();
    Ok(BlackBox {
        domain_name: "opponents".into(),
        title: "Hidden rock-paper-scissors strategy".into(),
        truth_noun: "strategy".into(),
        action_noun: "game".into(),
        goal: format!(
            "find the opponent's fixed rock-paper-scissors strategy (R beats S, S beats P, P beats R) from its replies to games of {rounds} rounds you choose"
        ),
        hypotheses: strategies.iter().map(Strategy::text).collect(),
        probes: games
            .iter()
            .map(|g| format!("play {}", moves_text(g)))
            .collect(),
        answers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_reply_to_earlier_rounds_only() {
        let beat = Strategy {
            rule: Rule::Beat,
            opening: vec![0],
        };
        // We play R P S: it opens R, then beats R (P), then beats P (S).
        assert_eq!(beat.replies(&[0, 1, 2]), [0, 1, 2]);
        let frequent = Strategy {
            rule: Rule::BeatMostFrequent,
            opening: vec![2],
        };
        // R R P P: after R R P the most frequent is R -> P; tie R/P at
        // round 5 goes to P (the latest) -> S.
        assert_eq!(frequent.replies(&[0, 0, 1, 1, 0]), [2, 1, 1, 1, 2]);
        assert_eq!(
            frequent.text(),
            "opens S, then beats your most frequent move"
        );
    }
}
