//! What the writers draw for one index of a sharded or resumed run: the
//! first draw of instance i's own stream that lies in the run's band (if
//! any) and that no `--exclude` set or other `--split` part takes. A shard
//! writes these draws (every shard can know them, whatever the other
//! shards hold); `merge` and a resumed shard replay them (DESIGN.md
//! "Outputs"); duplicates between indices are left to `merge`.

use std::sync::Arc;

use rayon::prelude::*;

use super::Plan;
use super::record::Labelled;
use crate::contamination::Exclusion;
use crate::search::Label;
use crate::synth::{Candidate, Dedup, SynthError, Synthesizer};

/// The draw of each of `indices`, with its label when a band needed one.
pub(super) fn first_draws(
    plan: &Plan,
    exclusion: Option<&Arc<Exclusion>>,
    indices: &[u64],
) -> Result<Vec<(Candidate, Option<Labelled>)>, SynthError> {
    indices
        .par_iter()
        .with_min_len(if plan.banded.is_some() { 1 } else { 16 })
        .map(|&i| {
            let (candidate, label) = first_draw(plan, exclusion, i)?;
            Ok((candidate, label.map(Ok)))
        })
        .collect()
}

/// The draw of `index`, with its label when a band needed one.
pub(super) fn first_draw(
    plan: &Plan,
    exclusion: Option<&Arc<Exclusion>>,
    index: u64,
) -> Result<(Candidate, Option<Label>), SynthError> {
    match plan.banded {
        Some(banded) => {
            let (mut candidate, mut label) = banded.first(index)?;
            if let Some(exclusion) = exclusion {
                let mut taken = Dedup::excluding(Some(Arc::clone(exclusion)));
                banded.admit(&mut candidate, &mut label, &mut taken)?;
            }
            Ok((candidate, Some(label)))
        }
        None => {
            let mut candidate = plan.synth.candidate(index)?;
            skip_excluded(plan.synth, &mut candidate, exclusion)?;
            Ok((candidate, None))
        }
    }
}

/// Redraws `candidate` from its own stream while an `--exclude` set or
/// another `--split` part takes it.
fn skip_excluded(
    synth: &Synthesizer,
    candidate: &mut Candidate,
    exclusion: Option<&Arc<Exclusion>>,
) -> Result<(), SynthError> {
    if let Some(exclusion) = exclusion {
        let mut taken = Dedup::excluding(Some(Arc::clone(exclusion)));
        synth.admit(candidate, &mut taken)?;
    }
    Ok(())
}
