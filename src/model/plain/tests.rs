//! The plain instance gives the bytes of the general one: every bundled design that is
//! plain (with its triggers off and on, as a sweep runs it) and a set of plain scenarios
//! that use every feature the plain instance keeps, run both ways, give equal results.

use super::*;
use crate::model::metrics::RunResult;
use crate::scenario::{Loader, Override, Scenario, bundled};

/// A run of `sc` (run index 1), on the plain instance when `allowed` and the run is plain;
/// its result without the wall time, and whether it took the plain instance.
fn run(sc: &Scenario, allowed: bool) -> (String, bool) {
    let mut sim = Simulation::checked(sc, 1).unwrap();
    sim.plain_allowed = allowed;
    let plain = sim.plain();
    let mut r: RunResult = sim.run().unwrap();
    r.wall_s = 0.0;
    (format!("{r:?}"), plain)
}

/// Runs `sc` both ways: whether it is plain, after checking the two results are equal.
fn same_both_ways(sc: &Scenario, what: &str) -> bool {
    let (general, took) = run(sc, false);
    assert!(!took, "{what}: the general instance was asked for");
    let (plain, took) = run(sc, true);
    assert_eq!(general, plain, "{what}: the plain instance differs");
    took
}

/// `sc` with every trigger switched on (a sweep's triggered branch).
fn triggered(loader: &Loader, variant: Option<&str>, sc: &Scenario) -> Option<Scenario> {
    let sets: Vec<Override> = sc
        .config
        .triggers
        .iter()
        .filter(|t| !t.enabled)
        .map(|t| Override::parse(&format!("event.{}.enabled=true", t.name)).unwrap())
        .collect();
    (!sets.is_empty()).then(|| loader.load_run(variant, &sets).unwrap())
}

#[test]
fn bundled_plain_designs_give_the_same_bytes() {
    let mut plain = Vec::new();
    for b in bundled::all() {
        let loader = Loader::resolve(std::path::Path::new(b.name)).unwrap();
        let variants = std::iter::once(None).chain(loader.variant_names().into_iter().map(Some));
        for v in variants {
            let sc = loader.load_run(v.as_deref(), &[]).unwrap();
            let name = format!(
                "{}{}",
                b.name,
                v.as_deref().map_or(String::new(), |v| format!(" ({v})"))
            );
            if !plain_config(&sc.config) {
                continue;
            }
            if same_both_ways(&sc, &name) {
                plain.push(name.clone());
            }
            if let Some(t) = triggered(&loader, v.as_deref(), &sc) {
                assert!(same_both_ways(&t, &format!("{name}, triggered")));
            }
        }
    }
    // The designs this test is about: if they stopped being plain, it would check nothing.
    for must in ["mm1", "mmc"] {
        assert!(
            plain.iter().any(|p| p == must),
            "{must} is no longer plain: {plain:?}"
        );
    }
}

/// A scenario from its text.
fn text(t: &str) -> Scenario {
    Loader::from_text("t.toml", "t", t.to_string())
        .unwrap()
        .load_run(None, &[])
        .unwrap()
}

#[test]
fn every_feature_the_plain_instance_keeps_gives_the_same_bytes() {
    let cases = [
        // Overload with a short queue: rejections, retried with jittered backoff at both
        // levels; a LIFO queue; a rate limit on arrivals and on retries.
        r#"duration = "600s"
           [class.a]
           rate = 14
           retry = { max_attempts = 3, backoff = "exponential", base = "100ms", cap = "2s", jitter = "full" }
           rate_limit = { rate = 13, burst = 5 }
           steps = [{ query = "s", retry = { max_attempts = 2, backoff = "exponential", base = "10ms", cap = "1s", jitter = "decorrelated" } }]
           [pool.s]
           workers = 2
           queue_limit = 4
           discipline = "lifo"
           service = { law = "exp", mean = "150ms" }"#,
        // Two classes, two steps, two pools; shards with every balancer; a lognormal law
        // and a constant one; a load slowdown; a slowdown and a burst trigger.
        r#"duration = "300s"
           [class.a]
           rate = 40
           steps = [{ query = "front" }, { query = "back", cost = 2 }]
           [class.b]
           rate = 15
           retry = { max_attempts = 2 }
           steps = [{ query = "back" }]
           [pool.front]
           shards = 4
           workers = 3
           balance = "power-of-two"
           queue_limit = 20
           service = { law = "lognormal", mean = "50ms", cv = 1.5 }
           [pool.back]
           shards = 3
           workers = 4
           balance = "random"
           service = { law = "const", mean = "20ms" }
           slowdown = { with = "in_flight", per = 0.01, max = 3 }
           [event.slow]
           kind = "slowdown"
           pool = "back"
           at = "100s"
           for = "50s"
           factor = 3
           [event.surge]
           kind = "burst"
           class = "a"
           clients = 500
           at = "150s"
           spread = "5s""#,
        // A closed population with a fan-out to every shard, completing on part of them.
        r#"duration = "300s"
           [class.u]
           users = 50
           think = { law = "exp", mean = "1s" }
           steps = [{ query = "s", fanout = "all", completion = "partial" }]
           [pool.s]
           shards = 3
           workers = 2
           queue_limit = 5
           service = { law = "exp", mean = "100ms" }"#,
        // Two closed populations on one pool: exponential thinkers (one shared clock) and
        // lognormal ones who give up after failures in a row, retrying a full queue.
        r#"duration = "300s"
           [class.u]
           users = 40
           think = { law = "exp", mean = "500ms" }
           steps = [{ query = "s" }]
           [class.v]
           users = 30
           think = { law = "lognormal", mean = "1s", cv = 2 }
           give_up = { after = 2, for = "5s" }
           retry = { max_attempts = 2 }
           steps = [{ query = "s" }]
           [pool.s]
           workers = 4
           queue_limit = 3
           service = { law = "exp", mean = "100ms" }"#,
    ];
    for (i, t) in cases.iter().enumerate() {
        let sc = text(t);
        assert!(
            same_both_ways(&sc, &format!("case {i}")),
            "case {i} is not plain"
        );
    }
}

#[test]
fn a_feature_the_plain_instance_leaves_out_makes_a_run_general() {
    let base = r#"duration = "10s"
        [class.a]
        rate = 1
        steps = [{ query = "s" }]
        [pool.s]
        service = { law = "exp", mean = "1s" }
        "#;
    assert!(plain_config(&text(base).config));
    for extra in [
        "[class.a]\ntimeout = \"1s\"",
        "[pool.s]\nerror_rate = 0.1",
        "[pool.s]\ncancel_expired = true",
        "[event.o]\nkind = \"outage\"\npool = \"s\"\nat = \"1s\"\nfor = \"1s\"",
    ] {
        let t = merge(base, extra);
        assert!(!plain_config(&text(&t).config), "{extra}");
    }
}

/// `base` with the keys of `extra`'s one table added to the same table in `base` (or the
/// table appended when `base` has none).
fn merge(base: &str, extra: &str) -> String {
    let (head, body) = extra.split_once('\n').unwrap();
    match base.find(head) {
        Some(i) => {
            let at = i + head.len();
            format!("{}\n{}{}", &base[..at], body, &base[at..])
        }
        None => format!("{base}\n{extra}"),
    }
}

#[test]
fn a_pool_out_of_service_makes_a_run_general() {
    // What a trigger switched off before its end leaves behind (the live page can).
    let sc = text(
        r#"duration = "10s"
           [class.a]
           rate = 1
           steps = [{ query = "s" }]
           [pool.s]
           shards = 2
           service = { law = "exp", mean = "1s" }"#,
    );
    let fresh = || Simulation::checked(&sc, 1).unwrap();
    assert!(fresh().plain());
    let mut sim = fresh();
    sim.pools[0].outages = 1;
    assert!(!sim.plain());
    let mut sim = fresh();
    sim.pools[0].servers[1].down = true;
    assert!(!sim.plain());
    let mut sim = fresh();
    sim.pools[0].servers[0].sync_out = true;
    assert!(!sim.plain());
    let mut sim = fresh();
    sim.pools[0].servers[1].fail_fast = 0.5;
    assert!(!sim.plain());
    let mut sim = fresh();
    sim.pools[0].sheds = true;
    assert!(!sim.plain());
}

/// A live session switches an outage off while it is under way: the run stays on the
/// general instance until the outage's end has put the pool back in service, so both
/// instances give the same result.
#[test]
fn a_trigger_switched_off_before_its_end_keeps_the_general_instance() {
    let sc = text(
        r#"duration = "400s"
           [class.a]
           rate = 5
           retry = { max_attempts = 3 }
           steps = [{ query = "s" }]
           [pool.s]
           workers = 2
           service = { law = "exp", mean = "100ms" }
           [event.down]
           kind = "outage"
           pool = "s"
           at = "100s"
           for = "100s""#,
    );
    let s = 1_000_000_000;
    let live = |allowed: bool| {
        let mut sim = Simulation::checked(&sc, 1).unwrap();
        sim.plain_allowed = allowed;
        sim.start_live();
        sim.advance_to(150 * s).unwrap();
        let mut config = (*sc.config).clone();
        config.triggers[0].enabled = false;
        sim.apply_intervention(&crate::scenario::Intervention {
            time: 150 * s,
            label: "off".into(),
            config: std::sync::Arc::new(config),
            fire: None,
        });
        assert!(!sim.plain(), "the outage is still under way");
        sim.advance_to(250 * s).unwrap();
        assert_eq!(sim.plain(), allowed, "the outage is over");
        sim.advance_to(400 * s).unwrap();
        let mut r = sim.into_result().unwrap();
        r.wall_s = 0.0;
        format!("{r:?}")
    };
    assert_eq!(live(false), live(true));
}
