//! A variant whose sweep scenario is an earlier variant's (the same table, key for key in
//! order) reads its runs from that one's search instead of running them again (issue 27:
//! `brink all --full`), and gives the runs it gives searched alone.

use super::*;

/// Base: a slowdown trigger and an `[[at]]` response. `no-response` drops only the
/// response (sweeps leave it out: the base design's sweep); `untriggered` switches the
/// trigger off (both branches are the base design's baseline); `bigger` is another design;
/// `other-trigger` runs the base design but judges it after another trigger.
const FILE: &str = r#"
duration = "60s"
seed = 5
[metrics]
step = "1s"
[class.request]
rate = 50
timeout = "1s"
retry = { max_attempts = 3, backoff = "none" }
steps = [{ query = "api" }]
[pool.api]
workers = 8
service = { law = "exp", mean = "100ms" }
[event.slow]
kind = "slowdown"
pool = "api"
factor = 4
at = "10s"
for = "10s"
[event.later]
kind = "slowdown"
pool = "api"
factor = 4
at = "15s"
for = "10s"
enabled = false
[[at]]
time = "30s"
set = { "pool.api.workers" = 12 }
[variant.no-response]
set = { at = [] }
[variant.untriggered]
set = { "event.slow.enabled" = false }
[variant.bigger]
set = { "pool.api.workers" = 10 }
[variant.other-trigger]
set = { "event.slow.enabled" = false, "event.later.enabled" = true, "tipping.trigger" = ["later"] }
[tipping]
vary = "class.request.rate"
from = 20
to = 100
points = 5
trigger = ["slow"]
settle = "10s"
measure = "goodput_ratio.request"
healthy_above = 0.9
seeds = 5
"#;

fn sweep() -> Sweep {
    let loader = Loader::from_text("t.toml", "t", FILE.into()).unwrap();
    let all = Variants {
        names: vec![],
        all: true,
    };
    Sweep::prepare(loader, Kind::Tipping, &all, vec![]).unwrap()
}

#[test]
fn a_variant_the_sweep_cannot_tell_from_an_earlier_one_names_it() {
    let s = sweep();
    let names: Vec<&str> = s.plan.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "base",
            "no-response",
            "untriggered",
            "bigger",
            "other-trigger"
        ]
    );
    let (b, t) = (Branch::Baseline, Branch::Triggered);
    assert_eq!(
        s.sources,
        [
            [None, None],
            [Some((0, b)), Some((0, t))],
            [Some((0, b)), Some((0, b))],
            [None, None],
            // The same baseline run, but measured after its own trigger's end.
            [None, None],
        ]
    );
}

#[test]
fn runs_read_from_a_source_are_the_runs_searched_alone() {
    let together = sweep();
    let runs = together
        .search_variants(&[0, 1, 2, 3], 2, &|| {}, &|_| {})
        .unwrap();
    let simulated = together.simulated();
    let returned: usize = runs.iter().map(Vec::len).sum();
    let mut alone_simulated = 0;
    for (k, v) in [0, 1, 2, 3].into_iter().enumerate() {
        let alone = sweep();
        let own = alone.search_variants(&[v], 2, &|| {}, &|_| {}).unwrap();
        assert_eq!(own[0], runs[k], "variant {v}");
        assert!(own[0].iter().all(|r| r.variant == v));
        alone_simulated += alone.simulated();
    }
    assert_eq!(alone_simulated, returned as u64);
    // A run is simulated unless its source's search has it: none of no-response's (base's
    // runs), untriggered's where base ran its baseline at that value and seed.
    let has = |v: usize, r: &Run, b: Branch| {
        runs[v]
            .iter()
            .any(|s| s.value == r.value && s.seed == r.seed && s.branch == b)
    };
    let fresh = |k: usize, b: &dyn Fn(&Run) -> Branch| {
        runs[k].iter().filter(|r| !has(0, r, b(r))).count() as u64
    };
    assert_eq!(fresh(1, &|r| r.branch), 0);
    let untriggered = fresh(2, &|_| Branch::Baseline);
    assert!(untriggered < runs[2].len() as u64 / 2, "{untriggered}");
    let (base, bigger) = (runs[0].len() as u64, runs[3].len() as u64);
    assert_eq!(
        simulated,
        base + bigger + untriggered,
        "{simulated} of {returned}"
    );
}

/// Tables are the same only key for key in the same order (the order of classes, pools
/// and events is the order of what they build) and floats bit for bit.
#[test]
fn tables_are_the_same_in_order_and_to_the_bit() {
    let t = |text: &str| -> toml::Table { toml::from_str(text).unwrap() };
    let a = t("[class.a]\nrate = 1.0\n[class.b]\nrate = 2\nlist = [{ x = 0.5 }]\n");
    assert!(same(&a, &a.clone()));
    // Equal as maps, in another order.
    let swapped = t("[class.b]\nrate = 2\nlist = [{ x = 0.5 }]\n[class.a]\nrate = 1.0\n");
    assert_eq!(a, swapped);
    assert!(!same(&a, &swapped));
    let deeper = t("[class.a]\nrate = 1.0\n[class.b]\nrate = 2\nlist = [{ x = 0.25 }]\n");
    assert!(!same(&a, &deeper));
    assert!(!same(&t("x = 0.0"), &t("x = -0.0")));
    assert!(same(&t("x = nan"), &t("x = nan")));
}
