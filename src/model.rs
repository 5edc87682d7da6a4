//! The model: turns a validated scenario into component state and runs it on the engine.
//!
//! # The life of a request, file by file
//! 1. [`simulation`] builds the components, each random stream named in one table
//!    ([`streams`]); [`step`] is the one event loop under every way of running (a run, a
//!    fork, [`stepping`], [`live`], [`occupancy`](mod@occupancy)): it pops each engine
//!    [`event`] and `dispatch` hands it to the concept that owns it.
//! 2. [`workload`] draws a class's arrivals (Poisson, shaped by its profile; bursts), or
//!    a closed-loop class's users send, wait and think ([`population`]);
//!    [`lifecycle`] offers the request: [`admission`] (the class's rate limit,
//!    [`token_bucket`]; the one place offered, admitted and rejected are counted), then
//!    its first attempt.
//! 3. [`lifecycle`] is the request's state machine: attempts, steps, finish. Each handler
//!    returns what happens next and one loop applies it. Retries at both layers (request
//!    attempts, query attempts) are decided by one function, [`retry::decide`]. What a
//!    handler returns ([`protocol`]'s `Next`) is plain data below every concept file; an
//!    attempt's and a query's timeouts are armed and fire in [`timeouts`].
//! 4. [`keys`] draws a step's keys (a retry of a step without a cache reuses the draw)
//!    and looks them up in its [`cache`]; [`query`] sends the step's query: its fan-out
//!    into parts, routing (a shard and a server of it, by the pool's [`balance`] policy
//!    and the step's read preference), and completion (all-or-nothing or partial).
//! 5. [`service`] is what a [`pool`] does with a part (a job): queue, discipline, service,
//!    expiry, crash; the answer goes back to the query, then the lifecycle. A pool may
//!    shed load ([`shedding`]) or add and remove servers on a signal ([`autoscale`]); a
//!    query may send a second copy ([`hedging`]); a job may carry its own lease, which
//!    the server re-queues or drops when it expires ([`lease`]).
//! 6. A pool with calls ([`calls`]) keeps the job's worker after its service and makes its
//!    calls, each a request of the call's own class through the same lifecycle, then
//!    answers.
//! 7. [`triggers`] start and end the scenario's `[event.NAME]` disturbances;
//!    [`interventions`] put a new configuration in force at its time (or fire an event);
//!    [`live`] advances a run to times chosen from outside and applies interventions now.
//! 8. [`sampling`] writes a time-series row per window and the summary at the end
//!    ([`metrics`] holds the result types; [`histogram`] the latency counts).
//!    [`occupancy`](mod@occupancy) runs a scenario measuring how full a pool's servers are, for laws.
//!
//! A run that uses none of the optional features on the request path takes its plain
//! instance: the same handlers with those features' checks compiled out (`plain.rs`).
//!
//! Requests and jobs live in a slab (`slab.rs`, private to the model); events carry
//! `(slot, token)` and a stale token (an attempt or query attempt that has ended) makes an
//! event a no-op.

pub mod admission;
pub mod alias;
pub mod autoscale;
pub mod balance;
pub mod budget;
pub mod cache;
pub mod calls;
pub mod crash_loop;
pub mod deadlines;
pub mod event;
pub mod fork;
pub mod health;
pub mod hedging;
pub mod histogram;
pub mod interventions;
pub mod keys;
pub mod lease;
pub mod lifecycle;
pub mod live;
pub mod metrics;
pub mod occupancy;
pub mod outlier;
pub mod peers;
mod plain;
pub mod pool;
pub mod population;
pub mod pressure;
pub mod protocol;
pub mod query;
pub mod request;
pub mod retry;
pub mod sampling;
pub mod service;
pub mod service_time;
pub mod shedding;
pub mod simulation;
mod slab;
pub mod step;
pub mod stepping;
pub mod streams;
pub mod sync;
pub mod timeouts;
pub mod token_bucket;
pub mod tracing;
pub mod triggers;
pub mod witness;
pub mod workload;

pub use metrics::{RunResult, Summary, TimeSeries};
pub use occupancy::{Occupancy, occupancy};
pub use simulation::{SimError, Simulation, run, run_until};
pub use triggers::{fired_marker, intervention_marker, markers, scheduled_markers};
