//! The model: turns a validated scenario into component state and runs it on the engine.
//!
//! The life of a request: a workload class emits it, admission may reject it, then it runs
//! its steps in order; each step sends queries to a server pool, subject to client
//! timeouts and retries at two layers (query and request).

pub mod cache;
pub mod event;
pub mod histogram;
pub mod metrics;
pub mod pool;
pub mod request;
pub mod retry;
pub mod sim;
pub mod token_bucket;
pub mod workload;

pub use metrics::{RunResult, Summary, TimeSeries};
pub use sim::{SimError, Simulation, run};
