//! The `brink` command: parses arguments, calls the library, prints. No model logic here.

use brink::experiment::hysteresis::Ramp;
use brink::experiment::source::Source;
use brink::experiment::sweep::{Sweep, Variants};
use brink::experiment::{
    Error, Observer, all, collapse_time, import_traces, naming, new, run, shard,
};
use brink::scenario::{Loader, Override, Scenario};
use brink::stats::plan::Kind;
use clap::{CommandFactory, Parser};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

#[path = "cli/args.rs"]
mod args;
#[path = "cli/console.rs"]
mod console;

use args::{Cli, Command, RunArgs, SweepArgs, TracedRunArgs};
use brink::experiment::observe::SweepWritten;
use console::{Console, print_report};

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
        Command::Run(TracedRunArgs {
            run: a,
            trace_sample,
        }) => {
            let text = Loader::resolve(&a.file)?.text().to_string();
            let (sc, dir) = scenario_and_dir(a)?;
            warn(&sc, &text, cli.deny_warnings)?;
            run::run_and_write_traced(&sc, &dir, &console, trace_sample)?;
        }
        Command::Check { files } => {
            let mut bad = Vec::new();
            for f in &files {
                let checked = Loader::resolve(f)
                    .map_err(Error::from)
                    .and_then(|l| Ok((all::check(&l)?, l.load(None, &[])?, l)));
                match checked {
                    Ok((n, sc, l)) => {
                        warn(&sc, l.text(), cli.deny_warnings)?;
                        println!("ok  {} ({n} variants)", l.file);
                        for fit in &sc.provenance.fitted {
                            for line in brink::laws::fitted::Fitted::describe(fit) {
                                println!("    {line}");
                            }
                        }
                        for line in brink::scenario::hit_ratio::describe(&sc.config) {
                            println!("    {line}");
                        }
                    }
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
            println!("brink serve: http://{}/", server.addr());
            if let Some(w) = server.exposure_warning() {
                eprintln!("warning: {w}");
            }
            eprintln!("(Ctrl-C stops the server)");
            server.serve()?;
        }
        Command::ImportTraces(a) => {
            let m = import_traces::import_traces(&a.traces, &a.out, a.trace_sample, a.force)?;
            let m = m.measured;
            eprintln!(
                "{}: {} spans in {} traces, {} services, {} root operations -> {}",
                a.traces.display(),
                m.spans,
                m.traces,
                m.services.len(),
                m.roots.len(),
                a.out.display()
            );
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
        Command::Hysteresis(RunArgs {
            file,
            out,
            seed,
            sets,
            variant,
            name,
        }) => {
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
            console.hysteresis_written(&w);
            eprintln!("-> {}", w.dir.display());
        }
        Command::Tipping(args) => {
            let w = sweep(Kind::Tipping, &args.sweep, &console)?;
            if let Some(h) = args.require_headroom {
                let report = w.outcome.into_report();
                brink::report::gate::require_headroom(report.as_ref(), h)
                    .map_err(anyhow::Error::msg)?;
            }
        }
        Command::Phase(args) => {
            sweep(Kind::Phase, &args, &console)?;
        }
        Command::Merge { dir } => {
            for (folder, kind, r) in shard::merge(&dir)? {
                print_report(kind, &r, &folder);
            }
        }
        Command::CollapseTime(a) => {
            let (sc, dir) = scenario_and_dir(a)?;
            let wall = Instant::now();
            // A bound (the budget spent) is an error here, naming the bound: exit 1.
            let est =
                collapse_time::mean_time_to_collapse(&sc, sc.seed, &Default::default())?.exact()?;
            let path = collapse_time::write(&dir, &sc, &est)?;
            // An exact estimate always has its interval.
            let [lo, hi] = est.ci95.unwrap_or([est.mean_s; 2]);
            println!(
                "mean time to collapse ({} >= {}): {} ({:.4e} s, 95% CI {:.3e} to {:.3e} s); p = {:.3e} per excursion, {} levels, {} events, {:.1} s",
                est.level,
                est.at,
                est.mean_text,
                est.mean_s,
                lo,
                hi,
                est.p_collapse,
                est.levels.len(),
                est.events,
                wall.elapsed().as_secs_f64()
            );
            eprintln!("-> {}", path.display());
        }
        Command::All {
            dir,
            out,
            full,
            require_headroom,
        } => {
            let coverage = if full {
                all::Coverage::Full
            } else {
                all::Coverage::Default
            };
            let source = Source::folder_or_bundled(dir);
            let (path, page) = all::run_all(&source, &out, coverage, &console)?;
            eprintln!("-> {}", path.display());
            if let Some(h) = require_headroom {
                let reports = page.sections.iter().filter_map(|s| s.tipping.as_ref());
                brink::report::gate::require_headroom(reports, h).map_err(anyhow::Error::msg)?;
            }
        }
        Command::Calibrate(a) => calibrate(a, cli.deny_warnings, &console)?,
    }
    Ok(())
}

/// `brink calibrate`: the report (or, with `--write-observed`, an observed file).
fn calibrate(a: args::CalibrateArgs, deny: bool, console: &Console) -> anyhow::Result<()> {
    use brink::experiment::calibrate::{Calibration, Options, observed::Observed};
    let loader = Loader::resolve(&a.run.file)?;
    let text = loader.text().to_string();
    let sets = overrides(&a.run.sets, a.run.seed)?;
    let variant = a.run.variant.as_deref();
    let opts = Options {
        seeds: a.seeds,
        fit: a.fit.clone(),
        budget: a.budget as usize,
        refits: a.refits,
        ..Options::default()
    };
    let observed = match &a.observed {
        Some(path) => Observed::open(path)?,
        None => Observed::everything(&loader.load_run(variant, &sets)?, None),
    };
    let cal = Calibration::prepare(loader, variant, sets, observed, opts)?;
    warn(cal.scenario(), &text, deny)?;
    if let Some(path) = &a.write_observed {
        let text = cal.observed_text()?;
        brink::report::write_new_atomic(path, text.as_bytes()).map_err(|e| Error::Io {
            path: path.display().to_string(),
            source: e,
        })?;
        eprintln!("-> {}", path.display());
        return Ok(());
    }
    let report = cal.run(console)?;
    print!("{}", brink::report::calibration::calibration_table(&report));
    // The seed without `--seed` (the scenario's own): `--seed` with it is no override.
    let own = match a.run.seed {
        Some(_) => {
            Loader::resolve(&a.run.file)?
                .load_run(variant, &overrides(&a.run.sets, None)?)?
                .seed
        }
        None => 0,
    };
    let dir = run_dir(
        &a.run.out,
        cal.scenario(),
        a.run.name.clone(),
        a.run.seed.filter(|s| *s != own),
        &a.run.sets,
    );
    let path = cal.write(&dir, &report)?;
    eprintln!("-> {}", path.display());
    Ok(())
}

/// Prints the scenario's warnings on stderr; with `--deny-warnings`, any is an error (exit
/// 2, before anything is written).
fn warn(sc: &Scenario, text: &str, deny: bool) -> anyhow::Result<()> {
    let found = brink::scenario::warnings::warnings(sc, text);
    for w in &found {
        eprintln!("warning: {w}");
    }
    if deny && !found.is_empty() {
        return Err(Error::Warnings { count: found.len() }.into());
    }
    Ok(())
}

/// `brink tipping` and `brink phase`: what they wrote.
fn sweep(kind: Kind, a: &SweepArgs, console: &Console) -> anyhow::Result<SweepWritten> {
    let loader = Loader::resolve(&a.file)?;
    let mut sets = Vec::new();
    if let Some(n) = a.seeds {
        // A phase map's seeds per cell are `phase.seeds` (a file without `[phase]` is
        // refused as such by the sweep).
        let key = match kind {
            Kind::Phase if loader.load(None, &[])?.phase.is_some() => "phase.seeds",
            _ => "tipping.seeds",
        };
        sets.push(Override::new(
            key,
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
    Ok(sweep.run_and_write(a.jobs as usize, a.shard, &a.out, console)?)
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
            let total = console::BATCH_TOTAL.load(Ordering::Relaxed);
            if total > 0 {
                let done = console::BATCH_DONE.load(Ordering::Relaxed);
                eprintln!(
                    "\nbrink all: stopped after {done} of {total} runs and sweeps (their files are written); index.html was not written"
                );
            }
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

/// The scenario of `brink run` or `collapse-time` (the file with a variant, `--set`s and
/// `--seed`) and the folder its files go to.
fn scenario_and_dir(a: RunArgs) -> anyhow::Result<(Scenario, PathBuf)> {
    let loader = Loader::resolve(&a.file)?;
    let sets = overrides(&a.sets, a.seed)?;
    let mut sc = loader.load_run(a.variant.as_deref(), &sets)?;
    // The tipping section gives the run's verdict, where it holds with these overrides
    // (a run does not need it: one that moves the trigger out of its window still runs).
    // An SLO measure's verdict reads its column of slow requests, so the run writes it.
    if let Ok(full) = loader.load(a.variant.as_deref(), &sets) {
        Arc::make_mut(&mut sc.config).slow = full.config.slow;
        sc.tipping = full.tipping;
    }
    // The seed without `--seed` (the scenario's own): `--seed` with it is no override.
    let own = match a.seed {
        Some(_) => {
            loader
                .load_run(a.variant.as_deref(), &overrides(&a.sets, None)?)?
                .seed
        }
        None => sc.seed,
    };
    let dir = run_dir(&a.out, &sc, a.name, a.seed.filter(|s| *s != own), &a.sets);
    Ok((sc, dir))
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
