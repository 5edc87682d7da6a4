//! The console: progress bars on stderr when it is a terminal (a progress line every
//! [`TICK`] when it is not: a log, CI), and what is printed when a run or sweep has
//! written its files (an [`Observer`]).

use brink::experiment::hysteresis::HysteresisWritten;
use brink::experiment::{Observer, RunWritten, SweepOutcome, SweepWritten};
use brink::report::sweep_result::{SweepReport, headroom_table, phase_table};
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

/// How often a progress line is printed when stderr is not a terminal.
pub const TICK: Duration = Duration::from_secs(10);

/// The period of the progress lines: [`TICK`], or for tests the milliseconds in the hidden
/// variable `BRINK_PROGRESS_EVERY_MS` (at least 10).
pub fn tick() -> Duration {
    std::env::var("BRINK_PROGRESS_EVERY_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(TICK, |ms| Duration::from_millis(ms.max(10)))
}

/// `brink all`'s tasks (runs and sweeps) done and in all, for the message of an interrupted
/// batch (main's signal handler); 0 in all outside a batch.
pub static BATCH_DONE: AtomicU64 = AtomicU64::new(0);
/// See [`BATCH_DONE`].
pub static BATCH_TOTAL: AtomicU64 = AtomicU64::new(0);

/// A thread's stop flag and handle.
type Stoppable = (Arc<AtomicBool>, JoinHandle<()>);

/// The console: progress bars on stderr when it is a terminal, and a line per set of files
/// written.
#[derive(Default)]
pub struct Console {
    /// The single run's bar: its stop flag and its thread.
    run_bar: Mutex<Option<Stoppable>>,
    sweep_bar: Mutex<Option<ProgressBar>>,
    /// The progress lines of the sweep's bar when stderr is not a terminal.
    sweep_ticker: Mutex<Option<Stoppable>>,
}

/// Stops a thread and waits for it.
fn stop(slot: &Mutex<Option<Stoppable>>) {
    if let Some((done, h)) = slot.lock().ok().and_then(|mut s| s.take()) {
        done.store(true, Ordering::Relaxed);
        let _ = h.join();
    }
}

/// Prints `line()` to stderr every [`tick()`] until `done`.
fn ticker(done: Arc<AtomicBool>, line: impl Fn() -> String + Send + 'static) -> JoinHandle<()> {
    let every = tick();
    std::thread::spawn(move || {
        let mut next = Instant::now() + every;
        while !done.load(Ordering::Relaxed) {
            std::thread::sleep(every.min(Duration::from_millis(100)));
            if Instant::now() >= next {
                eprintln!("{}", line());
                next += every;
            }
        }
    })
}

impl Console {
    /// Starts the bar of a sweep or of `brink all`'s batch.
    fn start_bar(&self, prefix: String, len: usize, what: &str) {
        let terminal = std::io::stderr().is_terminal();
        let target = if terminal {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(len as u64), target);
        if !terminal {
            let (b, what, prefix) = (bar.clone(), what.to_string(), prefix.clone());
            let done = Arc::new(AtomicBool::new(false));
            let h = ticker(done.clone(), move || {
                format!(
                    "{prefix}: {}/{} {what}, {} s",
                    b.position(),
                    b.length().unwrap_or(0),
                    b.elapsed().as_secs()
                )
            });
            if let Ok(mut slot) = self.sweep_ticker.lock() {
                *slot = Some((done, h));
            }
        }
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
        BATCH_DONE.store(0, Ordering::Relaxed);
        BATCH_TOTAL.store(tasks as u64, Ordering::Relaxed);
        self.start_bar("all".into(), tasks, "runs and sweeps");
    }

    fn batch_progressed(&self) {
        BATCH_DONE.fetch_add(1, Ordering::Relaxed);
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
        stop(&self.run_bar);
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

    fn sweep_grew(&self, runs: usize) {
        if let Ok(slot) = self.sweep_bar.lock()
            && let Some(bar) = slot.as_ref()
        {
            bar.inc_length(runs as u64);
        }
    }

    fn sweep_stopped(&self) {
        stop(&self.sweep_ticker);
        if let Some(bar) = self.sweep_bar.lock().ok().and_then(|mut s| s.take()) {
            bar.finish_and_clear();
        }
    }

    fn hysteresis_written(&self, w: &HysteresisWritten) {
        eprintln!(
            "{} hysteresis: {} steps each way in {:.1} s wall",
            w.report.scenario, w.report.steps, w.wall_s
        );
        println!("{}", w.report.summary_line());
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

/// A progress bar on stderr for runs longer than about a second; a line every [`TICK`]
/// when stderr is not a terminal.
fn spawn_bar(
    name: &str,
    total_ns: u64,
    progress: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
) -> Option<JoinHandle<()>> {
    let name = name.to_string();
    if !std::io::stderr().is_terminal() {
        let start = Instant::now();
        return Some(ticker(done, move || {
            let share = progress.load(Ordering::Relaxed) as f64 / total_ns.max(1) as f64;
            format!(
                "{name}: {:.0}% simulated, {} s",
                100.0 * share,
                start.elapsed().as_secs()
            )
        }));
    }
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
