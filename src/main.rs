//! The `brink` command: parses arguments, calls the library, prints. No model logic here.

use brink::experiment::hysteresis::Ramp;
use brink::experiment::plan::{Kind, Plan};
use brink::experiment::source::Source;
use brink::experiment::sweep::{Shard, Sweep, Variants};
use brink::experiment::{
    Error, Observer, RunWritten, SweepOutcome, SweepWritten, all, collapse_time, naming, new, run,
    shard,
};
use brink::report::sweep::{SweepReport, headroom_table, phase_table};
use brink::scenario::{Loader, Override, Scenario};
use clap::{CommandFactory, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// brink: find the tipping point of failure patterns in distributed systems.
#[derive(Parser)]
#[command(name = "brink", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Memory ceiling of the process: a run that would hold more (queued jobs, pending
    /// events, cache keys, time-series rows, trigger occurrences) ends with an error naming
    /// what used it (exit 1). Parallel runs share it evenly. E.g. 8GiB, 500MB [default:
    /// half the machine's memory].
    #[arg(long, global = true, value_name = "SIZE", value_parser = brink::model::budget::parse_size)]
    max_memory: Option<u64>,
    /// Event budget of each run: a run that handles more events ends with an error
    /// (exit 1).
    #[arg(long, global = true, value_name = "N", default_value_t = brink::model::budget::DEFAULT_MAX_EVENTS, value_parser = clap::value_parser!(u64).range(1..))]
    max_events: u64,
}

#[derive(Subcommand)]
enum Command {
    /// Run one scenario; write summary.json, timeseries.csv and timeline.png/.svg.
    Run {
        /// The scenario file (TOML), or a bundled scenario's name (`brink list`).
        file: PathBuf,
        /// Output folder; results go to DIR/<scenario>/.
        #[arg(long, default_value = "output")]
        out: PathBuf,
        /// Seed of every random stream (overrides the file's `seed`).
        #[arg(long, value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
        seed: Option<u64>,
        /// Override a value by dotted path, e.g. --set class.request.rate=0.8 (repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// Apply a named [variant.NAME] of the scenario.
        #[arg(long)]
        variant: Option<String>,
        /// The folder name of a run with overrides: its files go to
        /// DIR/<scenario>/runs/NAME/ [default: derived from --seed and the --sets].
        #[arg(long, value_parser = naming::check_name)]
        name: Option<String>,
    },
    /// Validate scenario files without running them.
    Check {
        /// Scenario files, or bundled scenarios' names.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// List the bundled scenarios with their titles (any command takes their names in
    /// place of a file).
    List {
        /// List the scenario files of this folder instead.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Sweep the [tipping] parameter with and without the trigger; write tipping.csv,
    /// tipping.json and tipping.png/.svg, and print the headroom table.
    Tipping(SweepArgs),
    /// Map stable / metastable / overloaded over the [tipping] and [phase] parameters;
    /// write phase.csv, phase.json and phase.png/.svg.
    Phase(SweepArgs),
    /// Ramp the [tipping] parameter slowly up, then back down, in one run (triggers off);
    /// write hysteresis.csv, hysteresis.json and hysteresis.png/.svg, and print where it
    /// collapses and recovers.
    Hysteresis {
        /// The scenario file (TOML), or a bundled scenario's name (`brink list`).
        file: PathBuf,
        /// Output folder; results go to DIR/<scenario>/.
        #[arg(long, default_value = "output")]
        out: PathBuf,
        /// Seed of every random stream (overrides the file's `seed`).
        #[arg(long, value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
        seed: Option<u64>,
        /// Override a value by dotted path, e.g. --set hysteresis.steps=40 (repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// Apply a named [variant.NAME] of the scenario.
        #[arg(long)]
        variant: Option<String>,
        /// The folder name of a run with overrides: its files go to
        /// DIR/<scenario>/runs/NAME/ [default: derived from --seed and the --sets].
        #[arg(long, value_parser = naming::check_name)]
        name: Option<String>,
    },
    /// Join the shard files of `--shard` runs into the files one unsharded run writes.
    Merge {
        /// A scenario's output folder (DIR/<scenario>), or an output folder whose scenario
        /// folders hold shard files.
        dir: PathBuf,
    },
    /// Estimate the mean time to spontaneous collapse (no triggers) at the operating point
    /// by multilevel splitting; write collapse-time.json.
    CollapseTime {
        /// The scenario file (TOML), or a bundled scenario's name (`brink list`).
        file: PathBuf,
        /// Output folder; results go to DIR/<scenario>/.
        #[arg(long, default_value = "output")]
        out: PathBuf,
        /// Seed of every random stream (overrides the file's `seed`).
        #[arg(long, value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
        seed: Option<u64>,
        /// Override a value by dotted path, e.g. --set collapse.effort=2000 (repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// Apply a named [variant.NAME] of the scenario.
        #[arg(long)]
        variant: Option<String>,
        /// The folder name of a run with overrides: its files go to
        /// DIR/<scenario>/runs/NAME/ [default: derived from --seed and the --sets].
        #[arg(long, value_parser = naming::check_name)]
        name: Option<String>,
    },
    /// Run every scenario in the folder (its run and each variant's, its tipping sweep,
    /// its phase map) and write OUT/index.html. Incident replays (scenarios with a `case`)
    /// sweep their base design only unless `--full`.
    All {
        /// Folder of scenario files [default: ./scenarios if it exists, else the bundled
        /// scenarios].
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Output folder.
        #[arg(long, default_value = "output")]
        out: PathBuf,
        /// Sweep every variant of every scenario, incident replays included (minutes more).
        #[arg(long)]
        full: bool,
    },
    /// Write NAME.toml in the current folder: a commented starting scenario, or a copy of
    /// another one. Never replaces an existing file.
    New {
        /// The new scenario's name (NAME or NAME.toml): letters, digits, `-`, `_`, `.`.
        name: String,
        /// Copy this scenario (a bundled name or a file) instead of the starter.
        #[arg(long, value_name = "SCENARIO")]
        from: Option<PathBuf>,
    },
    /// Run a scenario live in the browser: a local web page with its charts and controls
    /// (load, events to fire now, knobs, variants, pause, reset, seed, speed). Prints the
    /// address; serves until stopped (Ctrl-C). "Save session" downloads the scenario with
    /// an `[[at]]` entry per action, which `brink run` replays.
    Serve {
        /// The scenario file (TOML), or a bundled scenario's name (`brink list`).
        file: PathBuf,
        /// Port to listen on (0: a free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Address to listen on. The default is loopback only; anything else exposes the
        /// page (and its controls) to the network.
        #[arg(long, default_value = "127.0.0.1")]
        bind: std::net::IpAddr,
        /// Simulated seconds per wall second at the start (0.1 to 100000).
        #[arg(long, default_value_t = 60.0, value_parser = parse_speed)]
        speed: f64,
        /// Output folder holding an earlier sweep's OUT/<scenario>/tipping.json for the
        /// tipping picture.
        #[arg(long, default_value = "output")]
        out: PathBuf,
        /// Do not run a quick tipping sweep when OUT has no tipping.json.
        #[arg(long)]
        no_sweep: bool,
        /// How long the live run goes on, e.g. `2h` (default: the file's `duration`); the
        /// page's "extend" button runs on further.
        #[arg(long, value_name = "DURATION")]
        duration: Option<String>,
    },
    /// Print a shell completion script to stdout, e.g.
    /// `brink completions bash > ~/.local/share/bash-completion/completions/brink`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout, e.g. `brink man > ~/.local/share/man/man1/brink.1`.
    Man,
}

/// The options shared by `tipping` and `phase`.
#[derive(clap::Args)]
struct SweepArgs {
    /// The scenario file (TOML), or a bundled scenario's name (`brink list`).
    file: PathBuf,
    /// A design variant to sweep (`base` is the scenario as written); repeatable.
    #[arg(long = "variant", value_name = "NAME")]
    variants: Vec<String>,
    /// Sweep the scenario as written and every variant it defines.
    #[arg(long)]
    all_variants: bool,
    /// Seeds per point (overrides `tipping.seeds`).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    seeds: Option<u32>,
    /// Parallel runs (default: all cores; at most 1024).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1024))]
    jobs: u64,
    /// Run only every N-th run starting at K (K from 0) and write a shard file; join the
    /// shards with `brink merge`.
    #[arg(long, value_name = "K/N", value_parser = Shard::parse)]
    shard: Option<Shard>,
    /// Override a value by dotted path, e.g. --set tipping.points=20 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    sets: Vec<String>,
    /// Output folder; results go to DIR/<scenario>/.
    #[arg(long, default_value = "output")]
    out: PathBuf,
}

/// `--speed`: a number of simulated seconds per wall second in the accepted range.
fn parse_speed(s: &str) -> Result<f64, String> {
    let (lo, hi) = brink::serve::session::SPEED_RANGE;
    match s.parse::<f64>() {
        Ok(x) if (lo..=hi).contains(&x) => Ok(x),
        _ => Err(format!("expected a number from {lo} to {hi}")),
    }
}

fn main() -> ExitCode {
    brink::scenario::provenance::record_command_line(std::env::args());
    let cli = Cli::parse();
    clean_up_on_signals();
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            let bad_input = err
                .chain()
                .any(|e| e.downcast_ref::<Error>().is_some_and(Error::is_bad_input))
                || err
                    .chain()
                    .any(|e| e.downcast_ref::<brink::scenario::ScenarioError>().is_some());
            ExitCode::from(if bad_input { 2 } else { 1 })
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<()> {
    let console = Console::default();
    if let Some(bytes) = cli.max_memory {
        brink::model::budget::set_max_memory(bytes);
    }
    brink::model::budget::set_max_events(cli.max_events);
    match cli.command {
        Command::Run {
            file,
            out,
            seed,
            sets,
            variant,
            name,
        } => {
            let (sc, own_seed) = load(&file, variant.as_deref(), &sets, seed)?;
            let dir = run_dir(&out, &sc, name, seed.filter(|s| *s != own_seed), &sets);
            run::run_and_write(&sc, &dir, &console)?;
        }
        Command::Check { files } => {
            let mut bad = Vec::new();
            for f in &files {
                let checked = Loader::resolve(f)
                    .map_err(Error::from)
                    .and_then(|l| Ok((all::check(&l)?, l.file)));
                match checked {
                    Ok((n, file)) => println!("ok  {file} ({n} variants)"),
                    Err(e) => bad.push(e),
                }
            }
            match bad.len() {
                0 => {}
                1 => return Err(bad.remove(0).into()),
                n => {
                    for e in &bad[1..] {
                        eprintln!("error: {e}");
                    }
                    return Err(anyhow::Error::new(bad.remove(0))
                        .context(format!("{n} scenario files are invalid; the first")));
                }
            }
        }
        Command::List { dir } => {
            let source = dir.map_or(Source::Bundled, Source::Folder);
            for loader in source.loaders()? {
                let sc = loader.load(None, &[])?;
                println!("{:<24} {}", sc.name, sc.title);
            }
        }
        Command::New { name, from } => {
            let path = new::new_scenario(&name, from.as_deref(), Path::new(""))?;
            eprintln!("-> {}", path.display());
        }
        Command::Serve {
            file,
            port,
            bind,
            speed,
            out,
            no_sweep,
            duration,
        } => {
            use brink::serve::{Options, ServeError, Server};
            let loader = Loader::resolve(&file)?;
            let opts = Options {
                bind,
                port,
                speed,
                out,
                sweep: !no_sweep,
                duration,
            };
            let server = Server::start(loader, &opts).map_err(|e| match e {
                ServeError::Scenario(s) => anyhow::Error::new(s),
                e => anyhow::Error::new(e),
            })?;
            match server.addr() {
                Some(a) => println!("brink serve: http://{a}/"),
                None => println!("brink serve: listening"),
            }
            eprintln!("(Ctrl-C stops the server)");
            server.serve(4);
        }
        Command::Completions { shell } => {
            let mut text = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "brink", &mut text);
            print_text(&text)?;
        }
        Command::Man => {
            let mut text = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut text)?;
            print_text(&text)?;
        }
        Command::Hysteresis {
            file,
            out,
            seed,
            sets,
            variant,
            name,
        } => {
            let loader = Loader::resolve(&file)?;
            let own_seed = match seed {
                Some(_) => {
                    loader
                        .load(variant.as_deref(), &overrides(&sets, None)?)?
                        .seed
                }
                None => 0,
            };
            let ramp = Ramp::prepare(loader, variant.as_deref(), overrides(&sets, seed)?)?;
            let dir = run_dir(
                &out,
                ramp.scenario(),
                name,
                seed.filter(|s| *s != own_seed),
                &sets,
            );
            let w = ramp.run_and_write(&dir, &console)?;
            eprintln!(
                "{} hysteresis: {} steps each way in {:.1} s wall",
                w.report.scenario, w.report.steps, w.wall_s
            );
            println!("{}", w.report.summary_line());
            eprintln!("-> {}", w.dir.display());
        }
        Command::Tipping(args) => sweep(Kind::Tipping, &args, &console)?,
        Command::Phase(args) => sweep(Kind::Phase, &args, &console)?,
        Command::Merge { dir } => {
            for (folder, kind, r) in shard::merge(&dir)? {
                print_report(kind, &r, &folder);
            }
        }
        Command::CollapseTime {
            file,
            out,
            seed,
            sets,
            variant,
            name,
        } => {
            let (sc, own_seed) = load(&file, variant.as_deref(), &sets, seed)?;
            let dir = run_dir(&out, &sc, name, seed.filter(|s| *s != own_seed), &sets);
            let wall = Instant::now();
            let est = collapse_time::mean_time_to_collapse(&sc, sc.seed, &Default::default())?;
            let path = collapse_time::write(&dir, &sc, &est)?;
            println!(
                "mean time to collapse ({} >= {}): {} ({:.4e} s, 95% CI {:.3e} to {:.3e} s); p = {:.3e} per excursion, {} levels, {} events, {:.1} s",
                est.level,
                est.at,
                est.mean_text,
                est.mean_s,
                est.ci95[0],
                est.ci95[1],
                est.p_collapse,
                est.levels.len(),
                est.events,
                wall.elapsed().as_secs_f64()
            );
            eprintln!("-> {}", path.display());
        }
        Command::All { dir, out, full } => {
            let coverage = if full {
                all::Coverage::Full
            } else {
                all::Coverage::Default
            };
            let source = Source::folder_or_bundled(dir);
            let page = all::run_all(&source, &out, coverage, &console)?;
            eprintln!("-> {}", page.display());
        }
    }
    Ok(())
}

/// `brink tipping` and `brink phase`.
fn sweep(kind: Kind, a: &SweepArgs, console: &Console) -> anyhow::Result<()> {
    let loader = Loader::resolve(&a.file)?;
    let mut sets = Vec::new();
    if let Some(n) = a.seeds {
        sets.push(Override::new(
            "tipping.seeds",
            toml::Value::Integer(n as i64),
            format!("--seeds {n}"),
        ));
    }
    for s in &a.sets {
        sets.push(Override::parse(s)?);
    }
    let variants = Variants {
        names: a.variants.clone(),
        all: a.all_variants,
    };
    let sweep = Sweep::prepare(loader, kind, &variants, sets)?;
    sweep.run_and_write(a.jobs as usize, a.shard, &a.out, console)?;
    Ok(())
}

/// On SIGINT or SIGTERM, removes the temporary files and folders of the outputs being
/// written (a set being swapped in finishes first) and ends with 128 + the signal's number
/// (130, 143), as a shell reports a process killed by it.
fn clean_up_on_signals() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        // Without the handler the default action ends the process; temporaries may remain.
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            brink::report::files::remove_temporaries();
            eprintln!("\nbrink: stopped by signal {sig}; no partial outputs were left");
            std::process::exit(128 + sig);
        }
    });
}

/// Writes generated text to stdout; a reader that stops early (`| head`) is no error.
fn print_text(text: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

/// The scenario of `brink run`: the file with a variant, `--set`s and `--seed`; and the
/// seed it has without `--seed` (the scenario's own).
fn load(
    file: &Path,
    variant: Option<&str>,
    sets: &[String],
    seed: Option<u64>,
) -> anyhow::Result<(Scenario, u64)> {
    let loader = Loader::resolve(file)?;
    let sc = loader.load_run(variant, &overrides(sets, seed)?)?;
    let own = match seed {
        Some(_) => loader.load_run(variant, &overrides(sets, None)?)?.seed,
        None => sc.seed,
    };
    Ok((sc, own))
}

/// The folder of a single run (`run`, `hysteresis`, `collapse-time`): the scenario's (or
/// its variant's) folder, or, with `--name`, a seed other than the scenario's or any
/// `--set`, `runs/NAME/` inside it.
fn run_dir(
    out: &Path,
    sc: &Scenario,
    name: Option<String>,
    seed: Option<u64>,
    sets: &[String],
) -> PathBuf {
    let base = run::output_dir(out, sc);
    let typed: Vec<(String, String)> = sets
        .iter()
        .map(|s| {
            let (p, v) = s.split_once('=').unwrap_or((s, ""));
            (p.trim().to_string(), v.trim().to_string())
        })
        .collect();
    match name.or_else(|| naming::derived_name(seed, &typed)) {
        Some(n) => naming::runs_dir(&base, &n),
        None => base,
    }
}

/// The overrides of `--seed` and the `--set`s, in that order.
fn overrides(sets: &[String], seed: Option<u64>) -> anyhow::Result<Vec<Override>> {
    let mut overrides = Vec::new();
    if let Some(s) = seed {
        overrides.push(Override::new(
            "seed",
            toml::Value::Integer(s as i64),
            format!("--seed {s}"),
        ));
    }
    for s in sets {
        overrides.push(Override::parse(s)?);
    }
    Ok(overrides)
}

/// Prints the headroom table of a tipping sweep, or the region counts of a phase map.
fn print_report(kind: Kind, r: &SweepReport, dir: &Path) {
    match kind {
        Kind::Tipping => print!("{}", headroom_table(r)),
        Kind::Phase => print!("{}", phase_table(r)),
    }
    eprintln!("-> {}", dir.display());
}

/// The console: progress bars on stderr when it is a terminal, and a line per set of files
/// written.
#[derive(Default)]
struct Console {
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
