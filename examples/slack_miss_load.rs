//! How database read load grows with the share of cache misses in the Slack scenario.
//!
//! A flush-size sweep: at the daily peak (no rollout, no response), a flush empties a
//! fraction f of the memcached tier; over the five minutes after it we measure the key
//! miss ratio and the load offered to vitess (query parts per second, retries included).
//! Three models tell the mechanisms apart:
//! - `full`: the scenario as it is (any-miss scatter, fills only on success, retries);
//! - `no-retries`: every class makes one attempt;
//! - `missing-rows`: a miss queries only the missing rows (cheaper parts).
//!
//! Run: `cargo run --release --example slack_miss_load`; writes
//! `output/slack-2022-02-22/miss-load.csv` and `miss-load.png` / `.svg`.

use brink::report::timeline::PALETTE;
use brink::scenario::{Loader, Override};
use plotters::prelude::*;
use rayon::prelude::*;
use std::path::Path;

const FRACTIONS: [f64; 12] = [
    0.0, 0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5,
];
const MODELS: [(&str, &[&str]); 3] = [
    ("full", &[]),
    (
        "no-retries",
        &[
            "class.boot.retry.max_attempts=1",
            "class.booted.retry.max_attempts=1",
        ],
    ),
    ("missing-rows", &["class.boot.steps.0.miss=missing"]),
];

fn main() -> anyhow::Result<()> {
    let loader = Loader::open(Path::new("scenarios/slack-2022-02-22.toml"))?;
    let points: Vec<(usize, f64)> = (0..MODELS.len())
        .flat_map(|m| FRACTIONS.iter().map(move |&f| (m, f)))
        .collect();
    let results: Vec<(usize, f64, f64, f64)> = points
        .par_iter()
        .map(|&(m, f)| {
            let mut sets: Vec<String> = vec![
                "duration=70m".into(),
                "event.consul-rollout.enabled=false".into(),
                "event.flush.kind=flush".into(),
                "event.flush.cache=memcached".into(),
                "event.flush.at=60m".into(),
                format!("event.flush.fraction={}", f.max(1e-9)),
                format!("event.flush.enabled={}", f > 0.0),
            ];
            sets.extend(MODELS[m].1.iter().map(|s| s.to_string()));
            let mut overrides: Vec<Override> =
                sets.iter().map(|s| Override::parse(s).unwrap()).collect();
            overrides.insert(
                0,
                Override::new("at", toml::Value::Array(vec![]), "no response"),
            );
            let sc = loader.load(None, &overrides).expect("valid sweep point");
            let r = brink::model::run(&sc, 0).expect("run");
            let col = |name: &str| r.series.column(name).unwrap();
            let t = col("time_s");
            let window = |v: Vec<f64>| {
                let sel: Vec<f64> = t
                    .iter()
                    .zip(v)
                    .filter(|(t, v)| **t >= 3600.0 && **t < 3900.0 && v.is_finite())
                    .map(|(_, v)| v)
                    .collect();
                sel.iter().sum::<f64>() / sel.len().max(1) as f64
            };
            let miss = 1.0 - window(col("memcached.hit_ratio"));
            let load = window(col("vitess.queries_per_s"));
            let util = window(col("vitess.primary_utilization"));
            (m, miss, load, util)
        })
        .collect();
    let dir = Path::new("output/slack-2022-02-22");
    std::fs::create_dir_all(dir)?;
    let mut csv =
        String::from("model,flush_fraction,miss_ratio,db_queries_per_s,db_primary_utilization\n");
    for (i, (m, miss, load, util)) in results.iter().enumerate() {
        csv += &format!(
            "{},{},{:.5},{:.1},{:.4}\n",
            MODELS[*m].0, points[i].1, miss, load, util
        );
    }
    brink::report::write_atomic(&dir.join("miss-load.csv"), csv.as_bytes())?;
    print!("{csv}");
    brink::report::figure::write(dir, "miss-load", &MissLoad(&results))?;
    eprintln!("wrote {}", dir.join("miss-load.png").display());
    Ok(())
}

/// The picture, for the figure writer (PNG and SVG, each rendered in memory).
struct MissLoad<'a>(&'a [(usize, f64, f64, f64)]);

impl brink::report::figure::Figure for MissLoad<'_> {
    fn size(&self) -> (u32, u32) {
        (1000, 650)
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, plotters::coord::Shift>,
    ) -> Result<(), String> {
        draw(root, self.0)
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    results: &[(usize, f64, f64, f64)],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let x_max = results.iter().map(|r| r.1).fold(0.0, f64::max) * 1.05;
    let y_max = results.iter().map(|r| r.2).fold(0.0, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(root)
        .caption(
            "Slack: database read load against cache miss ratio (flush-size sweep)",
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("key miss ratio in the 5 minutes after the flush")
        .y_desc("vitess query parts per second")
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(e)?;
    for (m, (name, _)) in MODELS.iter().enumerate() {
        let mut pts: Vec<(f64, f64)> = results
            .iter()
            .filter(|r| r.0 == m)
            .map(|r| (r.1, r.2))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let color = PALETTE[m];
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(e)?
            .label(*name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart
            .draw_series(pts.iter().map(|p| Circle::new(*p, 4, color.filled())))
            .map_err(e)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 15))
        .draw()
        .map_err(e)?;
    Ok(())
}
