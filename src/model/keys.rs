//! A step's keys: drawn from the request's own generator (the same on every retry, so a
//! retry reuses the draw), looked up in the step's cache if it has one (coalescing the
//! fills of missed keys, refreshing hot keys ahead of expiry), and kept for the query
//! that fans out over them ([`super::query`]): a cache step keeps its keys, a step
//! without a cache the shards they route to.

use super::event::Event;
use super::protocol::Next;
use super::query::Part;
use super::simulation::Simulation;
use crate::engine::Rng;
use crate::engine::rng::splitmix as mix;
use crate::engine::time::SimTime;
use crate::scenario::{Config, Fanout, KeyCount, MissPolicy};
use rand::RngExt;
use rand_distr::Distribution;

/// Keys of requests in flight, and the scratch buffer that groups a query's keys by
/// server. Reused, never shrunk: the hot path allocates nothing.
#[derive(Clone)]
pub(super) struct KeyScratch {
    /// Keys of each request's current step, by request slot.
    by_req: Vec<Vec<u32>>,
    /// (server, keys) of the parts of the query being sent.
    pub(super) parts: Vec<(u32, u32)>,
    /// By server: its part's index in `parts` while a query is grouped (`u32::MAX`: none
    /// yet), so that grouping a key is one lookup, not a search of the parts so far.
    part_of: Vec<u32>,
    /// Keys whose hit just now asks for a background refresh (`refresh_ahead`).
    due: Vec<u32>,
    /// The numbers of one step's key draws ([`super::cache::CacheState::draw_keys`]).
    bits: Vec<u64>,
    /// The next request's draw, taken ahead.
    pub(super) ahead: Ahead,
    /// Per shard, its servers the view holds up, counted once for a query's keys.
    pub(super) up: UpMemo,
    /// Requests offered so far and a per-run salt: together they seed each request's keys.
    serial: u32,
    pub(super) salt: u64,
    /// A retry reuses its step's draw (off only to check that reusing it changes nothing).
    pub(super) reuse: bool,
}

impl KeyScratch {
    pub(super) fn new(salt: u64, cfg: &Config) -> Self {
        let mut ahead = Ahead::default();
        ahead.configure(cfg);
        Self {
            by_req: Vec::new(),
            parts: Vec::new(),
            part_of: Vec::new(),
            due: Vec::new(),
            bits: Vec::new(),
            ahead,
            up: UpMemo::default(),
            serial: 0,
            salt,
            reuse: true,
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
    pub(super) fn group_by_server(
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

/// Per shard, how many of its candidate servers the view holds up, counted at the first of
/// a query's keys that goes there: a stamp per shard says which query counted it, so a new
/// query starts with nothing counted and clears nothing.
#[derive(Clone, Default)]
pub struct UpMemo {
    /// Per shard: (the query that counted, the count).
    counts: Vec<(u32, u32)>,
    query: u32,
}

impl UpMemo {
    /// A new query over `shards` shards.
    pub(super) fn start(&mut self, shards: u32) {
        self.query = self.query.wrapping_add(1);
        if self.query == 0 {
            self.counts.fill((0, 0));
            self.query = 1;
        }
        if self.counts.len() < shards as usize {
            self.counts.resize(shards as usize, (0, 0));
        }
    }

    /// Shard `s`'s count, counted by `count` if this query has not yet.
    #[inline(always)]
    pub(super) fn n_up(&mut self, s: u32, count: impl FnOnce() -> u32) -> u32 {
        let query = self.query;
        let e = &mut self.counts[s as usize];
        if e.0 != query {
            *e = (query, count());
        }
        e.1
    }
}

/// The generator of request `serial`'s keys at `step` (seeded by the request, the run's
/// salt and the step: a retry draws the same).
#[inline(always)]
fn key_rng(serial: u32, salt: u64, step: usize) -> Rng {
    <Rng as rand::SeedableRng>::seed_from_u64(mix(serial as u64 ^ salt) ^ ((step as u64) << 56))
}

/// The shard a key routes to: a hash of the key modulo the pool's shards.
#[inline(always)]
pub(super) fn shard_of_key(key: u32, shards: u32) -> u32 {
    (mix(key as u64 ^ 0x0005_4a2d) % shards as u64) as u32
}

mod ahead;
pub(super) use ahead::Ahead;

#[cfg(test)]
mod tests;

impl Simulation<'_> {
    /// A step with keys: draws them (the same on every retry: the generator is seeded by
    /// the request and the step), looks them up in its cache if it has one, and sends the
    /// query unless every key hit. Kept out of line so the plain path stays small.
    #[inline(never)]
    pub(super) fn start_keyed_step(&mut self, r: u32, c: usize, step: usize) -> Next {
        let st = self.cfg.classes[c].steps[step];
        let slot = r as usize;
        if self.keys.by_req.len() <= slot {
            self.keys.by_req.resize_with(slot + 1, Vec::new);
        }
        // A retry draws the keys it drew before (the generator is seeded by the request
        // and the step). Without a cache the key list is that draw, kept whole: a retry
        // reuses it (`Request::drawn` says which step's it is). A cache step's list keeps
        // only its misses, so it draws again (cheap, and its lookups must run again).
        let drawn = (step as u16).wrapping_add(1);
        let req = &mut self.reqs[r];
        if st.cache.is_none() {
            if self.keys.reuse && drawn != 0 && req.drawn == drawn {
                req.covered = self.keys.by_req[slot].len() as u32;
                return Next::Query;
            }
            req.drawn = drawn;
        } else {
            req.drawn = 0;
        }
        let (serial, salt) = (self.reqs[r].key_seed, self.keys.salt);
        // The look-ahead is for a first step's draw (made as its request arrives).
        let next = if step == 0 && st.cache.is_some() {
            self.next_serial_of(c)
        } else {
            None
        };
        let KeyScratch {
            by_req,
            due,
            bits,
            ahead,
            ..
        } = &mut self.keys;
        let keys = &mut by_req[slot];
        keys.clear();
        match st.cache {
            Some(ci) => {
                let cache = &mut self.caches[ci];
                // All keys drawn first, their records asked for, then looked up in order:
                // the lookups' cache misses overlap instead of following one another. The
                // draw was usually taken ahead, when the request before this one started.
                if !ahead.drew(serial, c, step, cache, bits, keys) {
                    let mut rng = key_rng(serial, salt, step);
                    let k = draw_count(st.keys, &mut rng);
                    cache.draw_keys(&mut rng, k, bits, keys);
                }
                if let Some(next) = next {
                    ahead.take(next, c, salt, st.keys, cache);
                }
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
                let mut rng = key_rng(serial, salt, step);
                let k = draw_count(st.keys, &mut rng);
                if st.query.fanout == Fanout::Keys {
                    // Without a cache a key is only where it goes: its shard is kept, found
                    // once for every attempt ([`shard_of_key`]; `send_parts` reads it).
                    let shards = self.cfg.pools[st.query.pool].shards;
                    keys.extend((0..k).map(|_| shard_of_key(rng.random::<u32>(), shards)));
                } else {
                    keys.extend((0..k).map(|_| rng.random::<u32>()));
                }
                self.reqs[r].covered = k;
            }
        }
        Next::Query
    }

    /// The serial class `c`'s next request will likely have, if it arrives from outside:
    /// the requests that start first are those whose classes' pending arrivals come
    /// earlier (a guess: an arrival may be thinned or refused, a call may start a request).
    #[inline(always)]
    fn next_serial_of(&self, c: usize) -> Option<u32> {
        let at = self.classes[c].next_arrival;
        if at == SimTime::MAX {
            return None;
        }
        let before = self.classes.iter().filter(|o| o.next_arrival < at).count();
        Some(self.keys.serial.wrapping_add(1 + before as u32))
    }

    /// As a request starts: the next serial's draw for the run's call class, if it has one
    /// ([`Ahead`]).
    #[inline(always)]
    pub(super) fn take_for_calls(&mut self) {
        if let Some(c) = self.keys.ahead.calls() {
            self.take_for_call(c);
        }
    }

    #[inline(never)]
    fn take_for_call(&mut self, c: usize) {
        let st = &self.cfg.classes[c].steps[0];
        if let Some(ci) = st.cache {
            let (serial, salt) = (self.keys.serial.wrapping_add(1), self.keys.salt);
            self.keys
                .ahead
                .take(serial, c, salt, st.keys, &self.caches[ci]);
        }
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
}

/// Draws how many keys a step touches.
fn draw_count(k: KeyCount, rng: &mut Rng) -> u32 {
    match k {
        KeyCount::Fixed(n) => n,
        KeyCount::Poisson { mean, min, law } => {
            let x: f64 = law.map_or(mean, |d| d.sample(rng));
            (x as u32).max(min)
        }
        KeyCount::Geometric { min, law, .. } => {
            let x = law.map_or(0, |d| d.sample(rng));
            (x as u32 + 1).max(min)
        }
    }
}
