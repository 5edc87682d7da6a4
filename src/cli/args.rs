//! The command line: every command, flag and argument (clap), and the checks clap makes.

use brink::experiment::naming;
use brink::experiment::shard::Shard;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// brink: find the tipping point of failure patterns in distributed systems.
#[derive(Parser)]
#[command(name = "brink", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Memory ceiling of the process: a run that would hold more (queued jobs, pending
    /// events, cache keys, time-series rows, trigger occurrences) ends with an error naming
    /// what used it (exit 1). Parallel runs share it evenly. E.g. 8GiB, 500MB [default:
    /// half the machine's memory].
    #[arg(long, global = true, value_name = "SIZE", value_parser = brink::model::budget::parse_size)]
    pub max_memory: Option<u64>,
    /// Event budget of each run: a run that handles more events ends with an error
    /// (exit 1).
    #[arg(long, global = true, value_name = "N", default_value_t = brink::model::budget::DEFAULT_MAX_EVENTS, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_events: u64,
    /// Make warnings (a valid file that is almost certainly a slip: a service mean beyond
    /// its timeout, a pool overloaded by its own arithmetic, a cache that cannot hit,
    /// minutes among milliseconds) errors: exit 2, nothing written.
    #[arg(long, global = true)]
    pub deny_warnings: bool,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run one scenario; write summary.json, timeseries.csv and timeline.png/.svg.
    Run(TracedRunArgs),
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
    Tipping(TippingArgs),
    /// Map stable / metastable / overloaded over the [tipping] and [phase] parameters;
    /// write phase.csv, phase.json and phase.png/.svg.
    Phase(SweepArgs),
    /// Ramp the [tipping] parameter slowly up, then back down, in one run (triggers off);
    /// write hysteresis.csv, hysteresis.json and hysteresis.png/.svg, and print where it
    /// collapses and recovers.
    Hysteresis(RunArgs),
    /// Join the shard files of `--shard` runs into the files one unsharded run writes.
    Merge {
        /// A scenario's output folder (DIR/<scenario>), or an output folder whose scenario
        /// folders hold shard files.
        dir: PathBuf,
    },
    /// Estimate the mean time to spontaneous collapse (no triggers) at the operating point
    /// by multilevel splitting; write collapse-time.json.
    CollapseTime(RunArgs),
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
        /// Exit 1 (after writing everything) when a swept variant's headroom lower bound
        /// is below H.
        #[arg(long, value_name = "H", value_parser = parse_headroom)]
        require_headroom: Option<f64>,
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
        /// page's "Run on" button goes further.
        #[arg(long, value_name = "DURATION")]
        duration: Option<String>,
    },
    /// Write a scenario skeleton from traces (Jaeger JSON export or OTLP/JSON): a pool per
    /// service with its self times as its service law, its calls with their measured
    /// shares, a class per root operation with its rate. Never replaces a file unless
    /// --force.
    ImportTraces(ImportTracesArgs),
    /// Print a shell completion script to stdout, e.g.
    /// `brink completions bash > ~/.local/share/bash-completion/completions/brink`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout, e.g. `brink man > ~/.local/share/man/man1/brink.1`.
    Man,
    // brink calibrate (issue 22, item 2).
    /// Compare a scenario with what the real system showed: run it at the operating point
    /// of an observed file (OBS.toml: load per class, a window of the run, figures per class,
    /// pool and cache tier) over seeds, print each figure observed and simulated (95% CI),
    /// and write calibration.json; --fit searches up to three keys to close the gap.
    Calibrate(CalibrateArgs),
}

/// The options shared by `run`, `hysteresis` and `collapse-time`: one scenario, one run.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The scenario file (TOML), or a bundled scenario's name (`brink list`).
    pub file: PathBuf,
    /// Output folder; results go to DIR/<scenario>/.
    #[arg(long, default_value = "output")]
    pub out: PathBuf,
    /// Seed of every random stream (overrides the file's `seed`).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
    pub seed: Option<u64>,
    /// Override a value by dotted path, e.g. --set class.request.rate=0.8 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Apply a named [variant.NAME] of the scenario.
    #[arg(long)]
    pub variant: Option<String>,
    /// The folder name of a run with overrides: its files go to
    /// DIR/<scenario>/runs/NAME/ [default: derived from --seed and the --sets].
    #[arg(long, value_parser = naming::check_name)]
    pub name: Option<String>,
}

// --- traces (issue 22 item 3): `run --trace-sample`, `import-traces` ---

/// `brink run`'s options: a run's, and its request traces.
#[derive(clap::Args)]
pub struct TracedRunArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Trace 1 in N client requests (the 1st, the N+1st, ...: by count, no random draw)
    /// and write their spans to traces.json (OTLP/JSON, one span per visit to a pool)
    /// beside summary.json; the other files are unchanged. At most 500,000 spans.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub trace_sample: Option<u64>,
}

/// `brink import-traces`'s options.
#[derive(clap::Args)]
pub struct ImportTracesArgs {
    /// The trace file: Jaeger's JSON export (`{"data": [...]}`) or OTLP/JSON traces
    /// (`{"resourceSpans": [...]}`), at most 256 MiB.
    pub traces: PathBuf,
    /// The scenario file to write.
    #[arg(long, value_name = "NAME.toml")]
    pub out: PathBuf,
    /// The traces are 1 in N requests (as `brink run --trace-sample N` writes them):
    /// rates are multiplied by N.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub trace_sample: u64,
    /// Replace --out if it exists.
    #[arg(long)]
    pub force: bool,
}

// --- end traces ---

/// `brink tipping`'s options: a sweep's, and the headroom gate.
#[derive(clap::Args)]
pub struct TippingArgs {
    #[command(flatten)]
    pub sweep: SweepArgs,
    /// Exit 1 (after writing every output) when a swept variant's headroom lower bound is
    /// below H, naming the variants and their bounds; for CI, e.g. --require-headroom 1.5.
    #[arg(long, value_name = "H", value_parser = parse_headroom, conflicts_with = "shard")]
    pub require_headroom: Option<f64>,
}

/// The options shared by `tipping` and `phase`.
#[derive(clap::Args)]
pub struct SweepArgs {
    /// The scenario file (TOML), or a bundled scenario's name (`brink list`).
    pub file: PathBuf,
    /// A design variant to sweep (`base` is the scenario as written); repeatable.
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,
    /// Sweep the scenario as written and every variant it defines.
    #[arg(long)]
    pub all_variants: bool,
    /// Seeds per point (overrides `tipping.seeds`; for `brink phase`, `phase.seeds`).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub seeds: Option<u32>,
    /// Parallel runs (default: all cores; at most 1024).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1024))]
    pub jobs: u64,
    /// Run one shard of the sweep (K from 0) and write a shard file; join the shards with
    /// `brink merge`. A grid's shard runs every N-th run from K; an adaptive tipping
    /// sweep's shard runs the whole searches of every N-th variant from K (variant i, in
    /// `--all-variants` order with base first, goes to shard i mod N).
    #[arg(long, value_name = "K/N", value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// Override a value by dotted path, e.g. --set tipping.points=20 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Output folder; results go to DIR/<scenario>/.
    #[arg(long, default_value = "output")]
    pub out: PathBuf,
}

/// `--require-headroom`: a finite number above 0 (a headroom is a ratio of loads).
pub fn parse_headroom(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(
            "expected a finite headroom above 0 (tipping point over operating point), e.g. 1.5"
                .into(),
        ),
    }
}

/// `--speed`: a number of simulated seconds per wall second in the accepted range.
pub fn parse_speed(s: &str) -> Result<f64, String> {
    let (lo, hi) = brink::serve::session::SPEED_RANGE;
    match s.parse::<f64>() {
        Ok(x) if (lo..=hi).contains(&x) => Ok(x),
        _ => Err(format!("expected a number from {lo} to {hi}")),
    }
}

/// `brink calibrate`'s options (docs/calibrate.md).
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("obs").required(true).args(["observed", "write_observed"])))]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// The observed file (TOML): `[load]`, `window`, `[class.NAME]`, `[pool.NAME]`,
    /// `[cache.NAME]` figures (docs/calibrate.md).
    #[arg(long, value_name = "OBS.toml")]
    pub observed: Option<PathBuf>,
    /// Write an observed file of every figure of the scenario as run (the mean over the
    /// seeds) instead of comparing: the format's example; never replaces a file.
    #[arg(long, value_name = "OBS.toml", conflicts_with_all = ["observed", "fit"])]
    pub write_observed: Option<PathBuf>,
    /// Seeds per evaluation: run indices 0 to N-1 of the scenario's seed.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub seeds: u32,
    /// Keys to fit (up to 3 `--set` paths of numbers or durations, e.g.
    /// pool.db.service.mean), each searched within a factor of 4 of its value.
    #[arg(long, value_name = "KEY", num_args = 1..=3)]
    pub fit: Vec<String>,
    /// Evaluations of the fit's search (each runs --seeds runs).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(4..=10_000))]
    pub budget: u32,
    /// Refits on independent seed batches, whose values give the fitted keys' spread.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=20))]
    pub refits: u32,
}
