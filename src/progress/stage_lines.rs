//! What a stage's display says besides a bar, as text: the plain progress
//! line printed every few seconds where stderr is not a terminal
//! ([`StageLog`]: `stage: done/total units (percent), rate per second,
//! about T left`, and a last line when the stage ends if it printed any),
//! and the up-front forecast of a long stage ([`PendingForecast`]). Each
//! is told the time (`now`) and answers with the line to print, if it is
//! the moment; `cli::progress` prints them. Nothing here prints.
//!
//! A forecast waits until the first [`FORECAST_SAMPLE`] units have
//! finished and [`FORECAST_AFTER`] has passed since the first one did (so
//! the rate is the stage's own, not the set-up before it); a stage
//! projected to take more than [`FORECAST_OVER`] in all says once:
//! `note: car-identification 12x16: about 3 min for 5000 instances on 2
//! threads (from the first 48 instances)`. Short runs say nothing.

use std::time::{Duration, Instant};

/// How often a line is printed when stderr is not a terminal.
pub const LOG_EVERY: Duration = Duration::from_secs(5);

/// Units that must have finished before a forecast.
pub const FORECAST_SAMPLE: u64 = 32;

/// Time after the first finished unit before a forecast.
pub const FORECAST_AFTER: Duration = Duration::from_secs(1);

/// A stage projected to take longer than this in all says so up front.
pub const FORECAST_OVER: Duration = Duration::from_secs(60);

/// The progress lines of one stage, one every `every`.
#[derive(Clone, Debug)]
pub struct StageLog {
    stage: String,
    unit: String,
    total: u64,
    done: u64,
    started: Instant,
    last: Instant,
    every: Duration,
    printed: bool,
}

impl StageLog {
    /// The log of `stage` over `total` `unit`s (0: not known yet),
    /// started at `now`, with a line every `every`.
    pub fn new(stage: &str, unit: &str, total: u64, every: Duration, now: Instant) -> Self {
        StageLog {
            stage: stage.to_string(),
            unit: unit.to_string(),
            total,
            done: 0,
            started: now,
            last: now,
            every,
            printed: false,
        }
    }

    /// Raises the total to at least `total`.
    pub fn grow_to(&mut self, total: u64) {
        self.total = self.total.max(total);
    }

    /// `done` units are finished at `now`: the line to print when a line
    /// is due.
    pub fn position(&mut self, done: u64, now: Instant) -> Option<String> {
        self.done = done;
        if now.duration_since(self.last) < self.every {
            return None;
        }
        self.last = now;
        Some(self.line(now))
    }

    /// The stage is over at `now`: a last line when any was printed.
    pub fn finish(&mut self, now: Instant) -> Option<String> {
        self.printed.then(|| self.line(now))
    }

    fn line(&mut self, now: Instant) -> String {
        self.printed = true;
        line(
            &self.stage,
            &self.unit,
            self.done,
            self.total,
            now.duration_since(self.started),
        )
    }
}

/// The pending up-front estimate of a stage (see the module comment).
#[derive(Clone, Debug)]
pub struct PendingForecast {
    /// What the stage makes, e.g. `car-identification 12x16`.
    subject: String,
    unit: String,
    threads: usize,
    total: u64,
    started: Instant,
    /// When the first unit finished, and the count then.
    first: Option<(Instant, u64)>,
    told: bool,
}

impl PendingForecast {
    /// The estimate of a stage that makes `subject` from `total` `unit`s
    /// on `threads` workers, started at `started`.
    pub fn new(subject: &str, unit: &str, threads: usize, total: u64, started: Instant) -> Self {
        PendingForecast {
            subject: subject.to_string(),
            unit: unit.to_string(),
            threads,
            total,
            started,
            first: None,
            told: false,
        }
    }

    /// Raises the total to at least `total`.
    pub fn grow_to(&mut self, total: u64) {
        self.total = self.total.max(total);
    }

    /// The note to print now that `done` units are finished, if this is
    /// the moment (once per stage, and only for a long stage).
    pub fn note(&mut self, done: u64, now: Instant) -> Option<String> {
        if self.told {
            return None;
        }
        let Some((first_at, first_done)) = self.first else {
            self.first = Some((now, done));
            return None;
        };
        let since = now.duration_since(first_at);
        let sampled = done.saturating_sub(first_done);
        if sampled < FORECAST_SAMPLE || since < FORECAST_AFTER {
            return None;
        }
        self.told = true;
        let left = self.total.saturating_sub(done) as f64;
        let expected = now.duration_since(self.started).as_secs_f64()
            + left * since.as_secs_f64() / sampled as f64;
        (expected > FORECAST_OVER.as_secs_f64()).then(|| {
            format!(
                "note: {}: about {} for {} {} on {} thread{} (from the first {done} {})",
                self.subject,
                approximate(expected),
                self.total,
                self.unit,
                self.threads,
                if self.threads == 1 { "" } else { "s" },
                self.unit
            )
        })
    }
}

/// A duration in seconds, rounded as a person would say it.
fn approximate(secs: f64) -> String {
    if secs < 90.0 {
        format!("{:.0} s", secs)
    } else if secs < 90.0 * 60.0 {
        format!("{:.0} min", secs / 60.0)
    } else {
        format!("{:.1} h", secs / 3600.0)
    }
}

/// One progress line: stage, done/total, rate and the time left at that
/// rate.
fn line(stage: &str, unit: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
    let mut out = format!("{stage}: {done}");
    if total > 0 {
        out += &format!(
            "/{total} {unit} ({:.0}%)",
            100.0 * done as f64 / total as f64
        );
    } else {
        out += &format!(" {unit}");
    }
    out += &format!(", {rate:.1}/s, {:.0} s elapsed", secs);
    if total > done && rate > 0.0 {
        out += &format!(", about {:.0} s left", (total - done) as f64 / rate);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_stage_count_rate_and_time_left() {
        let l = line("labels", "instances", 250, 1000, Duration::from_secs(5));
        assert_eq!(
            l,
            "labels: 250/1000 instances (25%), 50.0/s, 5 s elapsed, about 15 s left"
        );
        let l = line("merge", "instances", 7, 0, Duration::from_secs(2));
        assert_eq!(l, "merge: 7 instances, 3.5/s, 2 s elapsed");
    }

    #[test]
    fn lines_are_due_every_interval_and_at_the_end() {
        let start = Instant::now();
        let mut quiet = StageLog::new("s", "u", 10, Duration::from_secs(3600), start);
        assert_eq!(quiet.position(5, start + Duration::from_secs(1)), None);
        assert_eq!(
            quiet.finish(start + Duration::from_secs(2)),
            None,
            "a short stage prints nothing"
        );

        let mut log = StageLog::new("stage", "units", 10, Duration::from_secs(1), start);
        let first = log.position(4, start + Duration::from_secs(1)).unwrap();
        assert!(first.starts_with("stage: 4/10 units (40%)"), "{first}");
        log.grow_to(20);
        assert_eq!(log.position(10, start + Duration::from_millis(1500)), None);
        let last = log.finish(start + Duration::from_secs(2)).unwrap();
        assert!(last.starts_with("stage: 10/20 units (50%)"), "{last}");
    }

    #[test]
    fn a_long_stage_says_up_front_what_it_expects() {
        let start = Instant::now();
        let mut forecast =
            PendingForecast::new("car-identification 12x16", "instances", 2, 5000, start);
        assert_eq!(
            forecast.note(1, start),
            None,
            "the first unit starts the clock"
        );
        // 32 more units in 2 s: 5000 at that rate is about 5 min.
        let later = start + Duration::from_secs(1);
        assert_eq!(forecast.note(20, later), None, "too few units yet");
        let note = forecast.note(33, start + Duration::from_secs(2));
        assert_eq!(
            note.as_deref(),
            Some(
                "note: car-identification 12x16: about 5 min for 5000 instances on 2 threads (from the first 33 instances)"
            )
        );
        assert_eq!(
            forecast.note(40, start + Duration::from_secs(3)),
            None,
            "once"
        );
    }

    #[test]
    fn a_short_stage_makes_no_forecast() {
        let start = Instant::now();
        let mut forecast = PendingForecast::new("medical 12x16", "instances", 2, 500, start);
        assert_eq!(forecast.note(1, start), None);
        // 100 units a second: 500 in 5 s.
        assert_eq!(forecast.note(101, start + Duration::from_secs(1)), None);
        assert_eq!(forecast.note(500, start + Duration::from_secs(5)), None);
    }

    #[test]
    fn durations_are_rounded_as_said() {
        assert_eq!(approximate(42.4), "42 s");
        assert_eq!(approximate(300.0), "5 min");
        assert_eq!(approximate(7200.0), "2.0 h");
    }
}
