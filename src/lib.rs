//! brink: a discrete-event simulator of failure patterns in distributed systems.
//!
//! A scenario file describes clients, server pools, caches, the triggers that disturb them
//! and the interventions taken; brink runs it and measures what happened:
//!
//! ```
//! use brink::scenario::Loader;
//! let text = r#"
//!     duration = "1000s"
//!     [class.request]
//!     rate = 0.5
//!     steps = [{ query = "server" }]
//!     [pool.server]
//!     service = { law = "exp", mean = "1s" }
//! "#;
//! let sc = Loader::from_text("doc.toml", "doc", text.into()).unwrap().load(None, &[]).unwrap();
//! let result = brink::model::run(&sc, 0).unwrap();
//! let class = &result.summary.classes["request"];
//! assert_eq!(class.offered, class.succeeded + class.failed + class.in_flight);
//! ```
//!
//! # A tour
//!
//! **The layers**, each using only those below it:
//!
//! | layer | what it owns |
//! |---|---|
//! | [`serve`] | `brink serve`: a scenario run live in the browser, its controls as `[[at]]` entries, a session saved as a scenario file |
//! | [`experiment`] | a run and which files it writes; sweeps (tipping, phase), their plan, shards and merge; the hysteresis ramp; `brink all`; the mean time to collapse by splitting |
//! | [`export`] | one exporter per file format (`summary.json`, `timeseries.csv`, `tipping.csv`/`.json`, `phase.csv`, `hysteresis.csv`/`.json`, shard files, `index.html`), each returning bytes |
//! | [`report`] | what is derived to show results: sweep regions, tipping points and headroom, the hysteresis loop's collapse and recovery points, the pictures |
//! | [`model`], [`stats`], [`traces`] | side by side, none reading another. [`model`]: the components and the event loop, one run of one scenario; [`stats`]: a sweep's plan and runs and their statistics; [`traces`]: reading Jaeger and OTLP/JSON traces, measuring them, writing a scenario skeleton (`brink import-traces`) |
//! | [`scenario`] | reading, overriding and validating input; the output schema |
//! | [`laws`] | plain distributions: service-time laws beyond exp, const and lognormal, a law fitted to measurements |
//! | [`engine`] | time, the event queue, named random streams |
//!
//! `tests/integration/layers.rs` fails on an import from a layer above (or beside).
//!
//! A sweep's plan ([`stats::plan`]) is plain data that [`report`] and [`export`] read. The
//! binary (`src/main.rs`) only parses arguments, calls [`experiment`]
//! (with an [`experiment::observe::Observer`] for progress bars and console lines) and maps
//! errors to exit codes (2 for bad input).
//!
//! **From file to run.** [`scenario::Loader`] reads the TOML, applies a variant and `--set`
//! overrides as dotted paths, deserializes it into the raw shapes
//! ([`scenario::raw`]) and validates them into a [`scenario::Scenario`] whose
//! [`scenario::Config`] the model trusts (names resolved to indices, durations in ns).
//! Every `[[at]]` intervention is validated up front as a whole configuration.
//!
//! **The life of a request.** [`model::simulation`] builds the components and pops engine
//! events. A class's arrival ([`model::workload`]) is offered to [`model::lifecycle`]:
//! admission by its rate limit, then an attempt. The lifecycle is a state machine: each
//! handler returns what happens next and [`model::Simulation`]'s `advance` applies it.
//! A step draws its keys ([`model::keys`]) and looks them up in a [`model::cache`]; its
//! query ([`model::query`]) fans out into parts and routes each to a server of a [`model::pool`];
//! [`model::service`] queues and serves the job and reports back. A failed query or
//! attempt asks [`model::retry::decide`] whether to try again. [`model::triggers`] start
//! and end disturbances; [`model::interventions`] change parameters mid-run;
//! [`model::sampling`] writes a row per window, by the typed schema of
//! [`scenario::columns`], and the summary with its accounting check.
//!
//! **From run to files.** [`model::RunResult`] is the one result of a run; the exporters in
//! [`export`] turn it (or a sweep's plan and runs) into bytes; [`report`] derives the
//! sweep's regions and headroom (with [`stats`]: the sweep's plan, the sequential test of
//! a probe, the fitted collapse curve and its confidence interval) and draws the pictures
//! from the same data; [`experiment`]
//! writes everything atomically (a temporary name, then a rename).

pub mod engine;
pub mod experiment;
pub mod export;
pub mod laws;
pub mod model;
pub mod report;
pub mod scenario;
pub mod serve;
pub mod stats;
pub mod traces;
