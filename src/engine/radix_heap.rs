//! A radix heap: the event queue's representation for large pending sets.
//!
//! A simulation's clock never runs backwards: every event is scheduled at or after the time of
//! the last event popped. A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) exploits that.
//! It keeps a base, the time of the last pop, and files each pending event by the highest
//! 6-bit digit in which its time differs from the base (its level) and by its own value of
//! that digit. Every time at a lower level is smaller than every time at a higher one, and
//! within a level the digit orders the buckets, so the earliest event is in the first non-empty
//! bucket, found with two trailing-zero counts over occupancy masks. Pushing is an xor, a
//! leading-zero count and an append. When the events at the base run out, the first bucket's
//! minimum becomes the new base and that bucket is scanned once, its events refiled at strictly
//! lower levels; the other buckets stay valid. An event therefore moves at most 11 times and
//! usually 1–4 (more as the pending set grows denser), by sequential scans that the cache and
//! prefetcher handle well, so the cost per event hardly grows with the number pending, where a
//! comparison heap's sift-down misses cache at every level once 1e5–1e6 events are pending.
//! Six-bit digits (64 buckets a level, one `u64` mask) move events a third as often as the
//! classic one-bit radix heap, whose events descend one or two bits per move.
//!
//! Equal times pop in key order (the key's low half is the insertion sequence): the events at
//! the base form a FIFO; events pushed at the base time while it drains have larger keys than
//! any pending event and join at its end, and the events refiled into it when the base moves
//! are sorted first.
//!
//! Buckets are chains of fixed blocks of [`BLOCK`] events in one arena, with a free list, so
//! moving events between buckets allocates nothing and the storage is the pending events plus
//! at most one part-filled block per non-empty bucket. When the arena holds more than four
//! times what that can reach for the number held (the pending set fell after a storm), it is
//! compacted. Blocks of 128 events (4 KiB) are long enough for the hardware prefetcher to
//! stream a bucket being refiled (with 32-event blocks, refiling stalled on cache misses).

use super::queue::Entry;
use super::time::SimTime;

/// Bits per digit: a level has `1 << DIGIT_BITS` buckets, one per value of its digit.
const DIGIT_BITS: u32 = 6;
/// Buckets per level (the width of a level's occupancy mask).
const DIGITS: usize = 1 << DIGIT_BITS;
/// Levels needed to cover 64-bit times.
const LEVELS: usize = (u64::BITS as usize).div_ceil(DIGIT_BITS as usize);
/// Events per block of the arena.
const BLOCK: usize = 128;
/// No block: the end of a chain or of the free list.
const NONE: u32 = u32::MAX;

/// A chain of blocks holding unordered events.
#[derive(Clone, Copy)]
struct Bucket {
    /// The smallest time held (`SimTime::MAX` when empty), so peeking and moving the base need
    /// no scan.
    min: SimTime,
    /// Events held: full blocks, then `count % BLOCK` in the last one.
    count: usize,
    first: u32,
    last: u32,
}

impl Bucket {
    const EMPTY: Bucket = Bucket {
        min: SimTime::MAX,
        count: 0,
        first: NONE,
        last: NONE,
    };
}

/// Events ordered by key, for times never earlier than the base (the last time popped).
#[derive(Clone)]
pub(super) struct RadixHeap<E> {
    /// The time of the last pop, or the base set by [`RadixHeap::set_base`].
    base: SimTime,
    /// Events at `base` in key order, read from `head`.
    now: Vec<Entry<E>>,
    /// Next entry of `now` to pop; the ones before it are gone.
    head: usize,
    /// Bucket `level * DIGITS + digit`: events whose time first differs from `base` in digit
    /// `level`, where it has value `digit`.
    buckets: Box<[Bucket]>,
    /// Bit `digit` of `occupied[level]` set when that bucket is not empty.
    occupied: [u64; LEVELS],
    /// Bit `level` set when `occupied[level]` is not zero.
    levels: u32,
    /// The arena: block `k` is `slots[k * BLOCK..(k + 1) * BLOCK]`.
    slots: Vec<Entry<E>>,
    /// The block after each block in its bucket's chain or in the free list.
    next: Vec<u32>,
    /// First free block.
    free: u32,
    len: usize,
}

impl<E: Copy> RadixHeap<E> {
    /// Bytes an empty heap holds (its buckets), used or not.
    pub(super) const FIXED_BYTES: usize = LEVELS * DIGITS * std::mem::size_of::<Bucket>();

    /// An empty heap with base 0.
    pub(super) fn new() -> Self {
        Self {
            base: 0,
            now: Vec::new(),
            head: 0,
            buckets: vec![Bucket::EMPTY; LEVELS * DIGITS].into_boxed_slice(),
            occupied: [0; LEVELS],
            levels: 0,
            slots: Vec::new(),
            next: Vec::new(),
            free: NONE,
            len: 0,
        }
    }

    /// Number of events held.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The earliest time that may be pushed.
    #[inline]
    pub(super) fn base(&self) -> SimTime {
        self.base
    }

    /// Time of the earliest event, if any.
    #[inline]
    pub(super) fn peek_time(&self) -> Option<SimTime> {
        if self.head < self.now.len() {
            Some(self.base)
        } else if self.levels != 0 {
            Some(self.buckets[self.first_bucket()].min)
        } else {
            None
        }
    }

    /// Adds `entry`, whose time must not be earlier than [`RadixHeap::base`].
    #[inline]
    pub(super) fn push(&mut self, entry: Entry<E>) {
        debug_assert!(entry.time() >= self.base, "pushed before the radix base");
        self.len += 1;
        self.file(entry, self.base);
    }

    /// Removes and returns the event with the smallest key.
    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<Entry<E>> {
        if self.head == self.now.len() {
            if self.levels == 0 {
                return None;
            }
            let b = self.first_bucket();
            let bucket = self.buckets[b];
            if bucket.count == 1 {
                // The first bucket holds only the earliest event: nothing to refile.
                let e = self.slots[bucket.first as usize * BLOCK];
                self.release(bucket.first);
                self.emptied(b);
                self.base = e.time();
                self.len -= 1;
                return Some(e);
            }
            self.advance(b);
        }
        let e = self.now[self.head];
        self.head += 1;
        if self.head == self.now.len() {
            self.now.clear();
            self.head = 0;
        }
        self.len -= 1;
        Some(e)
    }

    /// Sets the base of an empty heap: the earliest time that may be pushed.
    pub(super) fn set_base(&mut self, base: SimTime) {
        debug_assert!(self.len == 0, "rebasing a radix heap that holds events");
        self.base = base;
    }

    /// Empties the heap into `out`, in no particular order, and gives back its storage.
    pub(super) fn drain_into(&mut self, out: &mut Vec<Entry<E>>) {
        out.reserve(self.len);
        out.extend_from_slice(&self.now[self.head..]);
        for bucket in self.buckets.iter() {
            let (mut block, mut left) = (bucket.first, bucket.count);
            while left > 0 {
                let start = block as usize * BLOCK;
                out.extend_from_slice(&self.slots[start..start + left.min(BLOCK)]);
                left = left.saturating_sub(BLOCK);
                block = self.next[block as usize];
            }
        }
        *self = Self::new();
    }

    /// Storage held, in events (for tests of the memory bound).
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.slots.capacity() + self.now.capacity()
    }

    /// The first non-empty bucket (there must be one): it holds the earliest time not at `base`.
    #[inline(always)]
    fn first_bucket(&self) -> usize {
        let level = self.levels.trailing_zeros() as usize;
        level * DIGITS + self.occupied[level].trailing_zeros() as usize
    }

    /// Puts `entry` in its bucket against `base` (the current base, passed in so that a refiling
    /// loop keeps it in a register).
    #[inline(always)]
    fn file(&mut self, entry: Entry<E>, base: SimTime) {
        let time = entry.time();
        let diff = time ^ base;
        if diff == 0 {
            self.now.push(entry);
            return;
        }
        let level = (u64::BITS - 1 - diff.leading_zeros()) / DIGIT_BITS;
        let digit = (time >> (level * DIGIT_BITS)) as usize % DIGITS;
        self.occupied[level as usize] |= 1 << digit;
        self.levels |= 1 << level;
        let b = level as usize * DIGITS + digit;
        let Bucket { count, last, .. } = self.buckets[b];
        let at = count % BLOCK;
        let block = if at == 0 {
            let new = self.alloc(entry);
            if count == 0 {
                self.buckets[b].first = new;
            } else {
                self.next[last as usize] = new;
            }
            self.buckets[b].last = new;
            new
        } else {
            last
        };
        self.slots[block as usize * BLOCK + at] = entry;
        let bucket = &mut self.buckets[b];
        bucket.count = count + 1;
        bucket.min = bucket.min.min(time);
    }

    /// A block for a bucket: a free one, or a new one (filled with `filler` until used).
    #[inline(always)]
    fn alloc(&mut self, filler: Entry<E>) -> u32 {
        let block = self.free;
        if block == NONE {
            return self.grow(filler);
        }
        self.free = std::mem::replace(&mut self.next[block as usize], NONE);
        block
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, filler: Entry<E>) -> u32 {
        let block = u32::try_from(self.next.len())
            .ok()
            .filter(|&b| b != NONE)
            .expect("the radix heap holds fewer than 2^32 blocks");
        self.next.push(NONE);
        self.slots.resize(self.slots.len() + BLOCK, filler);
        block
    }

    /// Returns `block` to the free list.
    #[inline(always)]
    fn release(&mut self, block: u32) {
        self.next[block as usize] = self.free;
        self.free = block;
    }

    /// Marks bucket `b` empty (its blocks must be released).
    #[inline(always)]
    fn emptied(&mut self, b: usize) {
        let (level, digit) = (b / DIGITS, b % DIGITS);
        self.buckets[b] = Bucket::EMPTY;
        self.occupied[level] &= !(1 << digit);
        if self.occupied[level] == 0 {
            self.levels &= !(1 << level);
        }
    }

    /// No events are left at the base: moves the base to the smallest pending time and refiles
    /// bucket `b`, the first non-empty one, which holds it, at lower levels.
    #[inline(never)]
    fn advance(&mut self, b: usize) {
        debug_assert!(self.now.is_empty() && self.head == 0);
        let Bucket {
            min, count, first, ..
        } = self.buckets[b];
        self.base = min;
        self.emptied(b);
        let (mut block, mut left) = (first, count);
        while left > 0 {
            let start = block as usize * BLOCK;
            for i in start..start + left.min(BLOCK) {
                let e = self.slots[i];
                self.file(e, min);
            }
            left = left.saturating_sub(BLOCK);
            let after = self.next[block as usize];
            self.release(block);
            block = after;
        }
        // Refiled events came in bucket order; later pushes at the base have larger keys.
        if self.now.len() > 1 && !self.now.is_sorted_by_key(|e| e.key) {
            self.now.sort_unstable_by_key(|e| e.key);
        }
        // Needed: the full blocks plus at most one part-filled block per non-empty bucket (not
        // the buckets in use now: that count swings as the base moves, and compacting on it
        // would thrash).
        let held = (self.slots.capacity() + self.now.capacity()) / BLOCK;
        if held > 4 * (self.len / BLOCK + self.len.min(LEVELS * DIGITS) + 1) {
            self.compact();
        }
    }

    /// The arena is far larger than the events held: refiles them into fresh storage.
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        let base = self.base;
        let mut pending = Vec::new();
        self.drain_into(&mut pending);
        self.base = base;
        self.len = pending.len();
        // `now` comes out first and in order, and nothing else is at the base.
        for e in pending {
            self.file(e, base);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(time: SimTime, seq: u64) -> Entry<u64> {
        Entry {
            key: (time as u128) << 64 | seq as u128,
            event: seq,
        }
    }

    #[test]
    fn the_arena_is_compacted_after_a_storm() {
        let mut h = RadixHeap::new();
        for i in 0..1_000_000u64 {
            h.push(entry(1 + i * 7919 % 1_000_000_007, i));
        }
        let mut last = 0;
        while h.len() > 100 {
            let e = h.pop().unwrap();
            assert!(e.key > last);
            last = e.key;
        }
        // At most four times the blocks needed: ~100 events in as many buckets.
        assert!(h.capacity() <= 4 * 128 * BLOCK, "{}", h.capacity());
        let rest: Vec<_> = std::iter::from_fn(|| h.pop()).collect();
        assert_eq!(rest.len(), 100);
        assert!(rest.windows(2).all(|w| w[0].key < w[1].key) && rest[0].key > last);
    }

    #[test]
    fn drain_into_hands_back_every_event_and_resets() {
        let mut h = RadixHeap::new();
        for i in 0..1000u64 {
            h.push(entry(i % 7 * 1_000_000, i));
        }
        h.pop();
        let mut out = Vec::new();
        h.drain_into(&mut out);
        out.sort_unstable_by_key(|e| e.key);
        let mut want: Vec<_> = (0..1000u64).map(|i| entry(i % 7 * 1_000_000, i)).collect();
        want.sort_unstable_by_key(|e| e.key);
        let want_keys: Vec<_> = want[1..].iter().map(|e| e.key).collect();
        assert_eq!(out.iter().map(|e| e.key).collect::<Vec<_>>(), want_keys);
        assert_eq!((h.len(), h.base(), h.capacity()), (0, 0, 0));
        assert!(h.pop().is_none() && h.peek_time().is_none());
    }
}
