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
//! Timers (`schedule_timer`: a timeout, which usually goes stale before it is due) go to a
//! few lanes instead: FIFO runs of non-decreasing keys. A timeout armed a constant delay
//! after the clock is later than the one armed before it, so one lane holds all of a
//! delay's timers in order, and they are never sifted or refiled; a pop takes the smallest
//! of the heap's top and the lanes' heads. In a service with a 1 s client timeout at 1,500
//! requests/s, the 1,500 pending timeouts would otherwise keep the radix heap in use and
//! be refiled at every base move. A timer that fits no lane (earlier than every lane's last)
//! goes to the heap. The keys come from the one sequence, so the order is exact either way.
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
        // pending events without timers (M/M/1) pay one test, as before the lanes.
        if self.slow {
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
mod tests {
    use super::*;
    use rand::{Rng as _, RngExt as _, SeedableRng};
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

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

    /// Each representation alone, and thresholds low enough to switch back and forth often.
    const CONFIGS: [(usize, usize); 4] = [
        (GROW_ABOVE, SHRINK_BELOW),
        (usize::MAX, 0),
        (0, 0),
        (40, 10),
    ];

    /// Drives a queue like a simulation (each schedule at `now + delay(rng)`, pops interleaved;
    /// `past` in a thousand schedules go before the last pop instead) and checks every pop,
    /// `peek_time` and `len` against a binary heap of (time, seq), in every configuration.
    /// The timers' delays in [`against_reference`]: more than [`LANES`] of them, so some
    /// fit no lane and go to the heap.
    const TIMERS: [u64; 5] = [0, 1_000, 1_000_000, 7_000_000, 1_000_000_000];

    fn against_reference(
        seed: u64,
        steps: usize,
        past: u32,
        delay: impl Fn(&mut dyn rand::Rng) -> u64,
    ) {
        for (grow, shrink) in CONFIGS {
            let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut q = EventQueue::with_thresholds(grow, shrink);
            let mut reference = BinaryHeap::new();
            // The events pending, for what `staged` shows.
            let mut pending = std::collections::HashSet::new();
            let (mut staged_seen, mut was_large, mut ahead) = (0, false, false);
            let mut seq = 0u64;
            let mut now = 0u64;
            for _ in 0..steps {
                // Bursts of schedules and runs of pops, so the pending set grows and shrinks.
                for _ in 0..rng.next_u32() % 4 {
                    // A third are timers, a few constant delays after the clock (and so
                    // mostly in order, as timeouts are), some of them 0.
                    if rng.next_u32() % 3 == 0 {
                        let t = now.saturating_add(TIMERS[rng.next_u32() as usize % 5]);
                        q.schedule_timer(t, seq);
                        reference.push(Reverse((t, seq)));
                        pending.insert(seq);
                        seq += 1;
                        continue;
                    }
                    let t = if rng.next_u32() % 1000 < past {
                        now - now.min(delay(&mut rng))
                    } else {
                        now.saturating_add(delay(&mut rng))
                    };
                    q.schedule(t, seq);
                    reference.push(Reverse((t, seq)));
                    pending.insert(seq);
                    seq += 1;
                }
                // Fetching ahead (batches from the radix heap) or not changes no order.
                if rng.next_u32() % 16 == 0 {
                    ahead = !ahead;
                    q.look_ahead(ahead);
                }
                // A staged batch is of pending events, shown once.
                let batch: Vec<u64> = q.staged().copied().collect();
                assert!(batch.iter().all(|e| pending.contains(e)));
                assert_eq!(q.staged().count(), 0);
                staged_seen += batch.len();
                was_large |= q.large;
                for _ in 0..rng.next_u32() % 4 {
                    assert_eq!(q.peek_time(), reference.peek().map(|r| r.0.0));
                    // Peeking (which stages the next event) changes no order, also when more
                    // events are scheduled before the next pop.
                    if rng.next_u32() % 2 == 0 {
                        assert_eq!(q.peek().copied(), reference.peek().map(|r| r.0.1));
                    }
                    let want = reference.pop().map(|Reverse(e)| e);
                    let got = q.pop();
                    assert_eq!(got, want, "thresholds {grow}/{shrink}");
                    if let Some((_, e)) = got {
                        pending.remove(&e);
                    }
                    if let Some((t, _)) = got {
                        assert!(past > 0 || t >= now);
                        now = t;
                    }
                }
                assert_eq!(q.len(), reference.len());
                assert_eq!(q.is_empty(), reference.is_empty());
            }
            while let Some(Reverse(e)) = reference.pop() {
                assert_eq!(q.pop(), Some(e));
            }
            assert_eq!(q.pop(), None);
            assert_eq!(q.peek_time(), None);
            // Batches come from the radix heap, and one always in use hands some over.
            assert!(staged_seen == 0 || was_large, "thresholds {grow}/{shrink}");
            assert!(grow > 0 || staged_seen > 0, "thresholds {grow}/{shrink}");
        }
    }

    #[test]
    fn nanosecond_delays_over_fifteen_decades() {
        // Log-uniform delays from 1 ns to 1e15 ns: every level of the radix heap in use.
        against_reference(11, 100_000, 0, |rng| {
            10f64.powf(rng.random::<f64>() * 15.0) as u64
        });
    }

    #[test]
    fn many_equal_times_and_zero_delays() {
        // Coarse times (multiples of 1 s) and zero delays: long first-in first-out runs,
        // including events scheduled at the time being popped.
        against_reference(12, 100_000, 0, |rng| match rng.next_u32() % 4 {
            0 => 0,
            _ => (rng.next_u64() % 4) * 1_000_000_000,
        });
    }

    #[test]
    fn huge_gaps_and_the_end_of_time() {
        // Mostly short delays with rare jumps to ~1e15 ns, and a few `u64::MAX` times
        // (saturated "never" deadlines) that stay pending to the end.
        against_reference(13, 100_000, 0, |rng| match rng.next_u32() % 100 {
            0 => 1_000_000_000_000_000 + rng.next_u64() % 1000,
            1 => u64::MAX,
            2..=20 => 0,
            _ => rng.next_u64() % 2_000_000_000,
        });
    }

    #[test]
    fn scheduling_before_the_last_pop_stays_exact() {
        // Not something the model does, but the order must not depend on it.
        against_reference(14, 100_000, 20, |rng| match rng.next_u32() % 10 {
            0 => 0,
            _ => rng.next_u64() % 1_000_000,
        });
    }

    #[test]
    fn a_large_pending_set_around_a_late_clock() {
        // 1e5 pending exponential delays (mean 1 s) with the clock near 1e15 ns, as in an
        // M/M/c run with 1e5 busy servers.
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(15);
        let mut exp = move || (-(1.0f64 - rng.random::<f64>()).ln() * 1e9) as u64;
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let start = 999_999_999_999_000u64;
        for seq in 0..100_000u64 {
            let t = start + exp();
            q.schedule(t, seq);
            reference.push(Reverse((t, seq)));
        }
        for seq in 100_000..1_000_000u64 {
            let Reverse((t, s)) = reference.pop().unwrap();
            assert_eq!(q.pop(), Some((t, s)));
            let next = t + exp();
            q.schedule(next, seq);
            reference.push(Reverse((next, seq)));
        }
        while let Some(Reverse(e)) = reference.pop() {
            assert_eq!(q.pop(), Some(e));
        }
        assert!(q.is_empty());
    }

    #[test]
    fn memory_is_given_back_after_a_storm() {
        let mut q = EventQueue::new();
        for i in 0..1_000_000u64 {
            q.schedule(1 + i * 7919 % 1_000_000_007, i);
        }
        assert!(q.large);
        while q.len() > 10 {
            q.pop();
        }
        assert!(!q.large);
        assert_eq!(q.radix.capacity(), 0);
        assert!(q.heap.entries.capacity() <= 4 * GROW_ABOVE);
    }
}
