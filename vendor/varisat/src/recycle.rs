//! Per-thread recycling of the per-literal lists (kumo-gen's patch).
//!
//! A solver keeps one list of binary implications and one watchlist per
//! literal. A program that builds many small solvers one after another
//! allocates and frees those lists for every solver. Here a dropped
//! solver's lists go, emptied, to a bounded per-thread pool (at most
//! `POOL_LIMIT` lists of at most `MAX_KEPT_CAPACITY` elements), and a new
//! solver takes its lists from there. A list from the pool is empty like a
//! new one; only its capacity differs, so the solver behaves the same.
use std::cell::RefCell;

/// Most lists kept per pool and thread (two per variable: enough for
/// formulas of 2 048 variables).
const POOL_LIMIT: usize = 1 << 12;

/// Lists that grew beyond this many elements are freed, not kept, so a
/// pool holds at most `POOL_LIMIT * MAX_KEPT_CAPACITY` elements.
const MAX_KEPT_CAPACITY: usize = 64;

/// A per-thread pool of empty lists of one element type.
pub struct Pool<T: 'static> {
    free: &'static std::thread::LocalKey<RefCell<Vec<Vec<T>>>>,
}

impl<T> Pool<T> {
    pub const fn new(free: &'static std::thread::LocalKey<RefCell<Vec<Vec<T>>>>) -> Pool<T> {
        Pool { free }
    }

    /// Grows (or shrinks) `lists` to `len` lists; new ones are empty, taken
    /// from the pool first.
    pub fn grow(&self, lists: &mut Vec<Vec<T>>, len: usize) {
        if lists.len() >= len {
            lists.truncate(len);
            return;
        }
        lists.reserve(len - lists.len());
        // A thread being torn down has no pool left: new lists are made.
        let _ = self.free.try_with(|free| {
            let mut free = free.borrow_mut();
            while lists.len() < len {
                match free.pop() {
                    Some(list) => lists.push(list),
                    None => break,
                }
            }
        });
        lists.resize_with(len, Vec::new);
    }

    /// Empties `lists` and returns their lists to the pool.
    pub fn recycle(&self, lists: &mut Vec<Vec<T>>) {
        // A thread being torn down has no pool left: its lists are freed.
        let _ = self.free.try_with(|free| {
            let mut free = free.borrow_mut();
            for mut list in lists.drain(..) {
                if free.len() >= POOL_LIMIT {
                    break;
                }
                if list.capacity() <= MAX_KEPT_CAPACITY {
                    list.clear();
                    free.push(list);
                }
            }
        });
    }
}
