//! A bundled scenario with `--set` overrides (read as by the `set` target), loaded and then
//! run for a few thousand events: the model must take whatever validation accepts.
#![no_main]

use brink::model::Simulation;
use brink::model::stepping::Level;

/// Events handled per input: a short start of the run, so an input stays fast.
const EVENTS: u64 = 5_000;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some(sc) = brink_fuzz::bundled_with_sets(data) else {
        return;
    };
    let mut sim = Simulation::new(&sc, 0);
    sim.start(sc.duration);
    let _ = sim.advance_until(Level::InFlight, u64::MAX, None, EVENTS);
});
