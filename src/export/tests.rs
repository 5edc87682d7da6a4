//! Golden-file tests of the exporters: small hand-built results, exported and compared byte
//! for byte with the files in `tests/golden/export/`. The inputs cover what a format must
//! get right: missing values, whole and fractional numbers, text that needs quoting or
//! escaping, optional fields present and absent.
//!
//! A deliberate change of a format re-records the files:
//!
//! ```text
//! BRINK_BLESS=1 cargo test --lib export::tests
//! git diff tests/golden/export/      # review what changed, then commit it
//! ```
//!
//! Without `BRINK_BLESS`, a missing or different file fails the test. The field names and
//! columns are a public contract (`scripts/golden` checks the real scenarios' outputs).

use super::*;
use crate::experiment::plan::{AxisPlan, Kind, Plan, RunPoint, VariantPlan};
use crate::model::metrics::{
    CacheSummary, CallSummary, ClassSummary, Latency, PoolSummary, Summary, TimeSeries,
};
use crate::report::phase::PhaseMap;
use crate::report::sweep::{SweepReport, report};
use crate::scenario::sweep::{Health, Method};
use crate::scenario::{Column, Measure, Owner, Provenance};
use indexmap::IndexMap;
use std::path::PathBuf;

/// A fixed provenance (a version that never changes), so that the golden files change only
/// with their format.
fn golden_provenance() -> Provenance {
    Provenance {
        brink: "0.0.0-golden".into(),
        schema: crate::scenario::provenance::SCHEMA,
        scenario: "golden".into(),
        scenario_sha256: crate::scenario::provenance::sha256_hex(b"golden"),
        seed: 11,
        variant: None,
        overrides: vec!["pool.server.workers=4".into()],
    }
}

/// Compares `actual` with `tests/golden/export/<name>`, or records it with `BRINK_BLESS=1`.
fn golden(name: &str, actual: &[u8]) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/export")
        .join(name);
    if std::env::var_os("BRINK_BLESS").is_some_and(|v| v != "0") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; record it with BRINK_BLESS=1 cargo test --lib export::tests",
            path.display()
        )
    });
    if expected == actual {
        return;
    }
    let (exp, act) = (
        String::from_utf8_lossy(&expected),
        String::from_utf8_lossy(actual),
    );
    let (mut e, mut a) = (exp.lines(), act.lines());
    let mut line = 1;
    loop {
        match (e.next(), a.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (None, None) => panic!(
                "{name} differs from {} in line endings or the final newline",
                path.display()
            ),
            (x, y) => panic!(
                "{name} differs from {} at line {line}:\n  expected: {}\n  actual:   {}\n\
                 (a deliberate format change: BRINK_BLESS=1 cargo test --lib export::tests)",
                path.display(),
                x.unwrap_or("(end of file)"),
                y.unwrap_or("(end of file)"),
            ),
        }
    }
}

fn class(offered: u64, keys: Option<(u64, u64)>) -> ClassSummary {
    ClassSummary {
        users: None,
        offered,
        admitted: offered - 3,
        rejected: 3,
        succeeded: offered - 10,
        failed: 6,
        in_flight: 1,
        attempts: offered + 41,
        goodput_per_s: (offered - 10) as f64 / 600.0,
        latency_s: Latency {
            mean: Some(0.1234567890123),
            p50: Some(0.09),
            p99: None,
        },
        keys_ok: keys.map(|k| k.0),
        keys_failed: keys.map(|k| k.1),
        hedges: None,
    }
}

fn pool(primary: Option<f64>) -> PoolSummary {
    PoolSummary {
        utilization: 0.7,
        mean_queue_len: 12.5,
        mean_wait_s: 1e-7,
        mean_sojourn_s: 0.3333333333333333,
        served: 41_000,
        dropped: 0,
        expired: 17,
        queries: 41_017,
        failed_fast: 2,
        primary_utilization: primary,
        mean_waiting_on_calls: None,
        fallbacks: None,
        shed: None,
        mean_servers: None,
        servers_added: None,
        servers_removed: None,
    }
}

/// A run with two classes (one with pipelines), two pools (one with replicas) and a cache.
fn summary() -> Summary {
    Summary {
        scenario: "golden".into(),
        variant: Some("lifo".into()),
        seed: 11,
        sim_duration_s: 600.0,
        events: 1_234_567,
        classes: IndexMap::from([
            ("request".to_string(), class(3000, None)),
            ("feed".to_string(), class(120, Some((5000, 12)))),
        ]),
        pools: IndexMap::from([
            ("db".to_string(), pool(None)),
            ("redis".to_string(), pool(Some(0.95))),
        ]),
        caches: IndexMap::from([(
            "memcached".to_string(),
            CacheSummary {
                hit_ratio: Some(0.875),
                lookups: 8,
                hits: 7,
                fills: 1,
                slot_losses: 0,
            },
        )]),
        calls: IndexMap::new(),
    }
}

/// The columns of one class, one pool with replicas and one cache, as the schema has them.
fn series() -> TimeSeries {
    let mut columns = vec![Column {
        owner: Owner::Time,
        measure: Measure::Time,
        name: "time_s".into(),
    }];
    let mut add = |owner, component: &str, measure: Measure| {
        columns.push(Column {
            owner,
            measure,
            name: format!("{component}.{}", measure.suffix()),
        })
    };
    // An open class: no population column.
    for m in Measure::of("class").filter(|&m| m != Measure::UsersWaiting) {
        add(Owner::Class(0), "request", m);
    }
    for m in [
        Measure::Utilization,
        Measure::QueueLen,
        Measure::QueriesPerS,
        Measure::PrimaryUtilization,
    ] {
        add(Owner::Pool(0), "db", m);
    }
    add(Owner::Cache(0), "memcached", Measure::HitRatio);
    let nan = f64::NAN;
    TimeSeries {
        columns,
        rows: vec![
            // A quiet step: nothing succeeded, so no latency.
            vec![0.0, 5.0, 5.0, 0.0, 0.0, 0.0, nan, 0.0, 0.0, 5.0, 0.0, nan],
            vec![
                5.0, 5.2, 6.4, 5.0, 0.2, 0.0, 0.123, 0.5, 1.25, 6.4, 0.75, 0.9,
            ],
            // A storm: large rates, long queues, fractions at full precision.
            vec![
                10.0,
                5.0,
                123.456789,
                1.0 / 3.0,
                4.6,
                0.2,
                29.99,
                1.0,
                1e6,
                1e15,
                1.0,
                1e-7,
            ],
        ],
    }
}

/// A tipping sweep of two variants (one name needs quoting in CSV) over three rates, two
/// seeds, healthy above 0.8.
fn tipping_plan() -> Plan {
    Plan {
        kind: Kind::Tipping,
        scenario: "golden".into(),
        title: "Golden sweep".into(),
        measure: "goodput_ratio.request".into(),
        health: Health::Above(0.8),
        trigger: vec!["slowdown".into(), "crash".into()],
        seeds: 2,
        axes: vec![AxisPlan {
            path: "class.request.rate".into(),
            unit: Some("requests/s".into()),
            values: vec![10.0, 55.5, 100.0],
            label: Some("offered load".into()),
        }],
        variants: vec![
            VariantPlan {
                name: "base".into(),
                operating_point: vec![70.0],
                untriggered: vec![],
                tolerance: 0.0,
                collapse_time: Some(crate::experiment::plan::CollapseTime {
                    at: 70.0,
                    mean_s: 7.8e11,
                    ci95: [5.4e11, 1.1e12],
                    text: "24800 years".into(),
                    level: "queue of pool server >= 200".into(),
                }),
            },
            VariantPlan {
                name: "budget, jitter".into(),
                operating_point: vec![0.0],
                untriggered: vec!["slowdown".into()],
                tolerance: 0.0,
                collapse_time: None,
            },
        ],
        method: Method::Grid,
        settle_s: 0.0,
        provenance: golden_provenance(),
    }
}

/// One measure per run of [`tipping_plan`]: base tips at 55.5 and is overloaded at 100; the
/// other variant never fails except one run that ran away (no measure).
fn tipping_runs() -> Vec<RunPoint> {
    let m = [
        // base: (seed 0 baseline, triggered), (seed 1 baseline, triggered) per value
        [1.0, 0.97, 0.99, 0.85],
        [0.95, 0.2, 0.9, 0.35],
        [0.4, 0.1, 0.5, 0.05],
        // "budget, jitter"
        [1.0, 1.0, 1.0, 1.0],
        [1.0, 0.9, 1.0, 0.91],
        [0.9, f64::NAN, 0.85, 0.8000000000000002],
    ];
    m.iter()
        .flatten()
        .enumerate()
        .map(|(i, &x)| RunPoint {
            index: i as u64,
            measure: (!x.is_nan()).then_some(x),
            trace: None,
        })
        .collect()
}

/// A phase map over rate and a slowdown's length (seconds), healthy below 2.5 s of latency.
fn phase_plan() -> Plan {
    Plan {
        kind: Kind::Phase,
        scenario: "golden".into(),
        title: "Golden map".into(),
        measure: "request.latency_p99_s".into(),
        health: Health::Below(2.5),
        trigger: vec!["slowdown".into()],
        seeds: 1,
        axes: vec![
            AxisPlan {
                path: "class.request.rate".into(),
                unit: None,
                values: vec![10.0, 20.0, 30.0],
                label: None,
            },
            AxisPlan {
                path: "event.slowdown.for".into(),
                unit: Some("s".into()),
                values: vec![0.5, 60.0],
                label: Some("slowdown length".into()),
            },
        ],
        variants: vec![VariantPlan {
            name: "base".into(),
            operating_point: vec![20.0, 30.0],
            untriggered: vec![],
            tolerance: 0.0,
            collapse_time: None,
        }],
        method: Method::Grid,
        settle_s: 0.0,
        provenance: golden_provenance(),
    }
}

fn phase_runs() -> Vec<RunPoint> {
    [
        0.1, 0.2, 0.1, 3.0, 0.3, 2.4, 0.3, 9.5, 2.6, 40.0, 3.1, 41.25,
    ]
    .iter()
    .enumerate()
    .map(|(i, &x)| RunPoint {
        index: i as u64,
        measure: Some(x),
        trace: None,
    })
    .collect()
}

fn tipping_report() -> SweepReport {
    report(&tipping_plan(), &tipping_plan().locate(&tipping_runs()))
}

#[test]
fn summary_json_golden() {
    golden(
        "summary.json",
        &summary_json(&summary(), &golden_provenance()),
    );
    // Without caches the key is left out, not written empty.
    let mut s = summary();
    s.caches.clear();
    let text = String::from_utf8(summary_json(&s, &golden_provenance())).unwrap();
    assert!(!text.contains("\"caches\""), "{text}");
    assert!(!text.contains("\"calls\""), "{text}");
}

/// A service graph's summary: a pool with calls that sheds, a hedged class, two calls
/// (one with a breaker and a hedge).
#[test]
fn summary_json_with_calls_golden() {
    let mut s = summary();
    s.caches.clear();
    s.classes["request"].hedges = Some(42);
    let api = &mut s.pools["db"];
    api.mean_waiting_on_calls = Some(3.25);
    api.fallbacks = Some(7);
    api.shed = Some(19);
    let call = |breaker: Option<f64>, hedges: Option<u64>| CallSummary {
        calls: 1000,
        rejected: 10,
        attempts: 1400,
        succeeded: 950,
        failed: 38,
        in_flight: 2,
        latency_s: Latency {
            mean: Some(0.012),
            p50: Some(0.01),
            p99: None,
        },
        hedges,
        breaker_open_s: breaker,
    };
    s.calls = IndexMap::from([
        ("db.redis".to_string(), call(Some(12.5), Some(64))),
        ("db.audit".to_string(), call(None, None)),
    ]);
    golden(
        "summary-calls.json",
        &summary_json(&s, &golden_provenance()),
    );
}

#[test]
fn timeseries_csv_golden() {
    golden("timeseries.csv", &timeseries_csv(&series()));
}

#[test]
fn tipping_csv_golden() {
    golden(
        "tipping.csv",
        &sweep_csv(&tipping_plan(), &tipping_plan().locate(&tipping_runs())),
    );
}

#[test]
fn phase_csv_golden() {
    golden(
        "phase.csv",
        &sweep_csv(&phase_plan(), &phase_plan().locate(&phase_runs())),
    );
    // The public columns stay first; the two named after the parameters come last.
    let csv = String::from_utf8(sweep_csv(
        &phase_plan(),
        &phase_plan().locate(&phase_runs()),
    ))
    .unwrap();
    assert_eq!(
        csv.lines().next(),
        Some(
            "variant,value,value2,branch,seed,measure,state,class.request.rate,event.slowdown.for"
        )
    );
}

/// `phase.json`: the report's fields after `kind`, then the grid and per variant the
/// operating point on both axes (20 requests/s, 30 s: nearest cell (20, 0.5 s)), its cell
/// and the boundary (at 0.5 s only the overloaded 30 tips; at 60 s, 10 already does).
#[test]
fn phase_json_golden() {
    let plan = phase_plan();
    let r = report(&plan, &plan.locate(&phase_runs()));
    golden("phase.json", &phase_json(&PhaseMap::new(&plan, &r)));
    // An operating point off the map has no cell.
    let mut off = plan.clone();
    off.variants[0].operating_point = vec![20.0, 90.0];
    let m = PhaseMap::new(&off, &r);
    assert_eq!(m.maps[0].operating_point, [20.0, 90.0]);
    assert_eq!(m.maps[0].operating_cell, None);
}

#[test]
fn tipping_json_golden() {
    golden("tipping.json", &tipping_json(&tipping_report()));
}

#[test]
fn shard_json_golden_and_read_back() {
    let plan = tipping_plan();
    let runs: Vec<RunPoint> = tipping_runs().into_iter().skip(1).step_by(2).collect();
    let file = ShardFile {
        shard: 1,
        of: 2,
        plan: plan.clone(),
        runs_sha256: shard_json::runs_digest(&runs),
        runs: runs.clone(),
    };
    let bytes = shard_json(&file);
    golden("tipping.shard-1-of-2.json", &bytes);
    // `brink merge` reads back exactly what was written (floats round-trip).
    let back = shard_json::read_shard_json(std::str::from_utf8(&bytes).unwrap()).unwrap();
    assert_eq!((back.shard, back.of), (1, 2));
    assert_eq!(back.plan, plan);
    assert_eq!(back.runs, runs);
}

#[test]
fn index_html_golden() {
    let run = |variant: Option<&str>, description: &str, dir: &str, zoom: bool| RunView {
        variant: variant.map(String::from),
        description: description.into(),
        dir: dir.into(),
        files: crate::experiment::run::run_files(zoom)
            .into_iter()
            .map(String::from)
            .collect(),
    };
    let page = Page {
        brink: "0.0.0-golden".into(),
        command: "brink all --out 'my output'".into(),
        sections: vec![
            Section {
                name: "golden".into(),
                title: "Golden <sweep> & \"friends\"".into(),
                description: "Line one with `code`.\nLine two: a < b.\n\n- a list\n- <script>alert(1)</script>\n".into(),
                case: "Golden 2024 (incident library IL-0001, https://example.com/postmortem): it tipped.".into(),
                runs: vec![
                    run(None, "", "golden", true),
                    run(Some("lifo"), "newest <first>", "golden/variants/lifo", true),
                ],
                tipping: Some(tipping_report()),
                phase: true,
                sweep_files: ["tipping.csv", "phase.json"].map(String::from).to_vec(),
            },
            Section {
                name: "plain".into(),
                title: "No sweeps".into(),
                description: String::new(),
                case: "A case with no source head".into(),
                runs: vec![run(None, "", "plain", false)],
                tipping: None,
                phase: false,
                sweep_files: vec![],
            },
        ],
    };
    let html = index_html(&page);
    golden("index.html", &html);
    let text = String::from_utf8(html).unwrap();
    // Raw HTML in a description is shown as text, never run.
    assert!(!text.contains("<script>") && text.contains("&lt;script&gt;"));
    assert_eq!(
        text.matches("<th>headroom</th>").count(),
        2,
        "overview + one table"
    );
}

#[test]
fn case_source_and_verdict() {
    use super::index_html::{split_case, verdict};
    assert_eq!(
        split_case("Ably 2020 (published 2020-06-11, IL-0496): a fleet re-registered."),
        (
            Some("Ably 2020 (published 2020-06-11, IL-0496)"),
            "a fleet re-registered."
        )
    );
    assert_eq!(split_case("just a story"), (None, "just a story"));
    let r = tipping_report();
    let v = verdict(&r);
    assert!(
        v.starts_with("holds") || v.starts_with("tips") || v == "-",
        "{v}"
    );
}

/// The writer puts the exporters' bytes on disk unchanged.
#[test]
fn sweep_files_are_the_exported_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let plan = tipping_plan();
    let runs = plan.locate(&tipping_runs());
    let r = crate::experiment::sweep::write_outputs(dir.path(), &plan, &runs).unwrap();
    assert_eq!(r, tipping_report());
    let read = |f: &str| std::fs::read(dir.path().join(f)).unwrap();
    assert_eq!(read("tipping.csv"), sweep_csv(&plan, &runs));
    assert_eq!(read("tipping.json"), tipping_json(&r));
}

/// A ramp over 10, 55.5, 100 and back, healthy above 0.8: collapses at 100 going up,
/// recovers at 10 going down; one step with no measure.
fn hysteresis_report() -> crate::report::hysteresis::HysteresisReport {
    use crate::report::hysteresis::{HysteresisReport, points};
    let up = [(10.0, Some(1.0)), (55.5, Some(0.95)), (100.0, Some(0.1))];
    let down = [(100.0, None), (55.5, Some(1.0 / 3.0)), (10.0, Some(0.99))];
    let mut r = HysteresisReport {
        scenario: "golden".into(),
        title: "Golden \"loop\"".into(),
        variant: Some("lifo".into()),
        vary: "class.request.rate".into(),
        label: Some("offered load".into()),
        unit: Some("requests/s".into()),
        measure: "goodput_ratio.request".into(),
        healthy_above: Some(0.8),
        healthy_below: None,
        steps: 3,
        dwell_s: 300.0,
        settle_s: 150.5,
        operating_point: 70.0,
        collapse_point: None,
        recovery_point: None,
        bistable: None,
        brink_version: "0.0.0-golden".into(),
        seed: 11,
        overrides: vec!["hysteresis.steps=3".into(), "pool.server.workers=4".into()],
        points: points(&up, &down, Health::Above(0.8)),
        produced_by: golden_provenance(),
    };
    r.detect();
    r
}

#[test]
fn hysteresis_csv_golden() {
    golden("hysteresis.csv", &hysteresis_csv(&hysteresis_report()));
}

#[test]
fn hysteresis_json_golden() {
    let r = hysteresis_report();
    assert_eq!(
        (r.collapse_point, r.recovery_point, r.bistable),
        (Some(100.0), Some(10.0), Some([10.0, 100.0]))
    );
    golden("hysteresis.json", &hysteresis_json(&r));
}

/// The writer puts the exporters' bytes on disk unchanged, with both pictures.
#[test]
fn hysteresis_files_are_the_exported_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let r = hysteresis_report();
    crate::experiment::hysteresis::write_outputs(dir.path(), &r).unwrap();
    let read = |f: &str| std::fs::read(dir.path().join(f)).unwrap();
    assert_eq!(read("hysteresis.csv"), hysteresis_csv(&r));
    assert_eq!(read("hysteresis.json"), hysteresis_json(&r));
    assert!(read("hysteresis.svg").starts_with(b"<svg"));
    assert!(read("hysteresis.png").starts_with(b"\x89PNG"));
}

#[test]
fn events_csv_golden() {
    use crate::model::metrics::{Marker, MarkerKind};
    let m = |kind, name: &str, label: &str, start_s, end_s| Marker {
        kind,
        name: name.into(),
        label: label.into(),
        start_s,
        end_s,
    };
    let markers = [
        m(MarkerKind::Event, "spike", "spike, 2x", 300.0, Some(360.5)),
        m(MarkerKind::Event, "spike", "spike, 2x", 100.0, Some(160.5)),
        m(
            MarkerKind::Intervention,
            "at",
            "rate limit \"on\"",
            100.0,
            None,
        ),
    ];
    let bytes = events_csv(&markers);
    golden("events.csv", &bytes);
    // Time order; a tie keeps the run's order (the event before the intervention).
    let text = String::from_utf8(bytes).unwrap();
    let starts: Vec<&str> = text.lines().skip(1).map(|l| &l[..5]).collect();
    assert_eq!(starts, ["event", "inter", "event"]);
}
