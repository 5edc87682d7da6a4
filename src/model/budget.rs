//! Run-time budgets: the memory ceiling and the event budget. A run that reaches one ends
//! with [`SimError::Budget`] (exit code 1), naming the budget, what used it and how to
//! raise it; never an abort or an out-of-memory kill.
//!
//! The memory ceiling counts what grows with the scenario, in the bytes of the records
//! that hold it: what is known before the run (cache key spaces and rings, time-series
//! rows, trigger occurrences as timeline markers, servers, users) is checked before
//! anything is allocated; what grows (pending events, requests in flight, queued jobs,
//! servers an autoscaler adds) is checked every [`CHECK_EVERY`] events. A rare-event
//! estimator that keeps copies of a run counts each ([`copy_known_bytes`] and what the
//! copy has grown) before it makes it. It is one budget for the process, set with
//! `--max-memory` (default: half the machine's memory); runs that run side by side (a
//! sweep's `--jobs`) share it evenly, so each gets the ceiling divided by the number of
//! threads of its pool, whatever the others use, and whether a run ends does not depend on
//! the order runs finish in.

use super::cache::CacheState;
use super::event::Event;
use super::metrics::Marker;
use super::pool::{Job, PoolState, Server};
use super::request::Request;
use super::triggers::occurrence_count;
use super::workload::ClassState;
use crate::engine::time::{SimTime, ns_to_secs};
use crate::scenario::{Config, Scenario, columns};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The event budget when `--max-events` is not given. A run handles about 1e7 to 3e7 events
/// a second, so one that reaches it has run for 10 to 20 seconds: a storm of immediate
/// retries (up to 1000 attempts per request, each an event at the same instant) ends in
/// seconds with this message, not after minutes. It is 10 times the M/M/1 benchmark's run
/// (1e7 customers, 2e7 events); a longer run raises it with `--max-events`.
pub const DEFAULT_MAX_EVENTS: u64 = 200_000_000;

/// The memory ceiling when the machine's memory cannot be read.
pub const FALLBACK_MAX_MEMORY: u64 = 4 << 30;

/// How often (in events) the run checks what it holds against its budgets.
pub const CHECK_EVERY: u64 = 1024;

/// 0: the default, sized to the machine.
static MAX_MEMORY: AtomicU64 = AtomicU64::new(0);
static MAX_EVENTS: AtomicU64 = AtomicU64::new(DEFAULT_MAX_EVENTS);

/// Sets the process's memory ceiling in bytes (`--max-memory`).
pub fn set_max_memory(bytes: u64) {
    MAX_MEMORY.store(bytes, Ordering::Relaxed);
}

/// Sets the event budget of each run (`--max-events`).
pub fn set_max_events(n: u64) {
    MAX_EVENTS.store(n, Ordering::Relaxed);
}

/// The process's memory ceiling in bytes: as set, or half the machine's memory
/// (`MemTotal` of `/proc/meminfo`), or [`FALLBACK_MAX_MEMORY`].
pub fn max_memory() -> u64 {
    match MAX_MEMORY.load(Ordering::Relaxed) {
        0 => *MACHINE.get_or_init(|| machine_memory().map_or(FALLBACK_MAX_MEMORY, |m| m / 2)),
        set => set,
    }
}

static MACHINE: OnceLock<u64> = OnceLock::new();

fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The budgets of one run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// This run's share of the memory ceiling, in bytes.
    pub memory: u64,
    /// The number of runs the ceiling is shared by.
    pub sharers: u64,
    /// The most events the run may handle.
    pub events: u64,
}

impl Limits {
    /// The budgets of a run started now: inside a thread pool (a sweep's `--jobs`), the
    /// ceiling divided by the pool's threads.
    pub fn current() -> Self {
        let sharers = if rayon::current_thread_index().is_some() {
            rayon::current_num_threads().max(1) as u64
        } else {
            1
        };
        Self {
            memory: max_memory() / sharers,
            sharers,
            events: MAX_EVENTS.load(Ordering::Relaxed),
        }
    }

    /// The budgets of each of `n` runs that share this run's memory (a forked pair of
    /// runs, [`super::fork`], holds two simulations where one ran).
    pub fn split(self, n: u64) -> Self {
        let n = n.max(1);
        Self {
            memory: self.memory / n,
            sharers: self.sharers.saturating_mul(n),
            events: self.events,
        }
    }

    /// The ceiling as the message names it.
    fn ceiling(&self) -> String {
        if self.sharers > 1 {
            format!(
                "memory ceiling of {} (one of {} parallel runs' shares of {})",
                fmt_bytes(self.memory),
                self.sharers,
                fmt_bytes(self.memory * self.sharers)
            )
        } else {
            format!("memory ceiling of {}", fmt_bytes(self.memory))
        }
    }

    /// Checks `uses` against the memory ceiling; `time` is `None` before the run.
    pub fn check_memory(&self, uses: &[Use], time: Option<SimTime>) -> Result<(), SimError> {
        if bytes_of(uses) <= self.memory {
            return Ok(());
        }
        Err(self.exceeded(uses, time))
    }

    /// The error of a run whose `uses` have reached the memory ceiling: it names the
    /// ceiling, when (`time`; `None` before the run) and the three largest uses.
    pub fn exceeded(&self, uses: &[Use], time: Option<SimTime>) -> SimError {
        let mut top: Vec<&Use> = uses.iter().filter(|u| u.bytes > 0).collect();
        top.sort_by_key(|u| std::cmp::Reverse(u.bytes));
        let what: Vec<String> = top
            .iter()
            .take(3)
            .map(|u| format!("{} {} ({})", fmt_count(u.count), u.what, fmt_bytes(u.bytes)))
            .collect();
        SimError::Budget {
            budget: self.ceiling(),
            when: when(time),
            what: what.join(", "),
            flag: "--max-memory",
        }
    }

    /// Checks the events handled against the event budget.
    pub fn check_events(&self, events: u64, time: SimTime) -> Result<(), SimError> {
        if events <= self.events {
            return Ok(());
        }
        Err(SimError::Budget {
            budget: format!("event budget of {} events", self.events),
            when: when(Some(time)),
            what: format!("{} events handled", fmt_count(events)),
            flag: "--max-events",
        })
    }
}

fn when(time: Option<SimTime>) -> String {
    match time {
        Some(t) => format!("at t = {:.3} s", ns_to_secs(t)),
        None => "before the run".into(),
    }
}

/// Why a run stopped without a result.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The run exceeded a hard limit.
    #[error(
        "the run ran away at t = {time_s:.1} s: {what}. The system is exploding; lower the load, bound the queues (queue_limit) or shorten the run"
    )]
    Runaway { time_s: f64, what: String },
    /// The run reached a budget (`--max-memory`, `--max-events`).
    #[error("{budget} reached {when}: {what}; raise it with {flag}")]
    Budget {
        /// The budget and its size.
        budget: String,
        /// When: "at t = ..." or "before the run".
        when: String,
        /// What used it.
        what: String,
        /// The command-line option that raises it.
        flag: &'static str,
    },
    /// A request went missing: a bug in brink, never the user's fault.
    #[error("internal accounting error in class `{class}`: {detail}")]
    Accounting { class: String, detail: String },
}

/// One thing a run holds: how many and their bytes.
#[derive(Debug, Clone)]
pub struct Use {
    pub what: String,
    pub count: u64,
    pub bytes: u64,
}

impl Use {
    /// `count` records of `each` bytes.
    pub fn of(what: impl Into<String>, count: u64, each: usize) -> Self {
        Self {
            what: what.into(),
            count,
            bytes: count.saturating_mul(each as u64),
        }
    }
}

/// The bytes of `uses`, in all.
pub fn bytes_of(uses: &[Use]) -> u64 {
    uses.iter().fold(0, |a, u| a.saturating_add(u.bytes))
}

/// Bytes a pending event holds in the queue (its key and the event).
pub const EVENT_BYTES: usize = std::mem::size_of::<(u128, Event)>();
/// Bytes a request in flight holds (its record, its hedge time, its backoff sleeps, its
/// keys' list).
pub const REQUEST_BYTES: usize =
    std::mem::size_of::<Request>() + 3 * std::mem::size_of::<SimTime>() + 24;
/// Bytes a job holds (its record and its place in a server's queue).
pub const JOB_BYTES: usize = std::mem::size_of::<Job>() + std::mem::size_of::<u32>();

/// What a run of `sc` holds from the start to the end whatever happens in it: cache key
/// spaces and rings, servers, users, the time-series rows, the trigger occurrences (as
/// timeline markers). O(1) per trigger, cache, pool and class.
pub fn known_uses(sc: &Scenario) -> Vec<Use> {
    let cfg = &sc.config;
    let mut uses = Vec::new();
    for c in &cfg.caches {
        uses.push(Use::of(
            format!("keys of cache `{}`", c.name),
            c.keys as u64,
            CacheState::BYTES_PER_KEY,
        ));
        if c.zipf.is_some() {
            uses.push(Use::of(
                format!("popularity table of cache `{}`", c.name),
                c.keys as u64,
                CacheState::BYTES_PER_ZIPF_KEY,
            ));
        }
        uses.push(Use::of(
            format!("ring positions of cache `{}`", c.name),
            c.nodes as u64 * c.vnodes as u64,
            CacheState::BYTES_PER_VNODE,
        ));
    }
    let (servers, users) = servers_and_users(cfg);
    uses.push(Use::of("servers", servers, std::mem::size_of::<Server>()));
    uses.push(Use::of("users", users, super::population::USER_BYTES));
    let windows = sc.duration.div_ceil(sc.window.max(1));
    let row =
        columns::columns(cfg).len() * std::mem::size_of::<f64>() + std::mem::size_of::<Vec<f64>>();
    uses.push(Use::of("time-series rows", windows, row));
    let markers = cfg
        .triggers
        .iter()
        .filter(|t| t.enabled)
        .fold(0u64, |a, t| {
            a.saturating_add(occurrence_count(t, sc.duration))
        })
        .saturating_add(sc.interventions.len() as u64);
    let label = cfg
        .triggers
        .iter()
        .map(|t| t.label.len())
        .max()
        .unwrap_or(0);
    uses.push(Use::of(
        "trigger occurrences",
        markers,
        std::mem::size_of::<Marker>() + label,
    ));
    uses
}

/// The servers a run of `cfg` starts with (every pool's `shards × (1 + replicas)`) and its
/// users (every population's), the two counts [`known_uses`] and [`copy_known_bytes`] price.
fn servers_and_users(cfg: &Config) -> (u64, u64) {
    let servers = cfg
        .pools
        .iter()
        .map(|p| p.shards as u64 * (1 + p.replicas as u64))
        .sum();
    let users = cfg
        .classes
        .iter()
        .filter_map(|c| c.users.as_ref())
        .map(|u| u.users as u64)
        .sum();
    (servers, users)
}

/// The bytes of the fixed state of one run of `cfg` (its records of classes, pools, cache
/// tiers and their node slots, and the simulation itself), apart from what [`known_uses`]
/// and the run's growth count: what each copy of a run costs even when it holds nothing
/// else.
fn fixed_bytes(cfg: &Config) -> u64 {
    use std::mem::size_of;
    let slots: u64 = cfg.caches.iter().map(|c| c.nodes as u64).sum();
    // Each time-series column's record and name (the sampler's, copied with it).
    let columns = columns::columns(cfg).len() as u64 * (size_of::<columns::Column>() as u64 + 32);
    (size_of::<super::simulation::Simulation>() as u64)
        .saturating_add(crate::engine::EventQueue::<Event>::FIXED_BYTES as u64)
        .saturating_add(columns)
        .saturating_add(cfg.classes.len() as u64 * size_of::<ClassState>() as u64)
        .saturating_add(cfg.pools.len() as u64 * size_of::<PoolState>() as u64)
        .saturating_add(cfg.caches.len() as u64 * size_of::<CacheState>() as u64)
        .saturating_add(slots * size_of::<super::cache::Slot>() as u64)
}

/// What one more copy of a run of `cfg` holds from the start (a rare-event estimator keeps
/// thousands, [`super::stepping`]): its cache keys and ring positions, servers, users and
/// fixed state. Not what copies share (a Zipf popularity table) or a stepped run drops (its
/// time-series rows), nor what it has grown (the copy's [`Simulation::grown_bytes`] adds
/// that).
///
/// [`Simulation::grown_bytes`]: super::Simulation::grown_bytes
pub fn copy_known_bytes(cfg: &Config) -> u64 {
    let per_cache = |c: &crate::scenario::CacheCfg| {
        (c.keys as u64 * CacheState::BYTES_PER_KEY as u64)
            .saturating_add(c.nodes as u64 * c.vnodes as u64 * CacheState::BYTES_PER_VNODE as u64)
    };
    let (servers, users) = servers_and_users(cfg);
    cfg.caches
        .iter()
        .fold(fixed_bytes(cfg), |a, c| a.saturating_add(per_cache(c)))
        .saturating_add(servers * std::mem::size_of::<Server>() as u64)
        .saturating_add(users * super::population::USER_BYTES as u64)
}

/// Checks what a run of `sc` holds from the start ([`known_uses`]) against the memory
/// ceiling of a run started now, and returns those uses (the run keeps their sum).
pub fn check_before(sc: &Scenario) -> Result<Vec<Use>, SimError> {
    let uses = known_uses(sc);
    Limits::current().check_memory(&uses, None)?;
    Ok(uses)
}

/// `n` bytes in the largest unit that keeps a number of at least 1 (binary units).
pub fn fmt_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut x = n as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 || x.fract() == 0.0 {
        format!("{x} {}", UNITS[u])
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}

/// A count, exactly below a million, else in scientific notation (9.1e7).
fn fmt_count(n: u64) -> String {
    if n < 1_000_000 {
        n.to_string()
    } else {
        format!("{:.1e}", n as f64)
    }
}

/// Reads a size for `--max-memory`: a number and a unit, `B`, `KB`, `MB`, `GB`, `TB`
/// (powers of 1000) or `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024); at least 1 MB.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let x: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size: a number and a unit, e.g. 8GiB or 500MB"))?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        _ => {
            return Err(format!(
                "`{s}`: the unit must be one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, e.g. 8GiB"
            ));
        }
    };
    let bytes = x * scale as f64;
    if !(1e6..=1.8e19).contains(&bytes) {
        return Err(format!("`{s}`: must be from 1MB to 16EiB"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_decimal_and_binary_units() {
        assert_eq!(parse_size("8GiB"), Ok(8 << 30));
        assert_eq!(parse_size("500MB"), Ok(500_000_000));
        assert_eq!(parse_size("1.5 GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("2tib"), Ok(2 << 40));
        for bad in ["", "8", "GiB", "8 parsecs", "-1GB", "0MB", "1KB", "1e3GB"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bytes_print_in_binary_units() {
        assert_eq!(fmt_bytes(12 << 30), "12 GiB");
        assert_eq!(fmt_bytes(200_000_000), "190.7 MiB");
        assert_eq!(fmt_bytes(512), "512 bytes");
    }

    #[test]
    fn the_message_names_the_budget_the_biggest_use_and_the_flag() {
        let l = Limits {
            memory: 1 << 20,
            sharers: 1,
            events: 10,
        };
        let uses = [
            Use::of("queued jobs", 91_000_000, 16),
            Use::of("requests in flight", 10, 100),
        ];
        let e = l.check_memory(&uses, Some(3_200_000_000)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "memory ceiling of 1 MiB reached at t = 3.200 s: 9.1e7 queued jobs (1.4 GiB), 10 requests in flight (1000 bytes); raise it with --max-memory"
        );
        assert!(l.check_memory(&uses[1..], None).is_ok());
        let e = l.check_events(11, 0).unwrap_err().to_string();
        assert!(e.starts_with("event budget of 10 events reached at t = 0.000 s"));
        assert!(e.ends_with("raise it with --max-events"), "{e}");
    }
}
