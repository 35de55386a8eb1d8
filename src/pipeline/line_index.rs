//! The line index of a setting ([`crate::synth::index::LineIndex`]),
//! kept once per process and once per cache directory, so line `i` of a
//! dataset costs a constant number of draws wherever `i` is.
//!
//! In: a [`Synthesizer`] and the end of the lines asked for. Out: an
//! index covering at least that end. Lookup order: this process's map,
//! then the cache file (`crate::cache`, kind `lines`), else the index is
//! built (under the file's lock, so two processes build it once) and the
//! file replaced. An index grows to a power of two at least twice what it
//! covered (at least [`GRAIN`] lines), so a sequence of growing requests
//! draws each line a bounded number of times (at most about three).
//!
//! The identity of an index (its file name and first bytes) hashes the
//! generator version, the domain's name and file hash, every parameter
//! of the setting (`--seed` included) and the keys of the first draws of
//! streams `0..4`: a change to synthesis that changes any draw changes
//! the identity, even without a version bump.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::cache::{Entry, identity};
use crate::synth::index::LineIndex;
use crate::synth::{SynthError, Synthesizer};

/// The smallest index built: lines `0..GRAIN`.
pub const GRAIN: u64 = 1 << 10;

/// An index of `synth`'s setting covering lines `0..end`.
pub fn line_index(synth: &Synthesizer, end: u64) -> Result<Arc<LineIndex>, SynthError> {
    type Indexes = Mutex<HashMap<u64, Arc<LineIndex>>>;
    static INDEXES: OnceLock<Indexes> = OnceLock::new();
    let id = index_identity(synth)?;
    let indexes = INDEXES.get_or_init(Default::default);
    // Held while building: a second thread of this process waits for
    // the index rather than building it again.
    let mut held = indexes.lock().unwrap_or_else(|e| e.into_inner());
    let known = held.get(&id).cloned().unwrap_or_default();
    if known.covered() >= end {
        return Ok(known);
    }
    let entry = Entry::new("lines", &format!("{id:016x}.idx"));
    let read = |known: Arc<LineIndex>| -> Arc<LineIndex> {
        let stored = entry
            .as_ref()
            .and_then(Entry::read)
            .and_then(|bytes| LineIndex::from_bytes(&bytes, id));
        match stored {
            Some(stored) if stored.covered() > known.covered() => Arc::new(stored),
            _ => known,
        }
    };
    let mut index = read(known);
    if index.covered() < end {
        let build = |index: Arc<LineIndex>| -> Result<Arc<LineIndex>, SynthError> {
            // Another process may have grown the file meanwhile.
            let index = read(index);
            if index.covered() >= end {
                return Ok(index);
            }
            let ahead = end
                .max(2 * index.covered())
                .max(GRAIN)
                .checked_next_power_of_two()
                .unwrap_or(end);
            let built = Arc::new(LineIndex::build(synth, &index, end, ahead)?);
            if let Some(entry) = &entry {
                entry.write(&built.to_bytes(id));
            }
            Ok(built)
        };
        index = match &entry {
            Some(entry) => entry.locked(|| build(index))?,
            None => build(index)?,
        };
    }
    held.insert(id, index.clone());
    Ok(index)
}

/// The identity of `synth`'s line index (see the module doc), computed
/// once per process and setting.
fn index_identity(synth: &Synthesizer) -> Result<u64, SynthError> {
    static IDENTITIES: OnceLock<Mutex<HashMap<String, u64>>> = OnceLock::new();
    let domain = synth.domain();
    let p = synth.params();
    let setting = format!(
        "{}\0{}\0{} {} {} {} {} {}",
        domain.name,
        domain.source_hash,
        p.truths,
        p.actions,
        p.valid,
        p.seed,
        p.allow_shortcuts,
        p.decimals
    );
    let identities = IDENTITIES.get_or_init(Default::default);
    if let Some(&id) = identities
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&setting)
    {
        return Ok(id);
    }
    let draws = synth.fingerprint()?.to_le_bytes();
    let id = identity(&[
        b"kumo-gen/line-index/v1",
        env!("CARGO_PKG_VERSION").as_bytes(),
        setting.as_bytes(),
        &draws,
    ]);
    identities
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(setting, id);
    Ok(id)
}
