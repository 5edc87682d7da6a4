//! `structure.svg`: the system drawn, with hand-built rows and a loop of both kinds.

use super::*;
use crate::report::narrative::{Sign, Sustained};
use crate::report::structure::{Measured, diagram};
use crate::report::verdict::{Fault, Verdict};

/// A client into an API that calls a database through a cache; a title that needs escaping.
const TEXT: &str = r#"
duration = "60s"
[metrics]
step = "20s"
[class.web]
rate = 100
timeout = "1s"
retry = { max_attempts = 3 }
steps = [{ query = "api" }]
[pool.api]
workers = 8
service = { law = "exp", mean = "5ms" }
[[pool.api.calls]]
query = "db"
cache = "rows"
timeout = "500ms"
[pool.db]
workers = 4
service = { law = "exp", mean = "10ms" }
[cache.rows]
nodes = 1
keys = 1000
"#;

#[test]
fn structure_svg_golden() {
    let sc = crate::scenario::Loader::from_text("golden.toml", "golden", TEXT.into())
        .unwrap()
        .load(None, &[])
        .unwrap();
    let columns = crate::scenario::columns::columns(&sc.config);
    // Three rows of 20 s: every value k + 0.123456 (column k), so each label shows its
    // rounding; the hit ratio a ratio.
    let rows: Vec<Vec<f64>> = (0..3)
        .map(|r| {
            columns
                .iter()
                .enumerate()
                .map(|(k, c)| match c.measure {
                    crate::scenario::Measure::Time => 20.0 * r as f64,
                    crate::scenario::Measure::HitRatio => 0.4 + 0.1 * r as f64,
                    crate::scenario::Measure::Utilization => 0.99,
                    _ => 100.0 * k as f64 + 0.123456 + r as f64,
                })
                .collect()
        })
        .collect();
    let sustained = Sustained::Loop {
        since_s: 20.0,
        until_s: None,
        verdict: Verdict::Stuck {
            cause: Fault::ExpiredWork,
            share: 0.8765,
        },
        busiest: Some(1),
        signs: vec![
            Sign::Retries {
                class: 0,
                now: 2.87654,
                before: 1.0,
            },
            Sign::HitRatio {
                cache: 0,
                now: 0.45,
                before: 0.95,
            },
        ],
    };
    let d = diagram(&Measured {
        cfg: &sc.config,
        title: "golden <&>",
        columns: &columns,
        rows: &rows,
        end_s: 60.0,
        finished: true,
        sustained: &sustained,
    });
    let bytes = structure_svg(&d);
    golden("structure.svg", &bytes);
    let text = String::from_utf8(bytes).unwrap();
    // The title escaped, the rates of the stretch from 20 s (the last two rows' mean).
    assert!(text.contains(">golden &lt;&amp;&gt;: the system"), "{text}");
    assert!(text.contains("hit ratio 55%"), "{text}");
}
