//! The console: progress bars on stderr when it is a terminal, and what is printed when a
//! run or sweep has written its files (an [`Observer`]).

use brink::experiment::{Observer, RunWritten, SweepOutcome, SweepWritten};
use brink::report::sweep::{SweepReport, headroom_table, phase_table};
use brink::scenario::Scenario;
use brink::stats::plan::{Kind, Plan};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Prints the headroom table of a tipping sweep, or the region counts of a phase map.
pub fn print_report(kind: Kind, r: &SweepReport, dir: &Path) {
    match kind {
        Kind::Tipping => print!("{}", headroom_table(r)),
        Kind::Phase => print!("{}", phase_table(r)),
    }
    eprintln!("-> {}", dir.display());
}

/// The console: progress bars on stderr when it is a terminal, and a line per set of files
/// written.
#[derive(Default)]
pub struct Console {
    /// The single run's bar: its stop flag and its thread.
    run_bar: Mutex<Option<(Arc<AtomicBool>, JoinHandle<()>)>>,
    sweep_bar: Mutex<Option<ProgressBar>>,
}

impl Console {
    /// Starts the bar of a sweep or of `brink all`'s batch.
    fn start_bar(&self, prefix: String, len: usize, what: &str) {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(len as u64), target);
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{prefix}} [{{bar:40}}] {{pos}}/{{len}} {what}, {{elapsed}}, eta {{eta}}"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(prefix);
        if let Ok(mut slot) = self.sweep_bar.lock() {
            *slot = Some(bar);
        }
    }
}

impl Observer for Console {
    fn batch_started(&self, tasks: usize) {
        self.start_bar("all".into(), tasks, "runs and sweeps");
    }

    fn batch_progressed(&self) {
        self.sweep_progressed();
    }

    fn batch_stopped(&self) {
        self.sweep_stopped();
    }

    fn fit_started(&self, evaluations: usize) {
        self.start_bar(
            "calibrate --fit".into(),
            evaluations,
            "evaluations (at most)",
        );
    }

    fn fit_progressed(&self) {
        self.sweep_progressed();
    }

    fn fit_stopped(&self) {
        self.sweep_stopped();
    }

    fn run_started(&self, sc: &Scenario, simulated_ns: &Arc<AtomicU64>) {
        let done = Arc::new(AtomicBool::new(false));
        if let Some(h) = spawn_bar(&sc.name, sc.duration, simulated_ns.clone(), done.clone())
            && let Ok(mut slot) = self.run_bar.lock()
        {
            *slot = Some((done, h));
        }
    }

    fn run_stopped(&self) {
        if let Some((done, h)) = self.run_bar.lock().ok().and_then(|mut s| s.take()) {
            done.store(true, Ordering::Relaxed);
            let _ = h.join();
        }
    }

    fn run_written(&self, w: &RunWritten) {
        eprintln!(
            "{}: {} events, {} requests in {:.3} s wall ({:.3e} requests/s, {:.3e} events/s) -> {}",
            w.scenario,
            w.events,
            w.completed,
            w.wall_s,
            w.completed as f64 / w.wall_s.max(1e-9),
            w.events as f64 / w.wall_s.max(1e-9),
            w.dir.display()
        );
        if let Some(v) = &w.verdict {
            let name = match &w.variant {
                Some(variant) => format!("{} ({variant})", w.scenario),
                None => w.scenario.clone(),
            };
            eprintln!("{name}: after the trigger: {v}");
        }
    }

    fn sweep_started(&self, plan: &Plan, runs: usize) {
        self.start_bar(
            format!("{} {}", plan.scenario, plan.kind.stem()),
            runs,
            "runs",
        );
    }

    fn sweep_progressed(&self) {
        if let Ok(slot) = self.sweep_bar.lock()
            && let Some(bar) = slot.as_ref()
        {
            bar.inc(1);
        }
    }

    fn sweep_stopped(&self) {
        if let Some(bar) = self.sweep_bar.lock().ok().and_then(|mut s| s.take()) {
            bar.finish_and_clear();
        }
    }

    fn sweep_written(&self, w: &SweepWritten) {
        let stem = w.kind.stem();
        match &w.outcome {
            SweepOutcome::Whole(r) => {
                eprintln!(
                    "{} {stem}: {} runs in {:.1} s wall",
                    w.scenario, w.runs, w.wall_s
                );
                print_report(w.kind, r, &w.dir);
            }
            SweepOutcome::Shard { shard, file } => eprintln!(
                "{} {stem}: shard {}/{}: {} runs in {:.1} s -> {}",
                w.scenario,
                shard.index,
                shard.count,
                w.runs,
                w.wall_s,
                file.display()
            ),
        }
    }
}

/// A progress bar on stderr for runs longer than about a second; none when stderr is not a
/// terminal.
fn spawn_bar(
    name: &str,
    total_ns: u64,
    progress: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
) -> Option<JoinHandle<()>> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let name = name.to_string();
    Some(std::thread::spawn(move || {
        let start = Instant::now();
        let mut bar: Option<ProgressBar> = None;
        while !done.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
            if bar.is_none() && start.elapsed() > Duration::from_secs(1) {
                let b = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
                b.set_style(
                    ProgressStyle::with_template(
                        "{prefix} [{bar:40}] {percent}% simulated, {elapsed} wall, eta {eta}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
                b.set_prefix(name.clone());
                bar = Some(b);
            }
            if let Some(b) = &bar {
                b.set_position(progress.load(Ordering::Relaxed) * 1000 / total_ns.max(1));
            }
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
    }))
}
