//! Scenario files: TOML read in two stages (a serde `Raw…` shape, then a validated
//! [`Scenario`] the model trusts), `--set` overrides by dotted path, variants and
//! interventions.
//!
//! The files form a one-way chain, each using only those before it:
//! [`error`] ← [`overrides`] ← [`raw`] ← [`spec`] ← [`columns`] ← [`validate`] ← [`load`].
//! `raw` is the file's shape, `spec` the validated types (the `[tipping]` and `[phase]`
//! ones in [`spec::sweep`]), `columns` the time-series schema that follows from a
//! validated configuration, `validate` turns the one into the other, and `load` reads a
//! file, applies a variant and overrides, and validates.

pub mod bounded;
pub mod bundled;
pub mod columns;
pub mod error;
pub mod hit_ratio;
pub mod load;
pub mod operating;
pub mod overrides;
pub mod provenance;
pub mod raw;
pub mod spec;
pub mod starter;
pub mod strict;
pub mod telemetry;
pub mod validate;
pub mod warnings;

pub use columns::{Column, Measure, Owner};
pub use error::ScenarioError;
pub use load::Loader;
pub use overrides::Override;
pub use provenance::Provenance;
pub use spec::sweep;
pub use spec::*;
