//! The pending-event set: a 4-ary min-heap ordered by (time, insertion sequence).
//!
//! Ties in time run first-in first-out, so a run is exactly reproducible. A 4-ary heap keeps
//! the tree shallow (half the levels of a binary heap) and its children on one cache line,
//! which matters in storm states where 1e5–1e6 timeouts are pending.

use super::time::SimTime;

#[derive(Clone, Copy)]
struct Entry<E> {
    /// `time << 64 | seq`: one comparison orders by time, then by insertion.
    key: u128,
    event: E,
}

/// A priority queue of events of type `E`, popped in (time, sequence) order.
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    seq: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self {
            heap: Vec::with_capacity(1024),
            seq: 0,
        }
    }

    /// Number of pending events.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when no event is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|e| (e.key >> 64) as SimTime)
    }

    /// Schedules `event` at `time`; among equal times, earlier calls pop first.
    #[inline]
    pub fn schedule(&mut self, time: SimTime, event: E) {
        let key = ((time as u128) << 64) | self.seq as u128;
        self.seq += 1;
        let mut i = self.heap.len();
        self.heap.push(Entry { key, event });
        // Sift up with a hole: move parents down until the new entry's place is found.
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.heap[parent].key <= key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = Entry { key, event };
    }

    /// Removes and returns the earliest event with its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(((last.key >> 64) as SimTime, last.event));
        }
        let top = self.heap[0];
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let end = (first + 4).min(n);
            let mut best = first;
            let mut best_key = self.heap[first].key;
            for c in first + 1..end {
                let k = self.heap[c].key;
                if k < best_key {
                    best = c;
                    best_key = k;
                }
            }
            if best_key >= last.key {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = last;
        Some(((top.key >> 64) as SimTime, top.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng as _, SeedableRng};

    #[test]
    fn equal_times_pop_first_in_first_out() {
        let mut q = EventQueue::new();
        for i in 0..100u32 {
            q.schedule(5, i);
        }
        q.schedule(1, 1000);
        assert_eq!(q.pop(), Some((1, 1000)));
        for i in 0..100u32 {
            assert_eq!(q.pop(), Some((5, i)));
        }
        assert!(q.pop().is_none());
    }

    #[test]
    fn pops_in_time_then_sequence_order_against_a_sort() {
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(3);
        let mut q = EventQueue::new();
        let mut reference = Vec::new();
        let mut seq = 0u32;
        let mut out = Vec::new();
        for round in 0..2000 {
            for _ in 0..(rng.next_u32() % 5) {
                let t = 1000 + (rng.next_u64() % 50);
                q.schedule(t, seq);
                reference.push((t, seq));
                seq += 1;
            }
            if round % 3 == 0
                && let Some(e) = q.pop()
            {
                {
                    out.push(e);
                    let pos = reference
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, e)| **e)
                        .unwrap()
                        .0;
                    assert_eq!(reference.remove(pos), e);
                }
            }
        }
        while let Some(e) = q.pop() {
            let pos = reference
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| **e)
                .unwrap()
                .0;
            assert_eq!(reference.remove(pos), e);
        }
        assert!(reference.is_empty());
    }
}
