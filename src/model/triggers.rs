//! Triggers: the scenario's time-triggered `[event.NAME]` sections (slowdowns, outages,
//! bursts, rolling restarts, partitions, flushes, crashes, fail-fast servers, crash loops
//! in `super::crash_loop`), when they start and end, and what they do to the components.
//! The timetable also holds the interventions ([`super::interventions`]) so that both run
//! in one time order.

use super::event::Event;
use super::metrics::{Marker, MarkerKind};
use super::simulation::Simulation;
use super::workload::BurstState;
use crate::engine::EventQueue;
use crate::engine::Rng;
use crate::engine::time::{SimTime, ns_to_secs};
use crate::scenario::{Intervention, Scenario, TriggerCfg, TriggerKind};

/// The run's timetable and the live state of its triggers.
///
/// Occurrences of a repeating trigger are generated one at a time: each trigger has one
/// entry pending in the event queue (its next start or end), scheduled when the one before
/// it pops. The order is exactly that of the whole timetable sorted by time with ties in
/// file order (each trigger's occurrences in order, a start before its end, then the
/// interventions), scheduled at the start of the run: every entry has a sequence number set
/// aside at the start ([`crate::engine::EventQueue::reserve`]), trigger `i`'s in a range of
/// its own after trigger `i - 1`'s, the interventions' last.
#[derive(Clone)]
pub(super) struct Timetable {
    /// The first sequence number of each trigger's entries: occurrence `k` starts with
    /// `first + 2k` and ends with `first + 2k + 1` (a burst, which has no end: `first + k`).
    first_seq: Vec<u64>,
    /// The occurrence of each trigger whose start or end is pending.
    occurrence: Vec<u64>,
    /// Running triggers.
    active: Vec<bool>,
    bursts: Vec<BurstState>,
    pub(super) burst_rng: Rng,
}

/// The number of occurrences of a trigger that start within a run of length `duration`
/// (O(1): the timetable and the memory ceiling count them without listing them).
pub fn occurrence_count(t: &TriggerCfg, duration: SimTime) -> u64 {
    match t.every_ns {
        _ if t.at_ns >= duration => 0,
        Some(p) => (duration - 1 - t.at_ns) / p + 1,
        None => 1,
    }
}

/// The start times of a trigger's occurrences within a run of length `duration`.
fn occurrences(t: &TriggerCfg, duration: SimTime) -> impl Iterator<Item = SimTime> + '_ {
    (0..occurrence_count(t, duration)).map(move |k| start_of(t, k))
}

/// The start of occurrence `k` of a trigger (one that starts within the run).
fn start_of(t: &TriggerCfg, k: u64) -> SimTime {
    t.at_ns + k * t.every_ns.unwrap_or(0)
}

/// Timetable entries per occurrence: a start and an end, or a burst's start alone.
fn entries_per_occurrence(t: &TriggerCfg) -> u64 {
    if matches!(t.kind, TriggerKind::Burst { .. }) {
        1
    } else {
        2
    }
}

impl Timetable {
    pub(super) fn new(sc: &Scenario, burst_rng: Rng) -> Self {
        let n = sc.config.triggers.len();
        Self {
            first_seq: vec![0; n],
            occurrence: vec![0; n],
            active: vec![false; n],
            bursts: vec![BurstState::default(); n],
            burst_rng,
        }
    }

    /// Trigger `e` has an occurrence under way (started while switched on).
    pub(super) fn is_active(&self, e: usize) -> bool {
        self.active[e]
    }

    /// Schedules each trigger's first start and every intervention, setting aside the
    /// sequence numbers of every entry of the run.
    pub(super) fn schedule_start(&mut self, sc: &Scenario, queue: &mut EventQueue<Event>) {
        let triggers = &sc.config.triggers;
        let sizes: Vec<u64> = triggers
            .iter()
            .map(|t| occurrence_count(t, sc.duration).saturating_mul(entries_per_occurrence(t)))
            .collect();
        let total = sizes
            .iter()
            .fold(sc.interventions.len() as u64, |a, &b| a.saturating_add(b));
        let mut seq = queue.reserve(total);
        for (i, t) in triggers.iter().enumerate() {
            self.first_seq[i] = seq;
            self.occurrence[i] = 0;
            if sizes[i] > 0 {
                queue.schedule_reserved(t.at_ns, seq, Event::TriggerStart { trigger: i as u16 });
            }
            seq = seq.saturating_add(sizes[i]);
        }
        for (i, iv) in sc.interventions.iter().enumerate() {
            queue.schedule_reserved(iv.time, seq + i as u64, Event::Intervene { idx: i as u16 });
        }
    }
}

/// The triggers and interventions of a scenario, as timeline markers (enabled triggers
/// only, as configured at the start of the run).
pub fn markers(sc: &Scenario) -> Vec<Marker> {
    let mut out = scheduled_markers(sc);
    for iv in &sc.interventions {
        out.extend(fired_marker(sc, iv));
        out.push(intervention_marker(iv));
    }
    out
}

/// The occurrences of the scenario's enabled triggers on their own schedules.
pub fn scheduled_markers(sc: &Scenario) -> Vec<Marker> {
    let mut out = Vec::new();
    for t in sc.config.triggers.iter().filter(|t| t.enabled) {
        for at in occurrences(t, sc.duration) {
            out.push(Marker {
                kind: MarkerKind::Event,
                name: t.name.clone(),
                label: t.label.clone(),
                start_s: ns_to_secs(at),
                end_s: Some(ns_to_secs(at.saturating_add(t.for_ns).min(sc.duration))),
            });
        }
    }
    out
}

/// The occurrence of an event that intervention `iv` fires (`fire = "NAME"`), if any.
pub fn fired_marker(sc: &Scenario, iv: &Intervention) -> Option<Marker> {
    let t = &sc.config.triggers[iv.fire?];
    Some(Marker {
        kind: MarkerKind::Event,
        name: t.name.clone(),
        label: t.label.clone(),
        start_s: ns_to_secs(iv.time),
        end_s: Some(ns_to_secs(
            iv.time.saturating_add(t.for_ns).min(sc.duration),
        )),
    })
}

/// Intervention `iv` as a line on the timeline.
pub fn intervention_marker(iv: &Intervention) -> Marker {
    Marker {
        kind: MarkerKind::Intervention,
        name: "at".into(),
        label: iv.label.clone(),
        start_s: ns_to_secs(iv.time),
        end_s: None,
    }
}

impl Simulation<'_> {
    /// Trigger `e`'s pending occurrence starts; its end (or a burst's next start) is
    /// scheduled.
    pub(super) fn timetable_start(&mut self, e: usize) {
        let tr = &self.cfg.triggers[e];
        let tt = &self.timetable;
        let k = tt.occurrence[e];
        if entries_per_occurrence(tr) == 1 {
            self.timetable.occurrence[e] = k + 1;
            self.schedule_occurrence(e, k + 1, k + 1);
        } else {
            self.queue.schedule_reserved(
                self.now.saturating_add(tr.for_ns),
                tt.first_seq[e] + 2 * k + 1,
                Event::TriggerEnd { trigger: e as u16 },
            );
        }
        self.trigger_start(e);
    }

    /// Trigger `e`'s pending occurrence ends; its next occurrence is scheduled.
    pub(super) fn timetable_end(&mut self, e: usize) {
        let k = self.timetable.occurrence[e] + 1;
        self.timetable.occurrence[e] = k;
        self.schedule_occurrence(e, k, 2 * k);
        self.trigger_end(e);
    }

    /// Schedules the start of occurrence `k` of trigger `e` (entry `entry` of the trigger),
    /// if it starts within the run.
    fn schedule_occurrence(&mut self, e: usize, k: u64, entry: u64) {
        let tr = &self.cfg.triggers[e];
        if k < occurrence_count(tr, self.sc.duration) {
            self.queue.schedule_reserved(
                start_of(tr, k),
                self.timetable.first_seq[e] + entry,
                Event::TriggerStart { trigger: e as u16 },
            );
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
            TriggerKind::FailFast {
                pool,
                server,
                fraction,
            } => self.pools[pool].servers[server as usize].fail_fast = fraction,
            TriggerKind::AddServers { .. } => self.add_servers_start(e),
            TriggerKind::Restart { pool } => self.restart_fleet(pool),
            TriggerKind::Resync { pool, servers } => self.resync(pool, servers, tr.for_ns),
            TriggerKind::CrashLoop { .. } => self.crash_loop_start(e),
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
                if self.cfg.pools[pool].sync.is_some() {
                    self.server_restarted(pool, server);
                }
            }
            TriggerKind::FailFast { pool, server, .. } => {
                self.pools[pool].servers[server as usize].fail_fast = 0.0;
            }
            TriggerKind::AddServers { .. } => self.add_servers_end(e),
            // A crash loop's servers restart by their sync; its veto ends with `active`.
            TriggerKind::Burst { .. }
            | TriggerKind::RollingRestart { .. }
            | TriggerKind::Flush { .. }
            | TriggerKind::Restart { .. }
            | TriggerKind::Resync { .. }
            | TriggerKind::CrashLoop { .. } => {}
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
        self.offer::<false>(class);
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
        self.witness.left[cache] = true;
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
