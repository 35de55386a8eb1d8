//! Axis ticks a reader can read: steps of 1, 2, 2.5 or 5 times a power of
//! ten (0, 0.25, 0.5 ...; 0, 2, 4 ...), for every chart of `score --svg`
//! and the results report.

/// A tick step near `span / target`, rounded to 1, 2, 2.5 or 5 x 10^k.
fn nice_step(span: f64, target: usize) -> f64 {
    let raw = span / target.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let fraction = raw / power;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 2.5 {
        2.5
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// The decimals a step needs (0.25: 2; 5: 0), at most 6.
fn decimals(step: f64) -> usize {
    (0..6)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6
        })
        .unwrap_or(6)
}

/// An axis covering `[low, high]`: its ends rounded outwards to whole
/// steps, and the ticks between them (about `target` of them).
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub low: f64,
    pub high: f64,
    pub ticks: Vec<f64>,
}

impl Axis {
    pub fn new(low: f64, high: f64, target: usize) -> Axis {
        let (mut low, mut high) = (low.min(high), low.max(high));
        if !low.is_finite() || !high.is_finite() {
            (low, high) = (0.0, 1.0);
        }
        if high - low < 1e-12 {
            let pad = if low.abs() > 1e-12 {
                low.abs() * 0.5
            } else {
                0.5
            };
            (low, high) = (low - pad, high + pad);
        }
        let step = nice_step(high - low, target);
        let first = (low / step + 1e-9).floor();
        let last = (high / step - 1e-9).ceil();
        // Print-clean values (no 0.6000000000000001, no -0): rounded to
        // the step's decimals.
        let scale = 10f64.powi(decimals(step) as i32);
        let ticks: Vec<f64> = (0..=((last - first) as usize))
            .map(|i| {
                let v = ((first + i as f64) * step * scale).round() / scale;
                if v == 0.0 { 0.0 } else { v }
            })
            .collect();
        Axis {
            low: first * step,
            high: last * step,
            ticks,
        }
    }

    /// A tick's label with as many decimals as the step needs.
    pub fn label(&self, v: f64) -> String {
        let step = match self.ticks.as_slice() {
            [a, b, ..] => b - a,
            _ => 1.0,
        };
        let decimals = decimals(step);
        format!("{v:.decimals$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_numbers() {
        let a = Axis::new(0.0, 1.0, 4);
        assert_eq!(a.ticks, [0.0, 0.25, 0.5, 0.75, 1.0]);
        assert_eq!(a.label(0.25), "0.25");
        let a = Axis::new(-0.19, 0.44, 5);
        assert_eq!(a.ticks, [-0.2, 0.0, 0.2, 0.4, 0.6]);
        assert_eq!(a.label(-0.2), "-0.2");
        let a = Axis::new(0.0, 13.0, 5);
        assert_eq!(a.ticks, [0.0, 5.0, 10.0, 15.0]);
        assert_eq!(a.label(10.0), "10");
        let a = Axis::new(2.0, 2.0, 5);
        assert!(a.low < 2.0 && a.high > 2.0);
    }
}
