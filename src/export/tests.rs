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

mod calibration_json;
mod events_csv;
mod hysteresis;
mod index_html;
mod phase_json;
mod shard_json;
mod structure_svg;
mod summary_json;
mod sweep_csv;
mod timeseries_csv;
mod tipping_json;

use super::*;
use crate::report::sweep_result::{SweepReport, report};
use crate::scenario::Provenance;
use crate::scenario::sweep::{Health, Method};
use crate::stats::plan::{AxisPlan, Kind, Plan, RunPoint, VariantPlan};
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
        fitted: vec![],
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
                collapse_time: Some(crate::stats::plan::CollapseTime {
                    at: 70.0,
                    mean_s: 7.8e11,
                    ci95: Some([5.4e11, 1.1e12]),
                    text: "24800 years".into(),
                    level: "queue of pool server >= 200".into(),
                    bound: None,
                    budget_spent_at_level: None,
                    levels: None,
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
        recover_within_s: None,
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
        recover_within_s: None,
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
