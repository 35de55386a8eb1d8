//! Progress of a long command on stderr: [`Stderr`] is the library's
//! progress interface ([`crate::progress::Progress`]) as every command
//! shows it, one [`StageDisplay`] per stage, and each of the library's
//! events as its line ([`super::events`]).
//!
//! On a terminal: an indicatif bar that names its stage and what it counts,
//! with the elapsed time and an estimate of the rest. Anywhere else (a file,
//! a pipe, `nohup`, a batch job's log): one plain line every few seconds
//! (`stage: done/total units (percent), rate per second, about T left`)
//! instead of silence, and a last line when the stage ends, if it ran long
//! enough to have printed any. Nothing is printed for stages that end
//! within the first interval, so short runs and tests stay quiet.
//!
//! A stage given a [`StageDisplay::forecast`] also says up front what it
//! expects when that is long: once the first [`FORECAST_SAMPLE`] units
//! have finished and [`FORECAST_AFTER`] has passed since the first one
//! did (so the rate is the stage's own, not the set-up before it), a
//! stage projected to take more than [`FORECAST_OVER`] in all prints one
//! line, on a terminal or not:
//! `note: car-identification 12x16: about 3 min for 5000 instances on 2
//! threads (from the first 48 instances)`. It goes to stderr only, so no
//! output changes; short runs print nothing.

use std::io::{self, IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a line is printed when stderr is not a terminal.
const LOG_EVERY: Duration = Duration::from_secs(5);

/// Units that must have finished before a forecast.
const FORECAST_SAMPLE: u64 = 32;

/// Time after the first finished unit before a forecast.
const FORECAST_AFTER: Duration = Duration::from_secs(1);

/// A stage projected to take longer than this in all says so up front.
const FORECAST_OVER: Duration = Duration::from_secs(60);

/// The display of one stage: a bar, lines, or both absent.
pub struct StageDisplay {
    bar: Option<indicatif::ProgressBar>,
    log: Option<Mutex<Log>>,
    forecast: Option<Mutex<PendingForecast>>,
    /// What the stage counts, and how many (0: not known yet).
    unit: String,
    total: u64,
}

/// The pending up-front estimate of a stage (see the module comment).
struct PendingForecast {
    /// What the stage makes, e.g. `car-identification 12x16`.
    subject: String,
    unit: String,
    threads: usize,
    total: u64,
    started: Instant,
    /// When the first unit finished, and the count then.
    first: Option<(Instant, u64)>,
    told: bool,
    /// Where the note goes when there is no bar.
    sink: Box<dyn Write + Send>,
}

struct Log {
    stage: String,
    unit: String,
    total: u64,
    done: u64,
    started: Instant,
    last: Instant,
    every: Duration,
    printed: bool,
    sink: Box<dyn Write + Send>,
}

/// The library's progress on stderr: each stage a job starts gets its own
/// [`StageDisplay`] (with the forecast when the stage asks for one).
#[derive(Default)]
pub struct Stderr {
    current: Mutex<Option<StageDisplay>>,
}

impl Stderr {
    pub fn new() -> Self {
        Self::default()
    }

    fn with_current(&self, f: impl FnOnce(&StageDisplay)) {
        if let Ok(current) = self.current.lock()
            && let Some(display) = current.as_ref()
        {
            f(display);
        }
    }
}

impl crate::progress::Progress for Stderr {
    fn stage(&self, stage: crate::progress::Stage<'_>) {
        let mut display = StageDisplay::new(stage.total, stage.name, stage.unit);
        if let Some(forecast) = &stage.forecast {
            display = display.forecast(&forecast.subject, forecast.threads);
        }
        if let Ok(mut current) = self.current.lock()
            && let Some(done) = current.replace(display)
        {
            done.finish();
        }
    }

    fn position(&self, done: u64) {
        self.with_current(|display| {
            display.grow_to(done);
            display.set_position(done);
        });
    }

    fn grow_to(&self, total: u64) {
        self.with_current(|display| display.grow_to(total));
    }

    fn finish(&self) {
        if let Ok(mut current) = self.current.lock()
            && let Some(done) = current.take()
        {
            done.finish();
        }
    }

    /// The event's line, above a running bar (which is drawn again below
    /// it), else straight to stderr.
    fn event(&self, event: crate::progress::Event<'_>) {
        let line = super::events::line(&event);
        let mut shown = false;
        self.with_current(|display| {
            if let Some(bar) = &display.bar {
                bar.suspend(|| crate::stderr_line!("{line}"));
                shown = true;
            }
        });
        if !shown {
            crate::stderr_line!("{line}");
        }
    }
}

impl StageDisplay {
    /// The display of `stage` over `total` `unit`s (`0` when not yet known)
    /// on stderr.
    pub fn new(total: u64, stage: &str, unit: &str) -> Self {
        if io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(total);
            if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
                "{stage}: {{bar:40}} {{pos}}/{{len}} {unit}, {{elapsed}} elapsed, about {{eta}} left"
            )) {
                bar.set_style(style);
            }
            StageDisplay {
                bar: Some(bar),
                log: None,
                forecast: None,
                unit: unit.to_string(),
                total,
            }
        } else {
            Self::lines(total, stage, unit, LOG_EVERY, Box::new(io::stderr()))
        }
    }

    /// A display printed as lines to `sink` every `every`.
    fn lines(
        total: u64,
        stage: &str,
        unit: &str,
        every: Duration,
        sink: Box<dyn Write + Send>,
    ) -> Self {
        let now = Instant::now();
        StageDisplay {
            bar: None,
            log: Some(Mutex::new(Log {
                stage: stage.to_string(),
                unit: unit.to_string(),
                total,
                done: 0,
                started: now,
                last: now,
                every,
                printed: false,
                sink,
            })),
            forecast: None,
            unit: unit.to_string(),
            total,
        }
    }

    /// Also says up front, once a sample of finished units shows it, that
    /// the stage will take more than [`FORECAST_OVER`] (see the module
    /// comment); `subject` names what it makes, `threads` the workers.
    pub fn forecast(self, subject: &str, threads: usize) -> Self {
        self.forecast_to(subject, threads, Box::new(io::stderr()))
    }

    fn forecast_to(mut self, subject: &str, threads: usize, sink: Box<dyn Write + Send>) -> Self {
        self.forecast = Some(Mutex::new(PendingForecast {
            subject: subject.to_string(),
            unit: self.unit.clone(),
            threads,
            total: self.total,
            started: Instant::now(),
            first: None,
            told: false,
            sink,
        }));
        self
    }

    /// Raises the total to at least `total`.
    pub fn grow_to(&self, total: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(bar.length().unwrap_or(0).max(total));
        }
        if let Some(log) = &self.log
            && let Ok(mut log) = log.lock()
        {
            log.total = log.total.max(total);
        }
        if let Some(forecast) = &self.forecast
            && let Ok(mut forecast) = forecast.lock()
        {
            forecast.total = forecast.total.max(total);
        }
    }

    /// `done` units of the stage are finished.
    pub fn set_position(&self, done: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
        if let Some(forecast) = &self.forecast
            && let Ok(mut forecast) = forecast.lock()
            && let Some(note) = forecast.note(done, Instant::now())
        {
            // Best effort, as every progress line.
            match &self.bar {
                Some(bar) => bar.println(note),
                None => {
                    let _ = writeln!(forecast.sink, "{note}");
                }
            }
        }
        if let Some(log) = &self.log
            && let Ok(mut log) = log.lock()
        {
            log.done = done;
            let now = Instant::now();
            if now.duration_since(log.last) >= log.every {
                log.last = now;
                log.print();
            }
        }
    }

    /// The stage is over: the bar is cleared; a log that printed anything
    /// gets a last line.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if let Some(log) = &self.log
            && let Ok(mut log) = log.lock()
            && log.printed
        {
            log.print();
        }
    }
}

impl Log {
    fn print(&mut self) {
        let line = line(
            &self.stage,
            &self.unit,
            self.done,
            self.total,
            self.started.elapsed(),
        );
        // Progress is best effort: a closed stderr must not stop the work.
        let _ = writeln!(self.sink, "{line}");
        self.printed = true;
    }
}

impl PendingForecast {
    /// The note to print now that `done` units are finished, if this is
    /// the moment (once per stage, and only for a long stage).
    fn note(&mut self, done: u64, now: Instant) -> Option<String> {
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
    use std::sync::Arc;

    /// A sink the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

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
    fn lines_are_printed_every_interval_and_at_the_end() {
        let sink = Shared::default();
        let quiet = StageDisplay::lines(
            10,
            "s",
            "u",
            Duration::from_secs(3600),
            Box::new(sink.clone()),
        );
        quiet.set_position(5);
        quiet.finish();
        assert!(
            sink.0.lock().unwrap().is_empty(),
            "a short stage prints nothing"
        );

        let p = StageDisplay::lines(10, "stage", "units", Duration::ZERO, Box::new(sink.clone()));
        p.set_position(4);
        p.grow_to(20);
        p.set_position(20);
        p.finish();
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("stage: 4/10 units (40%)"), "{text}");
        assert!(lines[2].starts_with("stage: 20/20 units (100%)"), "{text}");
    }

    #[test]
    fn a_long_stage_says_up_front_what_it_expects() {
        let sink = Shared::default();
        let p = StageDisplay::lines(
            5000,
            "labels",
            "instances",
            Duration::MAX,
            Box::new(io::sink()),
        )
        .forecast_to("car-identification 12x16", 2, Box::new(sink.clone()));
        let start = Instant::now();
        let mut forecast = p.forecast.as_ref().unwrap().lock().unwrap();
        forecast.started = start;
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
        let sink = Shared::default();
        let p = StageDisplay::lines(
            500,
            "labels",
            "instances",
            Duration::MAX,
            Box::new(io::sink()),
        )
        .forecast_to("medical 12x16", 2, Box::new(sink.clone()));
        let start = Instant::now();
        {
            let mut forecast = p.forecast.as_ref().unwrap().lock().unwrap();
            forecast.started = start;
            assert_eq!(forecast.note(1, start), None);
            // 100 units a second: 500 in 5 s.
            assert_eq!(forecast.note(101, start + Duration::from_secs(1)), None);
        }
        for done in 0..=500 {
            p.set_position(done);
        }
        assert!(
            sink.0.lock().unwrap().is_empty(),
            "a short stage prints nothing"
        );
    }
}
