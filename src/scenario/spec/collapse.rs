//! The validated `[collapse]` section: what counts as collapse for the mean time to
//! spontaneous collapse (`brink collapse-time`), and the effort its estimator may spend.

/// What is counted as the system's level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollapseLevel {
    /// Requests in flight, over all classes (those of pool calls included).
    InFlight,
    /// Jobs waiting in the queues of the pool with this index.
    Queue(usize),
}

/// The collapse level and the estimator's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Collapse {
    /// What is counted.
    pub level: CollapseLevel,
    /// The count at which the system has collapsed.
    pub at: u64,
    /// The healthy set: a count at most `base` (0: an empty system).
    pub base: u64,
    /// The distance between two splitting levels (the first is `base + 1`).
    pub step: u64,
    /// Trajectories simulated from each level.
    pub effort: u64,
    /// Excursions from the healthy set simulated directly (the start of the estimate).
    pub cycles: u64,
    /// The most events the whole estimate may simulate.
    pub max_events: u64,
    /// Where the settings came from: `[collapse]`, or derived from a pool's queue limit.
    pub derived: bool,
}
