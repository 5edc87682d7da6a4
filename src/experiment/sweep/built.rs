//! The scenarios of a sweep's runs, built once per (variant, swept values, branch) and
//! shared by every seed that runs there.
//!
//! Every seed of a probe (or of a grid's value) runs the same scenario; building it anew
//! for each run repeated the loader's work, and a fitted law (`law = "histogram"`) takes
//! about a tenth of a second of fitting per load: a fifth of the CPU time of
//! `brink tipping web-api --all-variants` (438 runs). A build is a pure function of its
//! key, so a run of a kept scenario is the run of a fresh one, byte for byte.

use crate::scenario::{Scenario, ScenarioError};
use crate::stats::plan::Branch;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

/// The scenarios kept: enough for every probe a sweep has open at once (the grid's values
/// of every variant side by side), few enough that a phase map's thousands of cells do
/// not all stay in memory.
const KEEP: usize = 128;

/// What a scenario is built from besides the file, the variant's and the user's overrides:
/// the variant, each axis's value (bits, so that `-0.0` and `0.0` are two keys as they
/// are two `--set`s) and the branch.
type Key = (usize, [u64; 2], Branch);

/// One key's scenario: built by the first run that asks, while the others at that key
/// wait for it rather than build it again (seeds of a probe start side by side).
type Slot = Arc<Mutex<Option<Arc<Scenario>>>>;

/// The scenarios lately built, oldest first.
#[derive(Default)]
pub(super) struct Built {
    recent: Mutex<VecDeque<(Key, Slot)>>,
}

impl Built {
    /// The scenario of variant `variant` at `value` on `branch`: kept, or built by `build`
    /// and kept. A build that fails is not kept (the next run at that key builds it again,
    /// and fails the same way).
    pub(super) fn get(
        &self,
        variant: usize,
        value: [f64; 2],
        branch: Branch,
        build: impl FnOnce() -> Result<Scenario, ScenarioError>,
    ) -> Result<Arc<Scenario>, ScenarioError> {
        let key = (variant, value.map(f64::to_bits), branch);
        let slot = {
            let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
            match recent.iter().find(|(k, _)| *k == key) {
                Some((_, slot)) => slot.clone(),
                None => {
                    if recent.len() == KEEP {
                        recent.pop_front();
                    }
                    let slot = Slot::default();
                    recent.push_back((key, slot.clone()));
                    slot
                }
            }
        };
        // The loader runs no parallel work, so a run waiting here never waits on itself.
        let mut kept = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sc) = kept.as_ref() {
            return Ok(sc.clone());
        }
        let sc = Arc::new(build()?);
        *kept = Some(sc.clone());
        Ok(sc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Loader;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const TEXT: &str = "duration = \"10s\"\n[class.c]\nrate = 1\nsteps = [{ query = \"p\" }]\n\
                        [pool.p]\nworkers = 1\nservice = { law = \"exp\", mean = \"1s\" }\n";

    fn loader() -> Loader {
        Loader::from_text("t.toml", "t", TEXT.into()).unwrap()
    }

    /// A build of the little scenario, counted.
    fn counted(builds: &AtomicUsize) -> Result<Scenario, ScenarioError> {
        builds.fetch_add(1, Ordering::SeqCst);
        loader().load(None, &[])
    }

    /// Each key is built once however many runs ask for it, side by side; another value,
    /// variant or branch is another build.
    #[test]
    fn builds_each_key_once() {
        let built = Built::default();
        let builds = AtomicUsize::new(0);
        let build = || counted(&builds);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| built.get(0, [1.0, 0.0], Branch::Baseline, build).unwrap());
            }
        });
        assert_eq!(builds.load(Ordering::SeqCst), 1);
        built.get(0, [2.0, 0.0], Branch::Baseline, build).unwrap();
        built.get(1, [1.0, 0.0], Branch::Baseline, build).unwrap();
        built.get(0, [1.0, 0.0], Branch::Triggered, build).unwrap();
        built.get(0, [1.0, 0.0], Branch::Baseline, build).unwrap();
        assert_eq!(builds.load(Ordering::SeqCst), 4);
    }

    /// The oldest key goes once `KEEP` are kept (built again when asked), and a failed
    /// build is not kept.
    #[test]
    fn keeps_the_latest_and_no_failure() {
        let built = Built::default();
        let builds = AtomicUsize::new(0);
        let build = || counted(&builds);
        for v in 0..=KEEP {
            built.get(v, [0.0; 2], Branch::Baseline, build).unwrap();
        }
        built.get(KEEP, [0.0; 2], Branch::Baseline, build).unwrap();
        assert_eq!(builds.load(Ordering::SeqCst), KEEP + 1);
        built.get(0, [0.0; 2], Branch::Baseline, build).unwrap();
        assert_eq!(builds.load(Ordering::SeqCst), KEEP + 2);
        let fail = || loader().load(Some("no-such-variant"), &[]);
        assert!(built.get(7, [9.0; 2], Branch::Baseline, fail).is_err());
        built.get(7, [9.0; 2], Branch::Baseline, build).unwrap();
        assert_eq!(builds.load(Ordering::SeqCst), KEEP + 3);
    }
}
