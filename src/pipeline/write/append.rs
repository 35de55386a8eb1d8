//! Appending lines to a dataset or shard file: instances are drawn a
//! chunk at a time, labelled in parallel, and each line is written in
//! index order as soon as it and every line before it are done, synced at
//! least every [`SYNC_EVERY`]. A kill therefore keeps the finished prefix,
//! which a re-run continues.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::{Job, Made, OutputError, made_line};
use crate::difficulty::Reference;

/// Instances drawn and admitted per step. Their lines are labelled in
/// parallel and written as soon as each prefix is complete.
///
/// A step ends when its last label does, and a label can take seconds
/// (car-identification 12x16 has instances of 3.5 s), so at every step's
/// end one core may wait for the other. 8 192 (was 4 096) makes the main
/// job (`-n 5000`) one step and halves the steps of larger runs:
/// car-identification `-n 5000` had one core idle for 3.5 s at the old
/// step's end, and the six slowest domains at `-n 5000`, each run with
/// both sizes one after the other, idled 11.5 s against 6.1 s of their
/// wall time (wall minus half the CPU; BENCHMARKS.md, "Session 18's
/// changes side by side"). The lines do not depend on the steps.
pub(super) const CHUNK: u64 = 8192;

/// Indices drawn in the next step after `done` lines of this run. A band
/// draws and labels a chunk whole before its first line can be written
/// (an in-band draw is only known once labelled), so its chunks start at
/// two per worker and double with the lines written, up to 64 per worker:
/// the first lines and the progress come at once and a killed run keeps
/// them, as in an unbanded run (whose chunk is labelled while it is
/// written). The lines do not depend on the chunks (draws are per index,
/// admitted in index order).
fn chunk_size(banded: bool, done: u64) -> u64 {
    if !banded {
        return CHUNK;
    }
    let threads = rayon::current_num_threads().max(1) as u64;
    done.clamp(2 * threads, 64 * threads).min(CHUNK)
}

/// Longest time written lines may wait for an fsync.
const SYNC_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Appends lines `from..to` to `file`: `make` produces a chunk's
/// instances (line positions in, instances in line order out); their
/// lines are labelled in parallel and written in index order as soon as
/// each prefix of the chunk is complete, so a run killed at any moment
/// keeps every line finished before the kill that all earlier lines were
/// also finished for. Written lines are synced at least every
/// [`SYNC_EVERY`] and at the end; progress is reported per line.
/// Returns the seconds spent making and labelling/writing.
pub(super) fn append_chunks(
    job: &Job,
    reference: Option<&Reference>,
    file: &mut std::fs::File,
    path: &Path,
    from: u64,
    to: u64,
    mut make: impl FnMut(std::ops::Range<u64>) -> Result<Vec<Made>, OutputError>,
) -> Result<(f64, f64), OutputError> {
    let (mut synthesis_s, mut write_s) = (0.0, 0.0);
    let mut next = from;
    let mut synced = Instant::now();
    while next < to {
        let end = (next + chunk_size(job.band().is_some(), next - from)).min(to);
        let t = Instant::now();
        let instances = make(next..end)?;
        synthesis_s += t.elapsed().as_secs_f64();
        let t = Instant::now();
        write_in_order(job, reference, &instances, |k, line| {
            file.write_all(line).map_err(|e| OutputError::io(path, e))?;
            if synced.elapsed() >= SYNC_EVERY {
                file.sync_data().map_err(|e| OutputError::io(path, e))?;
                synced = Instant::now();
            }
            job.progress.position(next + k as u64 + 1);
            Ok(())
        })?;
        write_s += t.elapsed().as_secs_f64();
        next = end;
    }
    file.sync_all().map_err(|e| OutputError::io(path, e))?;
    Ok((synthesis_s, write_s))
}

/// Labels (unless a band already did) and renders `instances` on the
/// current rayon pool while a writer thread hands each line to `write`, in
/// order, as soon as it and all lines before it are done. The writer only
/// waits and writes; it takes no worker from the pool.
pub(super) fn write_in_order(
    job: &Job,
    reference: Option<&Reference>,
    instances: &[Made],
    write: impl FnMut(usize, &[u8]) -> Result<(), OutputError> + Send,
) -> Result<(), OutputError> {
    let (domain, labels) = (job.domain(), job.labels());
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Vec<u8>)>();
    let count = instances.len();
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || {
            let mut write = write;
            let mut pending: Vec<Option<Vec<u8>>> = vec![None; count];
            let mut done = 0;
            for (k, line) in rx {
                pending[k] = Some(line);
                while let Some(line) = pending.get_mut(done).and_then(Option::take) {
                    write(done, &line)?;
                    done += 1;
                }
            }
            Ok(())
        });
        // Each worker takes the next line not yet taken, so lines finish
        // about in index order and the writer streams them (a parallel
        // iterator splits the chunk in halves, and the second half's
        // lines waited for the whole first half: the written count, and
        // the progress and forecast read from it, ran at one worker's
        // rate until the first half was done).
        let next = AtomicUsize::new(0);
        rayon::scope(|workers| {
            for _ in 0..rayon::current_num_threads().min(count) {
                let (tx, next) = (tx.clone(), &next);
                workers.spawn(move |_| {
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(made) = instances.get(k) else {
                            break;
                        };
                        let mut line = made_line(domain, labels, reference, made);
                        line.push(b'\n');
                        // A closed receiver means writing failed; the
                        // writer's error is returned below.
                        if tx.send((k, line)).is_err() {
                            break;
                        }
                    }
                });
            }
        });
        drop(tx);
        writer.join().unwrap_or_else(|_| {
            Err(OutputError::Io {
                path: PathBuf::from("<writer>"),
                source: std::io::Error::other("the writer thread panicked"),
            })
        })
    })
}
