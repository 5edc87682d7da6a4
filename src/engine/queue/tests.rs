//! The queue against a reference (a binary heap of (time, seq)) in every representation,
//! with timers, look-ahead batches and pops before the last one.

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
