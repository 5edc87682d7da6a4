//! Queries: a step's keys and cache lookups, its fan-out into parts (one shard, every
//! shard, or one part per server its keys route to), routing by read preference, and
//! completion (all-or-nothing, or partial with key-level outcomes).

use super::event::Event;
use super::pool::Job;
use super::protocol::Next;
use super::simulation::Simulation;
use crate::engine::Rng;
use crate::engine::rng::splitmix as mix;
use crate::engine::time::SimTime;
use crate::scenario::{
    Balance, Completion, Failure, Fanout, KeyCount, MissPolicy, QueryCfg, ReadPref,
};
use rand::RngExt;
use rand_distr::{Distribution, Geometric, Poisson};

/// Keys of requests in flight, and the scratch buffer that groups a query's keys by
/// server. Reused, never shrunk: the hot path allocates nothing.
#[derive(Clone)]
pub(super) struct KeyScratch {
    /// Keys of each request's current step, by request slot.
    by_req: Vec<Vec<u32>>,
    /// (server, keys) of the parts of the query being sent.
    parts: Vec<(u32, u32)>,
    /// By server: its part's index in `parts` while a query is grouped (`u32::MAX`: none
    /// yet), so that grouping a key is one lookup, not a search of the parts so far.
    part_of: Vec<u32>,
    /// Keys whose hit just now asks for a background refresh (`refresh_ahead`).
    due: Vec<u32>,
    /// The numbers of one step's key draws ([`super::cache::CacheState::draw_keys`]).
    bits: Vec<u64>,
    /// Requests offered so far and a per-run salt: together they seed each request's keys.
    serial: u32,
    pub(super) salt: u64,
}

impl KeyScratch {
    pub(super) fn new(salt: u64) -> Self {
        Self {
            by_req: Vec::new(),
            parts: Vec::new(),
            part_of: Vec::new(),
            due: Vec::new(),
            bits: Vec::new(),
            serial: 0,
            salt,
        }
    }

    /// The serial number of a newly offered request.
    #[inline(always)]
    pub(super) fn next_serial(&mut self) -> u32 {
        self.serial = self.serial.wrapping_add(1);
        self.serial
    }

    /// The keys request slot `r` queries in its current step.
    pub(super) fn of(&self, r: u32) -> &[u32] {
        self.by_req.get(r as usize).map_or(&[], |k| k.as_slice())
    }

    /// Groups request slot `r`'s keys into `parts` by the server `server_of` routes each
    /// to: one (server, keys) per server, in the order of their first keys. A by-server
    /// index (`part_of`) makes each key one lookup; it is reset before returning.
    fn group_by_server(
        &mut self,
        r: u32,
        parts: &mut Vec<(u32, u32)>,
        mut server_of: impl FnMut(u32) -> u32,
    ) {
        let keys = self
            .by_req
            .get(r as usize)
            .map_or(&[][..], |k| k.as_slice());
        let part_of = &mut self.part_of;
        for &key in keys {
            let server = server_of(key);
            let s = server as usize;
            if s >= part_of.len() {
                part_of.resize(s + 1, u32::MAX);
            }
            match part_of[s] {
                u32::MAX => {
                    part_of[s] = parts.len() as u32;
                    parts.push((server, 1));
                }
                i => parts[i as usize].1 += 1,
            }
        }
        for &(server, _) in parts.iter() {
            part_of[server as usize] = u32::MAX;
        }
    }
}

/// What every part of a query shares: the pool, the read preference, the cost.
#[derive(Clone, Copy)]
pub(super) struct Part {
    pool: usize,
    endpoint: u16,
    read: ReadPref,
    cost: f64,
    cost_per_key: f64,
}

impl Part {
    pub(super) fn of(q: &QueryCfg) -> Self {
        Part {
            pool: q.pool,
            endpoint: q.endpoint,
            read: q.read,
            cost: q.cost,
            cost_per_key: q.cost_per_key,
        }
    }
}

impl Simulation<'_> {
    /// A step with keys: draws them (the same on every retry: the generator is seeded by
    /// the request and the step), looks them up in its cache if it has one, and sends the
    /// query unless every key hit. Kept out of line so the plain path stays small.
    #[inline(never)]
    pub(super) fn start_keyed_step(&mut self, r: u32, c: usize, step: usize) -> Next {
        let st = self.cfg.classes[c].steps[step];
        let mut rng = <Rng as rand::SeedableRng>::seed_from_u64(
            mix(self.reqs[r].key_seed as u64 ^ self.keys.salt) ^ ((step as u64) << 56),
        );
        let k = draw_count(st.keys, &mut rng);
        let slot = r as usize;
        if self.keys.by_req.len() <= slot {
            self.keys.by_req.resize_with(slot + 1, Vec::new);
        }
        let KeyScratch {
            by_req, due, bits, ..
        } = &mut self.keys;
        let keys = &mut by_req[slot];
        keys.clear();
        match st.cache {
            Some(ci) => {
                let cache = &mut self.caches[ci];
                // All keys drawn first, their records asked for, then looked up in order:
                // the lookups' cache misses overlap instead of following one another.
                cache.draw_keys(&mut rng, k, bits, keys);
                let (mut misses, mut kept) = (0, 0);
                let refreshes = cache.refreshes();
                for i in 0..keys.len() {
                    let key = keys[i];
                    let hit = cache.lookup(key, self.now);
                    misses += u32::from(!hit);
                    if refreshes && hit && cache.refresh_due(key, self.now) {
                        due.push(key);
                    }
                    // Legacy policy: one miss queries (and refills) every key of the step.
                    if !hit || st.miss == MissPolicy::All {
                        keys[kept] = key;
                        kept += 1;
                    }
                }
                keys.truncate(kept);
                let coalesce = cache.coalesce;
                if !due.is_empty() {
                    self.send_refreshes(r, c, step, ci);
                }
                let keys = &mut self.keys.by_req[slot];
                if misses == 0 {
                    // Every key hit: nothing is queried, so nothing is filled (a hit does
                    // not renew a key's TTL unless the tier's `ttl_refresh` says so).
                    keys.clear();
                    self.reqs[r].covered = 0;
                    return Next::StepDone;
                }
                self.reqs[r].covered = keys.len() as u32;
                if coalesce {
                    return self.coalesce(r, ci);
                }
            }
            None => {
                keys.extend((0..k).map(|_| rng.random::<u32>()));
                self.reqs[r].covered = k;
            }
        }
        Next::Query
    }

    /// `coalesce`: request `r` missed the keys in its key list. If another request is
    /// filling every one of them, it waits for those fills (parked with a fresh query token,
    /// `parts_left` counting the fills it waits for, no keys of its own to fill); else it
    /// queries them all and leads the fills of those nobody is filling yet.
    #[inline(never)]
    fn coalesce(&mut self, r: u32, ci: usize) -> Next {
        let mut keys = std::mem::take(&mut self.keys.by_req[r as usize]);
        let cache = &mut self.caches[ci];
        let next = if keys.iter().all(|&k| cache.filling(k)) {
            let token = self.next_token();
            let cache = &mut self.caches[ci];
            for &k in &keys {
                cache.wait(k, r, token);
            }
            cache.counts.coalesced += 1;
            let req = &mut self.reqs[r];
            req.query_token = token;
            req.parts_left = keys.len() as u32;
            req.covered = 0;
            keys.clear();
            Next::Wait
        } else {
            for &k in &keys {
                cache.lead(k, r);
            }
            Next::Query
        };
        self.keys.by_req[r as usize] = keys;
        next
    }

    /// `coalesce`: request `r`'s fills of the keys in its key list are over: landed (`ok`)
    /// or abandoned (its attempt failed). Each request that waited on one of them is told
    /// by an event now, once it has all it waited for: its step is done, with the value the
    /// fill read; or, if a fill was abandoned, it looks its keys up again (the first to miss
    /// then leads a new fill, the others wait for it).
    #[inline(never)]
    pub(super) fn landed(&mut self, r: u32, ci: usize, ok: bool) {
        let Some(keys) = self.keys.by_req.get_mut(r as usize).map(std::mem::take) else {
            return;
        };
        for &k in &keys {
            let Some(waiters) = self.caches[ci].land(k, r) else {
                continue;
            };
            for (w, token) in waiters {
                let req = &mut self.reqs[w];
                if req.query_token != token {
                    continue;
                }
                if ok {
                    req.parts_left -= 1;
                    if req.parts_left > 0 {
                        continue;
                    }
                }
                // A fresh token: the waiter's other pending wake-ups become stale.
                let token = self.next_token();
                self.reqs[w].query_token = token;
                let ev = if ok {
                    Event::FillShared { req: w, token }
                } else {
                    Event::FillLost { req: w, token }
                };
                self.queue.schedule(self.now, ev);
            }
        }
        self.keys.by_req[r as usize] = keys;
    }

    /// `refresh_ahead`: request `r`'s hits on the keys in `due` came near their expiry:
    /// each gets one background query (a one-part query of the step's pool that nobody
    /// waits for, under a fresh token), which refills the key when it comes back ok.
    #[inline(never)]
    fn send_refreshes(&mut self, r: u32, c: usize, step: usize, ci: usize) {
        let part = Part::of(&self.cfg.classes[c].steps[step].query);
        let mut due = std::mem::take(&mut self.keys.due);
        for &key in &due {
            let token = self.next_token();
            let server = self.route_one::<false>(part);
            let mut job = self.job::<false>(r, token, SimTime::MAX, server, part, 1);
            // The job carries the key it refreshes, for its return.
            job.keys = key;
            job.propagated = false;
            self.caches[ci].refresh_sent(key, token);
            if self.send::<false>(part.pool, job).is_err() {
                self.caches[ci].refresh_over(key, token);
            }
        }
        due.clear();
        self.keys.due = due;
    }

    /// `refresh_ahead`: a job nobody waited for is over, `ok` or not; if it was a key's
    /// background refresh, an ok answer refills the key.
    #[inline(never)]
    pub(super) fn refresh_landed(&mut self, key: u32, token: u32, ok: bool) {
        let now = self.now;
        if let Some(cache) = self
            .caches
            .iter_mut()
            .find_map(|c| (c.refreshes() && c.refresh_over(key, token)).then_some(c))
            && ok
        {
            cache.fill(key, now);
        }
    }

    /// Sends (or re-sends) the current step's query: arms its deadline, then one job per
    /// part. A part that fails at once (outage, full queue, dead server) is counted here;
    /// the rest of the query is sent all the same (a pipeline or scatter goes out whole,
    /// and its other parts become work nobody waits for).
    #[inline(always)]
    pub(super) fn start_query<const P: bool>(&mut self, r: u32, c: usize) -> Next {
        let token = self.next_token();
        let step = self.reqs[r].step as usize;
        let st = &self.cfg.classes[c].steps[step];
        let (q, hedged) = (&st.query, !P && st.hedge.is_some());
        let (mut part, sync) = (Part::of(q), !P && q.sync);
        if sync {
            part.cost *= self.sync_cost_factor(r, c);
        }
        let (fanout, timeout_ns) = (q.fanout, q.timeout_ns);
        let mut deadline = self.reqs[r].deadline;
        if !P && let Some(qd) = self.arm_query_timeout(r, token, timeout_ns) {
            deadline = deadline.min(qd);
        }
        let covered = self.reqs[r].covered;
        let single = match fanout {
            Fanout::All => false,
            Fanout::Keys => covered == 0,
            Fanout::One => true,
        };
        if !single {
            return self.send_parts(r, c, token, deadline, fanout, part);
        }
        // The common case (one part) skips the grouping buffer.
        let server = if sync {
            self.route_sync(r, c, part)
        } else {
            self.route_one::<P>(part)
        };
        self.arm_query(r, token, 1);
        let job = self.job::<P>(r, token, deadline, server, part, covered);
        match self.send::<P>(part.pool, job) {
            Ok(()) => {
                if hedged {
                    self.arm_hedge(r, c, step, token);
                }
                Next::Wait
            }
            Err(why) => Next::Part(Some(why), covered),
        }
    }

    /// Sends a multi-part query: every shard (`all`), or one part per server its keys route
    /// to (`keys`). Kept out of line so the single-part path stays small.
    #[inline(never)]
    fn send_parts(
        &mut self,
        r: u32,
        c: usize,
        token: u32,
        deadline: SimTime,
        fanout: Fanout,
        part: Part,
    ) -> Next {
        let pool = &self.cfg.pools[part.pool];
        let (shards, threshold, balance) = (pool.shards, pool.latency_threshold_ns, pool.balance);
        let covered = self.reqs[r].covered;
        let mut parts = std::mem::take(&mut self.keys.parts);
        parts.clear();
        if fanout == Fanout::All {
            for shard in 0..shards {
                let server = self.pools[part.pool].pick(shard, part.read, threshold, balance);
                parts.push((server, covered));
            }
        } else {
            let pool = &mut self.pools[part.pool];
            let shard_of = |key: u32| (mix(key as u64 ^ 0x0005_4a2d) % shards as u64) as u32;
            let route = pool.key_route(part.read, balance);
            self.keys.group_by_server(r, &mut parts, |key| {
                route.server(pool, shard_of(key), part.read, threshold, balance)
            });
        }
        self.arm_query(r, token, parts.len() as u32);
        let mut next = Next::Wait;
        for &(server, keys) in &parts {
            let job = self.job::<false>(r, token, deadline, server, part, keys);
            // Once a failed part has decided the query, later parts go out unheard. (A partial
            // query decides only at its last part, so it hears every failure.)
            if let Err(why) = self.send::<false>(part.pool, job)
                && next == Next::Wait
            {
                next = self.part_done::<false>(r, c, Some(why), keys);
            }
        }
        self.keys.parts = parts;
        next
    }

    /// The server a one-part query goes to: a shard by the pool's `balance` (`random`:
    /// uniformly, from the `routing` stream), then a server of it by the read preference.
    #[inline(always)]
    pub(super) fn route_one<const P: bool>(&mut self, part: Part) -> u32 {
        let pool = &self.cfg.pools[part.pool];
        // The candidates of an autoscaled pool are its live servers.
        if !P && pool.autoscale.is_some() {
            return self.route_scaled(part.pool);
        }
        let (shards, threshold, balance) = (pool.shards, pool.latency_threshold_ns, pool.balance);
        let shard = if shards <= 1 {
            0
        } else if balance == Balance::Random {
            if self.pools[part.pool].held_out() == 0 {
                self.route_rng.random_range(0..shards)
            } else {
                self.pools[part.pool].random_shard_held_out(&mut self.route_rng, shards)
            }
        } else {
            self.pools[part.pool].choose_shard(balance, shards)
        };
        self.pools[part.pool].pick(shard, part.read, threshold, balance)
    }

    /// The server sync request `r` (of class `c`) goes to: with `segment`, a server of
    /// shard `i mod shards` for server i (its segment), else as any one-part query.
    #[inline(never)]
    fn route_sync(&mut self, r: u32, c: usize, part: Part) -> u32 {
        let owner = self.cfg.classes[c]
            .sync
            .and_then(|p| self.cfg.pools[p].sync.as_ref());
        if !owner.is_some_and(|s| s.segment) {
            return self.route_one::<false>(part);
        }
        let pool = &self.cfg.pools[part.pool];
        let (shards, threshold, balance) = (pool.shards, pool.latency_threshold_ns, pool.balance);
        let shard = self.reqs[r].parent % shards;
        self.pools[part.pool].pick(shard, part.read, threshold, balance)
    }

    /// Request `r` is a call that propagates its caller's deadline.
    #[inline(never)]
    fn propagates(&self, r: u32) -> bool {
        let c = self.reqs[r].class as usize;
        self.cfg.classes[c]
            .call
            .is_some_and(|i| self.cfg.calls[i].propagate)
    }

    /// A job for one part of request `r`'s query.
    #[inline(always)]
    pub(super) fn job<const P: bool>(
        &self,
        r: u32,
        token: u32,
        deadline: SimTime,
        server: u32,
        p: Part,
        keys: u32,
    ) -> Job {
        Job {
            pool: p.pool as u16,
            endpoint: p.endpoint,
            server,
            req: r,
            token,
            enqueued: self.now,
            started: 0,
            deadline,
            cost: p.cost + p.cost_per_key * keys as f64,
            keys,
            propagated: !P && self.cfg.pools[p.pool].drops_propagated && self.propagates(r),
        }
    }

    /// Records a new query attempt of `parts` parts on the request.
    #[inline(always)]
    fn arm_query(&mut self, r: u32, token: u32, parts: u32) {
        let req = &mut self.reqs[r];
        req.q_attempt += 1;
        req.query_token = token;
        req.parts_left = parts;
        req.parts_ok = 0;
    }

    /// One part of the current query came back. All-or-nothing: the first failed part
    /// fails the query (Grab's pipelines). Partial: the query succeeds with the parts that
    /// succeeded once all are back, and key-level outcomes are counted part by part.
    #[inline(always)]
    pub(super) fn part_done<const P: bool>(
        &mut self,
        r: u32,
        c: usize,
        failure: Option<Failure>,
        keys: u32,
    ) -> Next {
        let ok = failure.is_none();
        let step = self.reqs[r].step as usize;
        let st = &self.cfg.classes[c].steps[step];
        if !P && st.hedge.is_some() {
            return self.hedged_part_done(r, c, step, failure);
        }
        let (partial, counts_keys) = (
            st.query.completion == Completion::Partial,
            !P && st.counts_keys,
        );
        let req = &mut self.reqs[r];
        req.parts_left -= 1;
        if ok {
            req.parts_ok += 1;
        }
        let k = &mut self.classes[c].counts;
        if partial {
            if counts_keys {
                if ok {
                    k.keys_ok += keys as u64
                } else {
                    k.keys_failed += keys as u64
                }
            }
            return match (req.parts_left, failure) {
                // Every part failed, this last one too: the query fails as it did.
                (0, Some(why)) if req.parts_ok == 0 => Next::QueryFailed(why),
                (0, _) => Next::StepDone,
                _ => Next::Wait,
            };
        }
        if let Some(why) = failure {
            if counts_keys {
                k.keys_failed += req.covered as u64;
            }
            return Next::QueryFailed(why);
        }
        if req.parts_left > 0 {
            return Next::Wait;
        }
        if counts_keys {
            k.keys_ok += req.covered as u64;
        }
        // The plain instance ends the step in line.
        if P {
            self.step_done::<P>(r, c)
        } else {
            Next::StepDone
        }
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
