//! brink: a discrete-event simulator of failure patterns in distributed systems.
//!
//! A scenario file describes clients, server pools, the events that disturb them and the
//! interventions taken; brink runs it and measures what happened:
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
//! Layers, each using only those below it: [`experiment`] (runs and sweeps, and which files
//! they write), [`export`] (the bytes of each file format), [`report`] (what is derived to
//! show results: sweep regions and headroom, pictures), [`model`] (components and the event
//! loop), [`scenario`] (reading and validating input), [`engine`] (time, event queue, random
//! streams). One exception: a sweep's plan ([`experiment::plan`]) is plain data that
//! [`report`] and [`export`] read.

pub mod engine;
pub mod experiment;
pub mod export;
pub mod model;
pub mod report;
pub mod scenario;
