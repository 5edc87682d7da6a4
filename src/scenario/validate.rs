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
mod hysteresis;
mod lease;
mod pool;
pub use pool::MAX_KEYS;
mod service;
mod slo;
mod structure;
mod sweep;
mod sync;
mod trigger;
mod warmup;

use super::raw::RawScenario;
use super::spec::Config;
use crate::engine::time::SimTime;
use check::{V, at_most, bad, nonzero_dur};

pub use autoscale::starting_fleet;
pub use call::MAX_CALL_DEPTH;
pub use check::{MAX_NAME_LEN, Problem, control_char, did_you_mean, listing, name, nearest};

/// The most classes (with the classes of pools' calls), pools, cache tiers, events and
/// interventions a scenario may have: their indices are 16-bit in the model's events.
pub const MAX_COMPONENTS: usize = 10_000;
/// The most steps a class may have (a request's step counter is 16-bit).
pub const MAX_STEPS: usize = 1_000;
pub use collapse::collapse;
pub use hysteresis::hysteresis;
pub use structure::same_structure;
pub use sweep::{settable_number, tipping};
pub use trigger::fired_trigger;

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
    for (section, names) in [
        ("class", raw.class.keys().collect::<Vec<_>>()),
        ("pool", raw.pool.keys().collect()),
        ("cache", raw.cache.keys().collect()),
        ("event", raw.event.keys().collect()),
        ("variant", raw.variant.keys().collect()),
    ] {
        at_most(
            section,
            &format!("[{section}] entries"),
            names.len(),
            MAX_COMPONENTS,
        )?;
        for n in names {
            check::name(&format!("{section}.{n}"), n)?;
        }
    }
    at_most("at", "[[at]] entries", raw.at.len(), MAX_COMPONENTS)?;
    // A title is one line; a case and a description may have paragraphs.
    for (key, s, lines) in [
        ("title", &raw.title, false),
        ("case", &raw.case, true),
        ("description", &raw.description, true),
    ] {
        if let Some(s) = s {
            check::text(key, s, lines)?;
        }
    }
    for (n, v) in &raw.variant {
        if let Some(d) = &v.description {
            check::text(&format!("variant.{n}.description"), d, true)?;
        }
    }
    for (i, at) in raw.at.iter().enumerate() {
        if let Some(l) = &at.label {
            check::text(&format!("at.{i}.label"), l, false)?;
        }
    }
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
    let first_sync = classes.len();
    classes.extend(sync::syncs(&raw.pool, &mut pools, &pool_names, first_sync)?);
    at_most(
        "pool",
        "classes and pools' calls together",
        classes.len(),
        MAX_COMPONENTS,
    )?;
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
    trigger::slowdown_products(&triggers, &pools)?;
    let config = Config {
        classes,
        clients,
        calls,
        pools,
        caches,
        triggers,
        slow: None,
        watch: false,
        deadlines: raw
            .pool
            .values()
            .any(|p| p.calls.iter().any(|c| c.deadline.is_some())),
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
