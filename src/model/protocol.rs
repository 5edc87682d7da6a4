//! The request lifecycle's protocol: what a handler says should happen next to a request
//! (`Next`) and what a finished part reports to its query (`PartDone`). Plain data below
//! the concept files, so a concept file (a pool's service, calls, sync, leases, shedding)
//! names the protocol without importing the lifecycle's driver (`lifecycle.rs`) or the
//! query's (`query.rs`); `Simulation::advance` in `lifecycle.rs` applies a `Next`.

use crate::scenario::Failure;

/// What happens next to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// Start an attempt (the first, or a retry after its backoff).
    Attempt,
    /// Start the current step.
    Step,
    /// Send the current step's query (the first query attempt, or a retry).
    Query,
    /// One part of the current query came back: ok (`None`) or failed, covering this many
    /// keys.
    Part(Option<Failure>, u32),
    /// The current step succeeded.
    StepDone,
    /// The current query attempt failed (an error, a full queue, or the service's query
    /// timeout).
    QueryFailed(Failure),
    /// The current attempt failed (the query gave up, the client timed out, the rate limit
    /// refused a retry, or the breaker is open).
    AttemptFailed(Failure),
    /// The request is over: succeeded or failed.
    Done(bool),
    /// A hedged query's delay is up: send its second copy.
    Hedge,
    /// Nothing until an event brings the request back.
    Wait,
}

/// A part's answer for its query: which request, ok (`None`) or why it failed, how many
/// keys it covered.
pub(super) struct PartDone {
    pub req: u32,
    pub failure: Option<Failure>,
    pub keys: u32,
}
