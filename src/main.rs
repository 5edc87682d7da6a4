//! The `brink` command: parses arguments, calls the library, prints. No model logic here.

use anyhow::Context;
use brink::experiment::plan::Kind;
use brink::experiment::sweep::{Shard, Sweep, Variants};
use brink::experiment::{self, Error, shard};
use brink::export::{self, Section};
use brink::report::sweep::{Region, SweepReport};
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
    /// Sweep the [tipping] parameter with and without the trigger; write tipping.csv,
    /// tipping.json and tipping.png/.svg, and print the headroom table.
    Tipping(SweepArgs),
    /// Map stable / metastable / overloaded over the [tipping] and [phase] parameters;
    /// write phase.csv and phase.png/.svg.
    Phase(SweepArgs),
    /// Join the shard files of `--shard` runs into the files one unsharded run writes.
    Merge {
        /// A scenario's output folder (DIR/<scenario>), or an output folder whose scenario
        /// folders hold shard files.
        dir: PathBuf,
    },
    /// Run every scenario in the folder (run, tipping with all variants, phase) and write
    /// OUT/index.html.
    All {
        /// Folder of scenario files.
        #[arg(long, default_value = "scenarios")]
        dir: PathBuf,
        /// Output folder.
        #[arg(long, default_value = "output")]
        out: PathBuf,
    },
}

/// The options shared by `tipping` and `phase`.
#[derive(clap::Args)]
struct SweepArgs {
    /// The scenario file (TOML).
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
    /// Parallel runs (default: all cores).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
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
        Command::Tipping(args) => sweep(Kind::Tipping, &args),
        Command::Phase(args) => sweep(Kind::Phase, &args),
        Command::Merge { dir } => {
            for (folder, kind, r) in shard::merge(&dir)? {
                report_sweep(kind, &r, &folder);
            }
            Ok(())
        }
        Command::All { dir, out } => {
            let files = scenario_files(&dir)?;
            // Validate everything first: bad input writes nothing.
            let mut todo = Vec::new();
            for f in &files {
                let sc = load(f, None, &[], None)?;
                let all = Variants {
                    names: vec![],
                    all: true,
                };
                let tipping = match sc.tipping {
                    Some(_) => Some(Sweep::prepare(
                        Loader::open(f)?,
                        Kind::Tipping,
                        &all,
                        vec![],
                    )?),
                    None => None,
                };
                let phase = match sc.phase {
                    Some(_) => Some(Sweep::prepare(
                        Loader::open(f)?,
                        Kind::Phase,
                        &Variants::default(),
                        vec![],
                    )?),
                    None => None,
                };
                todo.push((sc, tipping, phase));
            }
            let mut sections = Vec::new();
            for (sc, tipping, phase) in &todo {
                run_one(sc, &out)?;
                let tipping = match tipping {
                    Some(s) => Some(run_sweep(s, 0, None, &out)?),
                    None => None,
                };
                if let Some(p) = phase {
                    run_sweep(p, 0, None, &out)?;
                }
                sections.push(Section {
                    name: sc.name.clone(),
                    title: sc.title.clone(),
                    description: sc.description.clone(),
                    case: sc.case.clone(),
                    tipping: tipping.flatten(),
                    phase: phase.is_some(),
                });
            }
            let page = out.join("index.html");
            brink::report::write_atomic(&page, &export::index_html(&sections)).map_err(|e| {
                Error::Io {
                    path: page.display().to_string(),
                    source: e,
                }
            })?;
            eprintln!("-> {}", page.display());
            Ok(())
        }
    }
}

/// `brink tipping` and `brink phase`.
fn sweep(kind: Kind, a: &SweepArgs) -> anyhow::Result<()> {
    let loader = Loader::open(&a.file)?;
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
    run_sweep(&sweep, a.jobs, a.shard, &a.out)?;
    Ok(())
}

/// Runs a prepared sweep (or one shard of it) and writes its files; returns the report of a
/// whole sweep.
fn run_sweep(
    sweep: &Sweep,
    jobs: usize,
    shard: Option<Shard>,
    out: &Path,
) -> anyhow::Result<Option<SweepReport>> {
    let plan = sweep.plan();
    let indices = sweep.indices(shard);
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(indices.len() as u64), target);
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:40}] {pos}/{len} runs, {elapsed}, eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix(format!("{} {}", plan.scenario, plan.kind.stem()));
    let start = Instant::now();
    let runs = sweep.run(&indices, jobs, &|| bar.inc(1))?;
    bar.finish_and_clear();
    let dir = experiment::sweep::output_dir(out, plan);
    let wall = start.elapsed().as_secs_f64();
    if let Some(s) = shard {
        let p = shard::write(&dir, plan, s, runs)?;
        eprintln!(
            "{} {}: shard {}/{}: {} runs in {wall:.1} s -> {}",
            plan.scenario,
            plan.kind.stem(),
            s.index,
            s.count,
            indices.len(),
            p.display()
        );
        return Ok(None);
    }
    let r = experiment::sweep::write_outputs(&dir, plan, &runs)?;
    eprintln!(
        "{} {}: {} runs in {wall:.1} s wall",
        plan.scenario,
        plan.kind.stem(),
        runs.len()
    );
    report_sweep(plan.kind, &r, &dir);
    Ok(Some(r))
}

/// Prints the headroom table of a tipping sweep, or the region counts of a phase map.
fn report_sweep(kind: Kind, r: &SweepReport, dir: &Path) {
    match kind {
        Kind::Tipping => print!("{}", brink::report::sweep::headroom_table(r)),
        Kind::Phase => {
            println!(
                "{}: phase map of {} x {}",
                r.scenario,
                r.vary,
                r.vary2.as_deref().unwrap_or("")
            );
            for v in &r.variants {
                let count = |x: Region| v.points.iter().filter(|c| c.state == x).count();
                println!(
                    "  {}: {} stable, {} metastable, {} overloaded cells",
                    v.variant,
                    count(Region::Stable),
                    count(Region::Metastable),
                    count(Region::Overloaded)
                );
            }
        }
    }
    eprintln!("-> {}", dir.display());
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
