//! Queries: a step's fan-out into parts (one shard, every shard, or one part per server
//! its keys route to: the keys are [`super::keys`]'), routing by read preference, and
//! completion (all-or-nothing, or partial with key-level outcomes).

use super::keys::shard_of_key;
use super::pool::Job;
use super::protocol::Next;
use super::simulation::Simulation;
use crate::engine::time::SimTime;
use crate::scenario::{Balance, Completion, Failure, Fanout, QueryCfg, ReadPref};
use rand::RngExt;

/// What every part of a query shares: the pool, the read preference, the cost.
#[derive(Clone, Copy)]
pub(super) struct Part {
    pub(super) pool: usize,
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
            let step = self.reqs[r].step as usize;
            // A cache step keeps its keys (it fills them); any other keeps their shards.
            let hashed = self.cfg.classes[c].steps[step].cache.is_some();
            let shard = |key: u32| {
                if hashed {
                    shard_of_key(key, shards)
                } else {
                    key
                }
            };
            let route = pool.key_route(part.read, balance);
            let mut memo = std::mem::take(&mut self.keys.up);
            memo.start(shards);
            self.keys.group_by_server(r, &mut parts, |key| {
                route.server(pool, shard(key), part.read, threshold, balance, &mut memo)
            });
            self.keys.up = memo;
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
        if !ok {
            self.witness.part_failed[c] = true;
        }
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
