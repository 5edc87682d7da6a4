//! The `brink` command: parses arguments, calls the library, prints. No model logic here.

use anyhow::Context;
use brink::experiment::{self, Error};
use brink::scenario::{Loader, Override, Scenario};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// brink: find the tipping point of failure patterns in distributed systems.
#[derive(Parser)]
#[command(name = "brink", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one scenario; write summary.json, timeseries.csv and timeline.png/.svg.
    Run {
        /// The scenario file (TOML).
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
    },
    /// Validate scenario files without running them.
    Check {
        /// Scenario files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// List the bundled scenarios with their titles.
    List {
        /// Folder of scenario files.
        #[arg(long, default_value = "scenarios")]
        dir: PathBuf,
    },
    /// Run every scenario in the folder into the output folder.
    All {
        /// Folder of scenario files.
        #[arg(long, default_value = "scenarios")]
        dir: PathBuf,
        /// Output folder.
        #[arg(long, default_value = "output")]
        out: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
    match cli.command {
        Command::Run {
            file,
            out,
            seed,
            sets,
            variant,
        } => {
            let sc = load(&file, variant.as_deref(), &sets, seed)?;
            run_one(&sc, &out)
        }
        Command::Check { files } => {
            let mut bad = Vec::new();
            for f in &files {
                match Loader::open(f).and_then(|l| check_all_variants(&l)) {
                    Ok(n) => println!("ok  {} ({n} variants)", f.display()),
                    Err(e) => bad.push(e),
                }
            }
            match bad.len() {
                0 => Ok(()),
                1 => Err(bad.remove(0).into()),
                n => {
                    for e in &bad[1..] {
                        eprintln!("error: {e}");
                    }
                    Err(anyhow::Error::new(bad.remove(0))
                        .context(format!("{n} scenario files are invalid; the first")))
                }
            }
        }
        Command::List { dir } => {
            for f in scenario_files(&dir)? {
                let l = Loader::open(&f)?;
                let sc = l.load(None, &[])?;
                println!("{:<24} {}", sc.name, sc.title);
            }
            Ok(())
        }
        Command::All { dir, out } => {
            let files = scenario_files(&dir)?;
            // Validate everything first: bad input writes nothing.
            let mut scenarios = Vec::new();
            for f in &files {
                scenarios.push(load(f, None, &[], None)?);
            }
            for sc in &scenarios {
                run_one(sc, &out)?;
            }
            Ok(())
        }
    }
}

fn check_all_variants(l: &Loader) -> Result<usize, brink::scenario::ScenarioError> {
    l.load(None, &[])?;
    let names = l.variant_names();
    for v in &names {
        l.load(Some(v), &[])?;
    }
    Ok(names.len())
}

fn load(
    file: &Path,
    variant: Option<&str>,
    sets: &[String],
    seed: Option<u64>,
) -> anyhow::Result<Scenario> {
    let loader = Loader::open(file)?;
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
    Ok(loader.load(variant, &overrides)?)
}

fn scenario_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the scenario folder {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

fn run_one(sc: &Scenario, out: &Path) -> anyhow::Result<()> {
    let progress = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let bar = spawn_bar(&sc.name, sc.duration, progress.clone(), done.clone());
    let result = brink::model::Simulation::new(sc, 0)
        .with_progress(progress)
        .run();
    done.store(true, Ordering::Relaxed);
    if let Some(h) = bar {
        let _ = h.join();
    }
    let result = result.map_err(Error::from)?;
    let dir = experiment::run::output_dir(out, sc);
    experiment::run::write_outputs(&dir, &result)?;
    let completed: u64 = result
        .summary
        .classes
        .values()
        .map(|c| c.succeeded + c.failed)
        .sum();
    eprintln!(
        "{}: {} events, {} requests in {:.3} s wall ({:.3e} requests/s, {:.3e} events/s) -> {}",
        sc.name,
        result.summary.events,
        completed,
        result.wall_s,
        completed as f64 / result.wall_s.max(1e-9),
        result.summary.events as f64 / result.wall_s.max(1e-9),
        dir.display()
    );
    Ok(())
}

/// A progress bar on stderr for runs longer than about a second; none when stderr is not a
/// terminal.
fn spawn_bar(
    name: &str,
    total_ns: u64,
    progress: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
) -> Option<std::thread::JoinHandle<()>> {
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
