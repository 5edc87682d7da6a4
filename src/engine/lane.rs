//! A lane of timers beside the event queue's heap ([`super::queue`]): a FIFO run of
//! entries in non-decreasing key order, so its front is its earliest.

use super::queue::Entry;

/// Timers in key order, popped from the front: a vector read from `head`, compacted when
/// the part read is at least half of it (so it holds at most twice the timers pending).
#[derive(Clone)]
pub(super) struct Lane<E> {
    entries: Vec<Entry<E>>,
    head: usize,
}

impl<E: Copy> Lane<E> {
    pub(super) fn new() -> Self {
        Self {
            entries: Vec::new(),
            head: 0,
        }
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.entries.len() - self.head
    }

    #[inline]
    pub(super) fn front(&self) -> Option<&Entry<E>> {
        self.entries.get(self.head)
    }

    #[inline]
    pub(super) fn back(&self) -> Option<&Entry<E>> {
        self.entries.last().filter(|_| self.len() > 0)
    }

    #[inline]
    pub(super) fn push(&mut self, e: Entry<E>) {
        self.entries.push(e);
    }

    /// The front entry (the lane must not be empty).
    #[inline]
    pub(super) fn pop_front(&mut self) -> Entry<E> {
        let e = self.entries[self.head];
        self.head += 1;
        if self.head == self.entries.len() {
            self.entries.clear();
            self.head = 0;
        } else if self.head >= 1024 && 2 * self.head >= self.entries.len() {
            self.entries.drain(..self.head);
            self.head = 0;
        }
        if self.entries.capacity() > 4096 && self.entries.capacity() > 4 * self.entries.len() {
            // After a storm of timers, give most of their memory back.
            self.entries.shrink_to(2 * self.entries.len());
        }
        e
    }
}
