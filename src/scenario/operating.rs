//! The operating point's arithmetic: how many requests each class sends per second and how
//! many keys each cache tier is asked for, from the file's own rates, without running a
//! model. Retries, timeouts and queueing are left out: these are the first-order figures a
//! user would compute by hand (a cache's `hit_ratio` is solved from them; warnings read them).

use super::spec::Config;

/// Per class, requests (or, for a pool's call, calls) sent per second; per cache tier, key
/// lookups per second.
#[derive(Debug, Clone, PartialEq)]
pub struct Operating {
    pub class_rate: Vec<f64>,
    pub lookups: Vec<f64>,
}

/// The operating point of `cfg`. An open class sends its base rate; a closed population
/// `users / mean think` (an upper bound: it ignores the response time); a pool's call as
/// many as the jobs of the endpoints that make it, times its `probability`. A cache step sends its query on a miss
/// only: `1 - hit_ratio` of its requests for a tier with a `hit_ratio`, all of them for a
/// tier without (an upper bound).
pub fn operating(cfg: &Config) -> Operating {
    let mut class_rate: Vec<Option<f64>> = vec![None; cfg.classes.len()];
    for c in 0..cfg.classes.len() {
        rate_of(cfg, c, &mut class_rate);
    }
    let class_rate: Vec<f64> = class_rate.into_iter().map(|r| r.unwrap_or(0.0)).collect();
    let lookups = (0..cfg.caches.len())
        .map(|t| {
            cfg.classes
                .iter()
                .zip(&class_rate)
                .flat_map(|(c, r)| c.steps.iter().map(move |st| (st, *r)))
                .filter(|(st, _)| st.cache == Some(t))
                .map(|(st, r)| r * st.keys.mean())
                .sum()
        })
        .collect();
    Operating {
        class_rate,
        lookups,
    }
}

/// Class `c`'s rate, memoised in `memo`. Calls form no cycle (validation refuses one), so
/// the recursion ends, at most 16 pools deep.
fn rate_of(cfg: &Config, c: usize, memo: &mut Vec<Option<f64>>) -> f64 {
    if let Some(r) = memo[c] {
        return r;
    }
    let class = &cfg.classes[c];
    let rate = match (class.call, &class.users) {
        (Some(call), _) => {
            let pool = cfg.calls[call].pool;
            let endpoints: Vec<usize> = cfg.pools[pool]
                .plans
                .iter()
                .enumerate()
                .filter(|(_, stages)| stages.iter().flatten().any(|&k| k == call))
                .map(|(e, _)| e)
                .collect();
            let jobs: f64 = endpoints
                .into_iter()
                .map(|e| jobs_at(cfg, pool, e, memo))
                .sum();
            jobs * cfg.calls[call].probability
        }
        (None, Some(users)) => {
            let think_s = users.think.mean_ns as f64 * 1e-9;
            if think_s > 0.0 {
                users.users as f64 / think_s
            } else {
                0.0
            }
        }
        (None, None) => class.rate_per_s,
    };
    memo[c] = Some(rate);
    rate
}

/// Jobs per second sent to endpoint `e` of pool `p` by every class's steps.
fn jobs_at(cfg: &Config, p: usize, e: usize, memo: &mut Vec<Option<f64>>) -> f64 {
    let mut sum = 0.0;
    for c in 0..cfg.classes.len() {
        // A class whose step queries `p` is never one of `p`'s own calls (no cycles).
        let sends: f64 = cfg.classes[c]
            .steps
            .iter()
            .filter(|st| st.query.pool == p && st.query.endpoint as usize == e)
            .map(|st| match st.cache {
                None => 1.0,
                Some(t) => cfg.caches[t].target.map_or(1.0, |h| 1.0 - h.ratio),
            })
            .sum();
        if sends > 0.0 {
            sum += sends * rate_of(cfg, c, memo);
        }
    }
    sum
}
