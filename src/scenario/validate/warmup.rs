//! `tipping.warmup`, checked against the rest of the scenario: how much earlier a sweep
//! run holds its events than the file (the sweep applies it, `experiment::sweep`).

use super::check::{V, bad};
use crate::engine::time::{SimTime, ns_to_secs};
use crate::scenario::raw::{RawScenario, RawTipping};
use crate::scenario::spec::Config;

/// How much earlier a sweep run holds its events than the file (`tipping.warmup`): the
/// first trigger's start less `warmup`, rounded down to a whole number of periods of every
/// clock that runs from the start of a run (the metrics step, a cluster client's view
/// refresh, autoscaling, health checks, routine syncs, a repeating load or growth
/// profile), so that the trigger meets each at the phase it meets in the file; a profile
/// that does not repeat moves with the events (`Profile::shifted`). Refused when the
/// sweep varies an event's start and when an event would start before the run does.
pub(super) fn shift(
    raw: &RawScenario,
    t: &RawTipping,
    config: &Config,
    warmup: SimTime,
    step: SimTime,
) -> V<SimTime> {
    let swept = std::iter::once(&t.vary).chain(raw.phase.as_ref().map(|p| &p.vary));
    for vary in swept {
        if vary.starts_with("event.") && vary.ends_with(".at") {
            return bad(
                "tipping.warmup",
                format!(
                    "the sweep varies `{vary}`, an event's start, so no one warm-up holds at every value; drop `warmup`"
                ),
            );
        }
    }
    // The periods of the clocks that run from the start of a run. A profile that repeats
    // is one; one that does not moves with the events.
    let mut clocks: Vec<SimTime> = vec![step];
    for (_, profile) in config.profiles() {
        clocks.extend(profile.every.filter(|_| !profile.is_constant()));
    }
    for p in &config.pools {
        clocks.extend(p.client.as_ref().map(|c| c.refresh_ns));
        clocks.extend(p.autoscale.as_ref().map(|a| a.every_ns));
        clocks.extend(p.health_check.as_ref().map(|h| h.every_ns));
        clocks.extend(p.sync.as_ref().and_then(|s| s.every_ns));
    }
    // The shortest shift that keeps every clock's phase (a period too long to keep: none).
    let period = clocks
        .iter()
        .filter(|&&p| p > 0)
        .try_fold(1, |l: SimTime, &p| (l / gcd(l, p)).checked_mul(p));
    let first = config
        .triggers
        .iter()
        .filter(|e| t.trigger.contains(&e.name))
        .map(|e| e.at_ns)
        .min()
        .unwrap_or(0);
    let shift = period.map_or(0, |p| first.saturating_sub(warmup) / p * p);
    if let Some(e) = config.triggers.iter().find(|e| e.at_ns < shift) {
        let need = first - e.at_ns;
        return bad(
            "tipping.warmup",
            format!(
                "event `{}` starts at {} s, before a sweep run would start: the first trigger at {} s less the warm-up moves every event {} s earlier; give a warm-up of at least {} s",
                e.name,
                ns_to_secs(e.at_ns),
                ns_to_secs(first),
                ns_to_secs(shift),
                ns_to_secs(need)
            ),
        );
    }
    Ok(shift)
}

/// The greatest common divisor.
fn gcd(mut a: SimTime, mut b: SimTime) -> SimTime {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
