//! Progress of a long command on stderr: [`Stderr`] is the library's
//! progress interface ([`crate::progress::Progress`]) as every command
//! shows it, one [`StageDisplay`] per stage, and each of the library's
//! events as its line ([`crate::progress::words`]).
//!
//! On a terminal: an indicatif bar that names its stage and what it counts,
//! with the elapsed time and an estimate of the rest. Anywhere else (a file,
//! a pipe, `nohup`, a batch job's log): the plain lines of
//! [`crate::progress::stage_lines`], one every few seconds instead of
//! silence, and a last line when the stage ends if it ran long enough to
//! have printed any; stages that end within the first interval print
//! nothing, so short runs and tests stay quiet. A stage given a
//! [`StageDisplay::forecast`] also says up front, on a terminal or not,
//! what it expects when that is long (the same module words it). It all
//! goes to stderr only, so no output changes.

use std::io::{self, IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::progress::stage_lines::{LOG_EVERY, PendingForecast, StageLog};

/// The display of one stage: a bar, lines, or both absent.
pub struct StageDisplay {
    bar: Option<indicatif::ProgressBar>,
    log: Option<Mutex<Sink<StageLog>>>,
    forecast: Option<Mutex<Sink<PendingForecast>>>,
    /// What the stage counts, and how many (0: not known yet).
    unit: String,
    total: u64,
}

/// Lines and where they go when there is no bar.
struct Sink<T> {
    lines: T,
    to: Box<dyn Write + Send>,
}

impl<T> Sink<T> {
    /// Writes `line`, best effort, as every progress line: a closed
    /// stderr must not stop the work.
    fn print(&mut self, line: Option<String>) {
        if let Some(line) = line {
            let _ = writeln!(self.to, "{line}");
        }
    }
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
        let line = crate::progress::words::line(&event);
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

    /// A display printed as lines to `to` every `every`.
    fn lines(
        total: u64,
        stage: &str,
        unit: &str,
        every: Duration,
        to: Box<dyn Write + Send>,
    ) -> Self {
        StageDisplay {
            bar: None,
            log: Some(Mutex::new(Sink {
                lines: StageLog::new(stage, unit, total, every, Instant::now()),
                to,
            })),
            forecast: None,
            unit: unit.to_string(),
            total,
        }
    }

    /// Also says up front, once a sample of finished units shows it, that
    /// the stage will take long (see [`crate::progress::stage_lines`]);
    /// `subject` names what it makes, `threads` the workers.
    pub fn forecast(mut self, subject: &str, threads: usize) -> Self {
        let lines = PendingForecast::new(subject, &self.unit, threads, self.total, Instant::now());
        self.forecast = Some(Mutex::new(Sink {
            lines,
            to: Box::new(io::stderr()),
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
            log.lines.grow_to(total);
        }
        if let Some(forecast) = &self.forecast
            && let Ok(mut forecast) = forecast.lock()
        {
            forecast.lines.grow_to(total);
        }
    }

    /// `done` units of the stage are finished.
    pub fn set_position(&self, done: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
        if let Some(forecast) = &self.forecast
            && let Ok(mut forecast) = forecast.lock()
        {
            let note = forecast.lines.note(done, Instant::now());
            match (&self.bar, note) {
                (Some(bar), Some(note)) => bar.println(note),
                (_, note) => forecast.print(note),
            }
        }
        if let Some(log) = &self.log
            && let Ok(mut log) = log.lock()
        {
            let line = log.lines.position(done, Instant::now());
            log.print(line);
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
        {
            let line = log.lines.finish(Instant::now());
            log.print(line);
        }
    }
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
}
