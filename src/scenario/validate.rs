//! The second stage of reading a scenario: checks every value and resolves names, turning
//! a [`RawScenario`] into the [`Config`] the model trusts, and its `[tipping]` and
//! `[phase]` sections into a [`Tipping`] and a [`Phase`]. One file per concept, each
//! built of the small checks in `check`; this file puts them together.
//!
//! [`Tipping`]: crate::scenario::spec::Tipping
//! [`Phase`]: crate::scenario::spec::Phase

mod autoscale;
mod call;
mod check;
mod class;
mod collapse;
mod pool;
mod service;
mod structure;
mod sweep;
mod trigger;

use super::raw::RawScenario;
use super::spec::Config;
use crate::engine::time::SimTime;
use check::{V, bad, nonzero_dur};

pub use autoscale::starting_fleet;
pub use call::MAX_CALL_DEPTH;
pub use check::{Problem, did_you_mean, listing, nearest};
pub use collapse::collapse;
pub use structure::same_structure;
pub use sweep::{hysteresis, tipping};

/// Scenario-level facts besides the configuration.
pub struct Meta {
    pub title: Option<String>,
    pub description: Option<String>,
    pub case: Option<String>,
    pub seed: u64,
    pub duration: SimTime,
    pub step: SimTime,
    pub zoom: Option<(SimTime, SimTime)>,
}

/// Validates the whole file but `[tipping]` and `[phase]` (see [`tipping`]).
pub fn validate(raw: &RawScenario) -> V<(Meta, Config)> {
    let duration = nonzero_dur("duration", raw.duration)?;
    let step = check::window(raw.metrics.step, duration)?;
    if duration / step > 1_000_000 {
        return bad(
            "metrics.step",
            "gives more than 1,000,000 time-series rows; make it longer",
        );
    }
    let zoom = match raw.metrics.zoom {
        Some((a, b)) if a.0 >= b.0 => {
            return bad("metrics.zoom", "must be [from, to] with from < to");
        }
        // A window past a shortened run (a sweep, --set duration) is clipped or dropped.
        Some((a, _)) if a.0 >= duration => None,
        Some((a, b)) => Some((a.0, b.0.min(duration))),
        None => None,
    };
    let pool_names: Vec<String> = raw.pool.keys().cloned().collect();
    let class_names: Vec<String> = raw.class.keys().cloned().collect();
    let mut pools = Vec::new();
    for (name, p) in &raw.pool {
        pools.push(pool::pool(&format!("pool.{name}"), name, p)?);
    }
    let cache_names: Vec<String> = raw.cache.keys().cloned().collect();
    let mut caches = Vec::new();
    for (name, c) in &raw.cache {
        caches.push(pool::cache(&format!("cache.{name}"), name, c)?);
    }
    let endpoints = call::endpoints(&raw.pool)?;
    let targets = check::Targets {
        pools: &pool_names,
        endpoints: &endpoints,
        caches: &cache_names,
    };
    let mut classes = Vec::new();
    for (name, c) in &raw.class {
        classes.push(class::class(&format!("class.{name}"), name, c, &targets)?);
    }
    if classes.is_empty() {
        return bad(
            "class",
            "the scenario has no request class; add one, e.g. [class.request]",
        );
    }
    let clients = classes.len();
    let (calls, call_classes) = call::calls(&raw.pool, &mut pools, &targets, clients)?;
    classes.extend(call_classes);
    let mut triggers = Vec::new();
    for (name, e) in &raw.event {
        triggers.push(trigger::trigger(
            &format!("event.{name}"),
            name,
            e,
            &pools,
            &class_names,
            &caches,
        )?);
    }
    let config = Config {
        classes,
        clients,
        calls,
        pools,
        caches,
        triggers,
    };
    autoscale::routes(&config)?;
    let meta = Meta {
        title: raw.title.clone(),
        description: raw.description.clone(),
        case: raw.case.clone(),
        seed: raw.seed.unwrap_or(1),
        duration,
        step,
        zoom,
    };
    Ok((meta, config))
}
