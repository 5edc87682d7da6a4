//! Integration tests: one binary, a module per behaviour.

mod bad_input;
mod common;
mod determinism;
mod queueing;
mod retries;
mod retry_storm;
mod sweep_bad_input;
mod sweep_determinism;
mod tipping;
