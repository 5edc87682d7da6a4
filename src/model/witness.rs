//! Witnesses: what a run never did, so that a sweep may take its result for the run of a
//! design that differs from it only where the run never looked.
//!
//! Two variants of a design often differ only in a knob that acts on a failure: a retry
//! policy acts when an attempt fails, a query's completion mode when one of its parts
//! fails, a client's `refresh_on_error` when a query meets a crashed server,
//! `cancel_expired` when a worker takes up work whose caller has given up, a cache's
//! control plane when a node leaves the catalog. A run in which that never happened
//! made every decision, and drew every random number, as the run of the other variant
//! would have (the knob is read nowhere else), so their time series are the same rows. A
//! run records each such moment here, per component ([`Knob`] names one); a sweep reads it
//! back ([`Witness::untouched`]) to reuse a baseline run for every variant that differs
//! from it only in knobs the run never reached (`experiment::sweep`).
//!
//! A pool's worker count is read at every arrival; a run that never found as many busy as
//! the smaller count served every query at once under either.
//!
//! Recording costs one store on a failure path. The checks that are not on a failure
//! path (whether a queued job's caller has given up, how many workers an arrival found
//! busy) are made only where a pool drops such work (`cancel_expired`) or the run is
//! watched ([`Config::watch`]): a run that neither drops nor watches cannot say, and
//! [`Witness::untouched`] says no.

use crate::scenario::Config;

/// A knob that a run reads only at the moment its witness records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Knob {
    /// The retry policy of a class (by index into [`Config::classes`]), at either layer
    /// (the request's and its steps' queries), breaker aside: read when an attempt fails.
    Retry(usize),
    /// The completion mode of a class's steps: read when a part of a query fails.
    Completion(usize),
    /// A pool's client `refresh_on_error`: read when a query meets a server that is down.
    RefreshOnError(usize),
    /// A pool's `cancel_expired`: read when a worker takes up a job whose caller has given
    /// up (and was not told to by a propagated deadline).
    CancelExpired(usize),
    /// A cache tier's control plane delay (`control_plane.detect_after`): read when a node
    /// leaves the catalog.
    DetectAfter(usize),
    /// A pool's workers per server, at `below` or more: read when a query arrives at a
    /// server (is a worker free?), and no arrival found `below` busy. Watched runs only
    /// (the plain instance does not look), and the pool's utilization differs: not for a
    /// pool that autoscales or a measure of the pool (`experiment::sweep::kin`).
    Workers { pool: usize, below: u32 },
}

/// What a run reached, per component.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Witness {
    /// Per class: an attempt or a query attempt failed (the retry decision ran).
    pub(super) retried: Vec<bool>,
    /// Per class: a part of a query came back failed.
    pub(super) part_failed: Vec<bool>,
    /// Per pool: a query met a server that was down.
    pub(super) refused: Vec<bool>,
    /// Per pool: a worker took up work whose caller had given up.
    pub(super) stale: Vec<bool>,
    /// Per pool: whether `stale` was looked for (the pool drops such work, or the run was
    /// watched).
    pub(super) looked: Vec<bool>,
    /// Per cache tier: a node left the catalog.
    pub(super) left: Vec<bool>,
    /// Per pool: the most busy workers an arriving query found at its server (watched
    /// runs only).
    pub(super) busy_seen: Vec<u32>,
    /// The run was watched ([`Config::watch`]).
    watched: bool,
}

impl Witness {
    /// Nothing reached yet, for a run of `cfg`.
    pub fn new(cfg: &Config) -> Self {
        let (c, p, k) = (cfg.classes.len(), cfg.pools.len(), cfg.caches.len());
        Self {
            retried: vec![false; c],
            part_failed: vec![false; c],
            refused: vec![false; p],
            stale: vec![false; p],
            looked: cfg
                .pools
                .iter()
                .map(|pc| cfg.watch || pc.cancel_expired)
                .collect(),
            left: vec![false; k],
            busy_seen: vec![0; p],
            watched: cfg.watch,
        }
    }

    /// A configuration comes into force: a pool that stops looking for stale work has not
    /// looked for the whole run.
    pub(super) fn in_force(&mut self, cfg: &Config) {
        for (looked, pc) in self.looked.iter_mut().zip(&cfg.pools) {
            *looked &= cfg.watch || pc.cancel_expired;
        }
    }

    /// True when the run never reached the moment `knob` is read (false for a component
    /// it does not have, and for `cancel_expired` where the run did not look).
    pub fn untouched(&self, knob: Knob) -> bool {
        let no = |v: &[bool], i: usize| v.get(i) == Some(&false);
        match knob {
            Knob::Retry(c) => no(&self.retried, c),
            Knob::Completion(c) => no(&self.part_failed, c),
            Knob::RefreshOnError(p) => no(&self.refused, p),
            Knob::CancelExpired(p) => self.looked.get(p) == Some(&true) && no(&self.stale, p),
            Knob::DetectAfter(k) => no(&self.left, k),
            Knob::Workers { pool, below } => {
                self.watched && self.busy_seen.get(pool).is_some_and(|&b| b < below)
            }
        }
    }
}

#[cfg(test)]
mod tests;
