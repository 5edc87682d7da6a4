//! The engine's events in this model: a small plain enum, copied into the event queue (no
//! boxing). "Event" here always means this; a scenario's `[event.NAME]` sections are
//! *triggers* in the code ([`crate::model::triggers`]).

/// One pending thing that happens at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The next Poisson arrival of a class (`epoch` invalidates it after a rate change).
    Arrival { class: u16, epoch: u32 },
    /// A population's user is done thinking (or staying away): its next request.
    UserTurn { class: u16, user: u32 },
    /// The shared clock of a population's exponential thinkers rings (`epoch` invalidates
    /// it after it moved).
    ThinkEnd { class: u16, epoch: u32 },
    /// The next arrival of a running burst trigger.
    BurstArrival { trigger: u16 },
    /// A request-level retry starts after its backoff.
    AttemptStart { req: u32, token: u32 },
    /// The client's deadline for one attempt.
    AttemptTimeout { req: u32, token: u32 },
    /// A query-level retry starts after its backoff.
    QueryStart { req: u32, token: u32 },
    /// The service's deadline for one query attempt.
    QueryTimeout { req: u32, token: u32 },
    /// A server finishes a job. It names the job's request too, so that the two records
    /// (far apart in memory when many are in flight) are fetched at once, not one after
    /// the other.
    JobDone { job: u32, req: u32 },
    /// A server finishes a job's own service in a pool with calls: the job now makes them.
    JobServed { job: u32, req: u32 },
    /// A hedged query's second copy is due.
    Hedge { req: u32, token: u32 },
    /// A job's failed call has finished its fallback: the call counts as returned.
    FallbackOver { job: u32, token: u32 },
    /// A leased job that ended failed goes back to its queue (`lease.requeue_failed`).
    Requeue { job: u32 },
    /// A leased job dropped at dequeue, its lease already past: its caller hears.
    LeaseLapsed { job: u32 },
    /// The end of a time-series window.
    WindowEnd,
    /// A trigger's pending occurrence starts (timetable).
    TriggerStart { trigger: u16 },
    /// A trigger's pending occurrence ends (timetable).
    TriggerEnd { trigger: u16 },
    /// An intervention applies (timetable).
    Intervene { idx: u16 },
    /// A trigger that an intervention fired (`[[at]] fire`) ends, its `for` after it started.
    FiredEnd { trigger: u16 },
    /// The clients of a pool refresh their view of its topology.
    ViewRefresh { pool: u16 },
    /// A rolling restart takes its next node (`node`) out of the catalog.
    RollingNext { trigger: u16, node: u32 },
    /// An autoscaled pool evaluates its signal.
    ScaleEval { pool: u16 },
    /// A server an autoscaler asked for is up.
    ServerUp { pool: u16, server: u32 },
    /// `coalesce`: the fills a waiting request waited for have landed: its step is done.
    FillShared { req: u32, token: u32 },
    /// `coalesce`: a fill a request waited for was abandoned: it looks its keys up again.
    FillLost { req: u32, token: u32 },
    /// A server outlier ejection took out may be chosen again.
    Readmit { pool: u16, server: u32 },
    /// A pool's balancer probes each of its servers (`health_check`).
    HealthCheck { pool: u16 },
    /// A server syncs now (a `resync` event spread over its length).
    SyncNow { pool: u16, server: u32 },
    /// A server's routine sync is due (`sync.every`).
    SyncDue { pool: u16, server: u32 },
    /// A server's retry delay after a failed sync is over: it syncs again, or restarts.
    SyncRetry { pool: u16, server: u32, token: u32 },
    /// The control plane's delayed look at a cache node that left the catalog.
    NodeDetect { cache: u16, slot: u16, token: u32 },
    /// `add_servers`: the trigger's server `k` (from 0) joins its pool's fleet.
    PeerJoin { trigger: u16, k: u32 },
    /// `peers`: a server of the pool's fleet learns a version of the membership.
    PeerLearn {
        pool: u16,
        server: u32,
        version: u32,
    },
    /// A restarted cache node re-registers in the catalog.
    NodeRejoin { cache: u16, slot: u16, token: u32 },
}
