//! The simulation: the state of every component of one run, and the event loop that pops
//! engine events and hands each to the concept that owns it. The request flow itself is in
//! [`super::lifecycle`]; this file only builds, dispatches and guards the run.

use super::cache::CacheState;
use super::event::Event;
use super::keys::KeyScratch;
use super::metrics::RunResult;
use super::pool::{Job, PoolState};
use super::population::Population;
use super::protocol::Next;
use super::request::Request;
use super::sampling::Sampler;
use super::slab::Slab;
use super::step::Until;
use super::streams::Streams;
use super::triggers::Timetable;
use super::workload::ClassState;
use crate::engine::time::{SimTime, ns_to_secs};
use crate::engine::{EventQueue, Rng, stream_rng};
use crate::scenario::{Config, Failure, Scenario};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

pub use super::budget::SimError;
use super::budget::{EVENT_BYTES, JOB_BYTES, Limits, REQUEST_BYTES, Use, known_uses};

/// Hard limits that turn a runaway run into a clear error instead of a hang: the most
/// events that may be pending at once.
pub const MAX_PENDING: usize = 30_000_000;
/// The most requests that may be in flight at once.
pub const MAX_IN_FLIGHT: usize = 20_000_000;

/// One run of a scenario. Cloneable so that a rare-event estimator can split a run at a
/// level and continue each copy on its own random streams ([`Simulation::reseed`]).
#[derive(Clone)]
pub struct Simulation<'a> {
    pub(super) sc: &'a Scenario,
    /// The parameters in force (swapped by interventions).
    pub(super) cfg: Arc<Config>,
    pub(super) now: SimTime,
    pub(super) end: SimTime,
    pub(super) queue: EventQueue<Event>,
    pub(super) reqs: Slab<Request>,
    pub(super) jobs: Slab<Job>,
    pub(super) classes: Vec<ClassState>,
    pub(super) pools: Vec<PoolState>,
    pub(super) caches: Vec<CacheState>,
    /// Each request's keys and the grouping buffer of keyed queries.
    pub(super) keys: KeyScratch,
    /// Picks a shard for single-shard queries.
    pub(super) route_rng: Rng,
    /// Trigger starts and ends and interventions, in time order, with trigger state.
    pub(super) timetable: Timetable,
    pub(super) sampler: Sampler,
    /// The last token handed out: ties events to the attempt or query attempt that
    /// scheduled them.
    pub(super) token: u32,
    /// Events handled so far.
    pub(super) events: u64,
    /// Jobs just shed by CoDel, to report to their callers.
    pub(super) shed_jobs: Vec<u32>,
    /// The calls of jobs that hold their worker for them, by job slot.
    pub(super) job_calls: Vec<super::calls::JobCalls>,
    /// The deadline at the top of each call request's chain, by request slot (written
    /// only when some call says `deadline`: `model::deadlines`).
    pub(super) roots: Vec<SimTime>,
    /// Whether the loop prefetches the next event's records: only while many are in flight
    /// (decided at each window end), since with a few they are in cache anyway and the
    /// peek would be pure cost.
    pub(super) prefetch: bool,
    /// When each request slot's hedged query sent its first copy (hedged steps only: a
    /// side table keeps the request record small).
    pub(super) hedge_sent: Vec<SimTime>,
    /// Each request slot's last backoff sleeps (decorrelated jitter: a side table keeps
    /// the request record within a cache line).
    pub(super) sleeps: super::request::Sleeps,
    /// The run's budgets (memory ceiling, events).
    pub(super) limits: Limits,
    /// The bytes of what the run holds from start to end ([`known_uses`]).
    pub(super) known_bytes: u64,
    /// The request tracer, with `--trace-sample` only ([`super::tracing`]).
    pub(super) trace: Option<Box<super::tracing::Tracer>>,
    /// Some cache tier refreshes keys ahead of expiry: a job nobody waits for may be a
    /// refresh ([`Simulation::refresh_landed`]).
    pub(super) refresh_ahead: bool,
    /// The loop may take the plain instance of the request path when the run is plain
    /// ([`Simulation::plain`]); tests turn it off to compare the two.
    pub(super) plain_allowed: bool,
    /// What the run has reached of the moments some knobs are read at
    /// ([`super::witness`]).
    pub(super) witness: super::witness::Witness,
}

pub(super) use super::budget::bytes_of;

/// Runs `sc` once with run index `run` (0 for a plain run; sweeps use one per seed).
pub fn run(sc: &Scenario, run: u64) -> Result<RunResult, SimError> {
    Simulation::checked(sc, run)?.run()
}

/// Runs `sc` once like [`run`], but asks `stop` after every time-series window (with the
/// rows so far) whether the run may end there: a sweep stops a run as soon as its class
/// can no longer change. A stopped run ends at that window; its summary covers the time
/// it ran (`sim_duration_s`), with every request accounted for as at any end.
pub fn run_until(
    sc: &Scenario,
    run: u64,
    stop: &mut dyn FnMut(SimTime, &[Vec<f64>]) -> bool,
) -> Result<RunResult, SimError> {
    Simulation::checked(sc, run)?.run_until(stop)
}

impl<'a> Simulation<'a> {
    /// Checks what a run of `sc` holds from the start against the memory ceiling
    /// ([`super::budget`]), then builds it ([`Simulation::new`]).
    pub fn checked(sc: &'a Scenario, run: u64) -> Result<Self, SimError> {
        let known = super::budget::check_before(sc)?;
        Ok(Self::build(sc, run, &known))
    }

    /// Builds the components of `sc`; random streams derive from (seed, run, name). It
    /// allocates what the scenario asks for without checking it against the memory
    /// ceiling: [`Simulation::checked`] does.
    pub fn new(sc: &'a Scenario, run: u64) -> Self {
        Self::build(sc, run, &known_uses(sc))
    }

    /// Builds the components of `sc`, given what it holds from start to end (`known`,
    /// [`known_uses`], computed once by the caller).
    fn build(sc: &'a Scenario, run: u64, known: &[Use]) -> Self {
        let cfg = sc.config.clone();
        let Streams {
            class,
            retry,
            users,
            pool,
            balance,
            peers,
            sync,
            cache,
            mut keys,
            routing,
            bursts,
        } = Streams::draw(&cfg, |name| stream_rng(sc.seed, run, name));
        let streams = pool.into_iter().zip(balance).zip(peers).zip(sync);
        let pools = cfg
            .pools
            .iter()
            .zip(streams)
            .map(|(p, (((rng, balance), peers), sync))| {
                let mut pool = PoolState::new(p, rng, balance);
                let servers = pool.servers.len();
                pool.fleet = p.peers.zip(peers).map(|(pc, stream)| {
                    let f =
                        super::peers::Fleet::new(&pc, servers as u32, cfg.triggers.len(), stream);
                    Box::new(f)
                });
                pool.sync = sync.map(|rng| Box::new(super::sync::SyncState::new(servers, rng)));
                pool
            })
            .collect();
        let streams = class.into_iter().zip(retry).zip(users);
        let classes = cfg
            .classes
            .iter()
            .zip(streams)
            .map(|(c, ((rng, retry), users))| {
                let mut cs = ClassState::new(c, rng, retry);
                cs.users = c
                    .users
                    .as_ref()
                    .zip(users)
                    .map(|(u, rng)| Population::new(u, rng));
                cs
            })
            .collect();
        let caches = cfg
            .caches
            .iter()
            .zip(cache)
            .map(|(c, rng)| CacheState::new(c, rng))
            .collect();
        Self {
            sc,
            now: 0,
            end: sc.duration,
            queue: EventQueue::new(),
            reqs: Slab::default(),
            jobs: Slab::default(),
            pools,
            classes,
            caches,
            keys: KeyScratch::new(rand::Rng::next_u64(&mut keys), &cfg),
            route_rng: routing,
            timetable: Timetable::new(sc, bursts),
            sampler: Sampler::new(&cfg),
            token: 0,
            events: 0,
            shed_jobs: Vec::new(),
            hedge_sent: Vec::new(),
            sleeps: Default::default(),
            prefetch: false,
            job_calls: Vec::new(),
            roots: Vec::new(),
            limits: Limits::current(),
            known_bytes: bytes_of(known),
            trace: None,
            refresh_ahead: cfg.caches.iter().any(|c| c.refresh_ahead.is_some()),
            plain_allowed: true,
            witness: super::witness::Witness::new(&cfg),
            cfg,
        }
    }

    /// Runs with these budgets instead of the current ones ([`Limits::current`]).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Publishes the simulated time reached (ns) at every time-series window, for a
    /// progress bar.
    pub fn with_progress(mut self, progress: Arc<AtomicU64>) -> Self {
        self.sampler.progress = Some(progress);
        self
    }

    /// Leaves the time-series windows that start before `from` (ns) out of the run's
    /// latency quantiles (the summary's and [`RunResult::latency_quantiles_s`]): a
    /// calibration measures a window of the run.
    pub fn with_latency_from(mut self, from: SimTime) -> Self {
        self.sampler.latency_from = from;
        self
    }

    /// Runs to the scenario's end and returns the measurements.
    pub fn run(self) -> Result<RunResult, SimError> {
        self.run_loop(|_, _| false)
    }

    /// Runs until the scenario's end or until `stop`, asked after every time-series
    /// window, says the run may end ([`run_until`]).
    pub fn run_until(
        self,
        stop: &mut dyn FnMut(SimTime, &[Vec<f64>]) -> bool,
    ) -> Result<RunResult, SimError> {
        self.run_loop(stop)
    }

    /// A whole run: starts it and drives it to its end. `stop` is generic so that a plain
    /// run (`|_, _| false`) compiles to the loop without the check.
    fn run_loop<S: FnMut(SimTime, &[Vec<f64>]) -> bool>(
        mut self,
        mut stop: S,
    ) -> Result<RunResult, SimError> {
        let wall = std::time::Instant::now();
        self.schedule_start();
        self.run_events(&mut Until(&mut stop))?;
        self.conclude(wall)
    }

    /// Ends a run that has stopped (at its end, or where `stop` said so) and builds its
    /// result; `wall` is when it started.
    pub(super) fn conclude(mut self, wall: std::time::Instant) -> Result<RunResult, SimError> {
        self.now = self.end;
        let mut result = self.finish()?;
        result.wall_s = wall.elapsed().as_secs_f64();
        Ok(result)
    }

    /// Schedules what a run starts with: each class's first arrival, the timetable, the
    /// view refreshes and the first window end.
    pub(super) fn schedule_start(&mut self) {
        for c in 0..self.classes.len() {
            self.schedule_arrival(c);
        }
        self.start_populations();
        self.timetable.schedule_start(self.sc, &mut self.queue);
        for (p, pc) in self.cfg.pools.iter().enumerate() {
            if let Some(c) = pc.client {
                self.queue
                    .schedule(c.refresh_ns, Event::ViewRefresh { pool: p as u16 });
            }
        }
        self.schedule_autoscalers();
        self.schedule_health_checks();
        self.start_fleets();
        self.schedule_syncs();
        // One window end pending at a time keeps the queue small.
        self.queue
            .schedule(self.sc.window.min(self.end), Event::WindowEnd);
    }

    /// Checks the run's budgets and hard limits (every [`super::budget::CHECK_EVERY`]
    /// events: [`Simulation::check_due`]).
    #[inline(never)]
    pub(super) fn check_limits(&self) -> Result<(), SimError> {
        self.limits.check_events(self.events, self.now)?;
        self.check_held()
    }

    /// Checks what the run holds against the hard limits and the memory ceiling (a
    /// stepped run's events are counted by its estimate's own budget).
    #[inline(never)]
    pub(super) fn check_held(&self) -> Result<(), SimError> {
        let what = if self.queue.len() > MAX_PENDING {
            format!("more than {MAX_PENDING} pending events")
        } else if self.reqs.live() > MAX_IN_FLIGHT {
            format!("more than {MAX_IN_FLIGHT} requests in flight")
        } else {
            return self.check_memory();
        };
        Err(SimError::Runaway {
            time_s: ns_to_secs(self.now),
            what,
        })
    }

    /// Checks what the run holds against its memory ceiling: what it held from the start,
    /// and what it has grown ([`Simulation::grown_uses`]).
    fn check_memory(&self) -> Result<(), SimError> {
        // A scale-out refused for the ceiling ends the run whatever it holds now.
        if self.held_bytes() <= self.limits.memory && !self.scale_refused() {
            return Ok(());
        }
        let mut uses = known_uses(self.sc);
        uses.extend(self.grown_uses());
        Err(self.limits.exceeded(&uses, Some(self.now)))
    }

    /// What the run has grown since it started: the pending events, requests and jobs
    /// (their records' high-water marks, which stay allocated) and the servers autoscalers
    /// added (or asked for beyond the ceiling, [`Simulation::scaled_servers`]).
    pub(super) fn grown_uses(&self) -> [Use; 4] {
        [
            Use::of("pending events", self.queue.len() as u64, EVENT_BYTES),
            Use::of("requests in flight", self.reqs.held() as u64, REQUEST_BYTES),
            Use::of("queued jobs", self.jobs.held() as u64, JOB_BYTES),
            Use::of(
                "autoscaled servers",
                self.scaled_servers(),
                super::autoscale::SCALED_SERVER_BYTES,
            ),
        ]
    }

    /// The bytes the run holds: from the start, and grown (the sum of
    /// `Simulation::grown_uses`, without naming them).
    pub fn held_bytes(&self) -> u64 {
        self.known_bytes.saturating_add(self.grown_bytes())
    }

    /// The bytes the run has grown since it started (pending events, requests in flight,
    /// queued jobs, autoscaled servers): with
    /// [`super::budget::copy_known_bytes`], what a copy of it holds.
    pub fn grown_bytes(&self) -> u64 {
        (self.queue.len() as u64 * EVENT_BYTES as u64)
            .saturating_add(self.reqs.held() as u64 * REQUEST_BYTES as u64)
            .saturating_add(self.jobs.held() as u64 * JOB_BYTES as u64)
            .saturating_add(self.scaled_servers() * super::autoscale::SCALED_SERVER_BYTES as u64)
    }

    /// The run's budgets (its share of the memory ceiling, its events).
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Starts loading the records the next event will read, so that with many requests in
    /// flight (records far apart in memory) the wait overlaps this event's work; and, with
    /// many events pending, those of each batch the queue has just staged
    /// ([`EventQueue::staged`]), several events ahead. A hint only: it reads, changes
    /// nothing, and the next event may still be preceded by one this event schedules.
    #[inline(always)]
    pub(super) fn fetch_ahead(&mut self) {
        if let Some(ev) = self.queue.peek() {
            fetch_for(ev, &self.reqs, &self.jobs);
        }
        if self.queue.has_staged() {
            for ev in self.queue.staged() {
                fetch_for(ev, &self.reqs, &self.jobs);
            }
        }
    }

    /// Hands one event to its owner. Events of a request carry the token of the attempt
    /// or query attempt that scheduled them; a stale one is dropped here. `P`: the plain
    /// instance of the request path ([`super::plain`]).
    #[inline(always)]
    pub(super) fn dispatch<const P: bool>(&mut self, ev: Event) {
        match ev {
            Event::Arrival { class, epoch } => {
                let c = class as usize;
                if self.classes[c].epoch != epoch {
                    return;
                }
                self.schedule_arrival(c);
                if self.classes[c].accept(&self.cfg.classes[c], self.now) {
                    self.offer::<P>(c);
                }
            }
            Event::BurstArrival { trigger } => self.burst_arrival(trigger as usize),
            Event::UserTurn { class, user } => self.user_turn::<P>(class as usize, user),
            Event::ThinkEnd { class, epoch } => self.think_end::<P>(class as usize, epoch),
            Event::AttemptStart { req, token } => self.resume::<P>(req, token, Next::Attempt),
            Event::AttemptTimeout { req, token } => self.attempt_timed_out(req, token),
            Event::QueryStart { req, token } => self.resume::<P>(req, token, Next::Query),
            Event::QueryTimeout { req, token } => self.query_timed_out(req, token),
            Event::JobDone { job, req } => {
                if let Some(part) = self.job_done::<P>(job, req) {
                    self.advance_hot::<P>(part.req, Next::Part(part.failure, part.keys));
                }
            }
            Event::JobServed { job, req } => {
                if let Some(part) = self.job_served(job, req) {
                    self.advance::<false>(part.req, Next::Part(part.failure, part.keys));
                }
            }
            Event::Hedge { req, token } => self.resume::<P>(req, token, Next::Hedge),
            Event::FillShared { req, token } => self.resume::<P>(req, token, Next::StepDone),
            Event::FillLost { req, token } => self.resume::<P>(req, token, Next::Step),
            Event::FallbackOver { job, token } => self.fallback_over(job, token),
            Event::Requeue { job } => {
                if let Some(part) = self.requeue_failed(job) {
                    self.advance::<false>(part.req, Next::Part(part.failure, part.keys));
                }
            }
            Event::LeaseLapsed { job } => {
                if let Some(part) = self.fail_leased(job, Failure::Timeout) {
                    self.advance::<false>(part.req, Next::Part(part.failure, part.keys));
                }
            }
            Event::WindowEnd => self.window_end(),
            Event::TriggerStart { trigger } => self.timetable_start(trigger as usize),
            Event::TriggerEnd { trigger } => self.timetable_end(trigger as usize),
            Event::Intervene { idx } => self.intervene(idx as usize),
            Event::FiredEnd { trigger } => self.trigger_end(trigger as usize),
            Event::ViewRefresh { pool } => self.view_refresh(pool as usize),
            Event::ScaleEval { pool } => self.scale_eval(pool as usize),
            Event::ServerUp { pool, server } => self.server_up(pool as usize, server),
            Event::Readmit { pool, server } => self.readmit(pool as usize, server),
            Event::HealthCheck { pool } => self.health_check(pool as usize),
            Event::SyncDue { pool, server } => self.sync_due(pool as usize, server),
            Event::SyncNow { pool, server } => self.request_sync(pool as usize, server),
            Event::SyncRetry {
                pool,
                server,
                token,
            } => self.sync_retry(pool as usize, server, token),
            Event::RollingNext { trigger, node } => self.rolling_next(trigger as usize, node),
            Event::PeerJoin { trigger, k } => self.join_next(trigger as usize, k),
            Event::PeerLearn {
                pool,
                server,
                version,
            } => self.peer_learn(pool as usize, server, version),
            Event::NodeDetect { cache, slot, token } => {
                self.caches[cache as usize].detect(slot as usize, token)
            }
            Event::NodeRejoin { cache, slot, token } => {
                let c = &mut self.caches[cache as usize];
                if c.slots[slot as usize].token == token {
                    c.rejoin(slot as usize);
                }
            }
        }
    }

    /// A request's retry or timeout event: moves it on with `next` if the attempt (for
    /// `Next::Attempt`/`AttemptFailed`) or query attempt (otherwise) that scheduled the event
    /// is still current; a stale event is dropped.
    #[inline(always)]
    pub(super) fn resume<const P: bool>(&mut self, r: u32, token: u32, next: Next) {
        let req = &self.reqs[r];
        let current = match next {
            Next::Attempt | Next::AttemptFailed(_) => req.attempt_token,
            _ => req.query_token,
        };
        if current == token {
            self.advance::<P>(r, next);
        }
    }

    /// A fresh token: events scheduled with an older one are stale.
    #[inline(always)]
    pub(super) fn next_token(&mut self) -> u32 {
        self.token = self.token.wrapping_add(1);
        self.token
    }

    /// Schedules the next candidate arrival of class `c`.
    #[inline(always)]
    pub(super) fn schedule_arrival(&mut self, c: usize) {
        let cs = &mut self.classes[c];
        cs.next_arrival = SimTime::MAX;
        if let Some(gap) = cs.next_gap() {
            let (epoch, at) = (cs.epoch, self.now.saturating_add(gap));
            cs.next_arrival = at;
            self.queue.schedule(
                at,
                Event::Arrival {
                    class: c as u16,
                    epoch,
                },
            );
        }
    }

    /// The clients of pool `p` refresh their view of its topology, and schedule the next
    /// refresh.
    fn view_refresh(&mut self, p: usize) {
        self.pools[p].refresh_view();
        if let Some(c) = self.cfg.pools[p].client {
            self.queue.schedule(
                self.now.saturating_add(c.refresh_ns),
                Event::ViewRefresh { pool: p as u16 },
            );
        }
    }
}

/// Starts loading the records event `ev` will read (a job's end reads its job and its
/// request; a request's own events read the request).
#[inline(always)]
fn fetch_for(ev: &Event, reqs: &Slab<Request>, jobs: &Slab<Job>) {
    match *ev {
        Event::JobDone { job, req } | Event::JobServed { job, req } => {
            prefetch(&jobs[job]);
            prefetch(&reqs[req]);
        }
        Event::AttemptStart { req, .. }
        | Event::AttemptTimeout { req, .. }
        | Event::QueryStart { req, .. }
        | Event::QueryTimeout { req, .. } => prefetch(&reqs[req]),
        _ => {}
    }
}

/// Records in flight (requests and jobs) from which the loop prefetches: about where they
/// outgrow the processor's second-level cache.
pub(super) const PREFETCH_FROM: usize = 8192;

/// Events pending from which the loop prefetches for whole batches several events ahead
/// ([`EventQueue::look_ahead`]): each popped event's records are then one among that many,
/// several megabytes apart, far beyond the second-level cache. Measured with M/M/c
/// (non-LTO build): 3% slower with 2.7e4 pending, 20% faster with 9e4, 45% with 9e5.
/// Below it, handing over batches costs more instructions than the earlier fetch saves.
/// (Records in flight would be the wrong measure: a collapsed web-api holds 2e5 jobs in
/// its queue, untouched, with 7e3 events pending.)
pub(super) const LOOK_AHEAD_FROM: usize = 1 << 16;

/// Asks the processor to bring `x` into cache (its first and last byte, so a record that
/// straddles two cache lines comes whole); a hint that reads nothing and never faults.
#[inline(always)]
pub(super) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first: *const i8 = (x as *const T).cast();
        let last = first.wrapping_add(std::mem::size_of::<T>().saturating_sub(1));
        // SAFETY: `_mm_prefetch` only hints the cache; it dereferences nothing (any address
        // is allowed) and needs SSE, which every x86_64 processor has.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            // A record aligned to its size, within a line, is in one line already.
            let one_line = std::mem::size_of::<T>() <= std::mem::align_of::<T>().min(64);
            if !one_line {
                _mm_prefetch::<_MM_HINT_T0>(last);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
