//! Issue 26 (item 1): one event loop under every way of running a model. A plain run, a
//! live run stepped to chosen times, a stepped run to levels (the rare-event estimate's)
//! and the occupancy measurement of the same scenario and run index reach the same state:
//! the same summary (and, where rows are kept, the same time series, byte for byte), and a
//! budget stops each of them at the same event with the same message.

use crate::common::bundled;
use brink::model::budget::Limits;
use brink::model::stepping::Level;
use brink::model::{RunResult, SimError, Simulation, run};
use brink::scenario::Scenario;

/// A digest of a result's state: its summary and its time series, exactly.
fn state(r: &RunResult, rows: bool) -> String {
    let mut s = serde_json::to_string(&r.summary).unwrap();
    if rows {
        for (i, name) in r.series.names().iter().enumerate() {
            s.push_str(name);
            for v in r.series.values(i) {
                s.push_str(&format!(",{:x}", v.to_bits()));
            }
        }
    }
    s
}

/// A live run stepped to uneven times, then ended.
fn live(sc: &Scenario, limits: Option<Limits>) -> Result<RunResult, SimError> {
    let mut sim = Simulation::checked(sc, 0)?;
    if let Some(l) = limits {
        sim = sim.with_limits(l);
    }
    sim.start_live();
    let end = sim.end_ns();
    let mut t = 0;
    let mut k = 1u64;
    while t < end {
        t = sim.advance_to(t + end / 29 * (k % 5) + 7)?;
        k += 1;
    }
    sim.into_result()
}

/// A run stepped from level crossing to level crossing (in flight at least 40, or at most
/// 2, or 5000 events), to its horizon, then ended.
fn stepped(sc: &Scenario, limits: Option<Limits>) -> Result<RunResult, SimError> {
    let mut sim = Simulation::checked(sc, 0)?;
    sim.start(sc.duration);
    if let Some(l) = limits {
        // The estimate counts a stepped run's events itself: only the memory ceiling.
        sim = sim.with_limits(Limits {
            events: u64::MAX,
            ..l
        });
    }
    loop {
        let before = sim.events();
        sim.advance_until(Level::InFlight, 40, Some(2), 5000)?;
        if sim.events() == before {
            break;
        }
    }
    sim.advance_to(sc.duration)?;
    sim.into_result()
}

fn occupancy(sc: &Scenario, limits: Option<Limits>) -> Result<RunResult, SimError> {
    let mut sim = Simulation::checked(sc, 0)?;
    if let Some(l) = limits {
        sim = sim.with_limits(l);
    }
    Ok(sim.measure_occupancy(0, sc.duration / 10, 8)?.result)
}

fn plain(sc: &Scenario, limits: Option<Limits>) -> Result<RunResult, SimError> {
    match limits {
        None => run(sc, 0),
        Some(l) => Simulation::checked(sc, 0)?.with_limits(l).run(),
    }
}

fn run0(sc: &Scenario) -> RunResult {
    plain(sc, None).unwrap()
}

#[test]
fn every_way_of_running_a_scenario_reaches_the_same_state() {
    // A trigger and retries (retry-storm), a calls graph with a cache (web-api), a crash
    // loop and syncs (GCP): each mechanism's events go through the one loop.
    for name in ["retry-storm", "web-api", "gcp-service-control-2025-06-12"] {
        let sc = bundled(name, None, &[]);
        let want = run0(&sc);
        assert!(want.summary.classes.values().any(|c| c.offered > 0));
        let full = state(&want, true);
        assert_eq!(state(&live(&sc, None).unwrap(), true), full, "{name}: live");
        assert_eq!(
            state(&occupancy(&sc, None).unwrap(), true),
            full,
            "{name}: occupancy"
        );
        // A stepped run forgets its rows (nobody reads them): its summary is the run's.
        assert_eq!(
            state(&stepped(&sc, None).unwrap(), false),
            state(&want, false),
            "{name}: stepped"
        );
    }
}

#[test]
fn a_budget_stops_every_way_of_running_at_the_same_event() {
    let sc = bundled("retry-storm", None, &[]);
    let base = Simulation::checked(&sc, 0).unwrap();
    let (limits, held) = (base.limits(), base.held_bytes());
    // The event budget: a run, a live run and an occupancy run end at the same event.
    let events = Limits {
        events: 300_000,
        ..limits
    };
    let Err(want) = plain(&sc, Some(events)) else {
        panic!("the event budget ends the run")
    };
    assert!(
        want.to_string().contains("300000") || want.to_string().contains("300,000"),
        "{want}"
    );
    for (way, got) in [
        ("live", live(&sc, Some(events))),
        ("occupancy", occupancy(&sc, Some(events))),
    ] {
        assert_eq!(
            got.err().map(|e| e.to_string()),
            Some(want.to_string()),
            "{way}"
        );
    }
    // The memory ceiling, 64 kB above what the run holds at its start: the storm's queue
    // outgrows it, and every way of running stops at the same check.
    let memory = Limits {
        memory: held + (64 << 10),
        ..limits
    };
    let Err(want) = plain(&sc, Some(memory)) else {
        panic!("the ceiling ends the run")
    };
    assert!(want.to_string().contains("memory ceiling"), "{want}");
    for (way, got) in [
        ("live", live(&sc, Some(memory))),
        ("occupancy", occupancy(&sc, Some(memory))),
        ("stepped", stepped(&sc, Some(memory))),
    ] {
        assert_eq!(
            got.err().map(|e| e.to_string()),
            Some(want.to_string()),
            "{way}"
        );
    }
}
