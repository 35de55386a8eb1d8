//! The words of the library's events: each [`Event`] a job reports (a
//! note, a warning, a summary) as the line the command line prints for
//! it on stderr (`cli::progress` does the printing; nothing here prints).
//! Tests and users read these lines: changing one is changing the
//! command's output.

use super::{DerivedWritten, Event, NoSft, Written, WrittenFile};

/// The line (or lines) `event` prints, without the final newline.
pub fn line(event: &Event<'_>) -> String {
    match event {
        Event::PartBegins { part, n, out } => {
            format!("part `{part}`: {n} instances into `{}`", out.display())
        }
        Event::LevelBegins {
            level,
            levels,
            min_percentile,
            max_percentile,
            n,
            out,
        } => format!(
            "level {level} of {levels}: percentile {min_percentile:.1} to {max_percentile:.1} of the setting's reference sample, {n} instances into `{}`",
            out.display()
        ),
        Event::Capacity { domain, estimate } => format!("{domain}: {estimate}"),
        Event::CapacityClose { message } => format!("warning: {message}"),
        Event::Written(written) => written_line(written),
        Event::WriteNote { note } => format!("note: {note}"),
        Event::BooksSkipped { instances, limit } => format!(
            "note: {instances} instances: no knowledge-book files above {limit} (every book is still checked; eval and play render them from the domain); `--books files` writes them"
        ),
        Event::StaleRemoved { what } => format!("note: removed stale {what}"),
        Event::DerivedUpToDate {
            domain,
            no_sft: None,
        } => format!("{domain}: books and SFT records are up to date (nothing rewritten)"),
        Event::DerivedUpToDate {
            domain,
            no_sft: Some(why),
        } => format!(
            "{domain}: books are up to date (nothing rewritten), {}",
            no_sft_words(*why)
        ),
        Event::Derived(derived) => derived_line(derived),
        Event::Labels {
            domain,
            exact,
            certified: 0,
            ..
        } => format!("{domain}: labels: {exact} exact, 0 certified"),
        Event::Labels {
            domain,
            exact,
            certified,
            mean_gap,
            max_gap,
        } => format!(
            "{domain}: labels: {exact} exact, {certified} certified (an interval: the search ran over budget); relative gap (upper - lower) / lower of the certified: mean {}, largest {}",
            percent(*mean_gap),
            percent(*max_gap)
        ),
        Event::Unlabelled { instances } => format!(
            "warning: {instances} instances are unlabelled (`\"optimal\": {{\"unlabelled\": ...}}`): their search exceeded `--search-budget` or `--search-nodes`\n  = help: re-run the same command with a larger `--search-nodes` (or `--search-budget`): those lines are labelled in place"
        ),
        Event::LabelWarning { message } => format!("warning: {message}"),
        Event::LabelsLeft { unlabelled, total } => format!(
            "warning: {unlabelled} of {total} instances left unlabelled (search budget exceeded)"
        ),
        Event::SecretSeedContinued { seed_file } => format!(
            "continuing the interrupted `--seed random` run whose seed is kept in `{}`",
            seed_file.display()
        ),
        Event::SecretSeedKept { seed_file, digest } => format!(
            "secret seed kept only in `{}` (owner-only): publish the dataset and its digest {digest}, keep that file private; `kumo-gen verify --seed-file {}` proves the dataset later",
            seed_file.display(),
            seed_file.display()
        ),
        Event::Retry {
            url,
            why,
            attempt,
            retries,
            delay,
        } => format!(
            "note: {url}: {why}; retry {attempt}/{retries} in {:.1} s",
            delay.as_secs_f64()
        ),
    }
}

/// A relative gap as a percentage a person reads: `2.31%`, `0.0042%`.
fn percent(gap: f64) -> String {
    let p = 100.0 * gap;
    if p == 0.0 || p >= 0.01 {
        format!("{p:.2}%")
    } else {
        format!("{p:.2e}%")
    }
}

/// The summary line of a written (`medical:`, `shard 0/4:`) or merged
/// dataset.
fn written_line(w: &Written<'_>) -> String {
    if w.up_to_date {
        return format!(
            "`{}` is up to date ({} instances); nothing to do",
            w.path.display(),
            w.instances
        );
    }
    let what = match w.file {
        WrittenFile::Dataset { domain } => format!("{domain}:"),
        WrittenFile::Shard { index, count } => format!("shard {index}/{count}:"),
        WrittenFile::Merged => "merged".to_string(),
    };
    let resumed = if w.resumed_from > 0 {
        format!(", resumed after {}", w.resumed_from)
    } else {
        String::new()
    };
    let out_of_band = if w.out_of_band == 0 {
        String::new()
    } else if w.band_straddling == 0 && w.band_unlabelled == 0 {
        format!(", {} draws outside the band redrawn", w.out_of_band)
    } else {
        // Why a draw was not in the band: outside it, a certified interval
        // across its edge, or no label at all (`--exact-only`).
        let outside = w
            .out_of_band
            .saturating_sub(w.band_straddling + w.band_unlabelled);
        let mut why = vec![format!("{outside} outside it")];
        if w.band_straddling > 0 {
            why.push(format!(
                "{} certified with an interval across its edge",
                w.band_straddling
            ));
        }
        if w.band_unlabelled > 0 {
            why.push(format!(
                "{} unlabelled (over the search budget)",
                w.band_unlabelled
            ));
        }
        format!(
            ", {} draws not in the band redrawn ({})",
            w.out_of_band,
            why.join(", ")
        )
    };
    format!(
        "{what} {} instances in {:.3} s ({:.0} instances/s{resumed}): {} resamples, {} UNSAT samples, {} duplicates rejected{out_of_band} -> {}",
        w.instances - w.resumed_from,
        w.seconds,
        w.rate,
        w.resamples,
        w.unsat,
        w.duplicates,
        w.path.display()
    )
}

/// The summary line of a dataset's derived files.
/// Why no SFT records were written, in words.
fn no_sft_words(why: NoSft) -> &'static str {
    match why {
        NoSft::Flag => "no SFT records (`--no-sft`)",
        NoSft::PartLeftOut => "no SFT records (`--sft-parts` leaves this part out)",
    }
}

fn derived_line(d: &DerivedWritten<'_>) -> String {
    let sft = match d.no_sft {
        None => format!("{} SFT records ({} steps)", d.sft_records, d.sft_steps),
        Some(why) => no_sft_words(why).to_string(),
    };
    format!(
        "{}: {} knowledge books (all checked{}), {sft}{} in {:.3} s",
        d.domain,
        d.books,
        if d.books_written { "" } else { "; not written" },
        if d.unlabelled > 0 {
            format!(", {} unlabelled lines without SFT", d.unlabelled)
        } else {
            String::new()
        },
        d.seconds
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn written(file: WrittenFile<'_>, resumed_from: u64) -> String {
        written_line(&Written {
            file,
            path: Path::new("out/medical/x.jsonl"),
            instances: 10,
            resumed_from,
            up_to_date: false,
            seconds: 0.5,
            rate: 20.0,
            resamples: 3,
            unsat: 1,
            duplicates: 2,
            out_of_band: 0,
            band_straddling: 0,
            band_unlabelled: 0,
        })
    }

    #[test]
    fn summary_lines_name_the_file_they_are() {
        assert_eq!(
            written(WrittenFile::Dataset { domain: "medical" }, 0),
            "medical: 10 instances in 0.500 s (20 instances/s): 3 resamples, 1 UNSAT samples, 2 duplicates rejected -> out/medical/x.jsonl"
        );
        assert!(
            written(WrittenFile::Shard { index: 1, count: 4 }, 4)
                .starts_with("shard 1/4: 6 instances")
        );
        assert!(written(WrittenFile::Merged, 0).starts_with("merged 10 instances"));
    }

    #[test]
    fn band_rejections_say_why() {
        let line = |out_of_band, band_straddling, band_unlabelled| {
            written_line(&Written {
                file: WrittenFile::Dataset { domain: "music" },
                path: Path::new("x.jsonl"),
                instances: 3,
                resumed_from: 0,
                up_to_date: false,
                seconds: 1.0,
                rate: 3.0,
                resamples: 0,
                unsat: 0,
                duplicates: 0,
                out_of_band,
                band_straddling,
                band_unlabelled,
            })
        };
        assert!(line(4, 0, 0).contains(", 4 draws outside the band redrawn ->"));
        assert!(line(5, 2, 1).contains(
            ", 5 draws not in the band redrawn (2 outside it, 2 certified with an interval across its edge, 1 unlabelled (over the search budget)) ->"
        ));
    }
}
