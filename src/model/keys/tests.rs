//! A retry reuses its step's draw of keys instead of drawing them again: the draw depends
//! only on the request, its class and its step, so reusing it must change no byte. Each
//! scenario here retries keyed steps (a keyed fan-out without a cache, a cache step whose
//! one miss queries every key, a cache step that queries only its misses, coalesced
//! fills), its trigger on, and is run with the draw reused and drawn again. A first step's
//! draw taken one request ahead ([`super::Ahead`]) must change no byte either. And a key
//! count draws with its law's mean.

use crate::model::metrics::RunResult;
use crate::model::simulation::Simulation;
use crate::model::step::Until;
use crate::scenario::{Loader, Override, Scenario};

/// The result of a run of `name` (`variant`, with `sets`), reusing draws or not; and how
/// many attempts were retries.
fn run(name: &str, variant: Option<&str>, sets: &[&str], reuse: bool) -> (String, u64) {
    let loader = Loader::resolve(std::path::Path::new(name)).unwrap();
    let sets: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    run_of(&loader.load_run(variant, &sets).unwrap(), reuse)
}

/// The result of a run of `sc`, reusing draws or not; and how many attempts were retries.
fn run_of(sc: &Scenario, reuse: bool) -> (String, u64) {
    let (r, retries, _) = run_with(sc, |k| k.reuse = reuse);
    (r, retries)
}

/// The result of a run of `sc` with its key scratch set by `set`; how many attempts were
/// retries; and how many draws taken ahead were used ([`super::Ahead`]).
fn run_with(sc: &Scenario, set: impl FnOnce(&mut super::KeyScratch)) -> (String, u64, u64) {
    let mut sim = Simulation::checked(sc, 1).unwrap();
    set(&mut sim.keys);
    sim.schedule_start();
    sim.run_events(&mut Until(&mut |_, _: &[Vec<f64>]| false))
        .unwrap();
    let used = sim.keys.ahead.used;
    let mut r: RunResult = sim.conclude(std::time::Instant::now()).unwrap();
    r.wall_s = 0.0;
    let retries = r
        .summary
        .classes
        .values()
        .map(|c| c.attempts - c.admitted)
        .sum();
    (format!("{r:?}"), retries, used)
}

#[test]
fn reusing_a_retrys_draw_of_keys_changes_no_byte() {
    let cases: [(&str, Option<&str>, &[&str]); 4] = [
        // Pipelined reads over a Redis cluster (no cache), retried through a metastable
        // failure.
        (
            "grab-2019-02-15",
            Some("retries-tight-capacity"),
            &["duration=\"6m\"", "class.read.rate=400"],
        ),
        // A cache step whose one miss queries every key, retried with backoff.
        (
            "slack-2022-02-22",
            None,
            &["duration=\"1h10m\"", "class.boot.rate=250"],
        ),
        // A cache step that queries only its misses (a call through a cache), past its
        // tipping point.
        ("web-api", None, &["class.request.rate=2600"]),
        // Coalesced fills, the clients retrying what times out.
        (
            "cache-stampede",
            Some("coalesce"),
            &[
                "class.request.retry={ max_attempts = 3, backoff = \"constant\", base = \"50ms\" }",
                "pool.db.workers=1",
            ],
        ),
    ];
    for (name, variant, sets) in cases {
        let (reused, retries) = run(name, variant, sets, true);
        let (drawn, _) = run(name, variant, sets, false);
        assert!(retries > 1000, "{name} {variant:?}: only {retries} retries");
        assert_eq!(
            reused, drawn,
            "{name} {variant:?}: reusing the draw changed the run"
        );
    }
}

/// A file whose pipelined reads (keys without a cache, retried: both pools are overloaded)
/// change mid-run: at 30 s an intervention widens the pipeline and moves it to a pool of
/// one shard.
const CHANGING: &str = r#"
duration = "60s"
seed = 3
[class.read]
rate = 400
timeout = "50ms"
retry = { max_attempts = 4, backoff = "constant", base = "5ms" }
[[class.read.steps]]
query = "kv"
keys = 8
fanout = "keys"
cost = 1
cost_per_key = 1
[pool.kv]
shards = 4
workers = 1
service = { law = "exp", mean = "1ms" }
[pool.small]
shards = 1
workers = 1
service = { law = "exp", mean = "300us" }
[[at]]
time = "30s"
label = "wider pipelines, to the one-shard pool"
set = { "class.read.steps.0.keys" = 20, "class.read.steps.0.query" = "small" }
"#;

#[test]
fn a_draw_kept_from_before_an_intervention_is_drawn_again() {
    // A retry straddling the change must draw the keys the new configuration asks for (and
    // route them over the new pool's shards), as a run that never reuses a draw does.
    let loader = Loader::from_text("changing.toml", "changing", CHANGING.into()).unwrap();
    let sc = loader.load_run(None, &[]).unwrap();
    let result = |reuse: bool| run_of(&sc, reuse);
    let (reused, retries) = result(true);
    assert!(retries > 1000, "only {retries} retries");
    assert_eq!(
        reused,
        result(false).0,
        "a kept draw outlived the intervention"
    );
}

/// Requests of two classes, one drawing 4 keys of a Zipf law at its first step; at 30 s
/// an intervention makes it draw 9 (a draw taken ahead before it must not be used after).
const ZIPF_CHANGING: &str = r#"
duration = "60s"
seed = 5
[class.get]
rate = 300
timeout = "100ms"
retry = { max_attempts = 3, backoff = "constant", base = "10ms" }
[[class.get.steps]]
cache = "items"
keys = 4
query = "db"
fanout = "all"
[class.put]
rate = 200
steps = [{ query = "db" }]
[pool.db]
workers = 2
service = { law = "exp", mean = "2ms" }
[cache.items]
nodes = 4
keys = 200000
zipf = 0.9
ttl = "20s"
[[at]]
time = "30s"
set = { "class.get.steps.0.keys" = 9 }
"#;

#[test]
fn taking_the_next_draw_ahead_changes_no_byte() {
    // Slack's boots (a Poisson key count over a Zipf law of 4e5 keys, retried, an
    // intervention at 1h02m), a key count changed mid-run, and calls.
    let slack = Loader::resolve(std::path::Path::new("slack-2022-02-22"))
        .unwrap()
        .load_run(
            None,
            &["duration=\"1h05m\"", "class.boot.rate=250"].map(|s| Override::parse(s).unwrap()),
        )
        .unwrap();
    let changing = Loader::from_text("zipf.toml", "zipf", ZIPF_CHANGING.into())
        .unwrap()
        .load_run(None, &[])
        .unwrap();
    // Calls through a cache of uniform keys (web-api's rows), past the tipping point.
    let calls = Loader::resolve(std::path::Path::new("web-api"))
        .unwrap()
        .load_run(None, &[Override::parse("class.request.rate=2600").unwrap()])
        .unwrap();
    for (name, sc) in [
        ("slack", &slack),
        ("changing", &changing),
        ("calls", &calls),
    ] {
        let (ahead, _, used) = run_with(sc, |_| {});
        let (drawn, _, none) = run_with(sc, |k| k.ahead.off = true);
        assert!(
            used > 1000,
            "{name}: only {used} draws taken ahead were used"
        );
        assert_eq!(none, 0, "{name}: a draw was taken ahead while off");
        assert_eq!(ahead, drawn, "{name}: taking draws ahead changed the run");
    }
}

/// A key count's law, built once at validation ([`crate::scenario::KeyCount::poisson`]),
/// draws with the law's mean: Poisson(8) floored at 1 has mean 8 + e^-8, a geometric count
/// on 1, 2, ... with mean 3 has mean 3 (the failures of Geometric(1/3), plus one). Over
/// 200,000 draws the standard error is 0.0063 (Poisson, sd 2.83) and 0.0055 (geometric,
/// sd 2.45); the tolerance, 0.05, is eight of them (the draws are seeded: a fixed stream).
#[test]
fn a_key_count_draws_with_its_laws_mean() {
    use crate::scenario::KeyCount;
    const N: u32 = 200_000;
    let mut rng = super::key_rng(0, 1, 0);
    let mut mean_of = |k: KeyCount| {
        (0..N)
            .map(|_| super::draw_count(k, &mut rng) as f64)
            .sum::<f64>()
            / N as f64
    };
    let poisson = mean_of(KeyCount::poisson(8.0, 1));
    assert!(
        (poisson - (8.0 + (-8.0f64).exp())).abs() < 0.05,
        "{poisson}"
    );
    let geometric = mean_of(KeyCount::geometric(3.0, 1));
    assert!((geometric - 3.0).abs() < 0.05, "{geometric}");
    // The floor: a Poisson count of mean 0.5 is at least 2.
    assert!((0..1000).all(|_| super::draw_count(KeyCount::poisson(0.5, 2), &mut rng) >= 2));
}
