//! A retry reuses its step's draw of keys instead of drawing them again: the draw depends
//! only on the request, its class and its step, so reusing it must change no byte. Each
//! scenario here retries keyed steps (a keyed fan-out without a cache, a cache step whose
//! one miss queries every key, a cache step that queries only its misses, coalesced
//! fills), its trigger on, and is run with the draw reused and drawn again.

use crate::model::metrics::RunResult;
use crate::model::simulation::Simulation;
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
    let mut sim = Simulation::checked(sc, 1).unwrap();
    sim.keys.reuse = reuse;
    let mut r: RunResult = sim.run().unwrap();
    r.wall_s = 0.0;
    let retries = r
        .summary
        .classes
        .values()
        .map(|c| c.attempts - c.admitted)
        .sum();
    (format!("{r:?}"), retries)
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
