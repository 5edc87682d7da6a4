//! A run that never reached a knob is the run of the design with the knob changed, row
//! for row; where it did reach it, the knob shows (so the first check is not vacuous).

use super::*;
use crate::model::{RunResult, run};
use crate::scenario::{Loader, Override, Scenario};

/// Replicated shards read by keyed pipelines through a client view, a cache tier with a
/// control plane in front of a database, and a class with timeouts and retries; each
/// trigger off until a case turns it on.
const FILE: &str = r#"
duration = "60s"
seed = 3
[metrics]
step = "1s"
[class.read]
rate = 300
timeout = "500ms"
[[class.read.steps]]
query = "kv"
keys = 6
fanout = "keys"
read = "replica"
[class.boot]
rate = 40
timeout = "1s"
[[class.boot.steps]]
cache = "mc"
keys = 4
query = "db"
[class.call]
rate = 60
timeout = "300ms"
retry = { max_attempts = 3, backoff = "constant", base = "10ms" }
steps = [{ query = "db" }]
[pool.kv]
shards = 3
replicas = 2
workers = 1
service = { law = "exp", mean = "500us" }
client = { refresh = "20s" }
[pool.db]
workers = 8
service = { law = "exp", mean = "20ms" }
[cache.mc]
nodes = 4
spares = 1
keys = 2000
warm = 1.0
control_plane = { detect_after = "2s" }
[event.crash]
kind = "crash"
pool = "kv"
shard = 0
replica = 1
at = "21s"
for = "20s"
enabled = false
[event.roll]
kind = "rolling_restart"
cache = "mc"
fraction = 0.5
at = "20s"
interval = "5s"
down_for = "10s"
enabled = false
[event.slow]
kind = "slowdown"
pool = "db"
factor = 8
at = "20s"
for = "15s"
enabled = false
"#;

fn load(sets: &[(&str, toml::Value)], watch: bool) -> Scenario {
    let sets: Vec<Override> = sets
        .iter()
        .map(|(k, v)| Override::new(k, v.clone(), "test"))
        .collect();
    let mut sc = Loader::from_text("w.toml", "w", FILE.into())
        .unwrap()
        .load(None, &sets)
        .unwrap();
    std::sync::Arc::make_mut(&mut sc.config).watch = watch;
    sc
}

/// The events and the rows' columns but those of `pool` (a pool's worker count shows in
/// its utilization), as text: rows hold NaN (a p99 with no success), which `==` never
/// matches.
fn digest(r: &RunResult, pool: Option<&str>) -> String {
    let mine =
        |c: &crate::scenario::Column| pool.is_some_and(|p| c.name.starts_with(&format!("{p}.")));
    let keep: Vec<usize> = (0..r.series.columns.len())
        .filter(|&i| !mine(&r.series.columns[i]))
        .collect();
    let rows: Vec<Vec<f64>> = (r.series.rows.iter())
        .map(|row| keep.iter().map(|&i| row[i]).collect())
        .collect();
    format!("{} {rows:?}", r.summary.events)
}

/// `knob`, changed by `other`: untouched with `trigger` off, and then the same rows with
/// the knob changed, for every seed; touched with it on, and different rows for some.
fn holds(knob: Knob, trigger: &str, other: (&str, toml::Value), watch: bool) {
    holds_but(knob, trigger, other, watch, None)
}

/// [`holds`], the columns of pool `but` aside.
fn holds_but(
    knob: Knob,
    trigger: &str,
    other: (&str, toml::Value),
    watch: bool,
    but: Option<&str>,
) {
    let on = format!("event.{trigger}.enabled");
    let mut differs = false;
    for seed in 0..3 {
        for enabled in [false, true] {
            let a = load(&[(&on, enabled.into())], watch);
            let b = load(&[(&on, enabled.into()), (other.0, other.1.clone())], watch);
            let (ra, rb) = (run(&a, seed).unwrap(), run(&b, seed).unwrap());
            assert_eq!(ra.witness.untouched(knob), !enabled, "{knob:?} seed {seed}");
            if enabled {
                differs |= digest(&ra, but) != digest(&rb, but);
            } else {
                assert_eq!(digest(&ra, but), digest(&rb, but), "{knob:?} seed {seed}");
                assert!(rb.witness.untouched(knob), "{knob:?} seed {seed}");
            }
        }
    }
    assert!(differs, "{knob:?}: the knob never showed");
}

#[test]
fn a_retry_policy_unreached_changes_nothing() {
    holds(
        Knob::Retry(2),
        "slow",
        ("class.call.retry.max_attempts", 1.into()),
        false,
    );
}

#[test]
fn a_completion_mode_unreached_changes_nothing() {
    let partial = ("class.read.steps.0.completion", "partial".into());
    holds(Knob::Completion(0), "crash", partial, false);
}

#[test]
fn a_refresh_on_error_unreached_changes_nothing() {
    let refresh = ("pool.kv.client.refresh_on_error", true.into());
    holds(Knob::RefreshOnError(0), "crash", refresh, false);
}

#[test]
fn a_control_plane_unreached_changes_nothing() {
    let slow = ("cache.mc.control_plane.detect_after", "30s".into());
    holds(Knob::DetectAfter(0), "roll", slow, false);
}

/// `cancel_expired` is looked for only where a pool drops stale work or the run watches:
/// unwatched, a run with it off cannot say.
#[test]
fn cancel_expired_unreached_changes_nothing_where_looked_for() {
    holds(
        Knob::CancelExpired(1),
        "slow",
        ("pool.db.cancel_expired", true.into()),
        true,
    );
    let quiet = run(&load(&[], false), 0).unwrap();
    assert!(!quiet.witness.untouched(Knob::CancelExpired(1)));
    assert!(quiet.witness.untouched(Knob::Retry(2)));
    let dropping = load(&[("pool.db.cancel_expired", true.into())], false);
    assert!(
        run(&dropping, 0)
            .unwrap()
            .witness
            .untouched(Knob::CancelExpired(1))
    );
}

/// A pool's workers: a watched run whose arrivals never found as many busy as the smaller
/// count is the run with more; unwatched, it cannot say.
#[test]
fn workers_never_all_busy_change_nothing() {
    let knob = Knob::Workers { pool: 1, below: 8 };
    holds_but(
        knob,
        "slow",
        ("pool.db.workers", 12.into()),
        true,
        Some("db"),
    );
    assert!(!run(&load(&[], false), 0).unwrap().witness.untouched(knob));
}
