//! The tipping picture of the live page: `tipping.json` from an earlier `brink tipping`
//! (or `brink all`) in the output folder when there is one, else a quick sweep (two seeds,
//! the adaptive search, one thread) run in the background when the server starts.

use crate::experiment::sweep::{Sweep, Variants};
use crate::scenario::{Loader, Override};
use crate::stats::plan::Kind;
use std::path::Path;

/// `tipping.json` of the scenario under `out`, if it is there and reads as JSON.
pub fn from_output(out: &Path, loader: &Loader) -> Option<serde_json::Value> {
    let path = out.join(&loader.name).join("tipping.json");
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Runs a quick tipping sweep of the base design and returns its `tipping.json` as a
/// value; `Err` says why there is none (no `[tipping]` section, a run that failed).
pub fn quick_sweep(loader: &Loader) -> Result<serde_json::Value, String> {
    let sets = ["tipping.seeds=2", "tipping.method=\"adaptive\""]
        .iter()
        .map(|s| Override::parse(s).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let variants = Variants {
        names: vec![],
        all: false,
    };
    let sweep = Sweep::prepare(loader.clone(), Kind::Tipping, &variants, sets)
        .map_err(|e| format!("{e:#}"))?;
    let runs = sweep.search(1, &|| ()).map_err(|e| format!("{e:#}"))?;
    let report = crate::report::sweep_result::report(sweep.plan(), &runs);
    let bytes = crate::export::tipping_json(&report);
    serde_json::from_slice(&bytes).map_err(|e| e.to_string())
}
