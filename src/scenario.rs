//! Scenario files: TOML read in two stages (a serde `Raw…` shape, then a validated
//! [`Scenario`] the model trusts), `--set` overrides by dotted path, variants and
//! interventions.

pub mod columns;
pub mod error;
pub mod load;
pub mod overrides;
pub mod raw;
pub mod spec;
pub mod sweep;
pub mod validate;

pub use columns::{Column, Measure, Owner};
pub use error::ScenarioError;
pub use load::Loader;
pub use overrides::Override;
pub use spec::*;
