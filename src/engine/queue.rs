//! The pending-event set, popped in (time, insertion sequence) order.
//!
//! Ties in time run first-in first-out, so a run is exactly reproducible.
//!
//! Two representations behind one interface, chosen by the number pending:
//!
//! - up to 256 events, a 4-ary min-heap: with a handful pending (an M/M/1 run has three)
//!   nothing is cheaper, and a node's children share a cache line;
//! - beyond that, a radix heap (`engine/radix_heap.rs`), whose cost per event hardly grows with
//!   the number pending, where the heap's sift-down misses cache at every level once 1e5–1e6
//!   events are pending. In a hold loop here (pop, then schedule at now + Exp(1 s), drawing
//!   the delay included) the heap took 35 ns per event with 1e2 pending and 200–400 ns with
//!   1e6; this queue takes 34 and 48 ns. The radix heap relies on the clock never running
//!   backwards: events are pushed no earlier than the last time popped.
//!
//! The queue goes back to the 4-ary heap below 64 events (the gap between the two thresholds
//! keeps it from switching back and forth) and frees the radix heap's storage. Both orders are
//! exact on the key `time << 64 | seq`, so the representation never changes a run.
//!
//! Timers (`schedule_timer`: a timeout, which usually goes stale before it is due; a
//! retry's backoff; a hedge's delay) go to a few lanes instead: FIFO runs of non-decreasing
//! keys. A timer armed a constant delay after the clock is later than the one armed before
//! it, so one lane holds all of a delay's timers in order, and they are never sifted or
//! refiled; a pop takes the smallest of the heap's top and the lanes' heads. In a service
//! with a 1 s client timeout at 1,500 requests/s, the 1,500 pending timeouts would otherwise
//! keep the radix heap in use and be refiled at every base move; in web-api's retry storm
//! the sleepers of its two backoff delays held 400-600 events in the heap. A timer that fits
//! no lane (earlier than every lane's last: a jittered backoff, say) goes to the heap. The
//! keys come from the one sequence, so the order is exact either way.
//!
//! With the radix heap in use, it hands over its earliest events eight at a time (which
//! moves its base to the last one's time) into a short run, and `pop` or `peek` moves the
//! run's earliest to the 4-ary heap when it is earlier than everything there. The 4-ary heap
//! holds that staged event, events scheduled before the radix heap's base meanwhile, and any
//! scheduled before the last pop (the model never does that). The heap and the run pop
//! first, as everything there comes before everything in the radix heap, so the order stays
//! exact. Handing over a batch lets the model start loading the records of all of its events
//! at once ([`EventQueue::staged`]): with 1e6 jobs pending, each event's job and request are
//! far apart in memory, and fetching them several events ahead, so that the misses overlap,
//! made M/M/c with 1e6 workers 45% faster.

use super::heap::Heap;
use super::lane::Lane;
use super::radix_heap::RadixHeap;
use super::time::SimTime;

/// With more events pending than this, the queue moves to the radix heap.
const GROW_ABOVE: usize = 256;
/// With fewer events pending than this, the queue moves back to the 4-ary heap.
const SHRINK_BELOW: usize = 64;
/// Lanes of timers at most (a timer that fits none goes to the heap).
const LANES: usize = 4;
/// Events the radix heap hands to the 4-ary heap at a time. A caller that fetches ahead
/// ([`EventQueue::staged`]) then starts loading what these will read several events before
/// they pop, so the loads overlap one another instead of each following the last.
const STAGE: usize = 8;

/// A pending event with its key.
#[derive(Clone, Copy)]
pub(super) struct Entry<E> {
    /// `time << 64 | seq`: one comparison orders by time, then by insertion.
    pub(super) key: u128,
    pub(super) event: E,
}

impl<E> Entry<E> {
    #[inline(always)]
    pub(super) fn time(&self) -> SimTime {
        (self.key >> 64) as SimTime
    }
}

/// A priority queue of events of type `E`, popped in (time, sequence) order.
#[derive(Clone)]
pub struct EventQueue<E> {
    /// All pending events while few are pending; with the radix heap in use, the events
    /// earlier than its base (the staged earliest one and any scheduled before it).
    heap: Heap<E>,
    /// The pending events (but those in `heap`) while many are pending.
    radix: RadixHeap<E>,
    /// The radix heap is in use.
    large: bool,
    /// `large` or timers pending: a pop takes the out-of-line path.
    slow: bool,
    /// With the radix heap in use, its earliest few events, taken from it in one go, in
    /// reverse key order (the earliest last): they move to the 4-ary heap one at a time.
    run: Vec<Entry<E>>,
    /// The run was just refilled and not yet shown by `staged`.
    fresh: bool,
    /// The caller fetches ahead ([`EventQueue::look_ahead`]): the radix heap hands over
    /// batches; otherwise one event at a time, which costs less.
    ahead: bool,
    /// `ahead`, or a run still to hand over: `stage_next` goes through the run.
    batching: bool,
    /// Timers, each lane in key order (its front is its earliest).
    lanes: Vec<Lane<E>>,
    /// Timers pending in the lanes.
    in_lanes: usize,
    /// The earliest lane front's key (`u128::MAX` with none pending) and its lane.
    next_timer: u128,
    next_lane: usize,
    seq: u64,
    grow_above: usize,
    shrink_below: usize,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::with_thresholds(GROW_ABOVE, SHRINK_BELOW)
    }

    /// An empty queue that moves to the radix heap above `grow_above` pending events and back
    /// below `shrink_below` (tests force either representation with these).
    fn with_thresholds(grow_above: usize, shrink_below: usize) -> Self {
        Self {
            heap: Heap::new(),
            radix: RadixHeap::new(),
            large: false,
            slow: false,
            run: Vec::new(),
            fresh: false,
            ahead: false,
            batching: false,
            lanes: Vec::new(),
            in_lanes: 0,
            next_timer: u128::MAX,
            next_lane: 0,
            seq: 0,
            grow_above,
            shrink_below,
        }
    }

    /// Bytes an empty queue holds (the radix heap's buckets, allocated with the queue):
    /// what each copy of a simulation pays for its queue, pending events apart.
    pub const FIXED_BYTES: usize = RadixHeap::<E>::FIXED_BYTES;

    /// Number of pending events.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len() + self.run.len() + self.radix.len() + self.in_lanes
    }

    /// True when no event is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        let held = if !self.large {
            self.heap.peek_time()
        } else {
            // The run comes before the radix heap; the heap may hold earlier events still.
            let next = self
                .run
                .last()
                .map_or(self.radix.peek_time(), |e| Some(e.time()));
            match (self.heap.peek_time(), next) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        };
        if self.in_lanes == 0 {
            return held;
        }
        let timer = (self.next_timer >> 64) as SimTime;
        Some(held.map_or(timer, |t| t.min(timer)))
    }

    /// The next event to pop, as things stand (an event scheduled before it meanwhile pops
    /// first). For a caller that wants to start fetching what the next event will need.
    #[inline]
    pub fn peek(&mut self) -> Option<&E> {
        if self.slow {
            // Staging early is what `pop` does anyway: the staged event is the earliest.
            self.stage_slow();
        }
        self.heap.entries.first().map(|e| &e.event)
    }

    /// A batch is waiting to be shown by [`EventQueue::staged`] (a test of one flag, for a
    /// caller's every event).
    #[inline(always)]
    pub fn has_staged(&self) -> bool {
        self.fresh
    }

    /// Whether the caller will fetch ahead for the batches [`EventQueue::staged`] shows:
    /// worth it only while what the events read is far apart in memory.
    pub fn look_ahead(&mut self, on: bool) {
        self.ahead = on;
        self.batching = on || !self.run.is_empty();
    }

    /// With the radix heap in use and [`EventQueue::look_ahead`] on, once each time it has
    /// handed over its next few events (at most eight) in one go, those events, for a caller that wants to start fetching
    /// what each will need several events ahead: the latest first, and an event scheduled
    /// before them meanwhile still pops first. Empty otherwise.
    #[inline(always)]
    pub fn staged(&mut self) -> impl Iterator<Item = &E> {
        let batch = if std::mem::take(&mut self.fresh) {
            &self.run[..]
        } else {
            &[]
        };
        batch.iter().map(|e| &e.event)
    }

    /// Schedules `event` at `time`; among equal times, earlier calls pop first.
    #[inline(always)]
    pub fn schedule(&mut self, time: SimTime, event: E) {
        let key = ((time as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.push_key(key, event);
    }

    /// Sets aside `n` sequence numbers for [`Self::schedule_reserved`] and returns the
    /// first: events scheduled later with them order among equal times as if they had been
    /// scheduled now, in the order of their numbers.
    pub fn reserve(&mut self, n: u64) -> u64 {
        let first = self.seq;
        self.seq = self.seq.saturating_add(n);
        first
    }

    /// Schedules `event` at `time` with a sequence number set aside by [`Self::reserve`].
    /// `time` must not be earlier than the last popped event's.
    #[inline]
    pub fn schedule_reserved(&mut self, time: SimTime, seq: u64, event: E) {
        self.push_key(((time as u128) << 64) | seq as u128, event);
    }

    /// Schedules a timer (an event that usually goes stale before it is due, such as a
    /// timeout) at `time`: in the first lane whose last timer is not later, in a new lane if
    /// none fits and there are fewer than 4, else in the heap. It pops exactly where
    /// [`Self::schedule`] would have put it.
    #[inline]
    pub fn schedule_timer(&mut self, time: SimTime, event: E) {
        let key = ((time as u128) << 64) | self.seq as u128;
        self.seq += 1;
        let entry = Entry { key, event };
        let fits = self
            .lanes
            .iter()
            .position(|l| l.back().is_none_or(|b| b.key <= key));
        let i = match fits {
            Some(i) => i,
            None if self.lanes.len() < LANES => {
                self.lanes.push(Lane::new());
                self.lanes.len() - 1
            }
            None => return self.push_key(key, event),
        };
        self.lanes[i].push(entry);
        self.in_lanes += 1;
        self.slow = true;
        // Only a lane that was empty has a new front.
        if key < self.next_timer && self.lanes[i].len() == 1 {
            (self.next_timer, self.next_lane) = (key, i);
        }
    }

    /// The next event is a timer (the lanes' earliest is earlier than the heap's top; with
    /// the radix heap in use, call after staging).
    #[inline(always)]
    fn timer_first(&self) -> bool {
        self.in_lanes > 0
            && self
                .heap
                .entries
                .first()
                .is_none_or(|e| self.next_timer < e.key)
    }

    #[inline(always)]
    fn push_key(&mut self, key: u128, event: E) {
        if !self.large {
            self.heap.push(key, event);
            if self.heap.len() > self.grow_above {
                self.move_to_radix();
            }
        } else {
            self.schedule_large(key, event);
        }
    }

    /// Removes and returns the earliest event with its time.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        // One flag for both slow cases (the radix heap in use, timers pending), so a few
        // pending events without timers (M/M/1) pay one test, as before the lanes. With
        // timers pending and the radix heap not in use, the usual case (the heap's top
        // comes first) is told in line, without the out-of-line call.
        if self.slow && (self.large || self.timer_first()) {
            self.stage_slow();
        }
        // One path out for every representation: merging a second one here would put the
        // popped entry in memory, and reading it back costs a store-forwarding stall per pop.
        let e = self.heap.pop()?;
        Some((e.time(), e.event))
    }

    // The radix heap's and the lanes' paths stay out of line, so the few-pending paths stay
    // small: they are inlined where the model schedules and pops.

    /// With the radix heap in use or timers pending, makes sure the 4-ary heap's top is the
    /// earliest event: stages the radix heap's earliest ([`Self::stage_next`]), then moves
    /// the lanes' earliest front there when it is earlier still.
    #[inline(never)]
    fn stage_slow(&mut self) {
        if self.large {
            self.stage_next();
        }
        if !self.timer_first() {
            return;
        }
        let e = self.lanes[self.next_lane].pop_front();
        self.in_lanes -= 1;
        (self.next_timer, self.next_lane) = (u128::MAX, 0);
        for (i, l) in self.lanes.iter().enumerate() {
            if let Some(f) = l.front()
                && f.key < self.next_timer
            {
                (self.next_timer, self.next_lane) = (f.key, i);
            }
        }
        self.slow = self.large || self.in_lanes > 0;
        // Earlier than everything in the heap: it goes to the top.
        self.heap.push(e.key, e.event);
    }

    #[inline(never)]
    fn schedule_large(&mut self, key: u128, event: E) {
        let entry = Entry { key, event };
        if entry.time() >= self.radix.base() {
            self.radix.push(entry);
        } else {
            self.heap.push(key, event);
        }
    }

    /// With the radix heap in use, makes sure the 4-ary heap's top is the earliest event.
    /// The radix heap hands over its earliest [`STAGE`] at a time, into the run; the run's
    /// earliest moves to the 4-ary heap when it is earlier than everything there. The heap
    /// and the run hold events that come before everything in the radix heap: those it
    /// handed over are its earliest, and an event scheduled meanwhile goes to the heap only
    /// if it is earlier than the radix heap's base (the last one handed over).
    #[inline(never)]
    fn stage_next(&mut self) {
        if self.batching {
            return self.stage_from_run();
        }
        // One at a time, straight to the heap, when it is empty: nothing is earlier.
        if self.heap.is_empty()
            && let Some(e) = self.radix.pop()
        {
            self.heap.push(e.key, e.event);
            if self.radix.len() < self.shrink_below {
                self.move_to_heap();
            }
        }
    }

    /// [`Self::stage_next`] through the run: refilled from the radix heap when empty, its
    /// earliest moved to the 4-ary heap when earlier than everything there. Out of line, so
    /// the one-at-a-time path keeps the radix heap's `pop` inlined.
    #[inline(never)]
    fn stage_from_run(&mut self) {
        if self.run.is_empty() {
            while self.run.len() < STAGE
                && let Some(e) = self.radix.pop()
            {
                self.run.push(e);
            }
            self.run.reverse();
            self.fresh = !self.run.is_empty();
        }
        if let Some(&e) = self.run.last()
            && self.heap.entries.first().is_none_or(|top| e.key < top.key)
        {
            self.run.pop();
            self.heap.push(e.key, e.event);
        }
        self.batching = self.ahead || !self.run.is_empty();
        if self.run.is_empty() && self.radix.len() < self.shrink_below {
            self.move_to_heap();
        }
    }

    /// Many events pending: moves them to the radix heap, based at the earliest.
    #[cold]
    #[inline(never)]
    fn move_to_radix(&mut self) {
        // In key order, so the events at the base (the earliest time) queue in order.
        self.heap.entries.sort_unstable_by_key(|e| e.key);
        self.radix.set_base(self.heap.peek_time().unwrap_or(0));
        for e in self.heap.entries.drain(..) {
            self.radix.push(e);
        }
        self.large = true;
        self.slow = true;
    }

    /// Few events left: moves them back to the 4-ary heap and frees the radix heap's storage.
    #[cold]
    #[inline(never)]
    fn move_to_heap(&mut self) {
        let mut entries: Vec<_> = self.run.drain(..).collect();
        self.radix.drain_into(&mut entries);
        for e in entries {
            self.heap.push(e.key, e.event);
        }
        self.large = false;
        self.slow = self.in_lanes > 0;
        self.fresh = false;
    }
}

#[cfg(test)]
mod tests;
