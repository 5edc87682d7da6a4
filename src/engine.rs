//! The generic discrete-event engine: simulated time, the event queue and named random streams.
//!
//! The engine knows nothing of the model: it orders opaque events by time and insertion
//! sequence and hands out independent, reproducible random streams.

mod heap;
mod lane;
pub mod number;
pub mod queue;
mod radix_heap;
pub mod rng;
pub mod time;

pub use queue::EventQueue;
pub use rng::{Rng, stream_rng};
pub use time::{SimTime, format_duration, parse_duration};
