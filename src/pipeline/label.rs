//! `pipeline::label`: `kumo-gen label` end to end, configured by one
//! [`LabelJob`]: the KUMO-format instance lines of a file (or stdin)
//! labelled by [`super::relabel`] under the job's [`SearchBudget`], in
//! input order, written atomically to a file or to the caller's writer
//! (stdout); warnings and the count left unlabelled go to stderr. A
//! malformed line is the user's input ([`JobError::Input`], naming the line).

use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;

use super::error::JobError;
use super::job::LabelJob;
use super::relabel::{self, RelabelError, Summary};
use crate::files::{NamingWriter, write_atomic_with};
use crate::progress::{Event, Progress, Stage};

/// Runs `job` on `pool`, writing to `job.output` or else to `stdout`.
pub fn label(
    job: &LabelJob,
    pool: &rayon::ThreadPool,
    stdout: &mut dyn Write,
    progress: &dyn Progress,
) -> Result<Summary, JobError> {
    let from_stdin = job.instances.as_os_str() == "-";
    let source = job.instances.display().to_string();
    // The total is known for a file (its lines), not for stdin.
    let total = if from_stdin {
        0
    } else {
        count_lines(&job.instances)
    };
    progress.stage(Stage::new("labels", "lines", total));
    let input: Box<dyn BufRead> = if from_stdin {
        Box::new(BufReader::new(io::stdin().lock()))
    } else {
        let f = crate::files::read::open(&job.instances)
            .map_err(|e| JobError::input(format!("cannot read `{source}`: {e}")))?;
        Box::new(BufReader::new(f))
    };
    let run = |out: &mut dyn Write| {
        relabel::relabel(
            pool,
            &job.domain,
            job.budget,
            &source,
            input,
            out,
            |message| progress.event(Event::LabelWarning { message }),
            progress,
        )
    };
    let outcome = match &job.output {
        None => run(stdout),
        Some(path) => write_atomic_with(
            path,
            |w| run(&mut NamingWriter::new(w, path)),
            |p, e| {
                RelabelError::Io(io::Error::new(
                    e.kind(),
                    format!("cannot write `{}`: {e}", p.display()),
                ))
            },
        ),
    };
    progress.finish();
    match outcome {
        Ok(summary) => {
            if summary.unlabelled > 0 {
                progress.event(Event::LabelsLeft {
                    unlabelled: summary.unlabelled as u64,
                    total: (summary.labelled + summary.unlabelled) as u64,
                });
            }
            Ok(summary)
        }
        Err(RelabelError::Input(errors)) => {
            let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
            Err(JobError::input(messages.join("\nerror: ")))
        }
        Err(RelabelError::Io(e)) => Err(e.into()),
    }
}

/// Newlines in the file at `path` (0 when it cannot be read: the error
/// comes when it is opened for labelling).
fn count_lines(path: &Path) -> u64 {
    let Ok(file) = crate::files::read::open(path) else {
        return 0;
    };
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut lines = 0;
    while let Ok(buf) = reader.fill_buf() {
        if buf.is_empty() {
            break;
        }
        lines += buf.iter().filter(|&&c| c == b'\n').count() as u64;
        let len = buf.len();
        reader.consume(len);
    }
    lines
}
