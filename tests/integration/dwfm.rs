//! AWS us-east-1, 20 Oct 2025 (EC2 DWFM's congestive collapse): the shapes the case sheet
//! says a faithful model must show (`scenarios/aws-dwfm-2025-10-20.toml`).
//!
//! Times (time 0 is 11:00 PM PDT): DynamoDB's DNS record empty from 48m (11:48 PM) to
//! 3h25m (2:25 AM); throttle and restarts at 5h14m (4:14 AM); every droplet leased by
//! 6h28m (5:28 AM) as published; throttles relaxed at 12h23m (11:23 AM); the run ends at
//! 13h. Runs are deterministic (the scenario's seed); thresholds sit well away from the
//! measured values, noted beside each, so that a change of the random streams does not
//! flip them while a change of the mechanism does.

use crate::common::*;
use brink::model::RunResult;

const NAME: &str = "aws-dwfm-2025-10-20";
const M: f64 = 60.0;
const H: f64 = 3600.0;
const DROPLETS: f64 = 2000.0;
/// Lease work started per second in normal operation: 2000 droplets, one lease due every
/// 2 h on average (the service time is negligible beside it).
const STEADY: f64 = DROPLETS / 7200.0;
const DNS_BACK: f64 = 3.0 * H + 25.0 * M;
const RESPONSE: f64 = 5.0 * H + 14.0 * M;
const RELAXED: f64 = 12.0 * H + 23.0 * M;
const END: f64 = 13.0 * H;

fn dwfm(variant: Option<&str>) -> RunResult {
    run(&bundled(NAME, variant, &[]), 0)
}

/// (time, value) of a column, for rows starting in [from, to).
fn rows(r: &RunResult, column: &str, from: f64, to: f64) -> Vec<(f64, f64)> {
    let t = r.series.column("time_s").unwrap();
    let v = r.series.column(column).unwrap();
    t.into_iter()
        .zip(v)
        .filter(|(t, _)| *t >= from && *t < to)
        .collect()
}

fn healthy_before_the_trigger(r: &RunResult) {
    let good = mean_between(r, "droplet.goodput_per_s", 0.0, 48.0 * M);
    assert!(
        (0.6 * STEADY..1.5 * STEADY).contains(&good),
        "lease work done before the outage {good}/s (steady {STEADY}/s)"
    );
    let waiting = mean_between(r, "droplet.users_waiting", 0.0, 48.0 * M);
    assert!(
        waiting < 5.0,
        "droplets waiting before the outage {waiting}"
    );
}

#[test]
fn it_stays_collapsed_after_dns_is_back_with_no_client_retry() {
    let r = dwfm(None);
    healthy_before_the_trigger(&r);
    // From 2:25 AM to 4:14 AM (the published 1 h 49 min) DynamoDB answers every call,
    // yet no lease work ends within its lease. Measured: exactly 0 lease work done.
    let good = mean_between(&r, "droplet.goodput_per_s", DNS_BACK + 5.0 * M, RESPONSE);
    assert!(good < 0.02 * STEADY, "goodput while collapsed {good}/s");
    let failed = mean_between(&r, "dwfm.dynamodb.failed_per_s", DNS_BACK + M, RESPONSE);
    assert_eq!(failed, 0.0, "DynamoDB is back");
    // Every service is wasted: DWFM's 8 workers, 2 s each, expire ~4 leases a second
    // (measured 3.98; the queue 1660).
    let wasted = mean_between(&r, "dwfm.lease_expired_per_s", DNS_BACK + M, RESPONSE);
    assert!(
        wasted > 3.5,
        "leases expired per second while collapsed {wasted}"
    );
    let queue = mean_between(&r, "dwfm.queue_len", DNS_BACK + M, RESPONSE);
    assert!(
        queue > 2.0 * 480.0,
        "the queue {queue} is far above capacity x lease (480)"
    );
    // No client retries anywhere: one attempt per request, every row.
    let offered = rows(&r, "droplet.offered_per_s", 0.0, END);
    let attempts = rows(&r, "droplet.attempts_per_s", 0.0, END);
    let rejected = rows(&r, "droplet.rejected_per_s", 0.0, END);
    for ((o, a), j) in offered.iter().zip(&attempts).zip(&rejected) {
        assert!(
            (a.1 - (o.1 - j.1)).abs() < 1e-9,
            "attempts {} beyond the admitted requests {} at {} s",
            a.1,
            o.1 - j.1,
            o.0
        );
    }
}

#[test]
fn without_the_response_it_never_recovers() {
    let r = dwfm(Some("no-response"));
    let good = mean_between(&r, "droplet.goodput_per_s", DNS_BACK + 5.0 * M, END);
    assert!(good < 0.02 * STEADY, "goodput to the end {good}/s");
    // Nearly the whole fleet waits on lease work at the end (measured 1996 of 2000).
    let waiting = mean_between(&r, "droplet.users_waiting", END - H, END);
    assert!(
        waiting > 0.9 * DROPLETS,
        "droplets waiting at the end {waiting}"
    );
}

#[test]
fn the_throttle_and_restarts_lease_every_droplet_in_about_74_minutes() {
    let r = dwfm(None);
    // Right after the restarts lease work is done again (the first admitted droplets).
    let good = mean_between(&r, "droplet.goodput_per_s", RESPONSE, RESPONSE + 30.0 * M);
    assert!(good > STEADY, "lease work done after the response {good}/s");
    // A droplet without a lease checks in every 3 minutes and the throttle refuses it
    // until it is admitted; every droplet has a lease once the refusals stop (the steady
    // demand, 0.28/s, is under the throttle's 0.55/s). Published: 74 min (4:14 to
    // 5:28 AM); measured 77 min. The throttle's rate is the one number chosen for it, so
    // the test holds the shape (recovery paced by the throttle: about an hour, neither
    // minutes nor hours) within a quarter of the published time either way.
    let refused = rows(&r, "droplet.rejected_per_s", RESPONSE, RELAXED);
    let last = refused
        .iter()
        .filter(|(_, v)| *v > 0.0)
        .map(|(t, _)| *t)
        .fold(f64::NAN, f64::max);
    let minutes = (last + M - RESPONSE) / M;
    assert!(
        (0.75 * 74.0..=1.25 * 74.0).contains(&minutes),
        "every droplet leased {minutes} min after the response"
    );
    // Then healthy to the end: no backlog, lease work at its steady rate.
    let waiting = mean_between(&r, "droplet.users_waiting", last + M, END);
    assert!(
        waiting < 5.0,
        "droplets waiting after the recovery {waiting}"
    );
    let good = mean_between(&r, "droplet.goodput_per_s", last + M, END);
    assert!(
        (0.8 * STEADY..1.2 * STEADY).contains(&good),
        "lease work after the recovery {good}/s"
    );
}

/// The design recovers by itself soon after DNS is back: by 30 minutes later the fleet
/// is leased and stays so (measured: 0-3 droplets waiting at a time).
fn recovers_by_itself(variant: &str) {
    let r = dwfm(Some(variant));
    healthy_before_the_trigger(&r);
    let waiting = mean_between(&r, "droplet.users_waiting", DNS_BACK + 30.0 * M, END);
    assert!(waiting < 5.0, "{variant}: droplets waiting {waiting}");
    let good = mean_between(&r, "droplet.goodput_per_s", DNS_BACK + 30.0 * M, END);
    assert!(
        (0.8 * STEADY..1.2 * STEADY).contains(&good),
        "{variant}: lease work {good}/s"
    );
}

#[test]
fn a_short_outage_recovers_without_help() {
    recovers_by_itself("short-outage");
    // The backlog grows with the outage's length: after 10 minutes 175 droplets wait
    // (measured; 2000 x (1 - e^(-10/120)) = 160 come due), after 2 h 37 min most of the
    // fleet (measured 1502).
    let short = dwfm(Some("short-outage"));
    let long = dwfm(Some("no-response"));
    let at = |r: &RunResult, t: f64| mean_between(r, "droplet.users_waiting", t - M, t);
    let (s, l) = (at(&short, 58.0 * M), at(&long, DNS_BACK));
    assert!(
        s > 10.0 && s < 480.0,
        "backlog after a 10-minute outage {s}"
    );
    assert!(l > 2.0 * 480.0, "backlog after the 2 h 37 min outage {l}");
}

#[test]
fn queue_depth_admission_from_the_start_avoids_collapse() {
    recovers_by_itself("queue-admission");
    // The backlog it holds stays under capacity x lease (measured 365 droplets).
    let r = dwfm(Some("queue-admission"));
    let most = rows(&r, "droplet.users_waiting", 0.0, END)
        .iter()
        .map(|x| x.1)
        .fold(0.0, f64::max);
    assert!(most < 480.0, "most droplets waiting {most}");
}

#[test]
fn dropping_expired_work_recovers() {
    recovers_by_itself("drop-expired");
}

#[test]
fn a_lease_sized_to_the_worst_case_backlog_recovers() {
    recovers_by_itself("lease-sized");
}

#[test]
fn the_outage_length_decides_it() {
    // The sweep's parameter (tipping point measured at about 40 minutes): without any
    // response a 20-minute outage drains (about 310 droplets come due, under capacity x
    // lease = 480), a one-hour outage (about 790) stays collapsed to the end.
    let waiting_at_end = |outage: &str| {
        let set = format!("event.dns.for=\"{outage}\"");
        let r = run(&bundled(NAME, Some("no-response"), &[&set]), 0);
        mean_between(&r, "droplet.users_waiting", END - H, END)
    };
    let short = waiting_at_end("20m");
    assert!(
        short < 5.0,
        "droplets waiting after a 20-minute outage {short}"
    );
    let long = waiting_at_end("1h");
    assert!(
        long > 0.9 * DROPLETS,
        "droplets waiting after a one-hour outage {long}"
    );
}
