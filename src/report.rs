//! Reports: CSV and JSON writers and plotters charts. Reports only read results; every file
//! is written to a temporary name and renamed, so an interrupted run leaves no half file.

pub mod csv;
pub mod figure;
pub mod files;
pub mod index_page;
pub mod sweep;
pub mod sweep_plot;
pub mod timeline;

pub use files::{write_atomic, write_json};
