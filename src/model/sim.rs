//! The simulation: component state plus the event loop that moves requests through
//! admission, steps, pools, timeouts and retries.

use super::cache::{CacheState, mix};
use super::event::Ev;
use super::metrics::*;
use super::pool::{Job, Jobs, PoolState};
use super::request::{Request, Requests};
use super::retry::backoff_delay;
use super::workload::{BurstState, ClassState};
use crate::engine::time::{SimTime, ns_to_secs};
use crate::engine::{EventQueue, Rng, stream_rng};
use crate::scenario::{
    Completion, Config, Fanout, KeyCount, MissPolicy, Scenario, StepCfg, TriggerKind,
};
use indexmap::IndexMap;
use rand::RngExt;
use rand_distr::{Distribution, Geometric, Poisson};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Hard limits that turn a runaway run into a clear error instead of a hang or an
/// out-of-memory kill.
pub const MAX_EVENTS: u64 = 4_000_000_000;
/// The most events that may be pending at once.
pub const MAX_PENDING: usize = 30_000_000;
/// The most requests that may be in flight at once.
pub const MAX_IN_FLIGHT: usize = 20_000_000;

/// Why a run stopped without a result.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The run exceeded a hard limit.
    #[error(
        "the run ran away at t = {time_s:.1} s: {what}. The system is exploding; lower the load, bound the queues (queue_limit) or shorten the run"
    )]
    Runaway { time_s: f64, what: String },
    /// A request went missing: a bug in brink, never the user's fault.
    #[error("internal accounting error in class `{class}`: {detail}")]
    Accounting { class: String, detail: String },
}

#[derive(Debug, Clone, Copy)]
enum Action {
    Start(u16),
    End(u16),
    Intervene(u16),
}

/// One run of a scenario.
pub struct Simulation<'a> {
    sc: &'a Scenario,
    cfg: Arc<Config>,
    now: SimTime,
    end: SimTime,
    q: EventQueue<Ev>,
    reqs: Requests,
    jobs: Jobs,
    pools: Vec<PoolState>,
    classes: Vec<ClassState>,
    caches: Vec<CacheState>,
    /// Keys of each request's current step, by request slot (reused, never shrunk).
    req_keys: Vec<Vec<u32>>,
    /// Scratch for grouping a query's keys by server.
    parts: Vec<(u32, u32)>,
    /// Requests offered so far, and a per-run salt: together they seed each request's keys.
    serial: u64,
    key_salt: u64,
    bursts: Vec<BurstState>,
    burst_rng: Rng,
    route_rng: Rng,
    active: Vec<bool>,
    actions: Vec<(SimTime, Action)>,
    token: u32,
    events: u64,
    rows: Vec<Vec<f64>>,
    step_start: SimTime,
    progress: Option<Arc<AtomicU64>>,
}

/// Runs `sc` once with run index `run` (0 for a plain run; sweeps use one per seed).
pub fn run(sc: &Scenario, run: u64) -> Result<RunResult, SimError> {
    Simulation::new(sc, run).run()
}

impl<'a> Simulation<'a> {
    /// Builds the components of `sc`; random streams derive from (seed, run, name).
    pub fn new(sc: &'a Scenario, run: u64) -> Self {
        let cfg = sc.config.clone();
        let rng = |name: &str| stream_rng(sc.seed, run, name);
        let pools = cfg
            .pools
            .iter()
            .map(|p| PoolState::new(p, rng(&format!("pool.{}", p.name))))
            .collect();
        let classes = cfg
            .classes
            .iter()
            .map(|c| {
                ClassState::new(
                    c,
                    rng(&format!("class.{}", c.name)),
                    rng(&format!("retry.{}", c.name)),
                )
            })
            .collect();
        let caches = cfg
            .caches
            .iter()
            .map(|c| CacheState::new(c, rng(&format!("cache.{}", c.name))))
            .collect();
        let mut actions = Vec::new();
        for (i, e) in cfg.triggers.iter().enumerate() {
            let mut t = e.at_ns;
            while t < sc.duration {
                actions.push((t, Action::Start(i as u16)));
                if !matches!(e.kind, TriggerKind::Burst { .. }) {
                    actions.push((t.saturating_add(e.for_ns), Action::End(i as u16)));
                }
                match e.every_ns {
                    Some(p) => t = t.saturating_add(p),
                    None => break,
                }
            }
        }
        for (i, iv) in sc.interventions.iter().enumerate() {
            actions.push((iv.time, Action::Intervene(i as u16)));
        }
        // Stable sort: ties keep file order (events, then interventions).
        actions.sort_by_key(|a| a.0);
        Self {
            sc,
            now: 0,
            end: sc.duration,
            q: EventQueue::new(),
            reqs: Requests::default(),
            jobs: Jobs::default(),
            pools,
            classes,
            caches,
            req_keys: Vec::new(),
            parts: Vec::new(),
            serial: 0,
            key_salt: rand::Rng::next_u64(&mut rng("keys")),
            bursts: vec![BurstState::default(); cfg.triggers.len()],
            burst_rng: rng("bursts"),
            route_rng: rng("routing"),
            active: vec![false; cfg.triggers.len()],
            actions,
            token: 0,
            events: 0,
            rows: Vec::new(),
            step_start: 0,
            progress: None,
            cfg,
        }
    }

    /// Publishes the simulated time reached (ns) at every time-series step, for a progress bar.
    pub fn with_progress(mut self, progress: Arc<AtomicU64>) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Runs to the scenario's end and returns the measurements.
    pub fn run(mut self) -> Result<RunResult, SimError> {
        let wall = std::time::Instant::now();
        for c in 0..self.classes.len() {
            self.schedule_arrival(c);
        }
        for (i, a) in self.actions.iter().enumerate() {
            self.q.schedule(a.0, Ev::Action { idx: i as u32 });
        }
        for (p, pc) in self.cfg.clone().pools.iter().enumerate() {
            if let Some(c) = pc.client {
                self.q
                    .schedule(c.refresh_ns, Ev::ViewRefresh { pool: p as u16 });
            }
        }
        // One tick pending at a time keeps the heap small (a run has ~1000 of them).
        self.q.schedule(self.sc.window.min(self.end), Ev::Tick);

        while let Some((t, ev)) = self.q.pop() {
            if t > self.end {
                break;
            }
            self.now = t;
            self.events += 1;
            self.dispatch(ev);
            if self.events & 0xFFFF == 0 {
                self.check_limits()?;
            }
        }
        self.now = self.end;
        let mut result = self.finish()?;
        result.wall_s = wall.elapsed().as_secs_f64();
        Ok(result)
    }

    fn check_limits(&self) -> Result<(), SimError> {
        let what = if self.events > MAX_EVENTS {
            format!("more than {MAX_EVENTS} events")
        } else if self.q.len() > MAX_PENDING {
            format!("more than {MAX_PENDING} pending events")
        } else if self.reqs.live() > MAX_IN_FLIGHT {
            format!("more than {MAX_IN_FLIGHT} requests in flight")
        } else {
            return Ok(());
        };
        Err(SimError::Runaway {
            time_s: ns_to_secs(self.now),
            what,
        })
    }

    #[inline]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Arrival { class, epoch } => {
                let c = class as usize;
                if self.classes[c].epoch != epoch {
                    return;
                }
                self.schedule_arrival(c);
                if self.classes[c].accept(&self.cfg.classes[c], self.now) {
                    self.offer(c);
                }
            }
            Ev::Burst { event } => {
                let b = &mut self.bursts[event as usize];
                let class = b.class as usize;
                if let Some(t) = b.next_time(&mut self.burst_rng) {
                    self.q.schedule(t.max(self.now), Ev::Burst { event });
                }
                self.offer(class);
            }
            Ev::AttemptStart { req, token } => {
                if self.reqs[req].attempt_token == token {
                    self.start_attempt(req);
                }
            }
            Ev::AttemptTimeout { req, token } => {
                if self.reqs[req].attempt_token == token {
                    self.attempt_failed(req);
                }
            }
            Ev::QueryStart { req, token } => {
                if self.reqs[req].query_token == token {
                    self.start_query(req);
                }
            }
            Ev::QueryTimeout { req, token } => {
                if self.reqs[req].query_token == token {
                    self.query_failed(req);
                }
            }
            Ev::JobDone { job } => self.job_done(job),
            Ev::Tick => self.tick(),
            Ev::Action { idx } => self.action(idx as usize),
            Ev::ViewRefresh { pool } => {
                let p = pool as usize;
                self.pools[p].refresh_view();
                if let Some(c) = self.cfg.pools[p].client {
                    self.q.schedule(
                        self.now.saturating_add(c.refresh_ns),
                        Ev::ViewRefresh { pool },
                    );
                }
            }
            Ev::RollingNext { event, node } => self.rolling_next(event as usize, node),
            Ev::NodeDetect { cache, slot, token } => {
                self.caches[cache as usize].detect(slot as usize, token)
            }
            Ev::NodeRejoin { cache, slot, token } => {
                let c = &mut self.caches[cache as usize];
                if c.slots[slot as usize].token == token {
                    c.rejoin(slot as usize);
                }
            }
        }
    }

    #[inline(always)]
    fn next_token(&mut self) -> u32 {
        self.token = self.token.wrapping_add(1);
        self.token
    }

    #[inline(always)]
    fn schedule_arrival(&mut self, c: usize) {
        let cs = &mut self.classes[c];
        if let Some(gap) = cs.next_gap() {
            let epoch = cs.epoch;
            self.q.schedule(
                self.now.saturating_add(gap),
                Ev::Arrival {
                    class: c as u16,
                    epoch,
                },
            );
        }
    }

    /// A new request of class `c` is offered: admission, then its first attempt.
    #[inline(always)]
    fn offer(&mut self, c: usize) {
        let cs = &mut self.classes[c];
        cs.counts.offered += 1;
        if let Some(b) = cs.rate_limit.as_mut()
            && !b.try_take(self.now)
        {
            cs.counts.rejected += 1;
            return;
        }
        cs.counts.admitted += 1;
        self.serial += 1;
        let key_seed = self.serial;
        let r = self.reqs.insert(Request {
            key_seed,
            class: c as u16,
            arrived: self.now,
            ..Request::default()
        });
        self.start_attempt(r);
    }

    #[inline]
    fn start_attempt(&mut self, r: u32) {
        let token = self.next_token();
        let c = self.reqs[r].class as usize;
        let timeout = self.cfg.classes[c].timeout_ns;
        let req = &mut self.reqs[r];
        req.attempt += 1;
        req.attempt_token = token;
        req.step = 0;
        let retry = req.attempt > 1;
        let cs = &mut self.classes[c];
        cs.counts.attempts += 1;
        // A retry is a new request at the front door: the rate limit sees it too (a first
        // attempt was admitted in `offer`). Refused, it fails at once, like an HTTP 429.
        if retry
            && let Some(b) = cs.rate_limit.as_mut()
            && !b.try_take(self.now)
        {
            cs.counts.throttled += 1;
            self.attempt_failed(r);
            return;
        }
        if self.cfg.classes[c].retry.breaker.is_some() && self.classes[c].breaker.is_open(self.now)
        {
            // An open breaker fails the attempt without reaching a server.
            self.attempt_failed(r);
            return;
        }
        if timeout != SimTime::MAX {
            let deadline = self.now.saturating_add(timeout);
            self.reqs[r].deadline = deadline;
            self.q
                .schedule(deadline, Ev::AttemptTimeout { req: r, token });
        } else {
            self.reqs[r].deadline = SimTime::MAX;
        }
        self.start_step(r);
    }

    /// Starts the current step: draws its keys, looks them up in the cache if it has one
    /// (a step whose keys all hit needs no query), then starts its query.
    #[inline(always)]
    fn start_step(&mut self, r: u32) {
        let (c, step) = (self.reqs[r].class as usize, self.reqs[r].step as usize);
        let keyed = self.cfg.classes[c].steps[step].keyed;
        let req = &mut self.reqs[r];
        req.q_attempt = 0;
        req.q_prev_sleep = 0;
        if !keyed {
            req.covered = 0;
            self.start_query(r);
            return;
        }
        self.start_keyed_step(r, c, step);
    }

    /// A step with keys: draws them (the same on every retry), looks them up in its cache
    /// if it has one, and starts the query unless every key hit. Kept out of line so the
    /// plain path stays small.
    #[inline(never)]
    fn start_keyed_step(&mut self, r: u32, c: usize, step: usize) {
        let st: StepCfg = self.cfg.classes[c].steps[step];
        let mut rng = <Rng as rand::SeedableRng>::seed_from_u64(
            mix(self.reqs[r].key_seed ^ self.key_salt) ^ ((step as u64) << 56),
        );
        let k = draw_count(st.keys, &mut rng);
        let slot = r as usize;
        if self.req_keys.len() <= slot {
            self.req_keys.resize_with(slot + 1, Vec::new);
        }
        let mut keys = std::mem::take(&mut self.req_keys[slot]);
        keys.clear();
        match st.cache {
            Some(ci) => {
                let cache = &mut self.caches[ci];
                let mut misses = 0;
                for _ in 0..k {
                    let key = cache.draw_key(&mut rng);
                    let hit = cache.lookup(key, self.now);
                    misses += u32::from(!hit);
                    // Legacy policy: one miss queries (and refills) every key of the step.
                    if !hit || st.miss == MissPolicy::All {
                        keys.push(key);
                    }
                }
                self.reqs[r].covered = keys.len() as u32;
                self.req_keys[slot] = keys;
                if misses == 0 {
                    self.step_done(r);
                    return;
                }
            }
            None => {
                for _ in 0..k {
                    keys.push(rng.random::<u32>());
                }
                self.reqs[r].covered = k;
                self.req_keys[slot] = keys;
            }
        }
        self.start_query(r);
    }

    /// Starts (or retries) the current step's query: one job per part of its fan-out.
    /// Parts: one shard; every shard; or, for `keys`, one per server that the step's keys
    /// route to (each key to its shard, and to a replica by read preference).
    fn start_query(&mut self, r: u32) {
        let token = self.next_token();
        let (c, step) = (self.reqs[r].class as usize, self.reqs[r].step as usize);
        let (pool, timeout_ns, fanout, read, cost, cost_per_key) = {
            let q = &self.cfg.classes[c].steps[step].query;
            (
                q.pool,
                q.timeout_ns,
                q.fanout,
                q.read,
                q.cost,
                q.cost_per_key,
            )
        };
        let mut deadline = self.reqs[r].deadline;
        if timeout_ns != SimTime::MAX {
            let qd = self.now.saturating_add(timeout_ns);
            self.q.schedule(qd, Ev::QueryTimeout { req: r, token });
            deadline = deadline.min(qd);
        }
        let shards = self.cfg.pools[pool].shards;
        let threshold = self.cfg.pools[pool].latency_threshold_ns;
        let covered = self.reqs[r].covered;
        let single = match fanout {
            Fanout::All => false,
            Fanout::Keys => covered == 0,
            Fanout::One => true,
        };
        if single {
            // The common case (one part) skips the grouping buffer.
            let shard = if shards > 1 {
                self.route_rng.random_range(0..shards)
            } else {
                0
            };
            let server = self.pools[pool].pick(shard, read, threshold);
            self.arm_query(r, token, deadline, 1);
            self.send_part(
                r,
                pool,
                server,
                token,
                deadline,
                cost + cost_per_key * covered as f64,
                covered,
            );
            return;
        }
        self.send_parts(r, token, deadline, pool, fanout, read, cost, cost_per_key);
    }

    /// Sends a multi-part query: every shard (`all`), or one part per server its keys route
    /// to (`keys`). Kept out of line so the single-part path stays small.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn send_parts(
        &mut self,
        r: u32,
        token: u32,
        deadline: SimTime,
        pool: usize,
        fanout: Fanout,
        read: crate::scenario::ReadPref,
        cost: f64,
        cost_per_key: f64,
    ) {
        let shards = self.cfg.pools[pool].shards;
        let threshold = self.cfg.pools[pool].latency_threshold_ns;
        let covered = self.reqs[r].covered;
        let mut parts = std::mem::take(&mut self.parts);
        parts.clear();
        if fanout == Fanout::All {
            for shard in 0..shards {
                let server = self.pools[pool].pick(shard, read, threshold);
                parts.push((server, covered));
            }
        } else {
            for &key in &self.req_keys[r as usize] {
                let shard = (mix(key as u64 ^ 0x0005_4a2d) % shards as u64) as u32;
                let server = self.pools[pool].pick(shard, read, threshold);
                match parts.iter_mut().find(|p| p.0 == server) {
                    Some(p) => p.1 += 1,
                    None => parts.push((server, 1)),
                }
            }
        }
        self.arm_query(r, token, deadline, parts.len() as u32);
        for &(server, keys) in &parts {
            self.send_part(
                r,
                pool,
                server,
                token,
                deadline,
                cost + cost_per_key * keys as f64,
                keys,
            );
        }
        self.parts = parts;
    }

    /// Records a new query attempt of `parts` parts on the request.
    #[inline(always)]
    fn arm_query(&mut self, r: u32, token: u32, deadline: SimTime, parts: u32) {
        let req = &mut self.reqs[r];
        req.q_attempt += 1;
        req.query_token = token;
        req.query_deadline = deadline;
        req.parts_left = parts;
        req.parts_total = parts;
        req.parts_failed = 0;
    }

    /// Sends one part. A part that fails at once reports to the query only while the
    /// query attempt is still current; the remaining parts are sent all the same (a
    /// pipeline or scatter query goes out whole; its other parts become work nobody waits
    /// for).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn send_part(
        &mut self,
        r: u32,
        pool: usize,
        server: u32,
        token: u32,
        deadline: SimTime,
        cost: f64,
        keys: u32,
    ) {
        let job = Job {
            pool: pool as u16,
            server,
            req: r,
            token,
            enqueued: self.now,
            started: 0,
            deadline,
            cost,
            keys,
        };
        if !self.send(pool, job) && self.reqs[r].query_token == token {
            self.part_done(r, false, keys);
        }
    }

    /// Hands a job to its server; false when it fails at once (outage, full queue).
    #[inline(always)]
    fn send(&mut self, p: usize, job: Job) -> bool {
        let pool = &mut self.pools[p];
        pool.stats.sent += 1;
        if pool.outages > 0 {
            pool.stats.failed_fast += 1;
            return false;
        }
        if pool.servers[job.server as usize].down {
            // A connection error at once; a client that refreshes on error learns now.
            pool.stats.failed_fast += 1;
            if self.cfg.pools[p].client.is_some_and(|c| c.refresh_on_error) {
                pool.refresh_view();
            }
            return false;
        }
        let server = &pool.servers[job.server as usize];
        if server.busy < pool.workers {
            let j = self.jobs.insert(job);
            self.start_service(p, j);
            return true;
        }
        if (server.queue.len() as u32) < self.cfg.pools[p].queue_limit {
            pool.integrate(self.now);
            let j = self.jobs.insert(job);
            pool.servers[job.server as usize].queue.push_back(j);
            pool.queued += 1;
            return true;
        }
        pool.stats.dropped += 1;
        false
    }

    #[inline(always)]
    fn start_service(&mut self, p: usize, j: u32) {
        let pool = &mut self.pools[p];
        pool.integrate(self.now);
        let job = self.jobs.get_mut(j);
        job.started = self.now;
        let server = &mut pool.servers[job.server as usize];
        server.busy += 1;
        let in_service = server.busy;
        pool.busy += 1;
        if pool.servers[job.server as usize].primary {
            pool.busy_primary += 1;
        }
        let cost = job.cost;
        let t = pool.service_ns(&self.cfg.pools[p], cost, in_service);
        self.q
            .schedule(self.now.saturating_add(t), Ev::JobDone { job: j });
    }

    #[inline]
    fn job_done(&mut self, j: u32) {
        let job = *self.jobs.get(j);
        let p = job.pool as usize;
        let pcfg = &self.cfg.pools[p];
        let pool = &mut self.pools[p];
        pool.integrate(self.now);
        pool.servers[job.server as usize].busy -= 1;
        pool.busy -= 1;
        if pool.servers[job.server as usize].primary {
            pool.busy_primary -= 1;
        }
        pool.stats.served += 1;
        pool.stats.wait_sum_ns += (job.started - job.enqueued) as u128;
        pool.stats.sojourn_sum_ns += (self.now - job.enqueued) as u128;
        let server = &mut pool.servers[job.server as usize];
        // A job on a server that crashed meanwhile is lost: its caller sees an error.
        let mut ok = !server.down;
        if pool.per_shard > 1 {
            server.latency_ewma_ns +=
                0.1 * ((self.now - job.enqueued) as f64 - server.latency_ewma_ns);
        }
        if pcfg.error_rate > 0.0 {
            ok &= pool.rng.random::<f64>() >= pcfg.error_rate;
        }
        self.jobs.remove(j);
        self.serve_next(p, job.server);
        if self.reqs[job.req].query_token == job.token {
            self.part_done(job.req, ok, job.keys);
        }
    }

    /// Starts waiting jobs on a server while it has free workers, dropping expired ones.
    #[inline(always)]
    fn serve_next(&mut self, p: usize, server: u32) {
        let (discipline, cancel_expired) = (
            self.cfg.pools[p].discipline,
            self.cfg.pools[p].cancel_expired,
        );
        loop {
            let pool = &mut self.pools[p];
            if pool.servers[server as usize].busy >= pool.workers {
                return;
            }
            pool.integrate(self.now);
            let Some(nj) = pool.next_waiting(server, discipline) else {
                return;
            };
            if cancel_expired {
                let job = self.jobs.get(nj);
                if job.deadline <= self.now || self.reqs[job.req].query_token != job.token {
                    pool.stats.expired += 1;
                    self.jobs.remove(nj);
                    continue;
                }
            }
            self.start_service(p, nj);
        }
    }

    /// One part of the current query came back. All-or-nothing: the first failed part
    /// fails the query (Grab's pipelines). Partial: the query succeeds with the parts that
    /// succeeded once all are back, and key-level outcomes are counted part by part.
    #[inline]
    fn part_done(&mut self, r: u32, ok: bool, keys: u32) {
        let (c, step) = (self.reqs[r].class as usize, self.reqs[r].step as usize);
        let st = &self.cfg.classes[c].steps[step];
        let (partial, counts_keys) = (st.query.completion == Completion::Partial, st.counts_keys);
        let req = &mut self.reqs[r];
        req.parts_left -= 1;
        if !ok {
            req.parts_failed += 1;
        }
        if partial {
            if counts_keys {
                let k = &mut self.classes[c].counts;
                if ok {
                    k.keys_ok += keys as u64
                } else {
                    k.keys_failed += keys as u64
                }
            }
            if req.parts_left == 0 {
                if req.parts_failed == req.parts_total {
                    self.query_failed(r);
                } else {
                    self.step_done(r);
                }
            }
            return;
        }
        if !ok {
            if counts_keys {
                self.classes[c].counts.keys_failed += req.covered as u64;
            }
            self.query_failed(r);
            return;
        }
        if req.parts_left == 0 {
            if counts_keys {
                self.classes[c].counts.keys_ok += req.covered as u64;
            }
            self.step_done(r);
        }
    }

    /// The current step succeeded. A cache step fills its keys now, and only now: a query
    /// that failed or came back after the client gave up fills nothing (the Slack
    /// sustaining loop).
    #[inline]
    fn step_done(&mut self, r: u32) {
        let c = self.reqs[r].class as usize;
        let step = self.reqs[r].step as usize;
        if let Some(ci) = self.cfg.classes[c].steps[step].cache {
            let keys = std::mem::take(&mut self.req_keys[r as usize]);
            for &k in &keys {
                self.caches[ci].fill(k, self.now);
            }
            self.req_keys[r as usize] = keys;
        }
        let req = &mut self.reqs[r];
        req.step += 1;
        if (req.step as usize) < self.cfg.classes[c].steps.len() {
            self.start_step(r);
        } else {
            self.request_done(r, true);
        }
    }

    /// The current query attempt failed: retry it at query level, or fail the attempt.
    fn query_failed(&mut self, r: u32) {
        let (c, step) = (self.reqs[r].class as usize, self.reqs[r].step as usize);
        let qc = self.cfg.classes[c].steps[step].query;
        let token = self.next_token();
        // Invalidate the outstanding parts: their caller has moved on.
        self.reqs[r].query_token = token;
        let n = self.reqs[r].q_attempt as u32;
        if n < qc.retry.max_attempts {
            let cs = &mut self.classes[c];
            let allowed = match cs.step_budgets[step].as_mut() {
                Some(b) => b.try_take(self.now),
                None => true,
            };
            if allowed {
                let mut prev = self.reqs[r].q_prev_sleep;
                let delay = backoff_delay(&qc.retry, n, &mut prev, &mut cs.retry_rng);
                self.reqs[r].q_prev_sleep = prev;
                self.q.schedule(
                    self.now.saturating_add(delay),
                    Ev::QueryStart { req: r, token },
                );
                return;
            }
        }
        self.attempt_failed(r);
    }

    /// The current attempt failed (error or client timeout): retry it, or fail the request.
    fn attempt_failed(&mut self, r: u32) {
        let c = self.reqs[r].class as usize;
        let policy = self.cfg.classes[c].retry;
        let cs = &mut self.classes[c];
        if let Some(b) = &policy.breaker {
            cs.breaker.record(b, self.now, false);
        }
        let a_token = self.next_token();
        let q_token = self.next_token();
        let req = &mut self.reqs[r];
        req.attempt_token = a_token;
        req.query_token = q_token;
        let n = req.attempt as u32;
        if n < policy.max_attempts {
            let cs = &mut self.classes[c];
            let allowed = match cs.retry_budget.as_mut() {
                Some(b) => b.try_take(self.now),
                None => true,
            };
            if allowed {
                let mut prev = self.reqs[r].prev_sleep;
                let delay = backoff_delay(&policy, n, &mut prev, &mut cs.retry_rng);
                self.reqs[r].prev_sleep = prev;
                self.q.schedule(
                    self.now.saturating_add(delay),
                    Ev::AttemptStart {
                        req: r,
                        token: a_token,
                    },
                );
                return;
            }
        }
        self.request_done(r, false);
    }

    #[inline(always)]
    fn request_done(&mut self, r: u32, ok: bool) {
        let c = self.reqs[r].class as usize;
        let arrived = self.reqs[r].arrived;
        let cs = &mut self.classes[c];
        if ok {
            if let Some(b) = &self.cfg.classes[c].retry.breaker {
                cs.breaker.record(b, self.now, true);
            }
            cs.counts.succeeded += 1;
            let lat = self.now - arrived;
            cs.step_latency.record(lat);
            cs.latency_sum_ns += lat as u128;
        } else {
            cs.counts.failed += 1;
        }
        let a = self.next_token();
        let q = self.next_token();
        self.reqs[r].attempt_token = a;
        self.reqs[r].query_token = q;
        self.reqs.remove(r);
    }

    fn action(&mut self, idx: usize) {
        let (_, action) = self.actions[idx];
        match action {
            Action::Start(e) => {
                let ev = &self.cfg.triggers[e as usize];
                if !ev.enabled {
                    return;
                }
                self.active[e as usize] = true;
                match ev.kind {
                    TriggerKind::Slowdown { pool, factor } => {
                        self.pools[pool].slowdown *= factor;
                    }
                    TriggerKind::Outage { pool } => self.pools[pool].outages += 1,
                    TriggerKind::Burst { class, clients } => {
                        let b = &mut self.bursts[e as usize];
                        *b = BurstState {
                            remaining: clients,
                            u: 0.0,
                            start: self.now,
                            spread: ev.for_ns,
                            class: class as u16,
                        };
                        if let Some(t) = b.next_time(&mut self.burst_rng) {
                            self.q.schedule(t, Ev::Burst { event: e });
                        }
                    }
                    TriggerKind::RollingRestart { .. } => self.rolling_next(e as usize, 0),
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
                    TriggerKind::Crash { pool, server } => self.crash(pool, server),
                }
            }
            Action::End(e) => {
                if !std::mem::take(&mut self.active[e as usize]) {
                    return;
                }
                match self.cfg.triggers[e as usize].kind {
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
            Action::Intervene(i) => self.intervene(i as usize),
        }
    }

    /// A rolling restart deregisters its next node; the control plane may swap in an
    /// empty spare before the node re-registers. Switching the event off (an
    /// intervention setting `enabled = false`) pauses the rollout.
    fn rolling_next(&mut self, e: usize, node: u32) {
        let ev = &self.cfg.triggers[e];
        let TriggerKind::RollingRestart {
            cache,
            nodes,
            interval_ns,
            down_for_ns,
        } = ev.kind
        else {
            return;
        };
        if !ev.enabled || node >= nodes {
            return;
        }
        let slot = node as usize % self.caches[cache].slots.len();
        let token = self.caches[cache].leave(slot, true);
        self.detect_later(cache, slot, token);
        self.q.schedule(
            self.now.saturating_add(down_for_ns),
            Ev::NodeRejoin {
                cache: cache as u16,
                slot: slot as u16,
                token,
            },
        );
        if node + 1 < nodes {
            self.q.schedule(
                self.now.saturating_add(interval_ns),
                Ev::RollingNext {
                    event: e as u16,
                    node: node + 1,
                },
            );
        }
    }

    fn detect_later(&mut self, cache: usize, slot: usize, token: u32) {
        if let Some(d) = self.cfg.caches[cache].detect_after_ns {
            self.q.schedule(
                self.now.saturating_add(d),
                Ev::NodeDetect {
                    cache: cache as u16,
                    slot: slot as u16,
                    token,
                },
            );
        }
    }

    /// A server crashes: its queued work fails at once (connection reset); work in service
    /// fails when it would have finished. Clients without a cluster view learn at once.
    fn crash(&mut self, p: usize, server: u32) {
        let pool = &mut self.pools[p];
        pool.integrate(self.now);
        let srv = &mut pool.servers[server as usize];
        srv.down = true;
        let queued: Vec<u32> = srv.queue.drain(..).collect();
        pool.queued -= queued.len() as u64;
        pool.stats.dropped += queued.len() as u64;
        if self.cfg.pools[p].client.is_none() {
            pool.refresh_view();
        }
        for j in queued {
            let job = *self.jobs.get(j);
            self.jobs.remove(j);
            if self.reqs[job.req].query_token == job.token {
                self.part_done(job.req, false, job.keys);
            }
        }
    }

    /// Puts an intervention's configuration in force, keeping all state.
    fn intervene(&mut self, i: usize) {
        let old = std::mem::replace(&mut self.cfg, self.sc.interventions[i].config.clone());
        for c in 0..self.classes.len() {
            let changed_rate = {
                let (o, n) = (&old.classes[c], &self.cfg.classes[c]);
                o.rate_per_s != n.rate_per_s || o.profile != n.profile
            };
            self.classes[c].reconfigure(self.now, &old.classes[c], &self.cfg.classes[c]);
            if changed_rate {
                self.schedule_arrival(c);
            }
        }
        for p in 0..self.pools.len() {
            self.pools[p].integrate(self.now);
            self.pools[p].integrate_capacity(self.now);
            self.pools[p].workers = self.cfg.pools[p].workers;
            for s in 0..self.pools[p].servers.len() {
                self.serve_next(p, s as u32);
            }
        }
    }

    /// Closes one time-series step: rates per second over the step, p99, pool averages.
    fn tick(&mut self) {
        let span = self.now - self.step_start;
        if span == 0 {
            return;
        }
        let secs = ns_to_secs(span);
        let mut row = Vec::with_capacity(1 + 6 * self.classes.len() + 2 * self.pools.len());
        row.push(ns_to_secs(self.step_start));
        for cs in &mut self.classes {
            let (n, m) = (cs.counts, cs.step_mark);
            row.push((n.offered - m.offered) as f64 / secs);
            row.push((n.attempts - m.attempts) as f64 / secs);
            row.push((n.succeeded - m.succeeded) as f64 / secs);
            row.push((n.failed - m.failed) as f64 / secs);
            row.push((n.rejected - m.rejected) as f64 / secs);
            row.push(
                cs.step_latency
                    .quantile(0.99)
                    .map(|v| v / 1e9)
                    .unwrap_or(f64::NAN),
            );
            cs.step_mark = n;
            cs.latency.merge(&cs.step_latency);
            cs.step_latency.clear();
        }
        for pool in &mut self.pools {
            pool.integrate(self.now);
            pool.integrate_capacity(self.now);
            let (util, qlen) = pool.window(&pool.step_mark, span);
            row.push(util);
            row.push(qlen);
            row.push((pool.stats.sent - pool.step_mark.sent) as f64 / secs);
            if pool.replicated() {
                row.push(pool.primary_utilization(&pool.step_mark));
            }
            pool.step_mark = pool.stats.clone();
        }
        for cache in &mut self.caches {
            row.push(CacheState::hit_ratio(&cache.counts, &cache.step_mark));
            cache.step_mark = cache.counts;
        }
        self.rows.push(row);
        self.step_start = self.now;
        if let Some(p) = &self.progress {
            p.store(self.now, Ordering::Relaxed);
        }
        if self.now < self.end {
            self.q.schedule(
                self.now.saturating_add(self.sc.window).min(self.end),
                Ev::Tick,
            );
        }
    }

    fn finish(mut self) -> Result<RunResult, SimError> {
        let dur_s = ns_to_secs(self.end);
        let live = self.reqs.live_per_class(self.classes.len());
        let mut classes = IndexMap::new();
        for (c, cs) in self.classes.iter().enumerate() {
            let k = cs.counts;
            let name = self.cfg.classes[c].name.clone();
            // Every request is accounted for, in every run.
            if k.offered != k.admitted + k.rejected
                || k.admitted != k.succeeded + k.failed + live[c]
            {
                return Err(SimError::Accounting {
                    class: name,
                    detail: format!(
                        "offered {} admitted {} rejected {} succeeded {} failed {} in flight {}",
                        k.offered, k.admitted, k.rejected, k.succeeded, k.failed, live[c]
                    ),
                });
            }
            let q = |x: f64| cs.latency.quantile(x).map(|v| v / 1e9);
            let uses_keys = self.cfg.classes[c].steps.iter().any(|st| st.counts_keys);
            classes.insert(
                name,
                ClassSummary {
                    offered: k.offered,
                    admitted: k.admitted,
                    rejected: k.rejected,
                    succeeded: k.succeeded,
                    failed: k.failed,
                    in_flight: live[c],
                    attempts: k.attempts,
                    goodput_per_s: k.succeeded as f64 / dur_s,
                    latency_s: Latency {
                        mean: (k.succeeded > 0)
                            .then(|| cs.latency_sum_ns as f64 / k.succeeded as f64 / 1e9),
                        p50: q(0.5),
                        p99: q(0.99),
                    },
                    keys_ok: uses_keys.then_some(k.keys_ok),
                    keys_failed: uses_keys.then_some(k.keys_failed),
                },
            );
        }
        let mut pools = IndexMap::new();
        for (p, pool) in self.pools.iter_mut().enumerate() {
            pool.integrate(self.end);
            pool.integrate_capacity(self.end);
            let (util, qlen) = pool.window(&Default::default(), self.end);
            let (wait, sojourn) = pool.means();
            let s = &pool.stats;
            pools.insert(
                self.cfg.pools[p].name.clone(),
                PoolSummary {
                    utilization: util,
                    mean_queue_len: qlen,
                    mean_wait_s: wait,
                    mean_sojourn_s: sojourn,
                    served: s.served,
                    dropped: s.dropped,
                    expired: s.expired,
                    queries: s.sent,
                    failed_fast: s.failed_fast,
                    primary_utilization: pool
                        .replicated()
                        .then(|| pool.primary_utilization(&Default::default())),
                },
            );
        }
        let columns = crate::scenario::columns::columns(&self.cfg);
        let markers = markers(self.sc);
        Ok(RunResult {
            summary: Summary {
                caches: self
                    .caches
                    .iter()
                    .zip(&self.cfg.caches)
                    .map(|(cs, cfg)| {
                        let k = cs.counts;
                        let ratio = CacheState::hit_ratio(&k, &Default::default());
                        (
                            cfg.name.clone(),
                            CacheSummary {
                                hit_ratio: ratio.is_finite().then_some(ratio),
                                lookups: k.lookups,
                                hits: k.hits,
                                fills: k.fills,
                                slot_losses: k.losses,
                            },
                        )
                    })
                    .collect(),
                scenario: self.sc.name.clone(),
                variant: self.sc.variant.clone(),
                seed: self.sc.seed,
                sim_duration_s: dur_s,
                events: self.events,
                classes,
                pools,
            },
            series: TimeSeries {
                columns,
                rows: std::mem::take(&mut self.rows),
            },
            markers,
            title: self.sc.title.clone(),
            wall_s: 0.0,
            zoom: self.sc.zoom.map(|(a, b)| (ns_to_secs(a), ns_to_secs(b))),
        })
    }
}

/// Draws how many keys a step touches.
fn draw_count(k: KeyCount, rng: &mut Rng) -> u32 {
    match k {
        KeyCount::Fixed(n) => n,
        KeyCount::Poisson { mean, min } => {
            let x: f64 = Poisson::new(mean).map(|d| d.sample(rng)).unwrap_or(mean);
            (x as u32).max(min)
        }
        KeyCount::Geometric { mean, min } => {
            let x = Geometric::new(1.0 / mean)
                .map(|d| d.sample(rng))
                .unwrap_or(0);
            (x as u32 + 1).max(min)
        }
    }
}

/// The events and interventions of a scenario, as timeline markers (enabled events only,
/// as configured at the start of the run).
pub fn markers(sc: &Scenario) -> Vec<Marker> {
    let mut out = Vec::new();
    for e in &sc.config.triggers {
        if !e.enabled {
            continue;
        }
        let mut t = e.at_ns;
        while t < sc.duration {
            out.push(Marker {
                kind: MarkerKind::Event,
                label: e.label.clone(),
                start_s: ns_to_secs(t),
                end_s: Some(ns_to_secs(t.saturating_add(e.for_ns).min(sc.duration))),
            });
            match e.every_ns {
                Some(p) => t = t.saturating_add(p),
                None => break,
            }
        }
    }
    for iv in &sc.interventions {
        out.push(Marker {
            kind: MarkerKind::Intervention,
            label: iv.label.clone(),
            start_s: ns_to_secs(iv.time),
            end_s: None,
        });
    }
    out
}
