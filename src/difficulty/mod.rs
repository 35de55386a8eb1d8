//! Difficulty on request (DESIGN.md "Outputs" and "Instance synthesis"):
//! the percentile of an instance within its setting, bands that redraw an
//! index until its draw lands in them, and curricula of equal-count
//! percentile bands.
//!
//! - [`reference`]: the fixed, seeded reference sample of a setting and
//!   the percentile of expected steps in it.
//! - [`stored`]: reference samples shipped with the binary or read from
//!   the cross-process cache instead of computed.
//! - [`band`]: [`Band`] and [`Banded`], the synthesis of a setting
//!   restricted to a band (the rule the writers, shards, `merge` and the
//!   in-memory pipeline replay).
//! - [`curriculum`]: the bands of `kumo-gen curriculum`.

pub mod band;
pub mod curriculum;
pub mod reference;
pub mod stored;

pub use band::{Band, Banded, MAX_BAND_DRAWS};
pub use reference::{REFERENCE_SEED, REFERENCE_SIZE, Reference, ReferenceInfo};
