//! Closed-loop populations against their laws: the interactive response-time law
//! R = N/X - Z, and exact mean value analysis (MVA) of a single exponential server with N
//! thinking users; a population resized by `[[at]]`, users who give up, and open and closed
//! classes in one scenario.

use crate::common::*;

/// A population of `n` users thinking `think` (a law table) in front of one server with
/// exponential service of mean `service_s`, for `duration_s`.
fn closed(n: u32, think: &str, service_s: f64, duration_s: f64, extra: &str) -> String {
    format!(
        r#"
        duration = "{duration_s}s"
        [class.users]
        users = {n}
        think = {think}
        steps = [{{ query = "server" }}]
        [pool.server]
        service = {{ law = "exp", mean = "{service_s}s" }}
        {extra}
        "#
    )
}

/// (X, R) of the `users` class: completed requests per second, and their mean response
/// time (every request succeeds in these scenarios).
fn throughput_and_response(text: &str, run_index: u64) -> (f64, f64) {
    let r = run(&scenario(text), run_index);
    let c = &r.summary.classes["users"];
    assert_eq!(c.failed, 0);
    let x = c.succeeded as f64 / r.summary.sim_duration_s;
    (x, c.latency_s.mean.expect("requests succeeded"))
}

/// The interactive response-time law (LAWS.md, closed loops): R = N/X - Z, whatever the
/// laws of service and think time, within 1%. On a sample path the law is Little's law for
/// the whole loop and holds exactly with the *measured* mean think time, so the only errors
/// are the end effect (at most N of ~2e5 requests in flight when the run stops) and the
/// draws' mean against the nominal Z: its standard error is cv Z / sqrt(draws), which
/// the subtraction magnifies by Z / R. The loads are chosen so that R is not small
/// against Z (at the server's saturation) and the error stays below 0.3%.
#[test]
fn response_time_law_holds() {
    for (n, think, z) in [
        // X ~ 1/S = 100/s, R ~ N/X - Z = 0.5 s.
        (100, r#"{ law = "exp", mean = "500ms" }"#, 0.5),
        // A lognormal think time: R ~ 0.5 s.
        (150, r#"{ law = "lognormal", mean = "1s", cv = 0.5 }"#, 1.0),
        // A constant think time (no draw error): R ~ 0.2 s.
        (40, r#"{ law = "const", mean = "200ms" }"#, 0.2),
    ] {
        let (x, r) = throughput_and_response(&closed(n, think, 0.01, 2000.0, ""), 0);
        let law = n as f64 / x - z;
        let err = (r - law).abs() / law;
        eprintln!("N = {n}: X = {x:.3}/s, R = {r:.5} s, N/X - Z = {law:.5} s, error {err:.4}");
        assert!(err < 0.01, "N = {n}: R = {r} vs N/X - Z = {law}");
    }
}

/// Exact MVA for one exponential server of mean S and N users thinking Z on average:
/// R(k) = S (1 + Q(k-1)), X(k) = k / (R(k) + Z), Q(k) = X(k) R(k).
fn mva(n: u32, s: f64, z: f64) -> (f64, f64) {
    let (mut q, mut x, mut r) = (0.0, 0.0, 0.0);
    for k in 1..=n {
        r = s * (1.0 + q);
        x = k as f64 / (r + z);
        q = x * r;
    }
    (x, r)
}

/// The simulated X and R against exact MVA within 3%, for N = 1, 5 and 20. Each figure
/// pools 4 runs of 2000 s (N = 1: ~73,000 requests; the relative standard error of R,
/// an exponential mean, is ~0.4%, so 3% is 7 standard errors).
#[test]
fn single_server_matches_mean_value_analysis() {
    let (s, z) = (0.01, 0.1);
    for n in [1, 5, 20] {
        let text = closed(n, r#"{ law = "exp", mean = "100ms" }"#, s, 2000.0, "");
        let (mut xs, mut rs) = (0.0, 0.0);
        for i in 0..4 {
            let (x, r) = throughput_and_response(&text, i);
            xs += x / 4.0;
            rs += r / 4.0;
        }
        let (x, r) = mva(n, s, z);
        eprintln!("N = {n}: X {xs:.3} (MVA {x:.3}), R {rs:.5} (MVA {r:.5})");
        assert!((xs - x).abs() / x < 0.03, "N = {n}: X = {xs} vs MVA {x}");
        assert!((rs - r).abs() / r < 0.03, "N = {n}: R = {rs} vs MVA {r}");
    }
}

/// `users` changes in `[[at]]` entries: 10 users, then 50 from 200 s, then 5 from 400 s.
/// With a fast server (S = 1 ms) and Z = 1 s, X = N / (Z + R) ~ N / 1.001 per second.
#[test]
fn the_number_of_users_changes_at_interventions() {
    let text = closed(
        10,
        r#"{ law = "exp", mean = "1s" }"#,
        0.001,
        600.0,
        r#"
        [metrics]
        step = "10s"
        [[at]]
        time = "200s"
        set = { "class.users.users" = 50 }
        [[at]]
        time = "400s"
        set = { "class.users.users" = 5 }
        "#,
    );
    let r = run(&scenario(&text), 0);
    // Windows well after each change (users leaving finish their request first).
    for (from, to, n) in [
        (20.0, 200.0, 10.0),
        (220.0, 400.0, 50.0),
        (420.0, 600.0, 5.0),
    ] {
        let x = mean_between(&r, "users.offered_per_s", from, to);
        let want = n / 1.001;
        eprintln!("{from}-{to} s: {x:.3}/s, want {want:.3}");
        // Poisson-like counts over 180 s: sd of the mean ~ sqrt(N/180)/... < 4% at N = 5.
        assert!(
            (x - want).abs() / want < 0.12,
            "{from}-{to} s: {x} vs {want}"
        );
    }
    let u = r.summary.classes["users"]
        .users
        .as_ref()
        .expect("a population");
    assert_eq!(u.users, 5);
    assert_eq!(
        u.thinking + u.waiting,
        5,
        "users who left are gone by the end"
    );
}

/// A user who fails `give_up.after` times in a row stays away `give_up.for`. During a
/// 300 s outage every request fails at once; 100 users thinking 1 s then send 3 requests
/// per cycle of ~ 2 think times + 60 s away: ~ 100 x 3 / 62 = 4.8/s, against 100/s
/// without giving up.
#[test]
fn users_give_up_after_failures_in_a_row() {
    let outage = r#"
        [metrics]
        step = "10s"
        [event.down]
        kind = "outage"
        pool = "server"
        at = "100s"
        for = "300s"
    "#;
    let scenario_with = |give_up: &str| {
        let text = closed(100, r#"{ law = "exp", mean = "1s" }"#, 0.001, 500.0, outage);
        scenario(&text.replace("steps = [", &format!("{give_up}\n        steps = [")))
    };
    let stubborn = run(&scenario_with(""), 0);
    let patient = run(&scenario_with(r#"give_up = { after = 3, for = "60s" }"#), 0);
    let during = |r: &brink::model::RunResult| mean_between(r, "users.offered_per_s", 160.0, 400.0);
    let (a, b) = (during(&stubborn), during(&patient));
    eprintln!("offered during the outage: {a:.2}/s without giving up, {b:.2}/s with");
    assert!((a - 100.0 / 1.0).abs() < 5.0, "{a}");
    let want = 100.0 * 3.0 / 62.0;
    assert!((b - want).abs() / want < 0.15, "{b} vs {want}");
    // After the outage everyone is back.
    let after = mean_between(&patient, "users.offered_per_s", 470.0, 500.0);
    assert!(after > 90.0, "{after}");
}

/// Open and closed classes share a pool; a burst adds requests no user sent to the closed
/// class. Every request and every user is accounted for (the run checks it), and the
/// open class keeps its rate whatever the closed one does.
#[test]
fn open_and_closed_classes_mix() {
    let text = closed(
        50,
        r#"{ law = "exp", mean = "500ms" }"#,
        0.002,
        300.0,
        r#"
        [class.open]
        rate = 100
        steps = [{ query = "server" }]
        [event.herd]
        kind = "burst"
        class = "users"
        clients = 5000
        at = "100s"
        spread = "5s"
        "#,
    );
    let r = run(&scenario(&text), 0);
    let open = &r.summary.classes["open"];
    let users = &r.summary.classes["users"];
    assert!((open.offered as f64 / 300.0 - 100.0).abs() < 3.0);
    assert!(
        users.offered > 5000,
        "the burst's requests count in the class"
    );
    let u = users.users.as_ref().expect("a population");
    assert_eq!(u.thinking + u.waiting, 50);
    assert!(open.users.is_none());
}

/// The think law changes in an `[[at]]` entry, from exponential (one shared clock) to
/// constant (a pending turn per user) and back: X = N / (Z + R) follows Z in each phase,
/// and every user is accounted for across the moves.
#[test]
fn the_think_law_changes_at_interventions() {
    let text = closed(
        40,
        r#"{ law = "exp", mean = "1s" }"#,
        0.001,
        600.0,
        r#"
        [metrics]
        step = "10s"
        [[at]]
        time = "200s"
        set = { "class.users.think" = { law = "const", mean = "2s" } }
        [[at]]
        time = "400s"
        set = { "class.users.think" = { law = "exp", mean = "500ms" } }
        "#,
    );
    let r = run(&scenario(&text), 0);
    for (from, to, z) in [(20.0, 200.0, 1.0), (220.0, 400.0, 2.0), (420.0, 600.0, 0.5)] {
        let x = mean_between(&r, "users.offered_per_s", from, to);
        let want = 40.0 / (z + 0.001);
        eprintln!("{from}-{to} s: {x:.3}/s, want {want:.3}");
        assert!(
            (x - want).abs() / want < 0.06,
            "{from}-{to} s: {x} vs {want}"
        );
    }
}
