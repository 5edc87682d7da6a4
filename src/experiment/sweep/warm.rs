//! `tipping.warmup` in a sweep: the overrides that start a variant's runs later in the
//! file's time (validation computes the shift, `scenario::validate` `warmup.rs`).

use crate::engine::time::{SimTime, ns_to_secs};
use crate::scenario::{self, Override, Scenario};

/// A duration as an override's value.
pub(super) fn seconds(ns: SimTime) -> toml::Value {
    toml::Value::String(scenario::sweep::format_seconds(ns_to_secs(ns)))
}

/// The run length a variant's sweep runs get (`tipping.duration`, else the scenario's
/// when a warm-up shortens it) and the overrides that move its events earlier by the
/// warm-up's shift (`Tipping::shift_ns`, validated: no event starts before it), keeping
/// the metrics step the sweep's run length gives. No shift: the length of `duration` and
/// no overrides, as before `warmup`.
pub(super) fn warm_start(
    sc: &Scenario,
    duration: Option<SimTime>,
) -> (Option<SimTime>, Vec<Override>) {
    let Some(t) = sc.tipping.as_ref().filter(|t| t.shift_ns > 0) else {
        return (duration, Vec::new());
    };
    let origin = "[tipping] warmup";
    let mut sets: Vec<Override> = sc
        .config
        .triggers
        .iter()
        .map(|e| {
            let at = seconds(e.at_ns - t.shift_ns);
            Override::new(&format!("event.{}.at", e.name), at, origin)
        })
        .collect();
    sets.push(Override::new("metrics.step", seconds(t.step_ns), origin));
    // A load that changes over time without repeating moves with the events.
    for (key, profile) in sc.config.profiles() {
        if profile.is_constant() || profile.every.is_some() {
            continue;
        }
        let shifted = profile.shifted(t.shift_ns);
        let points = shifted
            .points
            .iter()
            .map(|&(at, f)| toml::Value::Array(vec![seconds(at), toml::Value::Float(f)]));
        let mut table = toml::Table::new();
        table.insert("points".into(), toml::Value::Array(points.collect()));
        sets.push(Override::new(&key, toml::Value::Table(table), origin));
    }
    let length = duration.unwrap_or(sc.duration).saturating_sub(t.shift_ns);
    (Some(length), sets)
}
