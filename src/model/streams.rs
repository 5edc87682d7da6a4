//! Every random stream a run draws from, by name: one table, read by the builder
//! ([`Simulation::checked`](super::Simulation::checked)), by a split's reseeding
//! ([`Simulation::reseed`](super::Simulation::reseed)) and by the docs
//! (`docs/architecture.md` shows [`table`], and a test holds them equal).
//!
//! Each stream is seeded from its name alone ([`crate::engine::stream_rng`]), so a stream
//! added for a new mechanism leaves every other stream's draws as they were.

use crate::engine::Rng;
use crate::scenario::Config;

/// The streams' names (`<class>`, `<pool>`, `<cache>` stand for each section's name) and
/// what each draws.
pub const STREAMS: &[(&str, &str)] = &[
    ("class.<class>", "arrivals"),
    ("retry.<class>", "retry and backoff jitter"),
    (
        "users.<class>",
        "a population's think times (classes with `users`)",
    ),
    (
        "pool.<pool>",
        "service times, errors, random replica choice",
    ),
    (
        "balance.<pool>",
        "the balancing policies other than `random`",
    ),
    (
        "peers.<pool>",
        "when each server learns a fleet change (pools with `peers`)",
    ),
    (
        "sync.<pool>",
        "a syncing pool's retry jitter (pools with `sync`)",
    ),
    (
        "cache.<cache>",
        "warm start; each fill's TTL with `ttl_jitter`",
    ),
    ("keys", "the run's key salt"),
    ("routing", "random shard choice"),
    ("bursts", "bursts' arrivals"),
];

/// The table as `docs/architecture.md` shows it (between its `streams` markers).
pub fn table() -> String {
    let mut s = String::from("| stream | draws |\n|---|---|\n");
    for (name, what) in STREAMS {
        s.push_str(&format!("| `{name}` | {what} |\n"));
    }
    s
}

/// One run's streams, each drawn from `rng(name)` for a name of [`STREAMS`]; a stream a
/// section does not use is `None`.
pub struct Streams {
    pub class: Vec<Rng>,
    pub retry: Vec<Rng>,
    pub users: Vec<Option<Rng>>,
    pub pool: Vec<Rng>,
    pub balance: Vec<Rng>,
    pub peers: Vec<Option<Rng>>,
    pub sync: Vec<Option<Rng>>,
    pub cache: Vec<Rng>,
    pub keys: Rng,
    pub routing: Rng,
    pub bursts: Rng,
}

impl Streams {
    /// Every stream of a run of `cfg`, named as [`STREAMS`] says.
    pub fn draw(cfg: &Config, rng: impl Fn(&str) -> Rng) -> Self {
        let named = |pattern: &str, name: &str| {
            debug_assert!(STREAMS.iter().any(|(p, _)| *p == pattern));
            let prefix = pattern.split_once('.').map_or(pattern, |(p, _)| p);
            rng(&format!("{prefix}.{name}"))
        };
        let classes = &cfg.classes;
        let pools = &cfg.pools;
        Self {
            class: classes
                .iter()
                .map(|c| named("class.<class>", &c.name))
                .collect(),
            retry: classes
                .iter()
                .map(|c| named("retry.<class>", &c.name))
                .collect(),
            users: classes
                .iter()
                .map(|c| c.users.as_ref().map(|_| named("users.<class>", &c.name)))
                .collect(),
            pool: pools
                .iter()
                .map(|p| named("pool.<pool>", &p.name))
                .collect(),
            balance: pools
                .iter()
                .map(|p| named("balance.<pool>", &p.name))
                .collect(),
            peers: pools
                .iter()
                .map(|p| p.peers.map(|_| named("peers.<pool>", &p.name)))
                .collect(),
            sync: pools
                .iter()
                .map(|p| p.sync.as_ref().map(|_| named("sync.<pool>", &p.name)))
                .collect(),
            cache: cfg
                .caches
                .iter()
                .map(|c| named("cache.<cache>", &c.name))
                .collect(),
            keys: rng("keys"),
            routing: rng("routing"),
            bursts: rng("bursts"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/architecture.md shows the table the code draws from, between its markers.
    #[test]
    fn the_architecture_doc_lists_every_stream() {
        let doc = include_str!("../../docs/architecture.md");
        let (_, rest) = doc
            .split_once("<!-- streams: generated from model::streams::table -->\n")
            .expect("the start marker");
        let (shown, _) = rest
            .split_once("<!-- /streams -->")
            .expect("the end marker");
        assert_eq!(
            shown,
            table(),
            "docs/architecture.md's stream table is stale"
        );
    }
}
