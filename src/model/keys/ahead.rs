//! A cache step's keys drawn one request ahead.
//!
//! A request's keys come from a generator seeded by its serial (the order in which requests
//! start), so a draw is known before its request starts. A large keyspace puts the draw's
//! memory (a Zipf law's alias table, the keys' records) far beyond the processor's caches:
//! looked up at the moment of the draw, every key waits for a miss. So when a request that
//! arrived from outside draws at its first step, the draw its class's next request will
//! make is taken too, its memory prefetched (a Zipf law's numbers with their alias columns;
//! a uniform law's keys with their records). That request's serial is a guess from the
//! classes' pending arrivals ([`crate::model::workload::ClassState::next_arrival`]): if
//! right, its draw is ready and its memory near; if not, the guess cost a draw and a few
//! prefetches. A call (a request a pool's job makes) has no arrivals to guess from: for a
//! class of calls whose first step draws uniform keys, every request's start takes the
//! next serial's draw for it. Only the request it was taken for (serial, class, first
//! step) uses it, and it is the draw that request would make itself: the same generator,
//! the same numbers. A new configuration (an intervention) drops the draw held.

use super::super::cache::{CacheState, zipf_numbers};
use super::{draw_count, key_rng};
use crate::scenario::{Config, KeyCount};

/// The next request's draw, taken ahead.
#[derive(Clone, Default)]
pub(in crate::model) struct Ahead {
    /// The request (serial, class) the draw was taken for, if one is held.
    held: Option<(u32, usize)>,
    /// A class of calls whose first step draws uniform keys from a cache, if the run has
    /// one: a call's serial cannot be guessed from arrivals, so every request's start takes
    /// the next serial's draw for it (cheap: a uniform key is one number).
    calls: Option<u16>,
    /// A Zipf law's draw: its numbers (each alias column prefetched).
    bits: Vec<u64>,
    /// A uniform law's draw: its keys (each record prefetched).
    keys: Vec<u32>,
    /// Off: nothing is taken ahead (only to check that taking it changes nothing).
    pub(in crate::model) off: bool,
    /// Draws given to the request they were taken for.
    pub(in crate::model) used: u64,
}

impl Ahead {
    /// Holds nothing, and takes draws for `cfg`'s call class at every start
    /// ([`Self::calls`]); at a run's start and when a configuration comes into force (its
    /// key laws may differ).
    pub(in crate::model) fn configure(&mut self, cfg: &Config) {
        self.held = None;
        self.calls = cfg
            .classes
            .iter()
            .position(|c| {
                let cache = c.steps.first().and_then(|s| s.cache);
                c.call.is_some() && cache.is_some_and(|ci| cfg.caches[ci].zipf.is_none())
            })
            .map(|c| c as u16);
    }

    /// The call class whose draw every request's start takes ahead, if any.
    #[inline(always)]
    pub(in crate::model) fn calls(&self) -> Option<usize> {
        self.calls.map(usize::from)
    }

    /// Takes the draw request `serial` of class `class` would make at its first step (key
    /// count `law`, keys of `cache`), unless it holds it already.
    #[inline(always)]
    pub(in crate::model) fn take(
        &mut self,
        serial: u32,
        class: usize,
        salt: u64,
        law: KeyCount,
        cache: &CacheState,
    ) {
        if self.off || self.held == Some((serial, class)) {
            return; // taken already (the request drawing now is a retry)
        }
        let mut rng = key_rng(serial, salt, 0);
        let k = draw_count(law, &mut rng);
        match cache.zipf() {
            Some(z) => {
                zipf_numbers(&mut rng, k, &mut self.bits, z);
            }
            None => {
                self.keys.clear();
                for _ in 0..k {
                    let key = cache.draw_key(&mut rng);
                    cache.prefetch(key);
                    self.keys.push(key);
                }
            }
        }
        self.held = Some((serial, class));
    }

    /// If the draw held is request `serial`'s at `step` of `class`, gives it: its keys into
    /// `keys` (each record prefetched; `bits` takes a Zipf draw's numbers), and true.
    #[inline(always)]
    pub(in crate::model) fn drew(
        &mut self,
        serial: u32,
        class: usize,
        step: usize,
        cache: &CacheState,
        bits: &mut Vec<u64>,
        keys: &mut Vec<u32>,
    ) -> bool {
        if step != 0 || self.held != Some((serial, class)) {
            return false;
        }
        self.held = None;
        self.used += 1;
        // The cache is the one the draw was taken from (the class's first step's).
        if cache.zipf().is_some() {
            std::mem::swap(&mut self.bits, bits);
            cache.zipf_keys(bits, keys);
        } else {
            keys.extend_from_slice(&self.keys);
        }
        true
    }
}
