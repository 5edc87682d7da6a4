//! Cache tiers: node slots on a consistent-hash ring over a keyspace, per-key presence by
//! slot epoch (losing a node's contents is O(1)), key popularity, and the control plane
//! (Mcrib) that swaps an empty spare in for a node that left the catalog.

use crate::engine::Rng;
use crate::engine::time::{SimTime, ns_from_f64};
use crate::scenario::{CacheCfg, TtlRefresh};
use rand::{Rng as _, RngExt};
use std::collections::HashMap;
use std::sync::Arc;

pub use super::alias::Alias;

pub use crate::engine::rng::splitmix as mix;

/// One node slot of the tier (a position in the routing list).
#[derive(Debug, Clone, Default)]
pub struct Slot {
    /// A key is present only if it was filled in the slot's current epoch.
    pub epoch: u32,
    /// Listed in the service catalog.
    pub listed: bool,
    /// Answers requests (false while partitioned).
    pub reachable: bool,
    /// An empty spare serves the slot while its node is away.
    pub replaced: bool,
    /// Out of the ring: its node left, was detected, and no spare was free.
    pub down: bool,
    /// Ties the control plane's delayed reactions to the leave that caused them.
    pub token: u32,
}

/// Running counts of a tier.
#[derive(Debug, Clone, Copy, Default)]
pub struct CacheCounts {
    pub lookups: u64,
    pub hits: u64,
    pub fills: u64,
    /// Slots that lost their contents (spares swapped in, flushes).
    pub losses: u64,
    /// Misses that waited for another request's fill of their keys (`coalesce`).
    pub coalesced: u64,
    /// Background refreshes sent (`refresh_ahead`).
    pub refreshes: u64,
}

/// A fill in flight of one key (`coalesce`): the request whose query will fill it, and the
/// requests waiting for it, each with the query token it parked with.
#[derive(Debug, Clone, Default)]
pub struct Flight {
    pub leader: u32,
    pub waiters: Vec<(u32, u32)>,
}

/// A cache tier's live state.
#[derive(Clone)]
pub struct CacheState {
    pub slots: Vec<Slot>,
    pub spares: u32,
    ring: Vec<(u64, u16)>,
    /// The ring positions of live slots, built when a slot first leaves the ring.
    live: Option<LiveRing>,
    /// Per key, in one record so a lookup touches one cache line.
    key: Vec<Key>,
    /// The popularity law's alias table (shared by clones: it never changes).
    zipf: Option<Arc<Alias>>,
    keys: u32,
    ttl: Option<SimTime>,
    /// A hit starts the key's TTL again (sliding expiry).
    slide: bool,
    /// `ttl_jitter`: a fill's TTL is shortened by up to this share of it.
    jitter: Option<f64>,
    /// `coalesce`: the fills in flight, by key (at most one a key, so at most `keys`).
    pub coalesce: bool,
    flights: HashMap<u32, Flight>,
    /// `refresh_ahead`: a hit this close to its key's expiry refreshes it.
    refresh_window: Option<SimTime>,
    /// The background refresh in flight of each key, by the token of its job.
    refreshing: HashMap<u32, u32>,
    pub rng: Rng,
    pub counts: CacheCounts,
    /// Counts at the start of the current time-series window.
    pub window_mark: CacheCounts,
}

/// What the tier knows of one key: present only if filled in `slot` during the slot's
/// `epoch` and before `expiry`.
#[derive(Debug, Clone, Copy)]
struct Key {
    expiry: SimTime,
    epoch: u32,
    /// The slot the key hashes to with every slot in the ring.
    home: u16,
    /// The slot it was last filled in (`u16::MAX`: never).
    slot: u16,
}

impl CacheState {
    /// Bytes per key of the keyspace: its home slot, slot, epoch and expiry.
    pub const BYTES_PER_KEY: usize = std::mem::size_of::<Key>();
    /// Bytes per key of a Zipf popularity law's alias table.
    pub const BYTES_PER_ZIPF_KEY: usize = Alias::BYTES_PER_KEY;
    /// Bytes per position on the ring (a slot's virtual node), with its count of live
    /// positions and its place among its slot's positions once a slot has left the ring.
    pub const BYTES_PER_VNODE: usize = std::mem::size_of::<(u64, u16)>() + 8;

    /// Builds the ring and the keyspace; a `warm` fraction of keys starts present.
    pub fn new(cfg: &CacheCfg, mut rng: Rng) -> Self {
        let mut ring: Vec<(u64, u16)> = (0..cfg.nodes)
            .flat_map(|s| {
                (0..cfg.vnodes)
                    .map(move |v| (mix(((s as u64) << 32) | v as u64 ^ 0x5bd1_e995), s as u16))
            })
            .collect();
        ring.sort_unstable();
        // A tier given its hit ratio starts in steady state: key by key (popular keys are
        // more often present); otherwise a `warm` share of the keys.
        let steady = crate::scenario::hit_ratio::Steady::of(cfg);
        let key = (0..cfg.keys)
            .map(|k| {
                let home = ring[ring_index(&ring, mix(k as u64))].1;
                let mut key = Key {
                    expiry: SimTime::MAX,
                    epoch: 0,
                    home,
                    slot: u16::MAX,
                };
                let warm = steady.map_or(cfg.warm, |s| s.at(k));
                if warm >= 1.0 || rng.random::<f64>() < warm {
                    key.slot = home;
                    key.epoch = 1;
                    // Spread initial expiries over one TTL so they do not expire together.
                    if let Some(ttl) = cfg.ttl_ns {
                        key.expiry = rng.random_range(0..ttl.max(1));
                    }
                }
                key
            })
            .collect();
        let slots = (0..cfg.nodes)
            .map(|_| Slot {
                epoch: 1,
                listed: true,
                reachable: true,
                ..Slot::default()
            })
            .collect();
        Self {
            slots,
            spares: cfg.spares,
            ring,
            live: None,
            key,
            zipf: cfg.zipf.map(|s| Alias::zipf_shared(cfg.keys, s)),
            keys: cfg.keys,
            ttl: cfg.ttl_ns,
            slide: cfg.ttl_refresh == TtlRefresh::OnHit,
            jitter: cfg.ttl_jitter,
            coalesce: cfg.coalesce,
            flights: HashMap::new(),
            refresh_window: cfg
                .refresh_ahead
                .zip(cfg.ttl_ns)
                .map(|(f, t)| (t as f64 * (1.0 - f)).round() as SimTime),
            refreshing: HashMap::new(),
            rng,
            counts: CacheCounts::default(),
            window_mark: CacheCounts::default(),
        }
    }

    /// Draws a key by the tier's popularity law.
    #[inline]
    pub fn draw_key(&self, rng: &mut Rng) -> u32 {
        match &self.zipf {
            Some(z) => z.draw(rng.next_u64()),
            None => rng.random_range(0..self.keys),
        }
    }

    /// The tier's Zipf law, if its keys are not equally popular.
    #[inline(always)]
    pub fn zipf(&self) -> Option<&Alias> {
        self.zipf.as_deref()
    }

    /// Draws `k` keys by the tier's popularity law into `keys` (what `k` calls of
    /// [`Self::draw_key`] give, from the same numbers), each key's record prefetched. A
    /// Zipf law's draws go through [`Self::zipf_keys`].
    #[inline]
    pub fn draw_keys(&self, rng: &mut Rng, k: u32, bits: &mut Vec<u64>, keys: &mut Vec<u32>) {
        match &self.zipf {
            Some(z) => {
                zipf_numbers(rng, k, bits, z);
                self.zipf_keys(bits, keys);
            }
            None => {
                for _ in 0..k {
                    let key = self.draw_key(rng);
                    self.prefetch(key);
                    keys.push(key);
                }
            }
        }
    }

    /// The keys a Zipf law gives for the numbers `bits` ([`zipf_numbers`]), each key's
    /// record prefetched. With 4e5 keys the alias table is megabytes: the numbers are taken
    /// first with each column prefetched, so the misses of one step's keys overlap (and a
    /// request's numbers can be taken one request ahead: `keys::Ahead`).
    #[inline]
    pub fn zipf_keys(&self, bits: &[u64], keys: &mut Vec<u32>) {
        if let Some(z) = &self.zipf {
            for &b in bits {
                let key = z.draw(b);
                self.prefetch(key);
                keys.push(key);
            }
        }
    }

    /// The slot a key maps to now: its home slot, or the next live slot on the ring.
    #[inline]
    pub fn route(&self, key: u32) -> u16 {
        let home = self.key[key as usize].home;
        if !self.slots[home as usize].down {
            return home;
        }
        let start = ring_index(&self.ring, mix(key as u64));
        match &self.live {
            Some(live) => live.next_live(start).map_or(home, |i| self.ring[i].1),
            None => home,
        }
    }

    /// Asks the processor to bring the key's record into cache ahead of its lookup.
    #[inline(always)]
    pub fn prefetch(&self, key: u32) {
        if let Some(k) = self.key.get(key as usize) {
            super::simulation::prefetch(k);
        }
    }

    /// Looks a key up: true on a hit. A key on an unreachable node is a miss.
    #[inline]
    pub fn lookup(&mut self, key: u32, now: SimTime) -> bool {
        self.counts.lookups += 1;
        let s = self.route(key);
        let slot = &self.slots[s as usize];
        let k = &mut self.key[key as usize];
        let hit = slot.reachable && k.slot == s && k.epoch == slot.epoch && now < k.expiry;
        if hit {
            self.counts.hits += 1;
            if self.slide
                && let Some(t) = self.ttl
            {
                k.expiry = now.saturating_add(t);
            }
        }
        hit
    }

    /// Stores a key (after a successful query); a fill to an unreachable node is lost.
    #[inline]
    pub fn fill(&mut self, key: u32, now: SimTime) {
        let s = self.route(key);
        let slot = &self.slots[s as usize];
        if !slot.reachable {
            return;
        }
        let epoch = slot.epoch;
        let ttl = match (self.ttl, self.jitter) {
            (Some(t), Some(j)) => Some(jittered(t, j, self.rng.random::<f64>())),
            (t, _) => t,
        };
        let k = &mut self.key[key as usize];
        k.slot = s;
        k.epoch = epoch;
        k.expiry = ttl.map(|t| now.saturating_add(t)).unwrap_or(SimTime::MAX);
        self.counts.fills += 1;
        if self.refresh_window.is_some() {
            // A fresh fill starts the key's TTL again: a refresh still out will not land.
            self.refreshing.remove(&key);
        }
    }

    /// `coalesce`: whether a fill of `key` is in flight.
    #[inline]
    pub fn filling(&self, key: u32) -> bool {
        self.flights.contains_key(&key)
    }

    /// `coalesce`: request `r` queries `key` for a fill, unless another already does.
    pub fn lead(&mut self, key: u32, r: u32) {
        self.flights.entry(key).or_insert_with(|| Flight {
            leader: r,
            waiters: Vec::new(),
        });
    }

    /// `coalesce`: request `r` (parked with query token `token`) waits for `key`'s fill.
    pub fn wait(&mut self, key: u32, r: u32, token: u32) {
        if let Some(f) = self.flights.get_mut(&key) {
            f.waiters.push((r, token));
        }
    }

    /// `coalesce`: request `r`'s fill of `key` is over (landed or abandoned): the requests
    /// that waited for it, if `r` led it.
    pub fn land(&mut self, key: u32, r: u32) -> Option<Vec<(u32, u32)>> {
        match self.flights.get(&key) {
            Some(f) if f.leader == r => self.flights.remove(&key).map(|f| f.waiters),
            _ => None,
        }
    }

    /// `refresh_ahead`: after a hit on `key` now, whether to refresh it in the background:
    /// its expiry is within the window and no refresh of it is out.
    #[inline]
    pub fn refresh_due(&self, key: u32, now: SimTime) -> bool {
        self.refresh_window.is_some_and(|w| {
            let expiry = self.key[key as usize].expiry;
            expiry != SimTime::MAX
                && expiry.saturating_sub(now) <= w
                && !self.refreshing.contains_key(&key)
        })
    }

    /// `refresh_ahead`: a background refresh of `key` was sent as the job of token `token`.
    pub fn refresh_sent(&mut self, key: u32, token: u32) {
        self.refreshing.insert(key, token);
        self.counts.refreshes += 1;
    }

    /// `refresh_ahead`: the job of token `token` came back (or failed at once); true if it
    /// was the refresh still out for `key` (which then is no longer out).
    pub fn refresh_over(&mut self, key: u32, token: u32) -> bool {
        if self.refreshing.get(&key) == Some(&token) {
            self.refreshing.remove(&key);
            true
        } else {
            false
        }
    }

    /// Whether the tier refreshes keys ahead of their expiry.
    pub fn refreshes(&self) -> bool {
        self.refresh_window.is_some()
    }

    /// The slot's node leaves the catalog (reachable or not). Returns the token that the
    /// control plane's detection must carry.
    pub fn leave(&mut self, s: usize, reachable: bool) -> u32 {
        let slot = &mut self.slots[s];
        slot.token = slot.token.wrapping_add(1);
        slot.listed = false;
        slot.reachable = reachable && !slot.down;
        slot.token
    }

    /// The control plane notices the slot's node is still gone: an empty spare takes its
    /// place, or, with no spare free, the slot leaves the ring and its keys remap.
    pub fn detect(&mut self, s: usize, token: u32) {
        let slot = &mut self.slots[s];
        if slot.token != token || slot.listed || slot.replaced || slot.down {
            return;
        }
        if self.spares > 0 {
            self.spares -= 1;
            slot.replaced = true;
            slot.reachable = true;
            slot.epoch = slot.epoch.wrapping_add(1);
            self.counts.losses += 1;
        } else {
            slot.down = true;
            slot.reachable = false;
            self.live
                .get_or_insert_with(|| LiveRing::new(&self.ring, self.slots.len()))
                .set(s, false);
        }
    }

    /// The slot's node is back in the catalog. If a spare replaced it, it is flushed and
    /// becomes a spare; if the slot had left the ring, the node is flushed and serves it
    /// again; if it was never noticed, nothing is lost (the Slack case for a slow control
    /// plane).
    pub fn rejoin(&mut self, s: usize) {
        let slot = &mut self.slots[s];
        slot.token = slot.token.wrapping_add(1);
        slot.listed = true;
        if slot.replaced {
            slot.replaced = false;
            self.spares += 1;
        } else if slot.down {
            slot.down = false;
            slot.epoch = slot.epoch.wrapping_add(1);
            self.counts.losses += 1;
            if let Some(live) = &mut self.live {
                live.set(s, true);
            }
        }
        slot.reachable = true;
    }

    /// The slot loses its contents at once.
    pub fn flush(&mut self, s: usize) {
        let slot = &mut self.slots[s];
        slot.epoch = slot.epoch.wrapping_add(1);
        self.counts.losses += 1;
    }

    /// Hit ratio between two snapshots of the counts (NaN with no lookups).
    pub fn hit_ratio(now: &CacheCounts, from: &CacheCounts) -> f64 {
        let l = now.lookups - from.lookups;
        if l == 0 {
            f64::NAN
        } else {
            (now.hits - from.hits) as f64 / l as f64
        }
    }
}

/// The numbers of `k` draws of a Zipf law (`k` numbers of `rng`, what `k` calls of
/// [`CacheState::draw_key`] take), each one's alias column prefetched.
#[inline]
pub fn zipf_numbers(rng: &mut Rng, k: u32, bits: &mut Vec<u64>, z: &Alias) {
    bits.clear();
    bits.extend((0..k).map(|_| {
        let b = rng.next_u64();
        z.prefetch(b);
        b
    }));
}

/// Which ring positions belong to a live slot (one not out of the ring), as a Fenwick tree
/// of counts: the first live position at or after a given one (cyclically) in O(log n),
/// and a slot's leave or return in O(vnodes log n).
#[derive(Clone)]
struct LiveRing {
    /// Fenwick tree (1-based) over ring positions: 1 for a live slot's position.
    tree: Vec<u32>,
    /// Live positions in all.
    total: u32,
    /// The ring positions of each slot: `positions[first[s]..first[s + 1]]`.
    positions: Vec<u32>,
    first: Vec<u32>,
}

impl LiveRing {
    /// Every position live.
    fn new(ring: &[(u64, u16)], slots: usize) -> Self {
        let n = ring.len();
        let mut tree = vec![0u32; n + 1];
        for i in 1..=n {
            tree[i] += 1;
            let parent = i + (i & i.wrapping_neg());
            if parent <= n {
                tree[parent] += tree[i];
            }
        }
        let mut first = vec![0u32; slots + 1];
        for &(_, s) in ring {
            first[s as usize + 1] += 1;
        }
        for s in 0..slots {
            first[s + 1] += first[s];
        }
        let mut fill = first.clone();
        let mut positions = vec![0u32; n];
        for (i, &(_, s)) in ring.iter().enumerate() {
            positions[fill[s as usize] as usize] = i as u32;
            fill[s as usize] += 1;
        }
        Self {
            tree,
            total: n as u32,
            positions,
            first,
        }
    }

    /// Marks every position of slot `s` live or not.
    fn set(&mut self, s: usize, live: bool) {
        let n = self.tree.len() - 1;
        for &p in &self.positions[self.first[s] as usize..self.first[s + 1] as usize] {
            let mut i = p as usize + 1;
            while i <= n {
                self.tree[i] = if live {
                    self.tree[i] + 1
                } else {
                    self.tree[i] - 1
                };
                i += i & i.wrapping_neg();
            }
        }
        let count = self.first[s + 1] - self.first[s];
        self.total = if live {
            self.total + count
        } else {
            self.total - count
        };
    }

    /// Live positions before position `i`.
    fn before(&self, mut i: usize) -> u32 {
        let mut sum = 0;
        while i > 0 {
            sum += self.tree[i];
            i &= i - 1;
        }
        sum
    }

    /// The position of the `k`-th live position (`k` from 1, at most `total`).
    fn kth(&self, mut k: u32) -> usize {
        let n = self.tree.len() - 1;
        let mut pos = 0;
        let mut step = n.next_power_of_two();
        while step > 0 {
            if pos + step <= n && self.tree[pos + step] < k {
                pos += step;
                k -= self.tree[pos];
            }
            step /= 2;
        }
        pos
    }

    /// The first live position at or after `start`, wrapping around; `None` if none is.
    fn next_live(&self, start: usize) -> Option<usize> {
        if self.total == 0 {
            return None;
        }
        let before = self.before(start);
        Some(self.kth(if before < self.total { before + 1 } else { 1 }))
    }
}

/// A fill's TTL with jitter `j` and a uniform draw `u` in [0, 1): `ttl·(1 − j·u)`, so
/// uniform in (ttl·(1 − j), ttl] and never 0 (`j` < 1).
pub fn jittered(ttl: SimTime, j: f64, u: f64) -> SimTime {
    let cut = ns_from_f64(ttl as f64 * j * u);
    ttl.saturating_sub(cut).max(1)
}

fn ring_index(ring: &[(u64, u16)], h: u64) -> usize {
    match ring.binary_search_by(|e| e.0.cmp(&h)) {
        Ok(i) => i,
        Err(i) if i < ring.len() => i,
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests;
