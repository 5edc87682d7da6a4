//! Integration tests: one binary, a module per behaviour.

mod common;
mod queueing;
