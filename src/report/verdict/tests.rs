use super::*;

/// A stretch at `util` utilisation with a queue of `queue`: of 100 offered, `ok`
/// succeeded, `failed` failed, `limited` refused at the rate limit.
fn tally(util: f64, queue: f64, ok: f64, failed: f64, limited: f64) -> Tally {
    Tally {
        offered: 100.0,
        goodput: ok,
        failed,
        rate_limited: limited,
        queries: 100.0 - limited,
        utilization: util,
        queue_len: queue,
        deadline_s: Some(1.0),
        ..Tally::default()
    }
}

#[test]
fn a_healthy_stretch_is_healthy_whatever_it_refused() {
    let v = classify(&tally(0.4, 0.0, 57.0, 0.0, 43.0), true);
    assert_eq!(v, Verdict::Healthy);
    assert_eq!(
        (v.to_string().as_str(), v.cause(), v.share()),
        ("healthy", None, None)
    );
}

/// The motivating case (issue 21): 40% utilisation, an empty queue, 43% refused at
/// the rate limit, the rest served: degraded by choice, not stuck.
#[test]
fn refusing_at_the_rate_limit_and_serving_the_rest_is_degraded_not_stuck() {
    let v = classify(&tally(0.4, 0.0, 57.0, 0.0, 43.0), false);
    assert_eq!(
        v,
        Verdict::Degraded {
            cause: Refusal::RateLimit,
            share: 0.43
        }
    );
    assert_eq!(v.to_string(), "degraded: shedding 43% at the rate limit");
    assert_eq!((v.word(), v.cause()), ("degraded", Some("rate_limit")));
}

#[test]
fn load_shedding_and_a_full_queue_are_degraded_with_their_own_cause() {
    // 30 of 100 queries shed; their requests fail: the refusals explain the failures.
    let shed = Tally {
        shed: 30.0,
        ..tally(0.99, 3.0, 70.0, 30.0, 0.0)
    };
    let v = classify(&shed, false);
    assert_eq!(v.to_string(), "degraded: shedding 30% by load shedding");
    let full = Tally {
        queue_full: 1.0 / 16.0 * 100.0,
        ..tally(1.0, 50.0, 93.75, 6.25, 0.0)
    };
    let v = classify(&full, false);
    assert_eq!(v.to_string(), "degraded: rejecting 6.25% at a full queue");
    assert_eq!(v.cause(), Some("queue_full"));
}

/// Stuck with nothing failed yet (DWFM 2025: leases expire and the server re-queues the
/// work, so no request fails while none is served): the verdict says so, not "0%".
#[test]
fn a_stuck_stretch_with_nothing_failed_yet_says_so() {
    for (cause, text) in [
        (
            Fault::ExpiredWork,
            "stuck: none failed yet, queue full of expired work",
        ),
        (Fault::TimedOut, "stuck: none failed yet, saturated"),
    ] {
        let v = Verdict::Stuck { cause, share: 0.0 };
        assert_eq!(v.to_string(), text);
        // A noticeable share is worded as before.
        let v = Verdict::Stuck { cause, share: 0.5 };
        assert!(v.to_string().starts_with("stuck: 50% timed out"), "{v}");
    }
}

/// A retry storm: the pool busy, its queue holding 10 s of work against a 1 s
/// deadline, little served: stuck, not degraded, even with a rate limit refusing some.
#[test]
fn a_queue_that_outwaits_the_deadline_is_stuck_on_expired_work() {
    let v = classify(&tally(1.0, 900.0, 8.0, 82.0, 10.0), false);
    assert_eq!(
        v,
        Verdict::Stuck {
            cause: Fault::ExpiredWork,
            share: 0.82
        }
    );
    assert_eq!(
        v.to_string(),
        "stuck: 82% timed out, queue full of expired work"
    );
    // The same queue against a 20 s deadline has not expired: the pool just times out.
    let patient = Tally {
        deadline_s: Some(20.0),
        ..tally(1.0, 900.0, 8.0, 82.0, 10.0)
    };
    assert_eq!(classify(&patient, false).cause(), Some("timed_out"));
    // A long queue at a pool that looks idle on average (one hot shard) still outwaits
    // the deadline.
    let hot = tally(0.3, 900.0, 8.0, 82.0, 10.0);
    assert_eq!(classify(&hot, false).cause(), Some("expired_work"));
    // Work dropped because its caller had gone says the same without a queue.
    let dropped = Tally {
        expired: 40.0,
        ..tally(0.9, 0.0, 50.0, 50.0, 0.0)
    };
    assert_eq!(classify(&dropped, false).cause(), Some("expired_work"));
    // Even refusals that explain every failure do not make wasted work degraded.
    let full = Tally {
        queue_full: 200.0,
        queries: 300.0,
        ..tally(1.0, 2000.0, 2.0, 98.0, 0.0)
    };
    assert_eq!(classify(&full, false).cause(), Some("expired_work"));
}

#[test]
fn saturated_without_a_queue_times_out_and_with_room_fails_on_errors() {
    let v = classify(&tally(0.995, 0.2, 40.0, 60.0, 0.0), false);
    assert_eq!(v.to_string(), "stuck: 60% timed out");
    let v = classify(&tally(0.3, 0.0, 10.0, 90.0, 0.0), false);
    assert_eq!(v.to_string(), "stuck: 90% failed (errors)");
    assert_eq!(v.cause(), Some("failed"));
    // Failures beyond the refusals' share are not "served in time".
    let v = classify(&tally(0.4, 0.0, 37.0, 20.0, 43.0), false);
    assert_eq!(v.to_string(), "stuck: 20% failed (errors)");
}

#[test]
fn unhealthy_with_nothing_failed_or_refused_is_slow() {
    let v = classify(&tally(0.9, 30.0, 100.0, 0.0, 0.0), false);
    assert_eq!(v.to_string(), "stuck: too slow, none failed");
    assert_eq!(v.share(), Some(0.0));
    // Nothing offered at all: no share to divide by, still a verdict.
    assert_eq!(classify(&Tally::default(), false).cause(), Some("slow"));
}

#[test]
fn shares_are_worded_to_three_significant_figures() {
    assert_eq!(percent(0.43), "43%");
    assert_eq!(percent(0.432_19), "43.2%");
    assert_eq!(percent(1.0), "100%");
    assert_eq!(percent(0.001_234_5), "0.123%");
}

fn col(owner: Owner, measure: Measure, name: &str) -> Column {
    Column {
        owner,
        measure,
        name: name.into(),
    }
}

fn cols() -> Vec<Column> {
    vec![
        col(Owner::Time, Measure::Time, "time_s"),
        col(Owner::Class(0), Measure::Offered, "a.offered_per_s"),
        col(Owner::Class(0), Measure::Goodput, "a.goodput_per_s"),
        col(Owner::Class(0), Measure::Failed, "a.failed_per_s"),
        col(Owner::Class(0), Measure::Rejected, "a.rejected_per_s"),
        col(Owner::Class(1), Measure::Offered, "b.offered_per_s"),
        col(Owner::Pool(0), Measure::Utilization, "p.utilization"),
        col(Owner::Pool(0), Measure::QueueLen, "p.queue_len"),
        col(Owner::Pool(0), Measure::QueriesPerS, "p.queries_per_s"),
        col(Owner::Pool(1), Measure::Utilization, "q.utilization"),
        col(Owner::Pool(1), Measure::QueueLen, "q.queue_len"),
        col(Owner::Pool(1), Measure::QueriesPerS, "q.queries_per_s"),
    ]
}

const S: SimTime = 1_000_000_000;

#[test]
fn a_tally_weights_the_window_rows_by_time_and_takes_the_busiest_pool() {
    // Rows at 0, 10, 30 s; the window from 10 s to the end at 40 s.
    let rows = vec![
        vec![0.0, 99.0, 0.0, 0.0, 0.0, 5.0, 1.0, 9.0, 9.0, 0.0, 0.0, 0.0],
        vec![
            10.0, 100.0, 60.0, 0.0, 40.0, 5.0, 0.2, 0.0, 60.0, 0.5, 2.0, 10.0,
        ],
        vec![
            30.0,
            100.0,
            30.0,
            30.0,
            40.0,
            5.0,
            0.5,
            3.0,
            60.0,
            0.6,
            f64::NAN,
            10.0,
        ],
    ];
    let t = Tally::of_rows(&cols(), &rows, (10 * S, 40 * S, 40 * S), Some("a"));
    let near = |x: f64, y: f64| (x - y).abs() < 1e-9;
    assert!(
        near(t.offered, 100.0) && near(t.rate_limited, 40.0),
        "{t:?}"
    );
    assert!(near(t.goodput, 50.0) && near(t.failed, 10.0), "{t:?}");
    // Pool q: utilisation (0.5 x 20 + 0.6 x 10) / 30, above p's 0.3.
    assert!(near(t.utilization, 16.0 / 30.0), "{t:?}");
    assert_eq!(t.busiest, Some(1), "{t:?}");
    assert!(
        near(t.queue_len, 40.0 / 30.0) && near(t.queries, 10.0),
        "{t:?}"
    );
    // Every class when none is named.
    let all = Tally::of_rows(&cols(), &rows, (10 * S, 40 * S, 40 * S), None);
    assert!(near(all.offered, 105.0), "{all:?}");
    assert_eq!(t.expired, 0.0, "no pool has a lease");
    // An empty window tallies nothing.
    assert_eq!(
        Tally::of_rows(&cols(), &rows, (50 * S, 60 * S, 40 * S), None),
        Tally::default()
    );
}

#[test]
fn work_served_past_its_lease_is_expired_work() {
    // DWFM's collapse (issue 25): nothing fails, nothing is refused, every service
    // ends past its lease and is queued again.
    let cols = vec![
        col(Owner::Time, Measure::Time, "time_s"),
        col(Owner::Class(0), Measure::Offered, "a.offered_per_s"),
        col(Owner::Class(0), Measure::Goodput, "a.goodput_per_s"),
        col(Owner::Pool(0), Measure::Utilization, "p.utilization"),
        col(Owner::Pool(0), Measure::QueueLen, "p.queue_len"),
        col(Owner::Pool(0), Measure::QueriesPerS, "p.queries_per_s"),
        col(
            Owner::Pool(0),
            Measure::LeaseExpiredPerS,
            "p.lease_expired_per_s",
        ),
    ];
    let rows = vec![vec![0.0, 0.1, 0.0, 1.0, 1500.0, 0.1, 4.0]];
    let t = Tally::of_rows(&cols, &rows, (0, 60 * S, 60 * S), None);
    assert_eq!(t.expired, 4.0);
    assert_eq!(classify(&t, false).cause(), Some("expired_work"));
}
