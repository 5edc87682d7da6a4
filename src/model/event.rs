//! The model's events: a small plain enum, copied into the engine's queue (no boxing).

/// One pending thing that happens at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ev {
    /// The next Poisson arrival of a class (`epoch` invalidates it after a rate change).
    Arrival { class: u16, epoch: u32 },
    /// The next arrival of a running burst.
    Burst { event: u16 },
    /// A request-level retry starts after its backoff.
    AttemptStart { req: u32, token: u32 },
    /// The client's deadline for one attempt.
    AttemptTimeout { req: u32, token: u32 },
    /// A query-level retry starts after its backoff.
    QueryStart { req: u32, token: u32 },
    /// The service's deadline for one query attempt.
    QueryTimeout { req: u32, token: u32 },
    /// A server finishes a job.
    JobDone { job: u32 },
    /// The end of a time-series step.
    Tick,
    /// A scheduled action: an event starts or ends, or an intervention applies.
    Action { idx: u32 },
    /// The clients of a pool refresh their view of its topology.
    ViewRefresh { pool: u16 },
    /// A rolling restart takes its next node (`node`) out of the catalog.
    RollingNext { event: u16, node: u32 },
    /// The control plane's delayed look at a cache node that left the catalog.
    NodeDetect { cache: u16, slot: u16, token: u32 },
    /// A restarted cache node re-registers in the catalog.
    NodeRejoin { cache: u16, slot: u16, token: u32 },
}
