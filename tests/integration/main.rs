//! Integration tests: one binary, a module per behaviour.

mod ably;
mod autoscaling;
mod bad_input;
mod balancing;
mod collapse_time;
mod common;
mod determinism;
mod grab;
mod hysteresis;
mod install;
mod load_shedding;
mod mg1_laws;
mod phase;
mod populations;
mod provenance;
mod queueing;
mod report;
mod retries;
mod retry_amplification;
mod retry_storm;
mod service_graphs;
mod slack;
mod sweep_bad_input;
mod sweep_determinism;
mod thread_pool_exhaustion;
mod tipping;
