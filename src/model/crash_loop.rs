//! Crash loops (`kind = "crash_loop"`): bad data that every server of a pool reads and
//! dies on. GCP 2025: a quota policy with blank fields, replicated to every region within
//! seconds, hit a null pointer in Service Control, which crashed, restarted, read the
//! policy again and crashed again, in every region, until the "red button" turned the
//! code path off.
//!
//! The event's start crashes every server of its pools into the restart path of their
//! sync ([`Simulation::restart_server`]); while it lasts, a sync that succeeds has read the
//! same data, and `Simulation::poisoned` (the sync's veto on success) makes the server
//! crash instead of serving. Unlike the other events, whose `enabled` is read only when
//! they start, the veto reads `enabled` at every sync: an intervention that switches the
//! event off is the kill switch, and every later startup succeeds.

use super::simulation::Simulation;
use crate::scenario::TriggerKind;

impl Simulation<'_> {
    /// Crash loop `e` starts: every server of its pools has read the bad data and crashes.
    pub(super) fn crash_loop_start(&mut self, e: usize) {
        let TriggerKind::CrashLoop { pools } = &self.cfg.triggers[e].kind else {
            return;
        };
        for p in pools.clone() {
            for s in 0..self.pools[p].servers.len() {
                self.restart_server(p, s as u32);
            }
        }
    }

    /// The veto on a sync of pool `p` that came back ok: a crash loop over `p` is under way
    /// and switched on (read now, not at its start: the kill switch), so the server read the
    /// bad data and crashes instead of serving.
    pub(super) fn poisoned(&self, p: usize) -> bool {
        self.cfg.triggers.iter().enumerate().any(|(e, t)| {
            t.enabled
                && self.timetable.is_active(e)
                && matches!(&t.kind, TriggerKind::CrashLoop { pools } if pools.contains(&p))
        })
    }
}

#[cfg(test)]
mod tests;
