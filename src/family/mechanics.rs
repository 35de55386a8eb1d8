//! `mechanics` (physics systems): a ball thrown with hidden launch
//! parameters under a hidden gravity, without air resistance, observed at
//! time points; positions are rounded and the rounding is stated.
//!
//! Easy: thrown straight up at a speed of 1..=20 m/s under one of four
//! gravities; a probe names a time `t` (0.1 s to 4.0 s) and the box
//! answers the height above the launch point, `v t - g t^2 / 2`, rounded
//! to 0.1 m (halves away from zero). Hard: launched at a speed of 1..=20
//! m/s in one of seven directions (rises over runs of whole-number
//! triangles: 3-4-5, 5-12-13, 8-15-17 and straight up) under one of five
//! gravities; the box answers both coordinates rounded to whole metres.
//! Everything is computed in exact integers, so the rounding never
//! depends on floating point. Parameters that agree on every probe are
//! merged by [`super::compile`].

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{BlackBox, FamilyError, FamilyParams, sample_indices};

/// The knowledge book of the family (see [`super::table`]).
pub const BOOK: &str = "A ball is launched from the origin at time 0 and flies without air resistance; \
its launch speed, its direction and the gravity pulling it down are hidden. After t seconds it is \
v cos(a) t metres along the ground and v sin(a) t - g t^2 / 2 metres above the launch point (below it \
when negative; there is no floor). A probe asks for the position at one time point. Easy boxes throw \
straight up (speed 1 to 20 m/s, gravity 1.6, 3.7, 9.8 or 24.8 m/s^2) and report the height rounded to \
0.1 m; hard boxes launch in one of seven directions (straight up, or with rise:run:length 3:4:5, 4:3:5, \
5:12:13, 12:5:13, 8:15:17 or 15:8:17) with gravity 1.6, 3.7, 8.9, 9.8 or 24.8 m/s^2 and report both \
coordinates rounded to whole metres. Rounding is to the nearest value, halves away from zero, so nearby \
parameters can look the same at early times and separate later.";

/// Gravities in tenths of m/s^2.
const EASY_GRAVITY: [i64; 4] = [16, 37, 98, 248];
const HARD_GRAVITY: [i64; 5] = [16, 37, 89, 98, 248];
/// Directions as (run, rise, length) of a whole-number triangle.
const DIRECTIONS: [(i64, i64, i64); 7] = [
    (0, 1, 1),
    (4, 3, 5),
    (3, 4, 5),
    (12, 5, 13),
    (5, 12, 13),
    (15, 8, 17),
    (8, 15, 17),
];
const MAX_SPEED: i64 = 20;
/// Time points in tenths of a second: 0.1 s ..= 4.0 s.
const TIMES: i64 = 40;

/// `n / d` rounded to the nearest integer, halves away from zero (`d > 0`).
pub fn round_div(n: i64, d: i64) -> i64 {
    let q = (2 * n.abs() + d) / (2 * d);
    if n < 0 { -q } else { q }
}

/// Tenths as text: `-12` -> `-1.2`.
pub fn tenths(v: i64) -> String {
    let sign = if v < 0 { "-" } else { "" };
    format!("{sign}{}.{}", v.abs() / 10, v.abs() % 10)
}

/// A launch: speed in m/s, direction (run, rise, length), gravity in
/// tenths of m/s^2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub speed: i64,
    pub direction: (i64, i64, i64),
    pub gravity: i64,
}

impl Launch {
    /// Position at `k` tenths of a second as exact fractions over
    /// `2000 * length`: (x, y) numerators.
    fn numerators(&self, k: i64) -> (i64, i64, i64) {
        let (run, rise, len) = self.direction;
        let d = 2000 * len;
        let x = 200 * self.speed * run * k;
        let y = 200 * self.speed * rise * k - self.gravity * len * k * k;
        (x, y, d)
    }

    /// The easy answer: the height at `k` tenths of a second, in tenths
    /// of a metre, rounded.
    pub fn height_tenths(&self, k: i64) -> i64 {
        let (_, y, d) = self.numerators(k);
        round_div(10 * y, d)
    }

    /// The hard answer: (x, y) at `k` tenths of a second in whole metres,
    /// rounded.
    pub fn position_metres(&self, k: i64) -> (i64, i64) {
        let (x, y, d) = self.numerators(k);
        (round_div(x, d), round_div(y, d))
    }

    pub fn text(&self, hard: bool) -> String {
        let g = tenths(self.gravity);
        if !hard {
            return format!("thrown up at {} m/s, gravity {g} m/s^2", self.speed);
        }
        let (run, rise, len) = self.direction;
        let way = if run == 0 {
            "straight up".to_string()
        } else {
            format!("rise:run {rise}:{run} (of {len})")
        };
        format!("launched at {} m/s {way}, gravity {g} m/s^2", self.speed)
    }
}

pub fn black_box(params: &FamilyParams) -> Result<BlackBox, FamilyError> {
    let hard = params.hard;
    let (gravities, directions): (&[i64], &[(i64, i64, i64)]) = if hard {
        (&HARD_GRAVITY, &DIRECTIONS)
    } else {
        (&EASY_GRAVITY, &DIRECTIONS[..1])
    };
    let mut all = Vec::new();
    for &direction in directions {
        for &gravity in gravities {
            for speed in 1..=MAX_SPEED {
                all.push(Launch {
                    speed,
                    direction,
                    gravity,
                });
            }
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    let launches: Vec<Launch> = sample_indices(&mut rng, all.len(), params.hypotheses)
        .into_iter()
        .map(|i| all[i])
        .collect();
    let times: Vec<i64> = sample_indices(&mut rng, TIMES as usize, params.probes)
        .into_iter()
        .map(|i| i as i64 + 1)
        .collect();
    let answers = times
        .iter()
        .map(|&k| {
            launches
                .iter()
                .map(|l| {
                    if hard {
                        let (x, y) = l.position_metres(k);
                        format!("x {x} m, y {y} m")
                    } else {
                        format!("height {} m", tenths(l.height_tenths(k)))
                    }
                })
                .collect()
        })
        .collect();
    let rounding = if hard {
        "both coordinates rounded to whole metres"
    } else {
        "the height above the launch point rounded to 0.1 m"
    };
    Ok(BlackBox {
        domain_name: "mechanics".into(),
        title: "Hidden launch".into(),
        truth_noun: "launch".into(),
        action_noun: "time point".into(),
        goal: format!(
            "find the hidden launch speed, direction and gravity of a ball flying without air resistance; each time point shows its position, {rounding} (halves away from zero)"
        ),
        hypotheses: launches.iter().map(|l| l.text(hard)).collect(),
        probes: times
            .iter()
            .map(|&k| format!("position at t = {} s", tenths(k)))
            .collect(),
        answers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_exact_and_rounded_halves_away_from_zero() {
        assert_eq!(round_div(5, 10), 1);
        assert_eq!(round_div(-5, 10), -1);
        assert_eq!(round_div(4, 10), 0);
        assert_eq!(tenths(-12), "-1.2");
        assert_eq!(tenths(0), "0.0");
        let up = Launch {
            speed: 10,
            direction: (0, 1, 1),
            gravity: 98,
        };
        // 10 * 1 - 9.8 / 2 = 5.1 m at t = 1 s.
        assert_eq!(up.height_tenths(10), 51);
        let slope = Launch {
            speed: 10,
            direction: (4, 3, 5),
            gravity: 98,
        };
        // x = 8, y = 6 - 4.9 = 1.1 at t = 1 s.
        assert_eq!(slope.position_metres(10), (8, 1));
    }
}
