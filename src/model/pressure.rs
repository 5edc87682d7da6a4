//! Load slowdown (`slowdown = { with, per, max }` on a pool): service that grows with the
//! server's own state, the mechanism of a garbage-collection death spiral. A job's service
//! time, drawn when a worker takes it, is multiplied by `min(1 + per x n, max)`, where `n`
//! is, at that moment, the jobs waiting in its server's queue (`with = "queue"`) or every
//! other job the server holds (`with = "in_flight"`: in service, calls' waits included, and
//! queued). Unlike `contention`, which counts only the jobs in service (at most the
//! workers), the state reaches past the workers, so a long queue slows service down and
//! slow service keeps the queue long: past the point where the slowed capacity equals the
//! load, the server has a second, slow steady state.
//!
//! The one decision point is [`multiplier`], called from `PoolState::service_ns`; a pool
//! without the key tests one `Option` and draws nothing more.

use crate::scenario::{LoadSlowdownCfg, SlowdownWith};

/// The service-time multiplier of a job that starts while `in_service` jobs (this one
/// included) are in service on its server and `queued` wait in its queue.
#[inline]
pub fn multiplier(s: &LoadSlowdownCfg, in_service: u32, queued: u32) -> f64 {
    let n = match s.with {
        SlowdownWith::Queue => queued as f64,
        SlowdownWith::InFlight => in_service.saturating_sub(1) as f64 + queued as f64,
    };
    (1.0 + s.per * n).min(s.max)
}

#[cfg(test)]
mod tests {
    use crate::engine::stream_rng;
    use crate::model::pool::PoolState;
    use crate::scenario::Loader;

    /// A pool of const 10 ms service with `slowdown` (the table's text) and its state.
    fn pool(slowdown: &str) -> (crate::scenario::PoolCfg, PoolState) {
        let text = format!(
            "duration = \"1s\"\n[class.c]\nrate = 1\nsteps = [{{ query = \"p\" }}]\n\
             [pool.p]\nworkers = 4\nservice = {{ law = \"const\", mean = \"10ms\" }}\n\
             slowdown = {slowdown}\n"
        );
        let sc = Loader::from_text("t.toml", "t", text)
            .unwrap()
            .load(None, &[])
            .unwrap();
        let cfg = sc.config.pools[0].clone();
        let state = PoolState::new(&cfg, stream_rng(1, 0, "p"), stream_rng(1, 0, "b"));
        (cfg, state)
    }

    #[test]
    fn queue_slowdown_is_base_times_one_plus_per_queued_capped() {
        // per = 0.25 and a 10 ms base: every product is exact in binary.
        let (cfg, mut p) = pool("{ with = \"queue\", per = 0.25, max = 3 }");
        for (in_service, queued, want_ns) in [
            (1, 0, 10_000_000),
            (4, 0, 10_000_000), // jobs in service do not count
            (1, 1, 12_500_000),
            (4, 3, 17_500_000),
            (2, 8, 30_000_000),    // 1 + 0.25 x 8 = 3: at the cap
            (4, 1000, 30_000_000), // capped
        ] {
            assert_eq!(
                p.service_ns(&cfg, 1.0, in_service, queued),
                want_ns,
                "in service {in_service}, queued {queued}"
            );
        }
    }

    #[test]
    fn in_flight_slowdown_counts_every_other_job_held() {
        let (cfg, mut p) = pool("{ with = \"in_flight\", per = 0.25 }");
        for (in_service, queued, want_ns) in [
            (1, 0, 10_000_000), // alone: base
            (2, 0, 12_500_000),
            (4, 2, 22_500_000),    // 3 others in service + 2 queued
            (4, 100, 100_000_000), // the default cap, 10
        ] {
            assert_eq!(p.service_ns(&cfg, 1.0, in_service, queued), want_ns);
        }
        // A job's cost scales the slowed time.
        assert_eq!(p.service_ns(&cfg, 2.0, 2, 0), 25_000_000);
    }
}
