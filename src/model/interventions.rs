//! Interventions: at a scheduled time the scenario's `[[at]]` entry puts a whole new
//! configuration in force (validated up front, like the file), and the components take it
//! up while keeping their state: a class's arrival rate, rate limit and budgets; a pool's
//! workers, after which waiting work may start at once. An entry that fires an event
//! (`fire = "NAME"`) starts it now, after its configuration is in force, and ends it its
//! `for` later.

use super::event::Event;
use super::simulation::Simulation;
use crate::scenario::{Intervention, TriggerKind};

impl Simulation<'_> {
    /// Puts intervention `i`'s configuration in force, keeping all state.
    pub(super) fn intervene(&mut self, i: usize) {
        let sc = self.sc;
        self.apply_intervention(&sc.interventions[i]);
    }

    /// Applies `iv` now, whatever its `time`: its configuration, then the event it fires.
    /// The timetable applies a scenario's own entries; a live session
    /// ([`super::live`]) applies those it makes this way.
    pub fn apply_intervention(&mut self, iv: &Intervention) {
        self.put_in_force(iv);
        if let Some(e) = iv.fire {
            self.trigger_start(e);
            let t = &self.cfg.triggers[e];
            if !matches!(t.kind, TriggerKind::Burst { .. }) {
                let end = self.now.saturating_add(t.for_ns);
                self.queue
                    .schedule(end, Event::FiredEnd { trigger: e as u16 });
            }
        }
    }

    fn put_in_force(&mut self, iv: &Intervention) {
        let old = std::mem::replace(&mut self.cfg, iv.config.clone());
        // A draw of keys kept for a retry (`Request::drawn`) was made for the old
        // configuration (its key count, fan-out and pool's shards): retries draw again.
        for req in self.reqs.slots_mut() {
            req.drawn = 0;
        }
        self.keys.ahead.configure(&self.cfg);
        self.witness.in_force(&self.cfg);
        for c in 0..self.classes.len() {
            let changed_rate = {
                let (o, n) = (&old.classes[c], &self.cfg.classes[c]);
                o.rate_per_s != n.rate_per_s || o.profile != n.profile
            };
            self.classes[c].reconfigure(self.now, &old.classes[c], &self.cfg.classes[c]);
            if changed_rate {
                self.schedule_arrival(c);
            }
            if old.classes[c].users.as_ref().map(|u| u.users)
                != self.cfg.classes[c].users.as_ref().map(|u| u.users)
            {
                self.resize_population(c);
            }
            if old.classes[c].users.as_ref().map(|u| &u.think)
                != self.cfg.classes[c].users.as_ref().map(|u| &u.think)
            {
                self.redraw_clock(c);
            }
        }
        for p in 0..self.pools.len() {
            let pool = &mut self.pools[p];
            pool.integrate(self.now);
            pool.integrate_capacity(self.now);
            pool.workers = self.cfg.pools[p].workers;
            pool.sheds = self.cfg.pools[p].shed.is_some();
            for s in 0..pool.servers.len() {
                self.serve_next::<false>(p, s as u32);
            }
            if old.pools[p].peers != self.cfg.pools[p].peers {
                self.recheck_fleet(p);
            }
            // A larger `max_concurrent` lets waiting syncs start now.
            if self.cfg.pools[p].sync.is_some() {
                self.pump(p);
            }
        }
    }
}
