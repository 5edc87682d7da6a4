//! Warnings: a valid file that is almost certainly not what its author meant (a unit slip, a
//! design overloaded by its own arithmetic, a cache that cannot hit). `brink check` and
//! `brink run` print them on stderr and go on; `--deny-warnings` makes them exit 2.
//!
//! Each check is arithmetic on the validated scenario (and, for unit slips, the file's
//! text), O(classes × steps + pools + caches + durations written): none runs a model.

use super::spec::{Config, Scenario};
use crate::engine::time::{SimTime, format_duration};

/// One warning: the key it is about and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    pub key: String,
    pub text: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`: {}", self.key, self.text)
    }
}

/// The warnings of `sc`, whose file reads `text`.
pub fn warnings(sc: &Scenario, text: &str) -> Vec<Warning> {
    let cfg = &sc.config;
    let mut out = Vec::new();
    service_beyond_timeout(cfg, &mut out);
    overloaded_pools(cfg, &mut out);
    caches_that_cannot_hit(cfg, &mut out);
    minutes_among_milliseconds(text, &mut out);
    // One warning per key: a pool queried by several classes is named once.
    let mut seen = std::collections::HashSet::new();
    out.retain(|w| seen.insert(w.key.clone()));
    out
}

/// A pool whose mean service (times the step's cost) is at least the timeout of a class
/// that queries it: every attempt would time out.
fn service_beyond_timeout(cfg: &Config, out: &mut Vec<Warning>) {
    for c in &cfg.classes {
        for st in &c.steps {
            let timeout = c.timeout_ns.min(st.query.timeout_ns);
            if timeout == SimTime::MAX {
                continue;
            }
            let pool = &cfg.pools[st.query.pool];
            let mean = pool.service.mean_ns as f64 * st.query.cost;
            if mean >= timeout as f64 {
                out.push(Warning {
                    key: format!("pool.{}.service", pool.name),
                    text: format!(
                        "its mean service time ({}) is at least the timeout of class `{}` ({}): every attempt would time out (a unit slip?)",
                        format_duration(mean as SimTime),
                        c.name,
                        format_duration(timeout)
                    ),
                });
            }
        }
    }
}

/// A pool offered more work than its servers can do by the file's own arithmetic: the
/// classes' rates times their direct steps' mean service over its servers. Calls between
/// pools, retries and cache misses only add to that, so this is a lower bound.
fn overloaded_pools(cfg: &Config, out: &mut Vec<Warning>) {
    for (p, pool) in cfg.pools.iter().enumerate() {
        if pool.autoscale.is_some() {
            continue;
        }
        let work_s: f64 = cfg
            .classes
            .iter()
            .flat_map(|c| c.steps.iter().map(move |st| (c, st)))
            .filter(|(_, st)| st.query.pool == p && st.cache.is_none())
            .map(|(c, st)| c.rate_per_s * st.query.cost * pool.service.mean_ns as f64 * 1e-9)
            .sum();
        let servers = pool.workers as f64 * pool.shards as f64 * (1 + pool.replicas) as f64;
        let load = work_s / servers;
        if load > 1.0 {
            // Three significant figures (a load above 1).
            let times = match load {
                l if l < 10.0 => format!("{l:.2}"),
                l if l < 100.0 => format!("{l:.1}"),
                l => format!("{l:.0}"),
            };
            out.push(Warning {
                key: format!("pool.{}", pool.name),
                text: format!(
                    "offered {times} times what its {servers} workers can serve at the operating point (the classes' rates x mean service, direct queries only): it is overloaded from the start"
                ),
            });
        }
    }
}

/// A cache tier with a TTL shorter than the mean gap between lookups of its most looked-up
/// key: it can hardly hit.
fn caches_that_cannot_hit(cfg: &Config, out: &mut Vec<Warning>) {
    for (t, cache) in cfg.caches.iter().enumerate() {
        let Some(ttl) = cache.ttl_ns else { continue };
        let lookups = super::operating::operating(cfg).lookups[t];
        // The hottest key's share: 1/n uniform, 1/H(n, s) under Zipf.
        let top = super::hit_ratio::top_share(cache.keys, cache.zipf);
        let rate = lookups * top;
        if rate > 0.0 && rate * ttl as f64 * 1e-9 < 1.0 {
            out.push(Warning {
                key: format!("cache.{}.ttl", cache.name),
                text: format!(
                    "{} is shorter than the mean gap between lookups of its most looked-up key ({}): it can hardly hit",
                    format_duration(ttl),
                    format_duration((1e9 / rate).min(u64::MAX as f64) as SimTime)
                ),
            });
        }
    }
}

/// A duration written in minutes in a file whose every other duration is in milliseconds
/// or finer: `"8m"` among `"5ms"`s is almost certainly 8 ms. The run's own length (a
/// line `duration = …`) is left out: it is naturally coarser.
fn minutes_among_milliseconds(text: &str, out: &mut Vec<Warning>) {
    let mut minutes = Vec::new();
    let (mut fine, mut coarse) = (0, 0);
    for (line, l) in text.lines().enumerate() {
        let code = l.split('#').next().unwrap_or("");
        if code.trim_start().starts_with("duration") {
            continue;
        }
        for quoted in code.split('"').skip(1).step_by(2) {
            let digits = quoted.trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == 'µ');
            let unit = &quoted[digits.len()..];
            if digits.is_empty() || digits.parse::<f64>().is_err() {
                continue;
            }
            match unit {
                "m" => minutes.push((line + 1, quoted.to_string())),
                "ms" | "us" | "µs" | "ns" => fine += 1,
                "s" | "h" | "d" => coarse += 1,
                _ => {}
            }
        }
    }
    if fine >= 1 && coarse == 0 {
        for (line, d) in minutes {
            out.push(Warning {
                key: format!("line {line}"),
                text: format!(
                    "\"{d}\" is in minutes, and every other duration in the file is in milliseconds or finer: did you mean \"{d}s\"?"
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Warning> {
        let mut out = Vec::new();
        minutes_among_milliseconds(text, &mut out);
        out
    }

    #[test]
    fn minutes_among_milliseconds_are_flagged_with_their_line() {
        let w = words("a = \"5ms\"\nb = \"8m\" # a slip\nc = { x = \"20ms\" }\n");
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].key, "line 2");
        assert!(w[0].text.contains("\"8ms\""), "{}", w[0].text);
    }

    #[test]
    fn minutes_beside_seconds_or_hours_are_not() {
        assert!(words("a = \"5ms\"\nb = \"8m\"\nc = \"20ms\"\nd = \"2h\"\n").is_empty());
        // The run's length does not count.
        assert_eq!(
            words("duration = \"60s\"\na = \"5ms\"\nb = \"8m\"\n").len(),
            1
        );
        // Comments and non-durations do not count.
        assert!(words("a = \"5ms\" # \"8m\"\nb = \"20ms\"\nname = \"m\"\n").is_empty());
    }
}
