//! A cache tier given the hit ratio a user measures (`hit_ratio = 0.95`): the keyspace (the
//! file gives `ttl`) or the TTL (it gives `keys`) that produce it at the operating point.
//!
//! In steady state a key looked up `λ` times a second (Poisson) is present at a lookup with
//! probability `g(λ·ttl)`: `x / (1 + x)` when a key expires `ttl` after its fill (a hit does
//! not extend it), `1 − e^(−x)` with sliding expiry (`ttl_refresh = "on_hit"`). A tier's
//! hit ratio is the lookup-weighted mean over its keys, `Σ p_r · g(L · p_r · ttl)`, with `L`
//! lookups a second ([`super::operating`]) and `p_r` the popularity of the key of rank `r`
//! (uniform, or Zipf). The unknown is found by bisection, once, when the file is validated.
//! Sweeps and interventions keep the tier the operating point derived ([`pin`]): a design's
//! keyspace and TTL do not follow the load, so its hit ratio does.
//!
//! Without `warm`, the tier starts in its steady state ([`Steady`]): each key
//! present with the probability its popularity gives, its expiry uniform over one TTL (the
//! age of a present key is uniform over `[0, ttl)` when it expires from its fill), so a run
//! shows the hit ratio from its start. `warm` given keeps its meaning (a share of the keys,
//! whatever their popularity).
//!
//! The law holds for one key per step, or `miss = "missing"`: with `miss = "all"` a miss
//! refills a step's other keys too, which renews them and raises the hit ratio.

use super::operating::operating;
use super::raw::TtlRefresh;
use super::spec::{CacheCfg, Config, Solves};
use super::validate::MAX_KEYS;
use crate::engine::number::sig3;
use crate::engine::time::{SimTime, format_duration};

/// Ranks summed one by one; beyond, in blocks of ranks 2% apart (the popularity varies by
/// at most 2%·s within a block, which moves the hit ratio by far less than 10⁻⁴).
const EXACT_RANKS: u32 = 1024;
const BLOCK_RATIO: f64 = 1.02;
/// The TTLs searched: 1 µs to 30 years.
const TTL_S: (f64, f64) = (1e-6, 1e9);

/// Solves every tier with a `hit_ratio` in `cfg` from `cfg`'s own operating point; an error
/// is keyed `cache.NAME.hit_ratio`.
pub fn derive(cfg: &mut Config) -> Result<(), (String, String)> {
    if cfg.caches.iter().all(|c| c.target.is_none()) {
        return Ok(());
    }
    let op = operating(cfg);
    for (t, cache) in cfg.caches.iter_mut().enumerate() {
        let Some(target) = cache.target.as_mut() else {
            continue;
        };
        let key = format!("cache.{}.hit_ratio", cache.name);
        let lookups = op.lookups[t];
        if lookups <= 0.0 {
            return Err((
                key,
                "no step looks keys up in this tier at the operating point (the classes' rates x keys per step), so no keyspace follows from a hit ratio".into(),
            ));
        }
        target.lookups_per_s = lookups;
        let h = target.ratio;
        let (zipf, refresh) = (cache.zipf, cache.ttl_refresh);
        match target.solves {
            Solves::Keys => {
                let ttl_s = cache.ttl_ns.unwrap_or(0) as f64 * 1e-9;
                let at = |keys: u32| predicted(keys, zipf, refresh, lookups, ttl_s);
                if at(1) < h {
                    return Err((
                        key,
                        format!(
                            "with {} and {} lookups/s even a single key hits only {}: give a longer `ttl`",
                            format_duration(cache.ttl_ns.unwrap_or(0)),
                            sig3(lookups),
                            sig3(at(1))
                        ),
                    ));
                }
                if at(MAX_KEYS) > h {
                    return Err((
                        key,
                        format!(
                            "needs more than {MAX_KEYS} keys at {} lookups/s{}: give a shorter `ttl`",
                            sig3(lookups),
                            match zipf {
                                Some(s) if s > 1.0 => format!(
                                    " (under Zipf {s} the most popular keys alone hit more than {h}; a smaller `zipf` helps too)"
                                ),
                                _ => String::new(),
                            }
                        ),
                    ));
                }
                // The hit ratio falls as the keyspace grows: the largest keyspace at or
                // above `h`, or the next one, whichever is closer.
                let (mut lo, mut hi) = (1u32, MAX_KEYS);
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if at(mid) >= h {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                cache.keys = if (at(lo) - h).abs() <= (at(hi) - h).abs() {
                    lo
                } else {
                    hi
                };
            }
            Solves::Ttl => {
                let at = |ttl_s: f64| predicted(cache.keys, zipf, refresh, lookups, ttl_s);
                if at(TTL_S.1) < h {
                    return Err((
                        key,
                        format!(
                            "{} keys at {} lookups/s cannot hit {h} of lookups with any TTL up to 30 years: give fewer `keys`",
                            cache.keys,
                            sig3(lookups)
                        ),
                    ));
                }
                // The hit ratio grows with the TTL: bisect on its logarithm.
                let (mut lo, mut hi) = (TTL_S.0.ln(), TTL_S.1.ln());
                for _ in 0..100 {
                    let mid = 0.5 * (lo + hi);
                    if at(mid.exp()) < h {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                cache.ttl_ns = Some(((0.5 * (lo + hi)).exp() * 1e9).round().max(1.0) as SimTime);
            }
        }
    }
    Ok(())
}

/// Gives the tiers of `cfg` with a `hit_ratio` what the operating point derived for them
/// (`from`, its tiers: a sweep's probe, an intervention: the design stays, the load moves).
pub fn pin(cfg: &mut Config, from: &[CacheCfg]) {
    for (c, f) in cfg.caches.iter_mut().zip(from) {
        if c.target.is_some() && f.target.is_some() {
            c.keys = f.keys;
            c.ttl_ns = f.ttl_ns;
            c.target = f.target;
        }
    }
}

/// What `brink check` says of each derived tier, one line each.
pub fn describe(cfg: &Config) -> Vec<String> {
    cfg.caches
        .iter()
        .filter_map(|c| {
            let t = c.target?;
            let ttl = c.ttl_ns.unwrap_or(0);
            let got = predicted(
                c.keys,
                c.zipf,
                c.ttl_refresh,
                t.lookups_per_s,
                ttl as f64 * 1e-9,
            );
            let popularity = match c.zipf {
                None => "uniform keys".to_string(),
                Some(s) => format!("Zipf {s} keys"),
            };
            let derived = match t.solves {
                Solves::Keys => format!("keys = {} (ttl {})", c.keys, format_duration(ttl)),
                Solves::Ttl => format!("ttl = {} ({} keys)", format_duration(ttl), c.keys),
            };
            Some(format!(
                "cache.{}: hit_ratio {} at {} lookups/s gives {derived}, {popularity}, {}; steady-state hit ratio {}",
                c.name,
                t.ratio,
                sig3(t.lookups_per_s),
                if t.steady_start {
                    "starting in steady state".to_string()
                } else {
                    format!("warm {}", sig3(c.warm))
                },
                sig3(got)
            ))
        })
        .collect()
}

/// The probability that each key of a tier is present in steady state: `g(L·p_r·ttl)`,
/// computed key by key (no table: a keyspace may hold 50 million keys).
#[derive(Debug, Clone, Copy)]
pub struct Steady {
    /// Lookups per TTL of a key of weight 1.
    x_per_weight: f64,
    zipf: Option<f64>,
    g: fn(f64) -> f64,
}

impl Steady {
    /// The steady start of `c`, if it asks for one (a `hit_ratio` without `warm`).
    pub fn of(c: &CacheCfg) -> Option<Self> {
        let t = c.target.filter(|t| t.steady_start)?;
        let per_ttl = t.lookups_per_s * c.ttl_ns? as f64 * 1e-9;
        let total: f64 = match c.zipf {
            None => c.keys as f64,
            Some(s) => popularity(c.keys, Some(s))
                .iter()
                .map(|&(n, w)| n * w)
                .sum(),
        };
        Some(Self {
            x_per_weight: per_ttl / total,
            zipf: c.zipf,
            g: presence(c.ttl_refresh),
        })
    }

    /// The presence probability of the key at index `k` (rank `k + 1`).
    pub fn at(&self, k: u32) -> f64 {
        let w = self.zipf.map_or(1.0, |s| ((k + 1) as f64).powf(-s));
        (self.g)(self.x_per_weight * w)
    }
}

/// A key's steady-state presence at a lookup, from `x` = its lookups per TTL.
fn presence(refresh: TtlRefresh) -> fn(f64) -> f64 {
    match refresh {
        TtlRefresh::Fill => |x| x / (1.0 + x),
        TtlRefresh::OnHit => |x| -(-x).exp_m1(),
    }
}

/// The steady-state hit ratio of a tier of `keys` keys (uniform, or Zipf `zipf`) looked up
/// `lookups` times a second, with a TTL of `ttl_s` seconds.
pub fn predicted(
    keys: u32,
    zipf: Option<f64>,
    refresh: TtlRefresh,
    lookups: f64,
    ttl_s: f64,
) -> f64 {
    let g = presence(refresh);
    let blocks = popularity(keys, zipf);
    let total: f64 = blocks.iter().map(|&(n, w)| n * w).sum();
    blocks
        .iter()
        .map(|&(n, w)| {
            let p = w / total;
            n * p * g(lookups * p * ttl_s)
        })
        .sum()
}

/// The share of lookups that go to the most popular of `keys` keys.
pub fn top_share(keys: u32, zipf: Option<f64>) -> f64 {
    let blocks = popularity(keys, zipf);
    let total: f64 = blocks.iter().map(|&(n, w)| n * w).sum();
    blocks[0].1 / total
}

/// The keys' popularity as blocks of (keys, unnormalised weight of each): one block when
/// uniform; under Zipf `s`, rank by rank up to [`EXACT_RANKS`], then blocks of ranks
/// [`BLOCK_RATIO`] apart, each weighed by the midpoint rule's integral of `r^-s` (exact
/// to ~10⁻⁷ of a block at these ranks). O(1024 + 50·ln(keys)), whatever the keyspace.
fn popularity(keys: u32, zipf: Option<f64>) -> Vec<(f64, f64)> {
    let Some(s) = zipf else {
        return vec![(keys as f64, 1.0)];
    };
    let exact = keys.min(EXACT_RANKS);
    let mut out: Vec<(f64, f64)> = (1..=exact).map(|r| (1.0, (r as f64).powf(-s))).collect();
    let integral = |a: f64, b: f64| {
        if (s - 1.0).abs() < 1e-12 {
            (b / a).ln()
        } else {
            (b.powf(1.0 - s) - a.powf(1.0 - s)) / (1.0 - s)
        }
    };
    let mut a = exact as u64 + 1;
    while a <= keys as u64 {
        let b = ((a as f64 * BLOCK_RATIO).ceil() as u64).clamp(a, keys as u64);
        let n = (b - a + 1) as f64;
        let w = integral(a as f64 - 0.5, b as f64 + 0.5);
        out.push((n, w / n));
        a = b + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_uniform_law_inverts_in_closed_form() {
        // λ·ttl = h/(1-h) per key: 100 lookups/s, ttl 10 s, h = 0.95 → 19 per key per
        // ttl → λ = 1.9/s → 52.63 keys.
        let h = predicted(53, None, TtlRefresh::Fill, 100.0, 10.0);
        let x = 100.0 / 53.0 * 10.0;
        assert!((h - x / (1.0 + x)).abs() < 1e-12);
        let sliding = predicted(53, None, TtlRefresh::OnHit, 100.0, 10.0);
        assert!((sliding - (1.0 - (-x).exp())).abs() < 1e-12);
    }

    #[test]
    fn blocks_match_the_exact_zipf_sum() {
        // Law: Σ p_r g(L p_r T) over every rank; the blocks must agree within 1e-5 (their
        // error bound is far smaller).
        for (keys, s) in [(5_000u32, 0.9), (200_000, 1.0), (200_000, 1.2)] {
            let h: f64 = (1..=keys).map(|r| (r as f64).powf(-s)).sum();
            let exact: f64 = (1..=keys)
                .map(|r| {
                    let p = (r as f64).powf(-s) / h;
                    let x = 2000.0 * p * 30.0;
                    p * x / (1.0 + x)
                })
                .sum();
            let blocks = predicted(keys, Some(s), TtlRefresh::Fill, 2000.0, 30.0);
            assert!(
                (blocks - exact).abs() < 1e-5,
                "keys {keys}, s {s}: blocks {blocks}, exact {exact}"
            );
            assert!((top_share(keys, Some(s)) - 1.0 / h).abs() < 1e-6 / h);
        }
    }
}
