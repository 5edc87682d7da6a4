//! The event queue's 4-ary min-heap ([`super::queue`]): every pending event while few are
//! pending, and the staged earliest ones while the radix heap holds the rest.

use super::queue::Entry;
use super::time::SimTime;

/// A 4-ary min-heap of entries by key: the tree is half as deep as a binary heap's and a
/// node's children share a cache line.
#[derive(Clone)]
pub(super) struct Heap<E> {
    pub(super) entries: Vec<Entry<E>>,
}

impl<E: Copy> Heap<E> {
    pub(super) fn new() -> Self {
        Self {
            entries: Vec::with_capacity(1024),
        }
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[inline]
    pub(super) fn peek_time(&self) -> Option<SimTime> {
        self.entries.first().map(Entry::time)
    }

    #[inline(always)]
    pub(super) fn push(&mut self, key: u128, event: E) {
        let mut i = self.entries.len();
        self.entries.push(Entry { key, event });
        // Sift up with a hole: move parents down until the new entry's place is found.
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.entries[parent].key <= key {
                break;
            }
            self.entries[i] = self.entries[parent];
            i = parent;
        }
        self.entries[i] = Entry { key, event };
    }

    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<Entry<E>> {
        // The last entry fills the hole left by the top: sift the hole down to where the last
        // entry's key belongs, then copy it there (copied once, memory to memory: holding it
        // in registers across the loop spills it, and reloading costs a stall).
        let n = self.entries.len().checked_sub(1)?;
        let top = self.entries[0];
        let last_key = self.entries[n].key;
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let end = (first + 4).min(n);
            let mut best = first;
            let mut best_key = self.entries[first].key;
            for c in first + 1..end {
                let k = self.entries[c].key;
                if k < best_key {
                    best = c;
                    best_key = k;
                }
            }
            if best_key >= last_key {
                break;
            }
            self.entries[i] = self.entries[best];
            i = best;
        }
        self.entries[i] = self.entries[n];
        self.entries.truncate(n);
        Some(top)
    }
}
