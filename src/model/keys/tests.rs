//! A retry reuses its step's draw of keys instead of drawing them again: the draw depends
//! only on the request, its class and its step, so reusing it must change no byte. Each
//! scenario here retries keyed steps (a keyed fan-out without a cache, a cache step whose
//! one miss queries every key, a cache step that queries only its misses, coalesced
//! fills), its trigger on, and is run with the draw reused and drawn again.

use crate::model::metrics::RunResult;
use crate::model::simulation::Simulation;
use crate::scenario::{Loader, Override};

/// The result of a run of `name` (`variant`, with `sets`), reusing draws or not; and how
/// many attempts were retries.
fn run(name: &str, variant: Option<&str>, sets: &[&str], reuse: bool) -> (String, u64) {
    let loader = Loader::resolve(std::path::Path::new(name)).unwrap();
    let sets: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    let sc = loader.load_run(variant, &sets).unwrap();
    let mut sim = Simulation::checked(&sc, 1).unwrap();
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
