//! Law tests of the fitted laws (issue 22, item 1): 10⁶ draws of a known lognormal and of a
//! known gamma, written as percentiles, as a Prometheus histogram with the usual buckets,
//! as an `.hlog` and as an OTLP/JSON exponential histogram, read back and fitted; the
//! fitted law's mean is within 2% and its p50, p90 and p99 within 3% of the source law's
//! true values (from the fitted law's closed form: its quantile function and moments).
//!
//! Ten to the sixth draws put the sample p99 within ~0.3% of the true one (its standard
//! error is √(p(1-p)/n) / f(x_p)), ten times inside the tolerance, with fixed seeds.

use super::{Folder, Request, read};
use crate::engine::Rng;
use crate::laws::families::{Family, inv_normal};
use crate::laws::fitted::Fitted;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use rand::{RngExt, SeedableRng};
use rand_distr::{Gamma, StandardNormal};
use std::path::Path;

const N: usize = 1_000_000;
const MEAN: f64 = 10e6;
/// The fitted mean's tolerance.
const MEAN_TOL: f64 = 0.02;
/// The fitted p50, p90 and p99's tolerance.
const QUANTILE_TOL: f64 = 0.03;
/// Prometheus's usual buckets (seconds), from 0.5 ms to 10 s.
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// A source law: its name, draws (ns, sorted), true mean and quantile function.
struct Source {
    name: &'static str,
    draws: Vec<f64>,
    mean: f64,
    quantile: Box<dyn Fn(f64) -> f64>,
}

fn lognormal() -> Source {
    // Mean 10 ms, cv 1.
    let s2 = 2f64.ln();
    let (mu, sigma) = (MEAN.ln() - s2 / 2.0, s2.sqrt());
    let mut rng = Rng::seed_from_u64(22);
    let mut draws: Vec<f64> = (0..N)
        .map(|_| (mu + sigma * rng.sample::<f64, _>(StandardNormal)).exp())
        .collect();
    draws.sort_by(f64::total_cmp);
    Source {
        name: "lognormal mean 10ms cv 1",
        draws,
        mean: MEAN,
        quantile: Box::new(move |p| (mu - sigma * inv_normal(1.0 - p)).exp()),
    }
}

fn gamma() -> Source {
    // Mean 10 ms, cv 0.5: shape 4, scale 2.5 ms.
    let d = Gamma::new(4.0, 2.5e6).unwrap();
    let mut rng = Rng::seed_from_u64(23);
    let mut draws: Vec<f64> = (0..N).map(|_| rng.sample(d)).collect();
    draws.sort_by(f64::total_cmp);
    let f = Family::Gamma {
        k: 4.0,
        theta: 2.5e6,
    };
    Source {
        name: "gamma mean 10ms cv 0.5",
        draws,
        mean: MEAN,
        quantile: Box::new(move |p| f.quantile(p)),
    }
}

/// Asserts the fitted law's mean and p50, p90, p99 against the source's true values.
fn check(src: &Source, format: &str, f: &Fitted) {
    let (m, _) = f.moments();
    let em = m / src.mean - 1.0;
    eprintln!(
        "{} as {format}: {} tail; mean {:.4} ms vs {:.4} ({:+.2}%)",
        src.name,
        f.report.tail.name(),
        m / 1e6,
        src.mean / 1e6,
        em * 100.0
    );
    let mut fails = Vec::new();
    if em.abs() > MEAN_TOL {
        fails.push(format!("mean {:+.2}%", em * 100.0));
    }
    for p in [0.5, 0.9, 0.99] {
        let (got, want) = (f.quantile(p), (src.quantile)(p));
        let e = got / want - 1.0;
        eprintln!(
            "  p{}: {:.4} ms vs {:.4} ({:+.2}%)",
            p * 100.0,
            got / 1e6,
            want / 1e6,
            e * 100.0
        );
        if e.abs() > QUANTILE_TOL {
            fails.push(format!("p{} {:+.2}%", p * 100.0, e * 100.0));
        }
    }
    assert!(
        fails.is_empty(),
        "{} as {format}: beyond {}% (mean) / {}% (quantiles): {}",
        src.name,
        MEAN_TOL * 100.0,
        QUANTILE_TOL * 100.0,
        fails.join(", ")
    );
}

fn percentiles(src: &Source) -> Fitted {
    let points: Vec<(f64, f64)> = [0.5, 0.9, 0.99, 0.999]
        .iter()
        .map(|&p| (p, src.draws[(p * N as f64) as usize]))
        .collect();
    Fitted::from_percentiles("pool.db.service", &points).unwrap()
}

/// Reads `text` as the file `name` of `format` and fits it.
fn fit_file(dir: &Path, name: &str, text: &[u8], req: Request) -> Fitted {
    std::fs::write(dir.join(name), text).unwrap();
    let m =
        read(&req, &Folder::Path(dir.to_path_buf())).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    Fitted::from_bins("pool.db.service", m.source, &m.bins, m.overflow, m.mean_ns).unwrap()
}

fn prometheus(src: &Source) -> String {
    let mut out = String::from("# HELP q_seconds Query latency.\n# TYPE q_seconds histogram\n");
    // A second series first: the labels choose.
    out.push_str("q_seconds_bucket{route=\"/other\",le=\"0.1\"} 3\n");
    out.push_str("q_seconds_bucket{route=\"/other\",le=\"+Inf\"} 3\n");
    for le in BUCKETS {
        let n = src.draws.partition_point(|&x| x <= le * 1e9);
        out.push_str(&format!(
            "q_seconds_bucket{{route=\"/q\",le=\"{le}\"}} {n}\n"
        ));
    }
    out.push_str(&format!(
        "q_seconds_bucket{{route=\"/q\",le=\"+Inf\"}} {N}\n"
    ));
    let sum: f64 = src.draws.iter().sum::<f64>() / 1e9;
    out.push_str(&format!("q_seconds_sum{{route=\"/q\"}} {sum}\n"));
    out.push_str(&format!("q_seconds_count{{route=\"/q\"}} {N}\n"));
    out
}

fn hlog(src: &Source) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment("brink law test")
        .begin_log_with(&mut buf, &mut ser)
        .unwrap();
    // Five intervals of 200,000 draws each (in draw order they would be sorted; any split
    // sums to the same histogram).
    for (i, chunk) in src.draws.chunks(N / 5).enumerate() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for &x in chunk {
            h.record((x.round() as u64).max(1)).unwrap();
        }
        log.write_histogram(
            &h,
            std::time::Duration::from_secs(10 * i as u64),
            std::time::Duration::from_secs(10),
            None,
        )
        .unwrap();
    }
    drop(log);
    buf
}

/// An OTLP/JSON exponential histogram of the draws in ms at scale 4 (16 buckets per
/// doubling, 4.4% wide: the SDK's 160 buckets cover 10 doublings); counts as strings or
/// numbers.
fn otlp(src: &Source, strings: bool) -> String {
    let scale = 4;
    let idx = |x: f64| ((x / 1e6).log2() * f64::from(1 << scale)).ceil() as i64 - 1;
    let (lo, hi) = (idx(src.draws[0]), idx(src.draws[N - 1]));
    let mut counts = vec![0u64; (hi - lo + 1) as usize];
    for &x in &src.draws {
        counts[(idx(x) - lo) as usize] += 1;
    }
    let q = |n: u64| {
        if strings {
            format!("\"{n}\"")
        } else {
            n.to_string()
        }
    };
    let list: Vec<String> = counts.iter().map(|&n| q(n)).collect();
    let sum: f64 = src.draws.iter().sum::<f64>() / 1e6;
    format!(
        r#"{{"resourceMetrics":[{{"resource":{{"attributes":[]}},"scopeMetrics":[{{"scope":{{"name":"test"}},"metrics":[
        {{"name":"other","unit":"ms","gauge":{{"dataPoints":[]}}}},
        {{"name":"q.duration","unit":"ms","exponentialHistogram":{{"aggregationTemporality":2,"dataPoints":[
          {{"attributes":[{{"key":"route","value":{{"stringValue":"/q"}}}}],"count":{},"sum":{sum},"scale":{scale},"zeroCount":{},
            "positive":{{"offset":{lo},"bucketCounts":[{}]}}}}]}}}}]}}]}}]}}"#,
        q(N as u64),
        q(0),
        list.join(",")
    )
}

fn all_formats(src: &Source) {
    check(src, "percentiles p50, p90, p99, p99.9", &percentiles(src));
    let dir = tempfile::tempdir().unwrap();
    let labels = [("route".to_string(), "/q".to_string())].into();
    let prom = fit_file(
        dir.path(),
        "q.prom",
        prometheus(src).as_bytes(),
        Request {
            file: "q.prom",
            format: "prometheus",
            metric: Some("q_seconds"),
            labels: Some(&labels),
            unit: None,
        },
    );
    check(src, "prometheus (0.5ms .. 10s buckets)", &prom);
    let hdr = fit_file(
        dir.path(),
        "q.hlog",
        &hlog(src),
        Request {
            file: "q.hlog",
            format: "hdr",
            metric: None,
            labels: None,
            unit: Some("ns"),
        },
    );
    check(src, "hdr (5 intervals)", &hdr);
    for strings in [true, false] {
        let f = fit_file(
            dir.path(),
            "q.json",
            otlp(src, strings).as_bytes(),
            Request {
                file: "q.json",
                format: "otlp",
                metric: Some("q.duration"),
                labels: None,
                unit: None,
            },
        );
        check(src, "otlp (exponential, scale 4)", &f);
    }
}

#[test]
fn lognormal_is_recovered_from_every_format() {
    all_formats(&lognormal());
}

#[test]
fn gamma_is_recovered_from_every_format() {
    all_formats(&gamma());
}
