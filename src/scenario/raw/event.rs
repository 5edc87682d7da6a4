//! An `[event.NAME]` table as written: its kind, its timing and the keys each kind takes
//! (checked by kind in `validate/trigger.rs`).

use super::Dur;
use serde::{Deserialize, Deserializer, de};

/// What an `[event.NAME]` does (`kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RawEventKind {
    Slowdown,
    Outage,
    Burst,
    RollingRestart,
    Partition,
    Flush,
    Crash,
    /// One server answers its queries with an error at once instead of serving them.
    FailFast,
    /// Standby servers of a pool with `peers` join its fleet; they leave at the end.
    AddServers,
    /// Every server of a pool with `peers`'s fleet restarts.
    Restart,
    /// A share of a syncing pool's servers sync at once (`[pool.NAME.sync]`).
    Resync,
    /// Every server of one or several pools reads bad data and crashes, and so does each
    /// server whose startup sync succeeds while it lasts (`model::crash_loop`).
    CrashLoop,
}

/// A time-triggered disturbance. Which fields apply depends on `kind`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEvent {
    pub kind: RawEventKind,
    pub at: Dur,
    #[serde(rename = "for")]
    pub for_: Option<Dur>,
    pub every: Option<Dur>,
    #[serde(default = "yes")]
    pub enabled: bool,
    pub label: Option<String>,
    pub pool: Option<RawNames>,
    pub factor: Option<f64>,
    pub class: Option<String>,
    pub clients: Option<i64>,
    pub spread: Option<Dur>,
    pub cache: Option<String>,
    pub fraction: Option<f64>,
    pub interval: Option<Dur>,
    pub down_for: Option<Dur>,
    pub shard: Option<i64>,
    pub replica: Option<i64>,
    /// Servers an `add_servers` event moves into the fleet.
    pub count: Option<i64>,
}

fn yes() -> bool {
    true
}

/// One name or a list of names (an event's `pool`: a `crash_loop` may name several).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawNames {
    One(String),
    Many(Vec<String>),
}

impl<'de> Deserialize<'de> for RawNames {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = RawNames;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a pool name, or a list of pool names")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RawNames, E> {
                Ok(RawNames::One(s.to_string()))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<RawNames, A::Error> {
                Vec::<String>::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(RawNames::Many)
            }
        }
        d.deserialize_any(V)
    }
}
