//! Autoscaling (`[pool.NAME.autoscale]`): the fleet follows a load step after its
//! provisioning delay and comes back after the cooldown; cold servers are slower; an
//! autoscaler that scales in during an outage's retry storm tips a system a fixed fleet
//! survives; and the bundled `autoscaling-lag.toml`'s variants survive or not as its story
//! says.

use crate::common::*;
use brink::model::RunResult;

/// A pool of 2 servers x 10 workers (100 ms each: 200 queries/s) at 100 requests/s, doubled
/// from 300 s to 600 s. Utilisation target 0.55: 0.5 is in the band, a saturated fleet
/// asks for ceil(2 x 1.0 / 0.55) = 4 servers (any signal above 0.825 does), and 100/s on 4
/// servers (0.25) asks for ceil(4 x 0.25 / 0.55) = 2 (any signal up to 0.275 does).
fn step_scenario(autoscale_extra: &str) -> String {
    format!(
        r#"
duration = "25m"
seed = 3
[metrics]
step = "10s"
[class.request]
rate = 100
profile = {{ points = [["0s", 1.0], ["299.999999s", 1.0], ["300s", 2.0], ["599.999999s", 2.0], ["600s", 1.0]] }}
steps = [{{ query = "web" }}]
[pool.web]
shards = 2
workers = 10
service = {{ law = "exp", mean = "100ms" }}
[pool.web.autoscale]
signal = "utilization"
target = 0.55
every = "30s"
provision = "60s"
cooldown = "10m"
min = 2
max = 8
{autoscale_extra}
"#
    )
}

/// The `web.servers` value of the row that starts at `t` seconds.
fn servers_at(r: &RunResult, t: f64) -> f64 {
    let times = r.series.column("time_s").unwrap();
    let servers = r.series.column("web.servers").unwrap();
    let i = times.iter().position(|&x| x == t).unwrap();
    servers[i]
}

#[test]
fn a_load_step_doubles_the_servers_after_the_provisioning_delay_and_they_return_after_the_cooldown()
{
    // The step at 300 s; the evaluation at 330 s sees [300, 330) saturated and asks for 2
    // more; they are up 60 s later, at 390 s. The load goes back at 600 s; the fleet last
    // changed at 390 s, so the cooldown (10 min) lets it scale in at the first evaluation
    // from 990 s on.
    for run_index in 0..3 {
        let r = run(&scenario(&step_scenario("")), run_index);
        for t in (0..39).map(|k| k as f64 * 10.0) {
            assert_eq!(servers_at(&r, t), 2.0, "run {run_index}: at {t} s, before");
        }
        for t in (39..99).map(|k| k as f64 * 10.0) {
            assert_eq!(
                servers_at(&r, t),
                4.0,
                "run {run_index}: at {t} s, scaled out"
            );
        }
        for t in (99..150).map(|k| k as f64 * 10.0) {
            assert_eq!(
                servers_at(&r, t),
                2.0,
                "run {run_index}: at {t} s, scaled in"
            );
        }
        // Utilisation follows the live servers: about 0.5 before the step and after the
        // scale-out, about 0.25 between the load's return and the scale-in.
        let u = |a, b| mean_between(&r, "web.utilization", a, b);
        assert!((u(0.0, 300.0) - 0.5).abs() < 0.03, "{}", u(0.0, 300.0));
        assert!((u(420.0, 600.0) - 0.5).abs() < 0.03, "{}", u(420.0, 600.0));
        assert!((u(620.0, 990.0) - 0.25).abs() < 0.02, "{}", u(620.0, 990.0));
        assert!(
            (u(1000.0, 1500.0) - 0.5).abs() < 0.03,
            "{}",
            u(1000.0, 1500.0)
        );
        let web = &r.summary.pools["web"];
        assert_eq!(web.servers_added, Some(2));
        assert_eq!(web.servers_removed, Some(2));
        // 390 s on 2, 600 s on 4, 510 s on 2: 2.8 on average.
        assert!((web.mean_servers.unwrap() - 2.8).abs() < 1e-9);
    }
}

#[test]
fn without_a_cooldown_to_wait_for_the_fleet_scales_in_at_the_first_evaluation_after_the_drop() {
    // Cooldown 0: the evaluation at 630 s sees [600, 630) at 0.25 and scales in at once.
    let r = run(&scenario(&step_scenario("").replace("10m", "0s")), 0);
    assert_eq!(servers_at(&r, 620.0), 4.0);
    assert_eq!(servers_at(&r, 630.0), 2.0);
}

#[test]
fn an_autoscaler_that_never_scales_routes_like_a_fixed_fleet() {
    // min = max = shards: the same draws as the fixed pool, so the same rows (but for the
    // servers column).
    let text = step_scenario("");
    let fixed = run(
        &scenario(text.split("[pool.web.autoscale]").next().unwrap()),
        0,
    );
    let pinned = run(
        &scenario(&step_scenario("").replace("max = 8", "max = 2")),
        0,
    );
    assert_eq!(pinned.series.columns.len(), fixed.series.columns.len() + 1);
    for (a, b) in fixed.series.rows.iter().zip(&pinned.series.rows) {
        let b: Vec<u64> = b[..a.len()].iter().map(|x| x.to_bits()).collect();
        let a: Vec<u64> = a.iter().map(|x| x.to_bits()).collect();
        assert_eq!(a, b);
    }
    assert_eq!(
        fixed.summary.classes["request"],
        pinned.summary.classes["request"]
    );
}

#[test]
fn a_warming_server_serves_slower_by_its_factor() {
    // Constant 100 ms service, 100 workers a server (1000/s) at 400/s: no queueing, so a
    // request's latency is its service time. Utilisation 0.4 against a target of 0.3 asks
    // for a second server at 10 s, up at 30 s and 3x slower until 90 s (333/s for the
    // 200/s it is sent: Erlang C makes a wait there about 1e-6 likely): half the requests
    // take 300 ms then, so the p99 is 0.3 s; before and after, 0.1 s. (The histogram's
    // relative error is under 0.4%.)
    let r = run(
        &scenario(
            r#"
duration = "150s"
[metrics]
step = "10s"
[class.request]
rate = 400
steps = [{ query = "web" }]
[pool.web]
workers = 100
service = { law = "const", mean = "100ms" }
[pool.web.autoscale]
signal = "utilization"
target = 0.3
every = "10s"
provision = "20s"
warmup = { for = "60s", factor = 3.0 }
min = 1
max = 2
"#,
        ),
        0,
    );
    let p99 = |a, b| mean_between(&r, "request.latency_p99_s", a, b);
    assert!((p99(0.0, 30.0) - 0.1).abs() < 0.001, "{}", p99(0.0, 30.0));
    assert!((p99(40.0, 80.0) - 0.3).abs() < 0.002, "{}", p99(40.0, 80.0));
    assert!(
        (p99(100.0, 150.0) - 0.1).abs() < 0.001,
        "{}",
        p99(100.0, 150.0)
    );
    // Busy workers while warming: 200/s x 0.1 s + 200/s x 0.3 s = 80 of 200; after, 40.
    let u = mean_between(&r, "web.utilization", 40.0, 80.0);
    assert!((u - 0.4).abs() < 0.03, "utilisation while warming {u}");
    let u = mean_between(&r, "web.utilization", 100.0, 150.0);
    assert!((u - 0.2).abs() < 0.02, "utilisation once warm {u}");
    assert_eq!(servers_at(&r, 20.0), 1.0);
    assert_eq!(servers_at(&r, 30.0), 2.0);
}

/// A fleet of 5 servers (4 workers, 100 ms: 200/s) at 140 requests/s (70%), clients with a
/// 1 s timeout and 4 attempts; an outage from 10 min to 11.5 min.
fn outage_scenario(autoscale: bool) -> String {
    let scaler = if autoscale {
        r#"
[pool.web.autoscale]
signal = "utilization"
target = 0.7
every = "30s"
provision = "60s"
cooldown = "5m"
min = 1
max = 10
"#
    } else {
        ""
    };
    format!(
        r#"
duration = "40m"
[metrics]
step = "10s"
[class.request]
rate = 140
timeout = "1s"
retry = {{ max_attempts = 4 }}
steps = [{{ query = "web" }}]
[pool.web]
shards = 5
workers = 4
queue_limit = 400
service = {{ law = "exp", mean = "100ms" }}
{scaler}
[event.outage]
kind = "outage"
pool = "web"
at = "10m"
for = "90s"
"#
    )
}

#[test]
fn scaling_in_during_an_outage_retry_storm_tips_what_a_fixed_fleet_survives() {
    // During the outage every attempt fails at once and is retried at once: a storm of
    // fast failures that leaves the workers idle. The autoscaler reads the idle workers as
    // no demand and scales in to its minimum of 1 server. When the outage ends the full
    // load meets 1 server; queues pass the 1 s timeout and the retries (4 x 140 = 560/s)
    // outgrow even the largest fleet it may build (10 servers, 400/s): it stays collapsed.
    // The fixed fleet meets the end of the outage with its 5 servers and is fine at once.
    for run_index in 0..3 {
        let fixed = run(&scenario(&outage_scenario(false)), run_index);
        let scaled = run(&scenario(&outage_scenario(true)), run_index);
        for r in [&fixed, &scaled] {
            let before = mean_between(r, "request.goodput_per_s", 60.0, 600.0);
            assert!(before > 0.95 * 140.0, "goodput before the outage {before}");
        }
        let after = |r: &RunResult| mean_between(r, "request.goodput_per_s", 1500.0, 2400.0);
        assert!(after(&fixed) > 0.95 * 140.0, "fixed: {}", after(&fixed));
        assert!(
            after(&scaled) < 0.05 * 140.0,
            "autoscaled: {}",
            after(&scaled)
        );
        // The scale-in happened during the outage; the fleet then grew to its max.
        assert_eq!(servers_at(&scaled, 660.0), 1.0);
        assert_eq!(servers_at(&scaled, 1500.0), 10.0);
        let attempts = mean_between(&scaled, "request.attempts_per_s", 1500.0, 2400.0);
        assert!(attempts > 3.5 * 140.0, "the storm's attempts {attempts}");
    }
}

#[test]
fn scaling_in_by_failing_drops_the_queued_work_and_accounts_for_every_request() {
    // 8 single-worker servers at 90% load, their target (waiting queues on most of them);
    // at 30 s an intervention lowers `max` to 1 and the evaluation then fails 7 servers at
    // once: their
    // queued work fails at once (`dropped`), their work in service when it ends.
    let text = r#"
duration = "60s"
[metrics]
step = "1s"
[class.request]
rate = 72
steps = [{ query = "web" }]
[pool.web]
shards = 8
workers = 1
queue_limit = 50
service = { law = "exp", mean = "100ms" }
[pool.web.autoscale]
signal = "utilization"
target = 0.9
every = "30s"
cooldown = "0s"
min = 1
max = 8
scale_in = "fail"
[[at]]
time = "30s"
set = { "pool.web.autoscale.max" = 1 }
"#;
    for run_index in 0..5 {
        let r = run(&scenario(text), run_index);
        let web = &r.summary.pools["web"];
        assert_eq!(web.servers_removed, Some(7));
        assert_eq!(servers_at(&r, 29.0), 8.0);
        assert_eq!(servers_at(&r, 30.0), 1.0);
        // Every request is accounted for (the run checks it, too).
        let c = &r.summary.classes["request"];
        assert_eq!(c.offered, c.succeeded + c.failed + c.in_flight);
        let failed_at_30 = mean_between(&r, "request.failed_per_s", 30.0, 31.0);
        assert!(
            failed_at_30 >= 7.0,
            "run {run_index}: {failed_at_30} failed at the scale-in"
        );
        assert!(web.dropped > 0);
    }
}

#[test]
fn a_p99_target_scales_out_when_the_tail_passes_it() {
    // p99 of the pool's sojourn against 300 ms: 100/s on 2 x 10 workers has a p99 near
    // 0.46 s (exp service at 50%: mostly service), so 2 x 0.46 / 0.3 asks for 4 servers;
    // on 4 the p99 is the service's own (0.46 s: ln(100) x 100 ms), which a bigger fleet
    // cannot lower: it scales to max. The tail of the service itself is the floor of p99.
    let text = step_scenario("")
        .replace("signal = \"utilization\"", "signal = \"p99\"")
        .replace("target = 0.55", "target = \"300ms\"");
    let r = run(&scenario(&text), 0);
    assert_eq!(servers_at(&r, 1490.0), 8.0);
    // With a target above the service's own p99, the fleet stays put before the step.
    let text = step_scenario("")
        .replace("signal = \"utilization\"", "signal = \"p99\"")
        .replace("target = 0.55", "target = \"500ms\"");
    let r = run(&scenario(&text), 0);
    assert_eq!(servers_at(&r, 290.0), 2.0);
}

#[test]
fn an_intervention_raising_the_minimum_grows_the_fleet_at_the_next_evaluation() {
    let text = format!(
        "{}\n[[at]]\ntime = \"100s\"\nset = {{ \"pool.web.autoscale.min\" = 5 }}\n",
        step_scenario("")
    );
    let r = run(&scenario(&text), 0);
    // Evaluation at 120 s asks for 3 more; up at 180 s.
    assert_eq!(servers_at(&r, 170.0), 2.0);
    assert_eq!(servers_at(&r, 180.0), 5.0);
}

/// The bundled scenario's goodput ratio from 5 min after the surge to the end.
fn lag_goodput(variant: Option<&str>, run_index: u64) -> f64 {
    let r = run(&bundled("autoscaling-lag", variant, &[]), run_index);
    let offered = mean_between(&r, "request.offered_per_s", 900.0, 1500.0);
    mean_between(&r, "request.goodput_per_s", 900.0, 1500.0) / offered
}

#[test]
fn autoscaling_lag_collapses_and_stays_down_at_its_max_fleet() {
    for run_index in 0..3 {
        let r = run(&bundled("autoscaling-lag", None, &[]), run_index);
        assert_healthy_then_stuck(&r, "request", 60.0, (60.0, 300.0), (900.0, 1500.0));
        assert_eq!(servers_at(&r, 1490.0), 10.0, "run {run_index}");
    }
}

#[test]
fn autoscaling_lag_survives_with_faster_provisioning_a_higher_minimum_or_a_retry_budget() {
    for v in ["faster-provisioning", "higher-minimum", "retry-budget"] {
        for run_index in 0..3 {
            let g = lag_goodput(Some(v), run_index);
            assert!(
                g > 0.95,
                "{v}, run {run_index}: goodput ratio after the surge {g}"
            );
        }
    }
}
