//! What an experiment tells its caller while it goes: progress, and each set of files as
//! it is written. The command line draws progress bars and prints; a library user who
//! wants neither passes [`Quiet`].

use super::shard::Shard;
use crate::report::sweep_result::SweepReport;
use crate::report::verdict::Verdict;
use crate::scenario::Scenario;
use crate::stats::plan::{Kind, Plan};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// A single run whose files are written.
#[derive(Debug, Clone)]
pub struct RunWritten {
    pub scenario: String,
    /// The variant run, if any.
    pub variant: Option<String>,
    /// The folder holding `summary.json`, `timeseries.csv` and the timeline.
    pub dir: PathBuf,
    /// Events the simulation processed.
    pub events: u64,
    /// Requests that ended (succeeded or failed), over all classes.
    pub completed: u64,
    /// Wall-clock seconds of the simulation itself.
    pub wall_s: f64,
    /// The verdict on the run's measuring window (from the end of its tipping trigger plus
    /// `settle` to the end, by the sweep's measure), with its cause: none without a
    /// `[tipping]` section or a window inside the run.
    pub verdict: Option<Verdict>,
    /// The run told in words (`summary.json`'s `narrative`).
    pub narrative: Vec<crate::report::narrative::Sentence>,
}

/// A sweep, or one shard of it, whose files are written.
#[derive(Debug, Clone)]
pub struct SweepWritten {
    pub scenario: String,
    pub kind: Kind,
    /// The scenario's output folder.
    pub dir: PathBuf,
    /// Runs done by this process.
    pub runs: usize,
    /// Wall-clock seconds of the runs.
    pub wall_s: f64,
    pub outcome: SweepOutcome,
}

/// What a sweep wrote.
#[derive(Debug, Clone)]
pub enum SweepOutcome {
    /// The whole sweep: its files and the report they were derived from.
    Whole(Box<SweepReport>),
    /// One shard: its file, to be joined by `brink merge`.
    Shard { shard: Shard, file: PathBuf },
}

impl SweepOutcome {
    /// The report of a whole sweep; none for a shard.
    pub fn into_report(self) -> Option<SweepReport> {
        match self {
            SweepOutcome::Whole(r) => Some(*r),
            SweepOutcome::Shard { .. } => None,
        }
    }
}

/// Hears about an experiment as it goes. Every method does nothing unless overridden.
pub trait Observer: Sync {
    /// A single run of `sc` starts; the model stores the simulated time it has reached
    /// (ns) in `simulated_ns` as it goes.
    fn run_started(&self, _sc: &Scenario, _simulated_ns: &Arc<AtomicU64>) {}
    /// The single run stopped, well or not, before anything is written or reported.
    fn run_stopped(&self) {}
    /// A single run's files are written.
    fn run_written(&self, _w: &RunWritten) {}
    /// A sweep (or one shard of it) of `runs` runs starts.
    fn sweep_started(&self, _plan: &Plan, _runs: usize) {}
    /// One run of the sweep is done; called from the worker threads.
    fn sweep_progressed(&self) {}
    /// The sweep will do `runs` more runs than announced so far (an adaptive search,
    /// which starts at 0 and decides its runs as it goes); called from the worker threads.
    fn sweep_grew(&self, _runs: usize) {}
    /// The sweep's runs stopped, well or not, before anything is written or reported.
    fn sweep_stopped(&self) {}
    /// A sweep's files (or a shard's file) are written.
    fn sweep_written(&self, _w: &SweepWritten) {}
    /// A hysteresis loop's files are written.
    fn hysteresis_written(&self, _w: &super::hysteresis::HysteresisWritten) {}
    /// A batch of `tasks` runs and sweeps starts side by side (`brink all`).
    fn batch_started(&self, _tasks: usize) {}
    /// One task of the batch is done.
    fn batch_progressed(&self) {}
    fn batch_stopped(&self) {}
    /// A calibration's fit starts: at most `evaluations` evaluations of its objective.
    fn fit_started(&self, _evaluations: usize) {}
    /// One evaluation of the fit is done.
    fn fit_progressed(&self) {}
    /// The fit stopped.
    fn fit_stopped(&self) {}
}

/// An observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quiet;

impl Observer for Quiet {}
