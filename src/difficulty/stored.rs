//! Reference samples that are not computed: shipped with the binary for
//! the shipped domains' common settings, or read from the cross-process
//! cache ([`crate::cache`], kind `references`) where an earlier process
//! stored one. Labelling a setting's 256-draw sample costs from 0.1 s to
//! 10 s; reading one costs microseconds, so a one-line job pays no fixed
//! tax (DESIGN.md "Outputs", `difficulty.percentile`).
//!
//! One text line per sample, the same in the shipped table
//! (`domains/reference-samples.tsv`, made by `cargo run --release
//! --example reference_samples`) and in a cache file, tab-separated:
//! domain name, domain file hash, truths, actions, valid, shortcuts
//! allowed (0/1), decimals, the fingerprint of the sample's first draws
//! (hex), then each stream's label in stream order, space-separated:
//! `BITS:G` (the expected steps' `f64` bits in hex, the golden length) or
//! `-` (over the default budget).
//!
//! A stored line is used only when every field matches the domain as
//! loaded and the setting, and the fingerprint matches the first draws of
//! the sample's streams as this build draws them: a changed domain file
//! or a change to synthesis falls back to computing. The labels are the
//! search's exact values, which do not change with the build; a test
//! recomputes shipped samples and compares them bit for bit.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use super::reference::{REFERENCE_SIZE, Reference, reference_params};
use crate::cache::{Entry, identity};
use crate::domain::Domain;
use crate::synth::{Params, SynthError, Synthesizer};

/// The shipped table.
const SHIPPED: &str = include_str!("../../domains/reference-samples.tsv");

/// The settings `(truths, actions)` the shipped table covers for every
/// shipped domain large enough (valid 1, default decimals, the shortcut
/// guard on): KUMO's easy and hard settings.
pub const SHIPPED_SETTINGS: [(usize, usize); 2] = [(4, 6), (12, 16)];

impl Reference {
    /// [`Reference::sample`], computed once per process for each domain
    /// (by its file hash) and setting, and once per cache directory: a
    /// sample shipped with the binary for the shipped domains' common
    /// settings, else the cache file ([`crate::cache`]), else computed
    /// (one thread of the process computes it; the others wait) and
    /// stored there (this module).
    pub fn cached(domain: &Domain, params: &Params) -> Result<Arc<Reference>, SynthError> {
        type Cache = Mutex<HashMap<String, Arc<Slot>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let key = format!(
            "{}\0{}\0{}\0{}\0{}\0{}\0{}",
            domain.name,
            domain.source_hash,
            params.truths,
            params.actions,
            params.valid,
            params.allow_shortcuts,
            params.decimals
        );
        let slot = {
            let mut cache = CACHE
                .get_or_init(Default::default)
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            cache.entry(key).or_default().clone()
        };
        slot.get_or_compute(|| load_or_compute(domain, params).map(|r| r.labelled_under(params)))
    }
}

/// One setting's sample in the process: computed by the first thread
/// that asks; a second thread waits for it, and a thread that asks again
/// while it computes (a nested rayon job) computes its own rather than
/// wait for itself.
#[derive(Default)]
struct Slot {
    state: Mutex<SlotState>,
    ready: Condvar,
}

#[derive(Default)]
struct SlotState {
    value: Option<Arc<Reference>>,
    computing: Option<std::thread::ThreadId>,
}

impl Slot {
    fn get_or_compute(
        &self,
        compute: impl FnOnce() -> Result<Reference, SynthError>,
    ) -> Result<Arc<Reference>, SynthError> {
        let me = std::thread::current().id();
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(value) = &state.value {
                return Ok(value.clone());
            }
            match state.computing {
                None => break,
                Some(other) if other == me => {
                    drop(state);
                    return compute().map(Arc::new);
                }
                Some(_) => state = self.ready.wait(state).unwrap_or_else(|e| e.into_inner()),
            }
        }
        state.computing = Some(me);
        drop(state);
        let computed = compute().map(Arc::new);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.computing = None;
        if let Ok(value) = &computed {
            state.value = Some(value.clone());
        }
        self.ready.notify_all();
        computed
    }
}

/// The reference sample of `params`'s setting: shipped, cached or
/// computed (and then cached).
pub fn load_or_compute(domain: &Domain, params: &Params) -> Result<Reference, SynthError> {
    let synth = Synthesizer::new(domain, reference_params(params))?;
    let head = head(domain, params, synth.fingerprint()?);
    if let Some(found) = shipped(&head) {
        return Ok(found);
    }
    let id = identity(&[
        b"kumo-gen/reference-sample/v2",
        env!("CARGO_PKG_VERSION").as_bytes(),
        head.as_bytes(),
    ]);
    let Some(entry) = Entry::new("references", &format!("{id:016x}.tsv")) else {
        return Reference::sample(domain, params);
    };
    let read = || {
        let bytes = entry.read()?;
        parse(std::str::from_utf8(&bytes).ok()?.trim_end(), &head)
    };
    if let Some(found) = read() {
        return Ok(found);
    }
    entry.locked(|| {
        if let Some(found) = read() {
            return Ok(found);
        }
        let reference = Reference::sample(domain, params)?;
        entry.write(format!("{}\n", line(&head, &reference)).as_bytes());
        Ok(reference)
    })
}

/// The fields of a stored line before the labels.
pub fn head(domain: &Domain, params: &Params, fingerprint: u64) -> String {
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{fingerprint:016x}",
        domain.name,
        domain.source_hash,
        params.truths,
        params.actions,
        params.valid,
        u8::from(params.allow_shortcuts),
        params.decimals
    )
}

/// The stored line of `reference` under `head`.
pub fn line(head: &str, reference: &Reference) -> String {
    let labels: Vec<String> = reference
        .streams
        .iter()
        .map(|label| match label {
            Some((expected, golden)) => format!("{:016x}:{golden}", expected.to_bits()),
            None => "-".to_string(),
        })
        .collect();
    format!("{head}\t{}", labels.join(" "))
}

/// The sample of a stored `line` whose fields are `head`, or `None`.
fn parse(line: &str, head: &str) -> Option<Reference> {
    let labels = line.strip_prefix(head)?.strip_prefix('\t')?;
    let streams: Vec<Option<(f64, usize)>> = labels
        .split(' ')
        .map(|label| match label {
            "-" => Some(None),
            _ => {
                let (bits, golden) = label.split_once(':')?;
                let expected = f64::from_bits(u64::from_str_radix(bits, 16).ok()?);
                Some(Some((expected, golden.parse().ok()?)))
            }
        })
        .collect::<Option<_>>()?;
    (streams.len() as u64 == REFERENCE_SIZE).then(|| Reference::from_streams(streams))
}

/// The shipped sample whose fields are `head`.
fn shipped(head: &str) -> Option<Reference> {
    static TABLE: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        SHIPPED
            .lines()
            .filter_map(|line| Some((line.rsplit_once('\t')?.0, line)))
            .collect()
    });
    parse(table.get(head)?, head)
}

/// The heads of every shipped line (tests, the example that writes the
/// table).
pub fn shipped_heads() -> Vec<&'static str> {
    SHIPPED
        .lines()
        .filter_map(|line| Some(line.rsplit_once('\t')?.0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thread_computes_a_slot_and_the_others_wait_for_it() {
        let slot = Slot::default();
        let computed = std::sync::atomic::AtomicUsize::new(0);
        let values: Vec<Arc<Reference>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..6)
                .map(|_| {
                    scope.spawn(|| {
                        slot.get_or_compute(|| {
                            computed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(50));
                            Ok(Reference::from_streams(vec![Some((1.5, 2)), None]))
                        })
                        .unwrap()
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert_eq!(computed.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(values.iter().all(|v| Arc::ptr_eq(v, &values[0])));
        assert_eq!(values[0].unlabelled, 1);
    }

    /// Every shipped domain and shipped setting it can synthesize, with
    /// the head of its stored line as this build computes it.
    fn shipped_settings() -> Vec<(Domain, Params, String)> {
        let registry = crate::domain::Registry::new(None);
        let mut settings = Vec::new();
        for (name, _) in registry.all().unwrap() {
            let domain = registry.load(&name).unwrap().0;
            for (truths, actions) in SHIPPED_SETTINGS {
                let params = Params::new(truths, actions, 1);
                let Ok(synth) = Synthesizer::new(&domain, reference_params(&params)) else {
                    continue;
                };
                let Ok(fingerprint) = synth.fingerprint() else {
                    continue;
                };
                let head = head(&domain, &params, fingerprint);
                settings.push((domain.clone(), params, head));
            }
        }
        settings
    }

    /// The shipped table is current: one line for every shipped domain
    /// and setting, each for the domain file and the draws as they are
    /// now (after changing a domain or synthesis, run the example in the
    /// module doc).
    #[test]
    fn the_shipped_table_is_current_and_complete() {
        let settings = shipped_settings();
        let mut heads = shipped_heads();
        heads.sort_unstable();
        let mut expected: Vec<&str> = settings.iter().map(|(_, _, h)| h.as_str()).collect();
        expected.sort_unstable();
        assert_eq!(
            heads, expected,
            "run `cargo run --release --example reference_samples > domains/reference-samples.tsv`"
        );
        assert!(settings.len() > 100);
        for (_, _, head) in &settings {
            assert!(shipped(head).is_some(), "{head}");
        }
    }

    /// Shipped samples equal the samples computed now, bit for bit: the
    /// easy setting of every tenth domain and the hard setting of two.
    #[test]
    fn shipped_samples_equal_computed_ones() {
        let settings = shipped_settings();
        let mut checked = 0;
        for (i, (domain, params, head)) in settings.iter().enumerate() {
            let cheap_hard = ["medical", "beverage"].contains(&domain.name.as_str());
            if !(params.truths == 4 && i % 10 == 0 || params.truths == 12 && cheap_hard) {
                continue;
            }
            let computed = Reference::sample(domain, params).unwrap();
            assert_eq!(shipped(head).unwrap(), computed, "{head}");
            checked += 1;
        }
        assert!(checked >= 10, "{checked} checked");
    }

    #[test]
    fn a_line_round_trips_and_needs_its_own_head() {
        let mut streams: Vec<Option<(f64, usize)>> = (0..255)
            .map(|i| Some((1.0 + f64::from(i) / 7.0, i as usize % 5)))
            .collect();
        streams.push(None);
        let reference = Reference::from_streams(streams);
        let text = line("medical\tabc\t4\t6\t1\t0\t2\t00000000000000ff", &reference);
        let back = parse(&text, "medical\tabc\t4\t6\t1\t0\t2\t00000000000000ff").unwrap();
        assert_eq!(back, reference);
        assert_eq!(
            parse(&text, "medical\tabd\t4\t6\t1\t0\t2\t00000000000000ff"),
            None
        );
        assert_eq!(parse(&text[..text.len() - 2], "medical\tabc"), None);
    }
}
