//! The tables of the reuse bound ([`super::reuse`]): the computed
//! `R(T, U, c)` of one relaxed game, keyed by the packed `(T, U, c)`, and
//! the buffers a thread keeps for them between instances.
//!
//! Two kinds. A game whose key space is small (at most [`DENSE_BITS`]
//! truth and tracked-action bits: the single-count game of 12 truths,
//! `11 << 12` entries, 360 KB) has a dense array; every entry is at least
//! `1.0`, so `0.0` marks one not computed. A larger one (the tracked game:
//! 12 truths, 6 tracked actions and a count, 22 key bits) has a hash table
//! of its own: 16-byte slots (the key and the value; the search memo's
//! 24-byte slots carried a second bound the reuse bound never used), one
//! multiplication as the hash, linear probing, a power-of-two capacity at
//! most half full. The zero key marks a free slot: no entry packs to it
//! (an entry's truth set has two truths or more, the lower ones are base
//! cases). The table is never iterated, so its layout cannot reach any
//! value, and a value read is the one stored under that key, so the
//! tables change no `R` and no node count.
//!
//! **Kept buffers.** An instance's tables are taken from the thread's
//! memos ([`ReuseTables`], in `Memos`) when its search builds the bound and
//! given back when the solver holding the bound is dropped, so the next
//! instance reuses their memory instead of allocating and zeroing 360 KB
//! (and the hash table's growth) again. Nothing of one instance can be
//! read by the next: a buffer is handed back only through
//! [`ReuseTables::keep`], which first resets every entry it wrote (each
//! write records its index; a table with many writes is reset whole), so
//! every buffer held in the memos is all zero (all free) at all times,
//! which is the state of a freshly allocated one; and a buffer is owned by
//! one bound at a time (it is moved, never shared). A bound handed to the
//! next solver of the same game (`Carry`) keeps its tables: they are a
//! function of the problem and the tracked actions alone. A bound dropped
//! without being given back (a `Carry` dropped with its `Values`) frees
//! its buffers; the next instance then allocates fresh (zeroed) ones.
//!
//! Measured against the search memo's table and a fresh dense table per
//! instance (main 4f8abe5; the same outputs): instructions (cachegrind,
//! whole process, one thread) car-identification 12x16 `-n 40` 7.608 G
//! -> 7.509 G with this hash table alone -> 7.209 G with the kept buffers
//! too (-5.3 %; D1 misses 23.3 M -> 21.1 M, `Relaxed::fill` 1 004 M ->
//! 946 M, memset 113 M -> 70 M), os-kernel `-n 100` 4.707 G -> 4.504 G
//! (-4.3 %), rules3 `-n 300` 6.719 G -> 6.523 G (-2.9 %).

/// Most key bits (truths and tracked actions) of a dense table.
pub(super) const DENSE_BITS: u32 = 14;

/// Bits of a fresh hash table's capacity.
const HASHED_BITS: u32 = 12;

/// A table reset by its writes' indices when it has at most one write
/// per this many entries, else by filling it whole.
const SPARSE: usize = 8;

/// The computed entries of one relaxed game.
pub(super) enum Table {
    Dense(Dense),
    Hashed(Hashed),
}

impl Table {
    /// A table for keys of `key_bits` truth and tracked-action bits (the
    /// count above them), on a buffer taken from `kept` where it has one.
    pub(super) fn new(key_bits: u32, levels: u32, kept: &mut ReuseTables) -> Self {
        if key_bits <= DENSE_BITS {
            let mut dense = kept.dense.take().unwrap_or_default();
            // All zero before and after: the buffer is all zero.
            dense.cells.resize(((levels as usize) + 1) << key_bits, 0.0);
            Table::Dense(dense)
        } else {
            Table::Hashed(kept.hashed.take().unwrap_or_else(Hashed::new))
        }
    }

    /// A table of no entries and no buffer, a placeholder.
    pub(super) fn empty() -> Self {
        Table::Dense(Dense::default())
    }

    #[inline]
    pub(super) fn get(&self, key: u64) -> Option<f64> {
        match self {
            Table::Dense(dense) => Some(dense.cells[key as usize]).filter(|&v| v != 0.0),
            Table::Hashed(hashed) => hashed.get(key),
        }
    }

    #[inline]
    pub(super) fn put(&mut self, key: u64, value: f64) {
        debug_assert!(value >= 1.0);
        match self {
            Table::Dense(dense) => {
                let cell = &mut dense.cells[key as usize];
                if *cell == 0.0 {
                    dense.written.push(key as u32);
                }
                *cell = value;
            }
            Table::Hashed(hashed) => hashed.put(key, value),
        }
    }
}

/// A dense table: the value of key `k` at `cells[k]`, `0.0` if none.
#[derive(Default)]
pub(super) struct Dense {
    cells: Vec<f64>,
    /// The indices of the cells written.
    written: Vec<u32>,
}

impl Dense {
    /// Every cell back to `0.0`.
    fn reset(&mut self) {
        if self.written.len() * SPARSE <= self.cells.len() {
            for &i in &self.written {
                self.cells[i as usize] = 0.0;
            }
        } else {
            self.cells.fill(0.0);
        }
        self.written.clear();
    }
}

#[derive(Clone, Copy)]
struct Slot {
    /// `0` marks a free slot.
    key: u64,
    value: f64,
}

const FREE: Slot = Slot { key: 0, value: 0.0 };

/// A hash table from a nonzero key to a value.
pub(super) struct Hashed {
    slots: Vec<Slot>,
    len: usize,
    /// `64 -` the capacity's bits.
    shift: u32,
    /// The indices of the slots written.
    written: Vec<u32>,
}

impl Hashed {
    fn new() -> Self {
        Hashed {
            slots: vec![FREE; 1 << HASHED_BITS],
            len: 0,
            shift: 64 - HASHED_BITS,
            written: Vec::new(),
        }
    }

    /// Fibonacci hashing: the key's bits are the packed sets and count,
    /// and the product's top bits depend on all of them.
    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    #[inline]
    fn get(&self, key: u64) -> Option<f64> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let slot = self.slots[i];
            if slot.key == key {
                return Some(slot.value);
            }
            if slot.key == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    fn put(&mut self, key: u64, value: f64) {
        debug_assert!(key != 0);
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let slot = &mut self.slots[i];
            if slot.key == 0 {
                *slot = Slot { key, value };
                self.len += 1;
                self.written.push(i as u32);
                return;
            }
            if slot.key == key {
                slot.value = value;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let bits = 64 - self.shift + 1;
        let old = std::mem::replace(&mut self.slots, vec![FREE; 1 << bits]);
        self.shift = 64 - bits;
        self.written.clear();
        let mask = self.slots.len() - 1;
        for slot in old.into_iter().filter(|s| s.key != 0) {
            let mut i = self.home(slot.key);
            while self.slots[i].key != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
            self.written.push(i as u32);
        }
    }

    /// Every slot back to free.
    fn reset(&mut self) {
        if self.written.len() * SPARSE <= self.slots.len() {
            for &i in &self.written {
                self.slots[i as usize] = FREE;
            }
        } else {
            self.slots.fill(FREE);
        }
        self.written.clear();
        self.len = 0;
    }
}

/// The reuse bound's buffers a thread keeps between instances (in its
/// memos), every one all zero (see the module doc).
#[derive(Default)]
pub struct ReuseTables {
    dense: Option<Dense>,
    hashed: Option<Hashed>,
}

impl ReuseTables {
    /// Takes back the (all zero) buffers of `other`; of two buffers of
    /// one kind the larger is kept.
    pub(super) fn keep_all(&mut self, other: ReuseTables) {
        if let Some(dense) = other.dense {
            self.keep(Table::Dense(dense));
        }
        if let Some(hashed) = other.hashed {
            self.keep(Table::Hashed(hashed));
        }
    }

    /// Takes back `table`'s buffer, reset; of two buffers of one kind the
    /// larger is kept.
    pub(super) fn keep(&mut self, table: Table) {
        match table {
            Table::Dense(mut dense) => {
                dense.reset();
                let larger = self.dense.as_ref().map_or(0, |d| d.cells.len()) < dense.cells.len();
                if larger {
                    self.dense = Some(dense);
                }
            }
            Table::Hashed(mut hashed) => {
                hashed.reset();
                let larger = self.hashed.as_ref().map_or(0, |h| h.slots.len()) < hashed.slots.len();
                if larger {
                    self.hashed = Some(hashed);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both kinds store and return values; a buffer given back and taken
    /// again holds nothing of the earlier table, whichever way it was
    /// reset (few writes, or many with the hash table grown).
    #[test]
    fn kept_buffers_come_back_empty() {
        let mut kept = ReuseTables::default();
        for writes in [50u64, 5_000, 20_000, 3] {
            for bits in [DENSE_BITS, 22] {
                let mut table = Table::new(bits, 10, &mut kept);
                let keys: Vec<u64> = (1..=writes).map(|k| k * 7 % (11 << DENSE_BITS)).collect();
                for &key in &keys {
                    assert_eq!(table.get(key), None, "{key} read before written");
                }
                for &key in &keys {
                    table.put(key, 1.0 + key as f64);
                }
                for &key in &keys {
                    assert_eq!(table.get(key), Some(1.0 + key as f64));
                }
                kept.keep(table);
            }
        }
        let dense = kept.dense.as_ref().map(|d| &d.cells);
        assert!(dense.is_some_and(|cells| cells.iter().all(|&v| v == 0.0)));
        let hashed = kept.hashed.as_ref().map(|h| &h.slots);
        assert!(
            hashed.is_some_and(|slots| slots.len() > 20_000 && slots.iter().all(|s| s.key == 0))
        );
    }
}
