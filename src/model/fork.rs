//! Forking: two runs that are one run up to a time, then each its own.
//!
//! A sweep runs every seed twice, without and with its trigger (the baseline and the
//! triggered branch). The two scenarios differ only in which `[event.NAME]` sections are
//! enabled, and a disabled trigger's timetable entries are scheduled and popped all the
//! same, doing nothing ([`super::triggers`]): every event before the first start of a
//! trigger the two disagree on is handled alike, with the same random draws. So the pair is
//! run once up to that time ([`common_prefix`]), copied, and each copy goes on as its own
//! scenario ([`fork`]). Each result is byte for byte the one its own run would give (a
//! test holds them to it); the prefix is simulated once instead of twice.
//!
//! Both copies live at once, so each gets half the run's memory ceiling
//! ([`super::budget::Limits::split`]).

use super::budget::check_before;
use super::metrics::RunResult;
use super::simulation::{SimError, Simulation, bytes_of};
use super::step::{Halt, Until, UntilBefore};
use crate::engine::time::SimTime;
use crate::scenario::Scenario;
use std::time::Instant;

/// The time up to which runs of `a` and `b` are the same run: the earliest start of a
/// trigger enabled in one and not the other (`SimTime::MAX` when none is). `None` when
/// they differ in anything else that a run reads, or have interventions (which swap the
/// configuration in force).
pub fn common_prefix(a: &Scenario, b: &Scenario) -> Option<SimTime> {
    let same_run = a.seed == b.seed
        && a.duration == b.duration
        && a.window == b.window
        && a.interventions.is_empty()
        && b.interventions.is_empty()
        && a.config.triggers.len() == b.config.triggers.len();
    if !same_run {
        return None;
    }
    let mut aligned = (*b.config).clone();
    let mut at = SimTime::MAX;
    for (x, y) in a.config.triggers.iter().zip(aligned.triggers.iter_mut()) {
        if x.enabled != y.enabled {
            at = at.min(x.at_ns);
            y.enabled = x.enabled;
        }
    }
    (aligned == *a.config).then_some(at)
}

/// One run of a forked pair, ready to finish ([`Leg::finish`]).
pub enum Leg<'a> {
    /// A copy to go on from the fork.
    Going(Simulation<'a>),
    /// A copy whose `stop` ended it at the fork.
    Ended(Simulation<'a>),
    /// To run from its start (the shared part failed for the other scenario's budgets).
    Fresh(&'a Scenario),
    /// Failed.
    Failed(SimError),
}

impl Leg<'_> {
    /// Runs the leg to its end, asking `stop` after every window like
    /// [`super::run_until`]; `run` is the pair's run index, `wall` when the pair started.
    pub fn finish<S: FnMut(SimTime, &[Vec<f64>]) -> bool>(
        self,
        run: u64,
        wall: Instant,
        mut stop: S,
    ) -> Result<RunResult, SimError> {
        match self {
            Leg::Going(mut sim) => {
                sim.run_events(&mut Until(&mut stop))?;
                sim.conclude(wall)
            }
            Leg::Ended(sim) => sim.conclude(wall),
            Leg::Fresh(sc) => Simulation::checked(sc, run)?.run_until(&mut stop),
            Leg::Failed(e) => Err(e),
        }
    }
}

/// Runs `a` and `b` (with [`common_prefix`] `at`) as one run with run index `run` up to
/// `at`, asking both `stop`s after every window; returns a leg for each. A leg whose `stop`
/// said so ends there; a failure before `at` is `a`'s, and `b` then runs on its own from
/// the start, so that each leg's result is its own run's.
pub fn fork<'a>(
    a: &'a Scenario,
    b: &'a Scenario,
    run: u64,
    at: SimTime,
    stop_a: &mut dyn FnMut(SimTime, &[Vec<f64>]) -> bool,
    stop_b: &mut dyn FnMut(SimTime, &[Vec<f64>]) -> bool,
) -> (Leg<'a>, Leg<'a>) {
    let known_b = match check_before(b) {
        Ok(uses) => bytes_of(&uses),
        Err(e) => return (Leg::Fresh(a), Leg::Failed(e)),
    };
    let mut sim = match Simulation::checked(a, run) {
        Ok(sim) => sim,
        Err(e) => return (Leg::Failed(e), Leg::Fresh(b)),
    };
    sim.limits = sim.limits.split(2);
    sim.schedule_start();
    let end = sim.end;
    let (mut ends_a, mut ends_b) = (false, false);
    let mut both = |now: SimTime, rows: &[Vec<f64>]| {
        ends_a = stop_a(now, rows);
        ends_b = stop_b(now, rows);
        ends_a || ends_b
    };
    let drove = sim.run_events(&mut UntilBefore {
        stop: Until(&mut both),
        at,
    });
    let stopped = ends_a || ends_b;
    match drove {
        Err(e) => (Leg::Failed(e), Leg::Fresh(b)),
        Ok(Halt::Ended | Halt::Stopped) if !stopped => {
            let other = as_run_of(&sim, b, known_b);
            (Leg::Ended(sim), Leg::Ended(other))
        }
        Ok(drove) => {
            let mut other = as_run_of(&sim, b, known_b);
            // A leg that `stop` did not end goes on from where it was asked, with its end
            // as before (this event's budget check was made before `stop` was asked).
            let leg = |mut s: Simulation<'a>, ends: bool| {
                if drove == Halt::Paused {
                    return Leg::Going(s);
                }
                if ends {
                    return Leg::Ended(s);
                }
                s.end = end;
                Leg::Going(s)
            };
            other.end = sim.end;
            (leg(sim, ends_a), leg(other, ends_b))
        }
    }
}

/// A copy of `sim` that goes on as a run of `sc` (which [`common_prefix`] found the same
/// up to now).
fn as_run_of<'a>(sim: &Simulation<'a>, sc: &'a Scenario, known_bytes: u64) -> Simulation<'a> {
    let mut other = sim.clone();
    other.sc = sc;
    other.cfg = sc.config.clone();
    other.known_bytes = known_bytes;
    other
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Loader, Override};

    fn load(sets: &[(&str, toml::Value)]) -> Scenario {
        let sets: Vec<Override> = sets
            .iter()
            .map(|(k, v)| Override::new(k, v.clone(), "test"))
            .collect();
        Loader::from_text("fork.toml", "fork", FILE.into())
            .unwrap()
            .load(None, &sets)
            .unwrap()
    }

    const FILE: &str = r#"
duration = "120s"
seed = 7
[metrics]
step = "1s"
[class.request]
rate = 80
timeout = "1s"
retry = { max_attempts = 3, backoff = "none" }
steps = [{ query = "api" }]
[pool.api]
workers = 10
service = { law = "exp", mean = "100ms" }
[event.slow]
kind = "slowdown"
pool = "api"
factor = 3
at = "30s"
for = "10s"
"#;

    /// Each leg of a fork gives its own run's result, exactly (summary, events included,
    /// and every time-series row), for a stop that never fires, one that ends the
    /// triggered run after the trigger, and one that ends it before the fork.
    #[test]
    fn each_leg_is_its_own_run() {
        let t = load(&[]);
        let b = load(&[("event.slow.enabled", false.into())]);
        let at = common_prefix(&t, &b).unwrap();
        assert_eq!(at, 30_000_000_000);
        let never: fn(SimTime) -> bool = |_| false;
        let after: fn(SimTime) -> bool = |now| now >= 50_000_000_000;
        let before: fn(SimTime) -> bool = |now| now >= 20_000_000_000;
        // Rows hold NaN (a p99 with no success), which `==` never matches: compare text.
        let digest = |r: &RunResult| format!("{:?} {:?}", r.summary, r.series.rows);
        let alone = |sc: &Scenario, stop: fn(SimTime) -> bool| {
            digest(&super::super::run_until(sc, 3, &mut |now, _| stop(now)).unwrap())
        };
        let pairs = [
            (never, never),
            (after, never),
            (before, never),
            (never, before),
            (before, before),
        ];
        for (stop_t, stop_b) in pairs {
            let mut st = |now: SimTime, _: &[Vec<f64>]| stop_t(now);
            let mut sb = |now: SimTime, _: &[Vec<f64>]| stop_b(now);
            let (lt, lb) = fork(&t, &b, 3, at, &mut st, &mut sb);
            let wall = Instant::now();
            let rt = lt.finish(3, wall, |now, _| stop_t(now)).unwrap();
            let rb = lb.finish(3, wall, |now, _| stop_b(now)).unwrap();
            assert_eq!(digest(&rt), alone(&t, stop_t));
            assert_eq!(digest(&rb), alone(&b, stop_b));
        }
        // The slowdown made a difference after the fork.
        assert_ne!(alone(&t, |_| false), alone(&b, |_| false));
    }

    #[test]
    fn scenarios_that_differ_otherwise_share_nothing() {
        let t = load(&[]);
        let bigger = load(&[
            ("event.slow.enabled", false.into()),
            ("pool.api.workers", 11.into()),
        ]);
        assert_eq!(common_prefix(&t, &bigger), None);
        let later = load(&[("seed", 8.into())]);
        assert_eq!(common_prefix(&t, &later), None);
        assert_eq!(common_prefix(&t, &t), Some(SimTime::MAX));
    }
}
