//! What interventions may not change: the structure the model keeps its state in.

use crate::scenario::spec::Config;

/// Interventions may change parameters, not structure: the model keeps its state across.
/// Classes, pools and events must stay the same set; an event may only be switched on or
/// off (its `enabled`), since a running event must end the way it started.
pub fn same_structure(a: &Config, b: &Config) -> Result<(), String> {
    let names = |v: Vec<&String>| v.into_iter().cloned().collect::<Vec<_>>().join(", ");
    let (ac, bc) = (a.client_classes(), b.client_classes());
    if ac.len() != bc.len() || ac.iter().zip(bc).any(|(x, y)| x.name != y.name) {
        return Err(format!(
            "the classes change from [{}] to [{}]",
            names(ac.iter().map(|c| &c.name).collect()),
            names(bc.iter().map(|c| &c.name).collect())
        ));
    }
    for (x, y) in ac.iter().zip(bc) {
        if x.users.is_some() != y.users.is_some() {
            return Err(format!(
                "class `{}` changes between open arrivals (`rate`) and a population \
                 (`users`)",
                x.name
            ));
        }
    }
    if a.pools.len() != b.pools.len() || a.pools.iter().zip(&b.pools).any(|(x, y)| x.name != y.name)
    {
        return Err(format!(
            "the pools change from [{}] to [{}]",
            names(a.pools.iter().map(|c| &c.name).collect()),
            names(b.pools.iter().map(|c| &c.name).collect())
        ));
    }
    if a.triggers.len() != b.triggers.len()
        || a.triggers
            .iter()
            .zip(&b.triggers)
            .any(|(x, y)| x.name != y.name)
    {
        return Err("events cannot be added or removed by an intervention".into());
    }
    for (x, y) in a.pools.iter().zip(&b.pools) {
        let named = |c: &Config| -> Vec<String> {
            c.calls
                .iter()
                .filter(|k| c.pools[k.pool].name == x.name)
                .map(|k| k.name.clone())
                .collect()
        };
        if x.plans != y.plans || named(a) != named(b) {
            return Err(format!(
                "pool `{}` changes its calls (their number or which run in parallel)",
                x.name
            ));
        }
    }
    for (x, y) in a.classes.iter().zip(&b.classes) {
        if x.steps.len() != y.steps.len() {
            return Err(format!("class `{}` changes its number of steps", x.name));
        }
        if x.steps
            .iter()
            .zip(&y.steps)
            .any(|(a, b)| a.cache != b.cache)
        {
            return Err(format!(
                "class `{}` changes the cache tier a step looks up",
                x.name
            ));
        }
    }
    for (x, y) in a.pools.iter().zip(&b.pools) {
        if (x.shards, x.replicas) != (y.shards, y.replicas) {
            return Err(format!("pool `{}` changes its shards or replicas", x.name));
        }
        if x.autoscale.is_some() != y.autoscale.is_some() {
            return Err(format!("pool `{}` gains or loses its autoscaler", x.name));
        }
        if x.outlier.is_some() != y.outlier.is_some() {
            return Err(format!(
                "pool `{}` gains or loses its outlier ejection",
                x.name
            ));
        }
        if x.lease.is_some() != y.lease.is_some() {
            return Err(format!("pool `{}` gains or loses its lease", x.name));
        }
        if x.health_check.is_some() != y.health_check.is_some() {
            return Err(format!(
                "pool `{}` gains or loses its health checks",
                x.name
            ));
        }
        if x.peers.map(|c| c.standby) != y.peers.map(|c| c.standby) {
            return Err(format!(
                "pool `{}` gains or loses its `peers` or changes its standby servers",
                x.name
            ));
        }
        let sync = |c: &crate::scenario::spec::PoolCfg| {
            c.sync.as_ref().map(|s| (s.pool, s.every_ns.is_some()))
        };
        if sync(x) != sync(y) {
            return Err(format!(
                "pool `{}` gains or loses its sync, its routine syncs (`every`) or the pool \
                 its sync queries",
                x.name
            ));
        }
        if x.client.is_some() != y.client.is_some() {
            return Err(format!(
                "pool `{}` gains or loses its cluster client",
                x.name
            ));
        }
    }
    if a.caches != b.caches {
        return Err("cache tiers cannot be changed by an intervention".into());
    }
    for (x, y) in a.triggers.iter().zip(&b.triggers) {
        let (mut x, y) = (x.clone(), y);
        x.enabled = y.enabled;
        x.label = y.label.clone();
        if &x != y {
            return Err(format!(
                "event `{}` may only be switched on or off (`enabled`)",
                x.name
            ));
        }
    }
    Ok(())
}
