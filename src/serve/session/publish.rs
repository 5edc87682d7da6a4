//! What the run thread shows the page: the snapshot it publishes after each tick (rows,
//! markers, the verdict of the tipping measure, the knobs' values in force) and the run's
//! speed over the last second.

use super::*;

impl Driver {
    /// Each knob's value in force at `now`.
    fn knob_values(&self, now: SimTime) -> serde_json::Map<String, serde_json::Value> {
        let mut out = serde_json::Map::new();
        for (path, base) in &self.knobs {
            let set = self
                .settings
                .iter()
                .filter(|(t, p, _)| *t <= now && p == path)
                .max_by_key(|(t, _, _)| *t)
                .map(|(_, _, v)| v);
            if let Some(v) = set.or(base.as_ref()) {
                out.insert(path.clone(), v.clone());
            }
        }
        out
    }

    pub(super) fn publish(&self, sim: &Simulation, error: Option<String>, rates: (f64, f64)) {
        let rows = sim.rows();
        let now = sim.now_ns();
        let (measure, verdict) = self.health(rows);
        let Ok(mut live) = self.shared.lock() else {
            return;
        };
        if live.run != self.run || live.rows.len() > rows.len() {
            live.rows.clear();
        }
        let have = live.rows.len();
        let finished = error.is_none() && now >= sim.end_ns();
        // Told again when a row is added (or the run starts over, or ends).
        if have != rows.len() || live.run != self.run || (finished && live.status != "finished") {
            live.narrative = narrative_of(
                &self.current,
                (&self.columns, rows),
                &self.markers,
                now,
                finished,
            );
            live.structure = crate::report::structure::svg(&structure_of(
                &self.current,
                (&self.columns, rows),
                &self.markers,
                now,
                finished,
            ));
        }
        live.rows.extend_from_slice(&rows[have..]);
        live.run = self.run;
        live.seed = self.design.seed;
        live.variant = self.design.variant.as_ref().map(|v| v.name.clone());
        live.text = self.text.clone();
        live.markers = self.listed.clone();
        live.now_s = ns_to_secs(now);
        live.end_s = ns_to_secs(sim.end_ns());
        live.status = if error.is_some() {
            "failed"
        } else if now >= sim.end_ns() {
            "finished"
        } else if self.paused {
            "paused"
        } else {
            "running"
        };
        live.speed = self.speed;
        (live.achieved_speed, live.updates_per_s) = rates;
        live.measure = measure;
        live.healthy = verdict.map(|v| v == Verdict::Healthy);
        live.verdict = verdict.map(|v| v.word());
        live.cause = verdict.and_then(|v| v.cause());
        live.share = verdict.and_then(|v| v.share());
        live.verdict_text = verdict.map(|v| v.to_string());
        if live.log.len() != self.actions.len() {
            live.log = self.actions.clone();
        }
        live.knobs = self.knob_values(now);
        live.error = error;
    }

    /// The tipping sweep's measure over the recent rows, and the verdict on them.
    fn health(&self, rows: &[Vec<f64>]) -> (Option<f64>, Option<Verdict>) {
        let Some((m, h)) = &self.gauge else {
            return (None, None);
        };
        let Some(last) = rows.last() else {
            return (None, None);
        };
        let window = self.current.window;
        let to = crate::engine::time::secs_to_ns(last[0]).saturating_add(window);
        let span = (6 * window).max(60_000_000_000);
        let Ok(g) = Gauge::of(m, *h, &self.columns, to.saturating_sub(span), to) else {
            return (None, None);
        };
        (
            g.measure(rows, to),
            g.verdict(&self.current.config, &self.columns, rows, to),
        )
    }
}

/// (simulated seconds per wall second, ticks per second) over the last second.
pub(super) fn rates(
    recent: &mut std::collections::VecDeque<(Instant, f64)>,
    now_s: f64,
) -> (f64, f64) {
    let t = Instant::now();
    recent.push_back((t, now_s));
    while recent
        .front()
        .is_some_and(|(w, _)| t.duration_since(*w) > Duration::from_secs(1))
    {
        recent.pop_front();
    }
    let (w0, s0) = recent[0];
    let dt = t.duration_since(w0).as_secs_f64();
    if dt <= 0.0 {
        return (0.0, 0.0);
    }
    ((now_s - s0) / dt, (recent.len() - 1) as f64 / dt)
}
