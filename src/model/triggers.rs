//! Triggers: the scenario's time-triggered `[event.NAME]` sections (slowdowns, outages,
//! bursts, rolling restarts, partitions, flushes, crashes), when they start and end, and
//! what they do to the components. The timetable also holds the interventions
//! ([`super::interventions`]) so that both run in one time order.

use super::event::Event;
use super::metrics::{Marker, MarkerKind};
use super::simulation::Simulation;
use super::workload::BurstState;
use crate::engine::Rng;
use crate::engine::time::{SimTime, ns_to_secs};
use crate::scenario::{Scenario, TriggerCfg, TriggerKind};

/// An entry of the timetable.
#[derive(Debug, Clone, Copy)]
pub(super) enum Action {
    /// Trigger `i` starts (if enabled at that time).
    Start(u16),
    /// Trigger `i` ends (if it had started).
    End(u16),
    /// Intervention `i` applies.
    Intervene(u16),
}

/// The run's timetable and the live state of its triggers.
#[derive(Clone)]
pub(super) struct Timetable {
    /// (time, action), in time order; ties keep file order (triggers, then interventions).
    pub entries: Vec<(SimTime, Action)>,
    /// Running triggers.
    active: Vec<bool>,
    bursts: Vec<BurstState>,
    pub(super) burst_rng: Rng,
}

/// The start times of a trigger's occurrences within a run of length `duration`.
fn occurrences(t: &TriggerCfg, duration: SimTime) -> impl Iterator<Item = SimTime> + '_ {
    std::iter::successors(Some(t.at_ns), move |&at| {
        t.every_ns.map(|p| at.saturating_add(p))
    })
    .take_while(move |&at| at < duration)
}

impl Timetable {
    pub(super) fn new(sc: &Scenario, burst_rng: Rng) -> Self {
        let triggers = &sc.config.triggers;
        let mut entries = Vec::new();
        for (i, t) in triggers.iter().enumerate() {
            for at in occurrences(t, sc.duration) {
                entries.push((at, Action::Start(i as u16)));
                if !matches!(t.kind, TriggerKind::Burst { .. }) {
                    entries.push((at.saturating_add(t.for_ns), Action::End(i as u16)));
                }
            }
        }
        for (i, iv) in sc.interventions.iter().enumerate() {
            entries.push((iv.time, Action::Intervene(i as u16)));
        }
        // Stable sort: ties keep file order (triggers, then interventions).
        entries.sort_by_key(|a| a.0);
        Self {
            entries,
            active: vec![false; triggers.len()],
            bursts: vec![BurstState::default(); triggers.len()],
            burst_rng,
        }
    }
}

/// The triggers and interventions of a scenario, as timeline markers (enabled triggers
/// only, as configured at the start of the run).
pub fn markers(sc: &Scenario) -> Vec<Marker> {
    let mut out = Vec::new();
    for t in sc.config.triggers.iter().filter(|t| t.enabled) {
        for at in occurrences(t, sc.duration) {
            out.push(Marker {
                kind: MarkerKind::Event,
                label: t.label.clone(),
                start_s: ns_to_secs(at),
                end_s: Some(ns_to_secs(at.saturating_add(t.for_ns).min(sc.duration))),
            });
        }
    }
    for iv in &sc.interventions {
        if let Some(t) = iv.fire.map(|e| &sc.config.triggers[e]) {
            out.push(Marker {
                kind: MarkerKind::Event,
                label: t.label.clone(),
                start_s: ns_to_secs(iv.time),
                end_s: Some(ns_to_secs(
                    iv.time.saturating_add(t.for_ns).min(sc.duration),
                )),
            });
        }
        out.push(Marker {
            kind: MarkerKind::Intervention,
            label: iv.label.clone(),
            start_s: ns_to_secs(iv.time),
            end_s: None,
        });
    }
    out
}

impl Simulation<'_> {
    /// Carries out entry `idx` of the timetable.
    pub(super) fn scheduled(&mut self, idx: usize) {
        match self.timetable.entries[idx].1 {
            Action::Start(t) => self.trigger_start(t as usize),
            Action::End(t) => self.trigger_end(t as usize),
            Action::Intervene(i) => self.intervene(i as usize),
        }
    }

    pub(super) fn trigger_start(&mut self, e: usize) {
        let tr = &self.cfg.triggers[e];
        if !tr.enabled {
            return;
        }
        self.timetable.active[e] = true;
        match tr.kind {
            TriggerKind::Slowdown { pool, factor } => self.pools[pool].slowdown *= factor,
            TriggerKind::Outage { pool } => self.pools[pool].outages += 1,
            TriggerKind::Burst { class, clients } => {
                let b = &mut self.timetable.bursts[e];
                *b = BurstState {
                    remaining: clients,
                    u: 0.0,
                    start: self.now,
                    spread: tr.for_ns,
                    class: class as u16,
                };
                if let Some(t) = b.next_time(&mut self.timetable.burst_rng) {
                    self.queue
                        .schedule(t, Event::BurstArrival { trigger: e as u16 });
                }
            }
            TriggerKind::RollingRestart { .. } => self.rolling_next(e, 0),
            TriggerKind::Partition { cache, nodes } => {
                for s in 0..nodes as usize {
                    let token = self.caches[cache].leave(s, false);
                    self.detect_later(cache, s, token);
                }
            }
            TriggerKind::Flush { cache, nodes } => {
                for s in 0..nodes as usize {
                    self.caches[cache].flush(s);
                }
            }
            TriggerKind::Crash { pool, server } => self.crash_server(pool, server),
        }
    }

    pub(super) fn trigger_end(&mut self, e: usize) {
        if !std::mem::take(&mut self.timetable.active[e]) {
            return;
        }
        match self.cfg.triggers[e].kind {
            TriggerKind::Slowdown { pool, factor } => self.pools[pool].slowdown /= factor,
            TriggerKind::Outage { pool } => self.pools[pool].outages -= 1,
            TriggerKind::Partition { cache, nodes } => {
                for s in 0..nodes as usize {
                    self.caches[cache].rejoin(s);
                }
            }
            TriggerKind::Crash { pool, server } => {
                // The replacement is up; clients learn of it at their next refresh.
                let p = &mut self.pools[pool];
                p.servers[server as usize].down = false;
                if self.cfg.pools[pool].client.is_none() {
                    p.refresh_view();
                }
            }
            TriggerKind::Burst { .. }
            | TriggerKind::RollingRestart { .. }
            | TriggerKind::Flush { .. } => {}
        }
    }

    /// The next client of a running burst arrives; the one after it is scheduled.
    pub(super) fn burst_arrival(&mut self, e: usize) {
        let b = &mut self.timetable.bursts[e];
        let class = b.class as usize;
        if let Some(t) = b.next_time(&mut self.timetable.burst_rng) {
            self.queue
                .schedule(t.max(self.now), Event::BurstArrival { trigger: e as u16 });
        }
        self.offer(class);
    }

    /// A rolling restart deregisters its next node; the control plane may swap in an
    /// empty spare before the node re-registers. Switching the trigger off (an
    /// intervention setting `enabled = false`) pauses the rollout.
    pub(super) fn rolling_next(&mut self, e: usize, node: u32) {
        let tr = &self.cfg.triggers[e];
        let TriggerKind::RollingRestart {
            cache,
            nodes,
            interval_ns,
            down_for_ns,
        } = tr.kind
        else {
            return;
        };
        if !tr.enabled || node >= nodes {
            return;
        }
        let slot = node as usize % self.caches[cache].slots.len();
        let token = self.caches[cache].leave(slot, true);
        self.detect_later(cache, slot, token);
        self.queue.schedule(
            self.now.saturating_add(down_for_ns),
            Event::NodeRejoin {
                cache: cache as u16,
                slot: slot as u16,
                token,
            },
        );
        if node + 1 < nodes {
            self.queue.schedule(
                self.now.saturating_add(interval_ns),
                Event::RollingNext {
                    trigger: e as u16,
                    node: node + 1,
                },
            );
        }
    }

    /// Schedules the control plane's look at a cache slot that left the catalog.
    fn detect_later(&mut self, cache: usize, slot: usize, token: u32) {
        if let Some(d) = self.cfg.caches[cache].detect_after_ns {
            self.queue.schedule(
                self.now.saturating_add(d),
                Event::NodeDetect {
                    cache: cache as u16,
                    slot: slot as u16,
                    token,
                },
            );
        }
    }
}
