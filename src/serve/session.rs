//! A live session: the scenario run in a thread of its own at a chosen speed-up, the
//! actions taken on it, and the file that replays them.
//!
//! Every action that changes the system is an `[[at]]` entry at the simulated time it was
//! taken (whole milliseconds), appended to the file's text; the text is loaded again by
//! the ordinary loader, so an action is checked exactly like a scenario file (a refused
//! action changes nothing) and "save session" is that text. The run itself starts from the
//! scenario without its `[[at]]` entries and applies the loaded scenario's interventions
//! itself, each at its time ([`Simulation::advance_to`], then
//! [`Simulation::apply_intervention`]): the file's own entries and the live ones in the
//! order a plain run of the saved file applies them, with the configuration each puts in
//! force there. So `brink run` of the saved file writes the same rows.
//!
//! The run starts paused, so that the page can say what is coming (when the file's first
//! event fires) before the clock runs: `resume` (the page's Start button) starts it.
//!
//! What a reset starts from is the session's [`Design`]: the file, or the file with another
//! seed, a variant applied from the start, or a longer run. Extending the run rebuilds it
//! with the longer duration and replays it to where it was: the same rows (a run's events
//! do not depend on its length), and the saved file says the new duration.

mod publish;
use publish::rates;

use super::listing::{LiveMarker, listed_markers, markers_of};
use super::text::{Action, Design, Variant, duration_text, session_text};
use crate::engine::time::{SimTime, ns_to_secs};
use crate::experiment::measure::Gauge;
use crate::experiment::run::{narrative_of, structure_of};
use crate::model::metrics::Marker;
use crate::model::{SimError, Simulation};
use crate::report::narrative::Sentence;
use crate::report::verdict::Verdict;
use crate::scenario::{Loader, Scenario, ScenarioError};
use serde::{Deserialize, Serialize};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use toml::Value;

/// How often the run thread advances the clock and publishes rows (wall time).
pub const TICK: Duration = Duration::from_millis(20);
/// The most simulated time one tick may cover, as wall time at the chosen speed: a run
/// that falls behind goes slower rather than jumping.
const MAX_TICK_WALL: Duration = Duration::from_millis(200);
/// The fastest and slowest speed-ups accepted (simulated seconds per wall second).
pub const SPEED_RANGE: (f64, f64) = (0.1, 100_000.0);
/// The most actions one session keeps (each is an `[[at]]` entry of the saved file).
pub const MAX_ACTIONS: usize = 1000;

/// What the page asks the run thread to do.
#[derive(Debug)]
pub enum Command {
    Pause,
    Resume,
    /// Start again from time zero, forgetting the actions: with the same design (`None`),
    /// or with this variant applied from the start instead (`Some(None)`: none), keeping the
    /// seed and the run's length.
    Reset(Option<Option<Variant>>),
    /// Start again from time zero with another seed.
    Seed(u64),
    Speed(f64),
    /// Run on for this much longer than the current end.
    Extend(SimTime),
    /// Take an action now.
    Act(Action),
}

/// The run thread's answer to a command: the simulated time it applied at, or why it was
/// refused (nothing changed).
pub type Reply = Result<f64, String>;

/// The state the page reads, shared between the run thread and the server.
#[derive(Debug, Clone, Serialize)]
pub struct Live {
    /// Bumped at each reset or extension: a page holding rows of an older run starts over.
    pub run: u64,
    pub seed: u64,
    /// The variant applied from the start, if any.
    pub variant: Option<String>,
    pub now_s: f64,
    pub end_s: f64,
    /// `running`, `paused`, `finished` or `failed`.
    pub status: &'static str,
    pub speed: f64,
    /// Simulated seconds per wall second over the last second.
    pub achieved_speed: f64,
    /// Ticks that published over the last second.
    pub updates_per_s: f64,
    /// The health measure over the last minute (or last 6 windows) and its verdict.
    pub measure: Option<f64>,
    pub healthy: Option<bool>,
    /// The verdict over the same rows, with its cause ([`crate::report::verdict`]):
    /// `healthy`, `degraded` (load refused by choice, the rest served in time) or `stuck`.
    pub verdict: Option<&'static str>,
    /// Why, when not healthy: `rate_limit`, `shed`, `queue_full` (degraded);
    /// `expired_work`, `timed_out`, `failed`, `slow` (stuck).
    pub cause: Option<&'static str>,
    /// The share of the offered load refused (degraded) or failed (stuck).
    pub share: Option<f64>,
    /// The verdict for people: `degraded: shedding 43% at the rate limit`.
    pub verdict_text: Option<String>,
    /// The run so far told in words ([`crate::report::narrative`]), as in `summary.json`.
    pub narrative: Vec<Sentence>,
    /// The system drawn with the rows so far (`structure.svg`'s text,
    /// [`crate::report::structure`]): its rates, and the loop that sustains its failure once
    /// the run has measured one.
    pub structure: String,
    /// The actions so far, in order.
    pub log: Vec<Action>,
    /// The value in force now of each knob (its path → value): the file's (as the session
    /// was set up), or the last `[[at]]` entry's, the file's or a live one, that set it so
    /// far. A knob the file leaves to its default, and nothing has set yet, is absent.
    pub knobs: serde_json::Map<String, serde_json::Value>,
    pub error: Option<String>,
    #[serde(skip)]
    pub rows: Vec<Vec<f64>>,
    /// The session as a scenario file ("save session").
    #[serde(skip)]
    pub text: Arc<String>,
    /// The session's events and interventions (the file's and the live ones), for the
    /// charts: at most [`super::listing::MAX_MARKERS`].
    #[serde(skip)]
    pub markers: Arc<Vec<LiveMarker>>,
}

impl Live {
    /// The state before the run thread has published.
    pub fn new(sc: &Scenario, speed: f64, text: &str) -> Self {
        Self {
            run: 0,
            seed: sc.seed,
            variant: None,
            now_s: 0.0,
            end_s: ns_to_secs(sc.duration),
            status: "paused",
            speed,
            achieved_speed: 0.0,
            updates_per_s: 0.0,
            measure: None,
            healthy: None,
            verdict: None,
            cause: None,
            share: None,
            verdict_text: None,
            narrative: vec![],
            structure: String::new(),
            log: vec![],
            knobs: Default::default(),
            error: None,
            rows: vec![],
            text: Arc::new(text.to_string()),
            markers: listed_markers(sc, &[]),
        }
    }
}

/// The scenario of a session's text; `Err` carries the loader's message.
fn load(loader: &Loader, text: String) -> Result<Scenario, ScenarioError> {
    loader.with_text(text)?.load(None, &[])
}

/// The run thread's own state besides the simulation.
struct Driver {
    loader: Loader,
    file_seed: u64,
    design: Design,
    actions: Vec<Action>,
    /// The session's text, and its scenario (the file's interventions and the live ones).
    text: Arc<String>,
    current: Scenario,
    /// The time-series schema of `current`, which the health gauge reads.
    columns: Vec<crate::scenario::Column>,
    markers: Arc<Vec<Marker>>,
    /// The same as the page lists them.
    listed: Arc<Vec<LiveMarker>>,
    /// The knobs' paths, and for each its value as the session was set up (none when the
    /// file leaves it to its default).
    knobs: Vec<(String, Option<serde_json::Value>)>,
    /// What the session's `[[at]]` entries set: (time, path, value), in the file's order.
    settings: Vec<(SimTime, String, serde_json::Value)>,
    /// How many of `current`'s interventions are in force.
    applied: usize,
    speed: f64,
    paused: bool,
    gauge: Option<(
        crate::scenario::sweep::Measure,
        crate::scenario::sweep::Health,
    )>,
    shared: Arc<Mutex<Live>>,
    run: u64,
}

/// What ends a stretch of driving one simulation.
enum Next {
    /// Build the run again (the design and actions are already set) and replay it to this
    /// time (0 for a reset); then answer.
    Rebuild(SimTime, Sender<Reply>),
    /// The server has gone.
    Quit,
}

/// What a command comes to: a run to build again (its design, its actions, the time to
/// replay it to), or an answer now.
enum Handled {
    Rebuild(Design, Vec<Action>, SimTime),
    Answer(Reply),
}

/// Runs sessions on `loader`'s scenario until `commands` closes: the run thread. `design`
/// is how the first session is set up (checked by the caller); `knobs` are the paths whose
/// values in force it publishes.
pub fn run_thread(
    loader: Loader,
    design: Design,
    knobs: Vec<String>,
    speed: f64,
    shared: Arc<Mutex<Live>>,
    commands: Receiver<(Command, Sender<Reply>)>,
) {
    let Ok(file) = loader.load(None, &[]) else {
        return; // checked by the caller before starting
    };
    let Ok(text) = session_text(loader.text(), file.seed, &design, &[]) else {
        return;
    };
    let Ok(first) = load(&loader, text.clone()) else {
        return;
    };
    let mut d = Driver {
        file_seed: file.seed,
        text: Arc::new(text),
        design,
        actions: Vec::new(),
        gauge: gauge(&first),
        markers: markers_of(&first),
        listed: listed_markers(&first, &[]),
        knobs: knobs.into_iter().map(|k| (k, None)).collect(),
        settings: Vec::new(),
        columns: crate::scenario::columns::columns(&first.config),
        current: first,
        applied: 0,
        speed,
        // Paused until the page (or a script) starts it.
        paused: true,
        loader,
        shared,
        run: 0,
    };
    d.read_settings(d.text.to_string());
    // The command that rebuilt the run, answered once the new run has published: a
    // reset's (replayed to 0) or an extension's (replayed to where the run was).
    let mut pending: Option<(SimTime, Sender<Reply>)> = None;
    loop {
        let mut base = d.current.clone();
        base.interventions.clear();
        // The memory ceiling, checked before anything is allocated, as for `brink run`.
        let mut sim = match Simulation::checked(&base, 0) {
            Ok(sim) => sim,
            Err(e) => {
                eprintln!("error: {e}");
                return;
            }
        };
        sim.start_live();
        d.applied = 0;
        let mut failed = None;
        let answer = pending.take().map(|(to, reply)| {
            let r = d.advance(&mut sim, to).map_err(|e| e.to_string());
            failed = r.as_ref().err().cloned();
            (reply, r.map(|()| sim.now_s()))
        });
        // Published before the answer, so that a page reading the state after an answer
        // sees what it did.
        d.publish(&sim, failed.clone(), (0.0, 0.0));
        if let Some((reply, r)) = answer {
            let _ = reply.send(r);
        }
        match d.drive(&mut sim, &commands, failed) {
            Next::Rebuild(to, reply) => pending = Some((to, reply)),
            Next::Quit => return,
        }
        d.run += 1;
    }
}

/// The tipping sweep's measure and health rule, which give the page its verdict.
fn gauge(
    sc: &Scenario,
) -> Option<(
    crate::scenario::sweep::Measure,
    crate::scenario::sweep::Health,
)> {
    sc.tipping.as_ref().map(|t| (t.measure.clone(), t.health))
}

impl Driver {
    /// Runs one simulation until a reset or an extension, or until the server goes away.
    fn drive(
        &mut self,
        sim: &mut Simulation,
        commands: &Receiver<(Command, Sender<Reply>)>,
        mut failed: Option<String>,
    ) -> Next {
        let mut last = Instant::now();
        // (wall, simulated s) at each tick of the last second, for the achieved speed.
        let mut recent: std::collections::VecDeque<(Instant, f64)> = Default::default();
        loop {
            let wait = TICK.saturating_sub(last.elapsed());
            match commands.recv_timeout(wait) {
                Ok((cmd, reply)) => {
                    // A reset, a new seed or a longer run rebuilds the run: set up here,
                    // answered by the run thread once the new run has published.
                    let rebuild = match cmd {
                        Command::Reset(variant) => {
                            let mut design = self.design.clone();
                            if let Some(v) = variant {
                                design.variant = v;
                            }
                            Handled::Rebuild(design, Vec::new(), 0)
                        }
                        Command::Seed(seed) => Handled::Rebuild(
                            Design {
                                seed,
                                ..self.design.clone()
                            },
                            Vec::new(),
                            0,
                        ),
                        Command::Extend(by) => Handled::Rebuild(
                            Design {
                                duration: Some(sim.end_ns().saturating_add(by)),
                                ..self.design.clone()
                            },
                            self.actions.clone(),
                            sim.now_ns(),
                        ),
                        Command::Pause => {
                            self.paused = true;
                            Handled::Answer(Ok(sim.now_s()))
                        }
                        Command::Resume => {
                            self.paused = false;
                            last = Instant::now();
                            Handled::Answer(Ok(sim.now_s()))
                        }
                        Command::Speed(x) => {
                            self.speed = x;
                            Handled::Answer(Ok(sim.now_s()))
                        }
                        Command::Act(a) if failed.is_none() => Handled::Answer(self.act(sim, a)),
                        Command::Act(_) => {
                            Handled::Answer(Err("the run has failed; reset it".into()))
                        }
                    };
                    let r = match rebuild {
                        Handled::Rebuild(design, actions, to) => match self.set_up(design, actions)
                        {
                            Ok(()) => return Next::Rebuild(to, reply),
                            Err(e) => Err(e),
                        },
                        Handled::Answer(answer) => answer,
                    };
                    let rates = rates(&mut recent, sim.now_s());
                    self.publish(sim, failed.clone(), rates);
                    let _ = reply.send(r);
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => return Next::Quit,
                Err(RecvTimeoutError::Timeout) => {}
            }
            let wall = last.elapsed().min(MAX_TICK_WALL);
            last = Instant::now();
            if self.paused || failed.is_some() || sim.now_ns() >= sim.end_ns() {
                continue;
            }
            let step = (wall.as_secs_f64() * self.speed * 1e3).round() as u64 * 1_000_000;
            let target = sim.now_ns().saturating_add(step.max(1_000_000));
            if let Err(e) = self.advance(sim, target) {
                failed = Some(e.to_string());
            }
            let rates = rates(&mut recent, sim.now_s());
            self.publish(sim, failed.clone(), rates);
        }
    }

    /// Makes `design` with `actions` the session, if its text loads and its run fits the
    /// memory ceiling; otherwise nothing changes and `Err` says why.
    fn set_up(&mut self, design: Design, actions: Vec<Action>) -> Result<(), String> {
        let text = session_text(self.loader.text(), self.file_seed, &design, &actions)?;
        let sc = load(&self.loader, text.clone()).map_err(|e| format!("{e:#}"))?;
        crate::model::budget::check_before(&sc).map_err(|e| e.to_string())?;
        self.gauge = gauge(&sc);
        self.design = design;
        self.actions = actions;
        self.markers = markers_of(&sc);
        self.listed = listed_markers(&sc, &self.actions);
        self.columns = crate::scenario::columns::columns(&sc.config);
        self.current = sc;
        self.read_settings(text);
        Ok(())
    }

    /// Advances to `target`, applying each intervention of the session's scenario at its
    /// time.
    fn advance(&mut self, sim: &mut Simulation, target: SimTime) -> Result<(), SimError> {
        while let Some(iv) = self.current.interventions.get(self.applied) {
            if iv.time > target || iv.time > sim.end_ns() {
                break;
            }
            sim.advance_to(iv.time)?;
            sim.apply_intervention(iv);
            self.applied += 1;
        }
        sim.advance_to(target)?;
        Ok(())
    }

    /// Takes action `a` now: refused (nothing changed) unless the session's text with it
    /// loads.
    fn act(&mut self, sim: &mut Simulation, mut a: Action) -> Reply {
        if self.actions.len() >= MAX_ACTIONS {
            return Err(format!(
                "a session keeps at most {MAX_ACTIONS} actions; save it and reset"
            ));
        }
        if sim.now_ns() >= sim.end_ns() {
            return Err(format!(
                "the run has reached its end ({}); extend it or reset it",
                duration_text(sim.end_ns())
            ));
        }
        // Whole milliseconds, so that the file says exactly when.
        let ms = sim.now_ns().div_ceil(1_000_000);
        if let Err(e) = self.advance(sim, ms * 1_000_000) {
            return Err(e.to_string());
        }
        a.time_ms = ms;
        let mut actions = self.actions.clone();
        actions.push(a);
        let text = session_text(self.loader.text(), self.file_seed, &self.design, &actions)?;
        // Everything before this entry loaded: what is wrong is the action itself, so the
        // message names the key and value, not a place in the generated text.
        let sc = load(&self.loader, text.clone()).map_err(|e| match e {
            // `at.N...` is the action's own entry in the generated text: the message says it.
            ScenarioError::Invalid { path, msg, .. } if path.starts_with("at.") => msg,
            ScenarioError::Invalid { path, msg, .. } => format!("`{path}`: {msg}"),
            e => format!("{e:#}"),
        })?;
        self.actions = actions;
        self.markers = markers_of(&sc);
        self.listed = listed_markers(&sc, &self.actions);
        self.current = sc;
        self.read_settings(text);
        // The new entry is due now; apply it (and nothing later).
        self.advance(sim, ms * 1_000_000)
            .map_err(|e| e.to_string())?;
        Ok(sim.now_s())
    }

    /// Makes `text` the session's, and reads from it the knobs' values as set up and what
    /// its `[[at]]` entries set.
    fn read_settings(&mut self, text: String) {
        let json = |v: &Value| serde_json::to_value(v).ok();
        if let Ok(l) = self.loader.with_text(text.clone()) {
            for (path, base) in &mut self.knobs {
                *base = l.raw_value(path).and_then(json);
            }
            self.settings.clear();
            if let Some(Value::Array(entries)) = l.raw_value("at") {
                for e in entries {
                    let Ok(at) = crate::scenario::raw::RawAt::deserialize(e.clone()) else {
                        continue;
                    };
                    let mut set = Vec::new();
                    crate::scenario::overrides::flatten(&at.set, "", &mut set);
                    for (path, v) in set {
                        if let Some(v) = json(&v) {
                            self.settings.push((at.time.0, path, v));
                        }
                    }
                }
            }
        }
        self.text = Arc::new(text);
    }
}
