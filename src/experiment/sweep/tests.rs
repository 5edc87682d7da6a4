//! A variant whose sweep scenario is an earlier variant's (the same table, key for key in
//! order) reads its runs from that one's search instead of running them again (issue 27:
//! `brink all --full`), and gives the runs it gives searched alone.

use super::*;
use crate::model::witness::Knob;

/// Base: a slowdown trigger and an `[[at]]` response. `no-response` drops only the
/// response (sweeps leave it out: the base design's sweep); `untriggered` switches the
/// trigger off (both branches are the base design's baseline); `bigger` is another design
/// (faster servers, where more workers would be kin: `kin_read_...`);
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
set = { "pool.api.service.mean" = "80ms" }
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

/// Variants that differ from the base design only in its retry policy and in
/// `cancel_expired`: kin of the base design, not sources.
const KIN: &str = r#"
[variant.no-retries]
set = { "class.request.retry.max_attempts" = 1 }
[variant.cancel]
set = { "pool.api.cancel_expired" = true }
"#;

/// A variant reads a run of its kin (an earlier variant that differs from it only in
/// knobs) where that run never reached those knobs, and gives the runs it gives searched
/// alone, with fewer simulated.
#[test]
fn kin_read_the_runs_that_never_reached_their_knobs() {
    let make = || {
        let loader = Loader::from_text("t.toml", "t", format!("{FILE}{KIN}")).unwrap();
        let all = Variants {
            names: vec![],
            all: true,
        };
        Sweep::prepare(loader, Kind::Tipping, &all, vec![]).unwrap()
    };
    let s = make();
    let (b, t) = (Branch::Baseline, Branch::Triggered);
    let first = |v: usize, br: Branch| s.kin[v][br as usize].first().cloned();
    assert_eq!(first(5, b), Some((0, b, vec![Knob::Retry(0)])));
    assert_eq!(first(6, t), Some((0, t, vec![Knob::CancelExpired(0)])));
    assert!(
        s.kin[..5].iter().flatten().all(Vec::is_empty),
        "sources, or other designs"
    );
    assert!(s.sources[5..].iter().flatten().all(Option::is_none));
    // The base design's runs look for stale work for `cancel`; `cancel`'s need not.
    assert!(s.watch[0] && !s.watch[3] && !s.watch[6]);
    let mine = [0, 5, 6];
    let together = make();
    let runs = together.search_variants(&mine, 2, &|| {}, &|_| {}).unwrap();
    let mut alone_simulated = 0;
    for (k, v) in mine.into_iter().enumerate() {
        let alone = make();
        let own = alone.search_variants(&[v], 2, &|| {}, &|_| {}).unwrap();
        assert_eq!(own[0], runs[k], "variant {v}");
        alone_simulated += alone.simulated();
    }
    // At the loads the design carries, baseline runs never fail: 23 of 195 read here.
    let simulated = together.simulated();
    assert!(
        simulated + 15 <= alone_simulated,
        "{simulated} simulated of {alone_simulated}"
    );
}

/// Kin are told apart by the earlier variant's own design, not the base design's: two
/// variants that both add an autoscaler differ in workers that its utilization reads, so
/// they are not kin (the base design has none). (A setting cannot add a class or a pool:
/// the components' numbers are the base design's.)
#[test]
fn kin_are_named_by_the_earlier_variant_s_own_design() {
    let text = format!(
        "{FILE}{}",
        r#"
[variant.scaled]
set = { "pool.api.autoscale" = { signal = "utilization", target = 0.6, every = "30s", provision = "1m", min = 1, max = 4 } }
[variant.scaled-wide]
set = { "pool.api.autoscale" = { signal = "utilization", target = 0.6, every = "30s", provision = "1m", min = 1, max = 4 }, "pool.api.workers" = 12 }
"#
    );
    let loader = Loader::from_text("t.toml", "t", text).unwrap();
    let all = Variants {
        names: vec![],
        all: true,
    };
    let s = Sweep::prepare(loader, Kind::Tipping, &all, vec![]).unwrap();
    let names: Vec<&str> = s.plan.variants.iter().map(|v| v.name.as_str()).collect();
    let at = |n: &str| names.iter().position(|m| *m == n).unwrap();
    let of = |v: usize, u: usize| -> Vec<Vec<Knob>> {
        (s.kin[v].iter().flatten())
            .filter(|(w, ..)| *w == u)
            .map(|(.., k)| k.clone())
            .collect()
    };
    assert!(
        of(at("scaled-wide"), at("scaled")).is_empty(),
        "an autoscaler reads the workers"
    );
    // Without the autoscaler, the same change of workers is a knob.
    let wider = of(at("bigger"), at("base"));
    assert!(wider.is_empty(), "faster servers are another design");
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

/// A scenario with a warm-up: the trigger at 300 s, another event at 280 s, a load that
/// ramps without repeating, another that repeats every 6 s, rows of 4 s.
const WARM: &str = r#"
duration = "600s"
[metrics]
step = "4s"
[class.request]
rate = 50
profile = { points = [["0s", 0.5], ["100s", 1.0], ["500s", 0.8]] }
steps = [{ query = "api" }]
[class.tick]
rate = 5
profile = { points = [["0s", 1.0], ["3s", 0.5]], every = "6s" }
steps = [{ query = "api" }]
[pool.api]
workers = 8
service = { law = "exp", mean = "10ms" }
[event.slow]
kind = "slowdown"
pool = "api"
factor = 4
at = "300s"
for = "10s"
[event.before]
kind = "slowdown"
pool = "api"
factor = 2
at = "280s"
for = "5s"
enabled = false
[tipping]
vary = "class.request.rate"
from = 20
to = 100
points = 3
trigger = ["slow"]
settle = "20s"
measure = "goodput_ratio.request"
healthy_above = 0.9
seeds = 2
warmup = "30s"
"#;

/// `tipping.warmup` (issue 27): every sweep run holds every event earlier by the same
/// shift, a whole number of the scenario's clocks (rows of 4 s, a load repeating every
/// 6 s: 12 s), as far as leaves at least the warm-up before the trigger (300 - 30 = 270
/// -> 264); it is that much shorter, keeps its row length, and its ramping load is the
/// file's at the same time from the trigger. Both branches alike (they fork at the
/// trigger). Without `warmup` nothing moves.
#[test]
fn a_warm_up_moves_events_and_a_ramping_load_earlier_by_whole_clock_periods() {
    let s_ = 1_000_000_000;
    let file = Loader::from_text("w.toml", "w", WARM.into()).unwrap();
    let whole = file.load(None, &[]).unwrap();
    let base = Variants::default();
    let sweep = Sweep::prepare(file, Kind::Tipping, &base, vec![]).unwrap();
    for branch in [Branch::Baseline, Branch::Triggered] {
        let run = sweep.scenario_at(0, [60.0, 0.0], branch).unwrap();
        let at = |sc: &Scenario, name: &str| {
            let e = sc.config.triggers.iter().find(|e| e.name == name).unwrap();
            e.at_ns
        };
        assert_eq!(at(&run, "slow"), 36 * s_);
        assert_eq!(at(&run, "before"), 16 * s_);
        assert_eq!(run.duration, 336 * s_);
        assert_eq!(run.window, 4 * s_);
        let (t, w) = (
            run.tipping.as_ref().unwrap(),
            whole.tipping.as_ref().unwrap(),
        );
        assert_eq!(t.window_start_ns, w.window_start_ns - 264 * s_);
        assert_eq!(t.shift_ns, 0, "a shifted run shifts no further");
        let (ramp, file_ramp) = (
            &run.config.classes[0].profile,
            &whole.config.classes[0].profile,
        );
        for k in 0..=336 {
            let x = k * s_;
            assert!(
                (ramp.factor(x) - file_ramp.factor(x + 264 * s_)).abs() < 1e-12,
                "{k} s"
            );
        }
        assert_eq!(
            run.config.classes[1].profile,
            whole.config.classes[1].profile
        );
    }
    // Without a warm-up, the file's times.
    let file = Loader::from_text("w.toml", "w", WARM.replace("warmup = \"30s\"", "")).unwrap();
    let sweep = Sweep::prepare(file, Kind::Tipping, &base, vec![]).unwrap();
    let run = sweep
        .scenario_at(0, [60.0, 0.0], Branch::Triggered)
        .unwrap();
    assert_eq!(run.duration, 600 * s_);
    assert_eq!(run.config.triggers[0].at_ns, 300 * s_);
}

/// A warm-up that would start runs after an event, or one the sweep cannot hold (it
/// varies an event's start), is refused, naming `tipping.warmup`.
#[test]
fn a_warm_up_that_cannot_hold_is_refused() {
    let refused = |text: String, says: &str| {
        let e = Loader::from_text("w.toml", "w", text)
            .unwrap()
            .load(None, &[])
            .unwrap_err();
        let e = e.to_string();
        assert!(e.contains("tipping.warmup") && e.contains(says), "{e}");
    };
    refused(
        WARM.replace("warmup = \"30s\"", "warmup = \"5s\""),
        "event `before` starts at 280 s",
    );
    refused(
        WARM.replace(
            "vary = \"class.request.rate\"\nfrom = 20\nto = 100",
            "vary = \"event.before.at\"\nfrom = \"270s\"\nto = \"290s\"",
        ),
        "varies `event.before.at`",
    );
    // A warm-up as long as the time before the trigger moves nothing.
    let l = Loader::from_text("w.toml", "w", WARM.replace("\"30s\"", "\"300s\"")).unwrap();
    assert_eq!(l.load(None, &[]).unwrap().tipping.unwrap().shift_ns, 0);
}
