//! Writes the telemetry files that `scenarios/web-api.toml` reads: what a small web API's
//! dashboards would export, drawn from known laws so that a reader can see how well brink's
//! fit reproduces them.
//!
//! - `scenarios/data/api.prom`: the API handler's own time per request (its CPU work,
//!   without the calls it waits on), a Prometheus classic histogram
//!   `app_handler_seconds` with the buckets a team would pick around a few milliseconds,
//!   for the route `/items` (and a `/health` route the scenario does not select).
//!   True law: lognormal, mean 5 ms, cv 0.6.
//! - `scenarios/data/postgres.hlog`: the query time on a Postgres connection, as an
//!   HdrHistogram V2 interval log in microseconds (six 10-second intervals, as a client
//!   library's recorder writes them). True law: a mixture, 90% gamma (mean 6 ms, cv 0.5)
//!   and 10% lognormal (mean 20 ms, cv 1): an index scan most of the time, a slow plan
//!   now and then, so its tail is heavier than any one family's. Mean 7.4 ms.
//!
//! Run: `cargo run --release --example web_api_telemetry` (from the repository's root).
//! The draws use a fixed seed: the files are the same bytes on every run.

use brink::engine::Rng;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use rand::{RngExt, SeedableRng};
use rand_distr::{Gamma, StandardNormal};
use std::path::Path;

/// Requests the API histogram counts (an hour at a few hundred per second, thinned).
const API_DRAWS: usize = 200_000;
/// Queries per `.hlog` interval.
const PG_PER_INTERVAL: usize = 20_000;
const PG_INTERVALS: usize = 6;
/// The API histogram's bucket edges, seconds.
const BUCKETS: [f64; 14] = [
    0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5,
];

/// A lognormal draw of the given mean and coefficient of variation.
fn lognormal(rng: &mut Rng, mean: f64, cv: f64) -> f64 {
    let s2 = (1.0 + cv * cv).ln();
    let mu = mean.ln() - s2 / 2.0;
    (mu + s2.sqrt() * rng.sample::<f64, _>(StandardNormal)).exp()
}

fn prometheus(rng: &mut Rng) -> String {
    let draws: Vec<f64> = (0..API_DRAWS).map(|_| lognormal(rng, 0.005, 0.6)).collect();
    let mut out = String::from(
        "# HELP app_handler_seconds Time the handler spends on a request, its calls excluded.\n\
         # TYPE app_handler_seconds histogram\n",
    );
    let series = |route: &str, xs: &[f64], out: &mut String| {
        for le in BUCKETS {
            let n = xs.iter().filter(|&&x| x <= le).count();
            out.push_str(&format!(
                "app_handler_seconds_bucket{{route=\"{route}\",le=\"{le}\"}} {n}\n"
            ));
        }
        out.push_str(&format!(
            "app_handler_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}\n",
            xs.len()
        ));
        out.push_str(&format!(
            "app_handler_seconds_sum{{route=\"{route}\"}} {}\n",
            xs.iter().sum::<f64>()
        ));
        out.push_str(&format!(
            "app_handler_seconds_count{{route=\"{route}\"}} {}\n",
            xs.len()
        ));
    };
    series("/items", &draws, &mut out);
    let health: Vec<f64> = (0..1000).map(|_| lognormal(rng, 0.0002, 0.3)).collect();
    series("/health", &health, &mut out);
    out
}

fn hlog(rng: &mut Rng) -> Vec<u8> {
    let gamma_shape = 1.0 / (0.5f64 * 0.5);
    let gamma = Gamma::new(gamma_shape, 6000.0 / gamma_shape).expect("a valid gamma");
    let mut buf = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment("postgres query time per connection, microseconds")
        .with_start_time(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_764_669_600))
        .begin_log_with(&mut buf, &mut ser)
        .expect("a log in memory");
    for i in 0..PG_INTERVALS {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("valid bounds");
        for _ in 0..PG_PER_INTERVAL {
            let us = if rng.random::<f64>() < 0.9 {
                rng.sample(gamma)
            } else {
                lognormal(rng, 20_000.0, 1.0)
            };
            h.record((us.round() as u64).clamp(1, 60_000_000))
                .expect("inside the bounds");
        }
        log.write_histogram(
            &h,
            std::time::Duration::from_secs(10 * i as u64),
            std::time::Duration::from_secs(10),
            None,
        )
        .expect("a log in memory");
    }
    drop(log);
    buf
}

fn main() -> anyhow::Result<()> {
    let dir = Path::new("scenarios/data");
    std::fs::create_dir_all(dir)?;
    let mut rng = Rng::seed_from_u64(2026);
    std::fs::write(dir.join("api.prom"), prometheus(&mut rng))?;
    std::fs::write(dir.join("postgres.hlog"), hlog(&mut rng))?;
    println!("wrote scenarios/data/api.prom and scenarios/data/postgres.hlog");
    Ok(())
}
