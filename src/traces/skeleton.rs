//! The scenario skeleton `brink import-traces` writes from what the traces measure: a
//! class per root operation (its rate), a pool per service (its self times as a service
//! law, a placeholder for its workers), a `[[pool.NAME.calls]]` entry per call a service's
//! visits make (its share as `probability`, `parallel` from the overlap), with comments
//! saying what was measured and what the user must still decide.

use super::Format;
use super::measure::Measured;
use std::collections::HashSet;
use std::fmt::Write;

/// A service's self times are written as `samples` up to this many, as a histogram above.
pub const MAX_SAMPLES: usize = 1000;
/// The most bins of a histogram law (the first, from 0 to the shortest time, included).
pub const MAX_BINS: usize = 64;

/// What the skeleton is made from besides the measures.
#[derive(Debug, Clone)]
pub struct Source<'a> {
    /// The trace file, as named on the command line.
    pub file: &'a str,
    pub format: Format,
    /// The traces are 1 in this many requests: rates are multiplied by it.
    pub one_in: u64,
}

/// The skeleton's TOML text.
pub fn skeleton(m: &Measured, src: &Source) -> String {
    let window_ns = m.last_ns.saturating_sub(m.first_ns).max(1);
    let window_s = window_ns as f64 / 1e9;
    let format = match src.format {
        Format::Jaeger => "Jaeger JSON",
        Format::Otlp => "OTLP/JSON",
    };
    let mut t = String::new();
    let file = one_line(src.file);
    let _ = writeln!(
        t,
        "# A scenario skeleton written by `brink import-traces` from {file} ({format})."
    );
    let _ = writeln!(
        t,
        "# Measured: {} spans in {} traces over {} (from {} to {} ns since the epoch).",
        m.spans,
        m.traces,
        human(window_ns as f64),
        m.first_ns,
        m.last_ns
    );
    if m.orphans > 0 {
        let _ = writeln!(
            t,
            "# {} spans name a parent the file lacks: they were taken as roots.",
            m.orphans
        );
    }
    if src.one_in > 1 {
        let _ = writeln!(
            t,
            "# The traces are 1 in {} requests (--trace-sample {}): rates are the root spans' times {}.",
            src.one_in, src.one_in, src.one_in
        );
    }
    t.push_str(
        "# Still to decide (traces do not show them): each pool's workers (placeholders below)\n\
         # and queue_limit; each class's timeout and retry policy; each call's timeout, retry\n\
         # and fallback; the load to study ([tipping]).\n",
    );
    let _ = writeln!(t, "title = {}", quoted(&format!("Imported from {file}")));
    let _ = writeln!(t, "duration = \"{}s\"", (window_s.ceil() as u64).max(10));
    t.push_str("seed = 1\n");

    let pools = unique_names(m.services.iter().map(|s| s.name.as_str()));
    let classes = unique_names(m.roots.iter().map(|r| r.operation.as_str()));
    for (root, class) in m.roots.iter().zip(&classes) {
        let rate = root.count as f64 * src.one_in as f64 / window_s;
        let _ = writeln!(
            t,
            "\n# Root operation {} of {}: {} root spans over {}.",
            quoted(&root.operation),
            quoted(&m.services[root.service].name),
            root.count,
            human(window_ns as f64)
        );
        let _ = writeln!(t, "[class.{class}]");
        let _ = writeln!(t, "rate = {}", sig(rate, 6));
        let _ = writeln!(t, "steps = [{{ query = \"{}\" }}]", pools[root.service]);
    }
    for (s, svc) in m.services.iter().enumerate() {
        let visits = svc.self_ns.len();
        let mut sorted = svc.self_ns.clone();
        sorted.sort_unstable();
        let mean = sorted.iter().map(|&x| x as f64).sum::<f64>() / visits.max(1) as f64;
        let pct = |q: f64| {
            sorted
                .get(((visits as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or(0)
        };
        let concurrency = svc.busy_ns as f64 * src.one_in as f64 / window_ns as f64;
        let workers = ((4.0 * concurrency).ceil() as u64 + 8).min(1_000_000);
        let _ = writeln!(
            t,
            "\n# Service {}: {} spans, {} visits; self time mean {}, p50 {}, p99 {}, max {}.",
            quoted(&svc.name),
            svc.spans,
            visits,
            human(mean),
            human(pct(0.5) as f64),
            human(pct(0.99) as f64),
            human(sorted.last().copied().unwrap_or(0) as f64)
        );
        let _ = writeln!(t, "[pool.{}]", pools[s]);
        let _ = writeln!(
            t,
            "workers = {workers}    # decide: a placeholder, 4 x the mean concurrency measured ({}) + 8",
            sig(concurrency, 3)
        );
        let _ = writeln!(t, "service = {}", service_law(&svc.self_ns));
        if svc.calls_cut > 0 {
            let _ = writeln!(
                t,
                "# {} calls beyond {} to one service per visit, or {} in all, are not written.",
                svc.calls_cut,
                super::measure::MAX_OCCURRENCES,
                super::measure::MAX_CALLS
            );
        }
        for c in &svc.calls {
            let target = &pools[c.target];
            let _ = writeln!(
                t,
                "\n# {} calls {} (call {} of a visit) in {} of {} visits ({}).",
                quoted(&svc.name),
                quoted(&m.services[c.target].name),
                c.occurrence,
                c.visits,
                visits,
                sig(c.share, 4)
            );
            let _ = writeln!(t, "[[pool.{}.calls]]", pools[s]);
            let _ = writeln!(t, "query = \"{target}\"");
            if c.occurrence > 1 {
                let _ = writeln!(t, "name = \"{}\"", call_name(target, c.occurrence));
            }
            if c.parallel {
                let _ = writeln!(
                    t,
                    "parallel = true    # overlaps the call before it in {} of {} visits making both",
                    c.overlapping, c.both
                );
            }
            if c.share < 1.0 {
                let _ = writeln!(t, "probability = {}", sig(c.share, 6));
            }
        }
    }
    t
}

/// The service law of a pool from its visits' self times (ns): the one place that chooses
/// it. Up to [`MAX_SAMPLES`] times, the empirical law of the times themselves; more, an
/// empirical histogram of at most [`MAX_BINS`] bins: the first from 0 to the 0.5%
/// quantile (a density about flat there for the usual laws), then log-spaced bins up to
/// the longest time; one distinct time, a constant.
pub fn service_law(self_ns: &[u64]) -> String {
    let mut sorted = self_ns.to_vec();
    sorted.sort_unstable();
    let (Some(&lo), Some(&hi)) = (sorted.iter().find(|&&x| x > 0), sorted.last()) else {
        // No time above 0 (or no visit): a law needs a mean above 0.
        return "{ law = \"const\", mean = \"1ns\" }    # no self time above 0 was measured".into();
    };
    if lo == hi && sorted[0] == lo {
        return format!("{{ law = \"const\", mean = \"{}\" }}", duration(lo));
    }
    if sorted.len() <= MAX_SAMPLES {
        let items: Vec<String> = self_ns
            .iter()
            .map(|&x| format!("\"{}\"", duration(x)))
            .collect();
        return format!(
            "{{ law = \"empirical\", samples = [{}] }}",
            items.join(", ")
        );
    }
    let lo = sorted[(sorted.len() / 200).max(sorted.partition_point(|&x| x == 0))].max(lo);
    // Edges lo·r^k, rounded up to whole ns and strictly increasing, the last one `hi`.
    let steps = (MAX_BINS - 1) as f64;
    let ratio = hi as f64 / lo as f64;
    let mut edges: Vec<u64> = vec![lo];
    for k in 1..MAX_BINS {
        let e = if k == MAX_BINS - 1 {
            hi
        } else {
            ((lo as f64) * ratio.powf(k as f64 / steps)).ceil() as u64
        };
        if e > *edges.last().unwrap_or(&0) && e <= hi {
            edges.push(e);
        }
    }
    if *edges.last().unwrap_or(&0) < hi {
        edges.push(hi);
    }
    let mut bins = Vec::with_capacity(edges.len());
    let mut below = 0;
    for &e in &edges {
        let upto = sorted.partition_point(|&x| x <= e);
        bins.push(format!("[\"{}\", {}]", duration(e), upto - below));
        below = upto;
    }
    format!(
        "{{ law = \"empirical\", histogram = [{}] }}",
        bins.join(", ")
    )
}

/// A whole number of ns as a duration the loader reads back exactly: in ms, us or ns by
/// its size, with the decimals it needs.
fn duration(ns: u64) -> String {
    let (unit, per) = match ns {
        1_000_000.. => ("ms", 1_000_000),
        1_000.. => ("us", 1_000),
        _ => ("ns", 1),
    };
    let (whole, frac) = (ns / per, ns % per);
    if frac == 0 {
        return format!("{whole}{unit}");
    }
    let digits = per.ilog10() as usize;
    let frac = format!("{frac:0digits$}");
    format!("{whole}.{}{unit}", frac.trim_end_matches('0'))
}

/// A time in ns for people: 3 significant digits and a unit.
fn human(ns: f64) -> String {
    let (v, unit) = match ns {
        x if x >= 1e9 => (x / 1e9, "s"),
        x if x >= 1e6 => (x / 1e6, "ms"),
        x if x >= 1e3 => (x / 1e3, "us"),
        x => (x, "ns"),
    };
    format!("{}{unit}", sig(v, 3))
}

/// `x` with `n` significant digits, without trailing zeros.
fn sig(x: f64, n: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i64;
    let decimals = (n as i64 - 1 - mag).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A TOML basic string.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// Text on one line (for a comment).
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The name of the `occurrence`-th call to `target` (the first is `target` itself).
fn call_name(target: &str, occurrence: usize) -> String {
    let base: String = target.chars().take(60).collect();
    format!("{base}-{occurrence}")
}

/// Valid, distinct scenario names for `names`: letters, digits, `_` and `-` (others
/// become `_`), not starting with `-`, at most 64 characters; a repeat gets `-2`, `-3`, ...
pub fn unique_names<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut taken = HashSet::new();
    let mut out = Vec::new();
    for n in names {
        let base = sanitise(n);
        let mut name = base.clone();
        let mut k = 2;
        while !taken.insert(name.clone()) {
            let stem: String = base.chars().take(58).collect();
            name = format!("{stem}-{k}");
            k += 1;
        }
        out.push(name);
    }
    out
}

/// A name the loader accepts, from any text.
fn sanitise(s: &str) -> String {
    let mut name: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.starts_with('-') {
        name.replace_range(0..1, "_");
    }
    if name.is_empty() {
        name = "service".into();
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_back_exactly() {
        for (ns, text) in [
            (0, "0ns"),
            (999, "999ns"),
            (1000, "1us"),
            (1500, "1.5us"),
            (2_345_678, "2.345678ms"),
            (5_000_000, "5ms"),
        ] {
            assert_eq!(duration(ns), text);
            let d: crate::scenario::raw::Dur =
                toml::from_str::<toml::Table>(&format!("d = \"{text}\"")).unwrap()["d"]
                    .clone()
                    .try_into()
                    .unwrap();
            assert_eq!(d.0, ns, "{text}");
        }
    }

    #[test]
    fn names_are_sanitised_and_distinct() {
        let names = unique_names(["api.gateway", "api/gateway", "-x", "", "ok"].into_iter());
        assert_eq!(
            names,
            ["api_gateway", "api_gateway-2", "_x", "service", "ok"]
        );
    }

    #[test]
    fn a_histogram_has_at_most_64_bins_and_every_time() {
        let times: Vec<u64> = (1..=5000u64).map(|i| i * i).collect();
        let law = service_law(&times);
        let bins = law.matches("[\"").count();
        assert!(bins <= MAX_BINS, "{bins}");
        // Each bin is `["EDGE", COUNT]`.
        let counts: u64 = law
            .split("[\"")
            .skip(1)
            .map(|bin| {
                let count = bin.split("\", ").nth(1).unwrap();
                count.split(']').next().unwrap().parse::<u64>().unwrap()
            })
            .sum();
        assert_eq!(counts, 5000);
    }
}
