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

use crate::engine::time::{SimTime, ns_to_secs};
use crate::experiment::measure::Gauge;
use crate::model::{SimError, Simulation};
use crate::scenario::{Loader, Scenario, ScenarioError};
use serde::Serialize;
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

/// One action taken on the run: an `[[at]]` entry.
#[derive(Debug, Clone, Serialize)]
pub struct Action {
    /// Simulated time, whole milliseconds.
    pub time_ms: u64,
    pub label: String,
    /// Assignments (path, value), in order.
    #[serde(skip)]
    pub set: Vec<(String, Value)>,
    /// The event it fires, if any.
    pub fire: Option<String>,
}

/// What the page asks the run thread to do.
#[derive(Debug)]
pub enum Command {
    Pause,
    Resume,
    /// Start again from time zero with the same seed, forgetting the actions.
    Reset,
    /// Start again from time zero with another seed.
    Seed(u64),
    Speed(f64),
    /// Take an action now.
    Act(Action),
}

/// The run thread's answer to a command: the simulated time it applied at, or why it was
/// refused (nothing changed).
pub type Reply = Result<f64, String>;

/// The state the page reads, shared between the run thread and the server.
#[derive(Debug, Clone, Serialize)]
pub struct Live {
    /// Bumped at each reset: a page holding rows of an older run starts over.
    pub run: u64,
    pub seed: u64,
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
    /// The actions so far, in order.
    pub log: Vec<Action>,
    pub error: Option<String>,
    #[serde(skip)]
    pub rows: Vec<Vec<f64>>,
}

/// The text of the file with the seed set to `seed` and the actions appended as `[[at]]`
/// entries.
pub fn session_text(original: &str, seed: u64, file_seed: u64, actions: &[Action]) -> String {
    let mut text = if seed == file_seed {
        original.to_string()
    } else {
        with_seed(original, seed)
    };
    if !actions.is_empty() {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("\n# Actions of a live session (brink serve), in the order taken.\n");
    }
    for a in actions {
        text.push_str(&format!(
            "\n[[at]]\ntime = \"{}ms\"\nlabel = {}\n",
            a.time_ms,
            Value::String(a.label.clone())
        ));
        if !a.set.is_empty() {
            let parts: Vec<String> = a
                .set
                .iter()
                .map(|(p, v)| format!("{} = {v}", Value::String(p.clone())))
                .collect();
            text.push_str(&format!("set = {{ {} }}\n", parts.join(", ")));
        }
        if let Some(e) = &a.fire {
            text.push_str(&format!("fire = {}\n", Value::String(e.clone())));
        }
    }
    text
}

/// `original` with its top-level `seed` replaced by `seed` (or added at the top).
fn with_seed(original: &str, seed: u64) -> String {
    use toml::de::DeTable;
    let span = DeTable::parse(original).ok().and_then(|doc| {
        doc.get_ref()
            .iter()
            .find(|(k, _)| k.get_ref().as_ref() == "seed")
            .map(|(_, v)| v.span())
    });
    match span {
        Some(s) => format!("{}{seed}{}", &original[..s.start], &original[s.end..]),
        None => format!("seed = {seed}\n{original}"),
    }
}

/// The scenario of a session's text; `Err` carries the loader's message.
fn load(loader: &Loader, text: String) -> Result<Scenario, ScenarioError> {
    Loader::from_text(&loader.file, &loader.name, text)?.load(None, &[])
}

/// The run thread's own state besides the simulation.
struct Driver {
    loader: Loader,
    file_seed: u64,
    seed: u64,
    actions: Vec<Action>,
    /// The scenario of the session's text (the file's interventions and the live ones).
    current: Scenario,
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

/// Runs sessions on `loader`'s scenario until `commands` closes: the run thread.
pub fn run_thread(
    loader: Loader,
    speed: f64,
    shared: Arc<Mutex<Live>>,
    commands: Receiver<(Command, Sender<Reply>)>,
) {
    let Ok(first) = loader.load(None, &[]) else {
        return; // checked by the caller before starting
    };
    let mut d = Driver {
        file_seed: first.seed,
        seed: first.seed,
        actions: Vec::new(),
        gauge: first
            .tipping
            .as_ref()
            .map(|t| (t.measure.clone(), t.health)),
        current: first,
        applied: 0,
        speed,
        paused: false,
        loader,
        shared,
        run: 0,
    };
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
        d.publish(&sim, None, (0.0, 0.0));
        match d.drive(&mut sim, &commands) {
            Some(seed) => {
                d.seed = seed;
                d.actions.clear();
                d.applied = 0;
                d.run += 1;
                let text = session_text(d.loader.text(), seed, d.file_seed, &[]);
                match load(&d.loader, text) {
                    Ok(sc) => d.current = sc,
                    Err(_) => return,
                }
            }
            None => return,
        }
    }
}

impl Driver {
    /// Runs one session until a reset (returns the seed to start again with) or until the
    /// server goes away (`None`).
    fn drive(
        &mut self,
        sim: &mut Simulation,
        commands: &Receiver<(Command, Sender<Reply>)>,
    ) -> Option<u64> {
        let mut last = Instant::now();
        let mut failed: Option<String> = None;
        // (wall, simulated s) at each tick of the last second, for the achieved speed.
        let mut recent: std::collections::VecDeque<(Instant, f64)> = Default::default();
        loop {
            let wait = TICK.saturating_sub(last.elapsed());
            match commands.recv_timeout(wait) {
                Ok((cmd, reply)) => {
                    let r = match cmd {
                        Command::Reset => {
                            let _ = reply.send(Ok(0.0));
                            return Some(self.seed);
                        }
                        Command::Seed(s) => {
                            let _ = reply.send(Ok(0.0));
                            return Some(s);
                        }
                        Command::Pause => {
                            self.paused = true;
                            Ok(sim.now_s())
                        }
                        Command::Resume => {
                            self.paused = false;
                            last = Instant::now();
                            Ok(sim.now_s())
                        }
                        Command::Speed(x) => {
                            self.speed = x;
                            Ok(sim.now_s())
                        }
                        Command::Act(a) if failed.is_none() => self.act(sim, a),
                        Command::Act(_) => Err("the run has failed; reset it".into()),
                    };
                    let _ = reply.send(r);
                    let rates = rates(&mut recent, sim.now_s());
                    self.publish(sim, failed.clone(), rates);
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => return None,
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
            return Err("the run has reached its end; reset it".into());
        }
        // Whole milliseconds, so that the file says exactly when.
        let ms = sim.now_ns().div_ceil(1_000_000);
        if let Err(e) = self.advance(sim, ms * 1_000_000) {
            return Err(e.to_string());
        }
        a.time_ms = ms;
        let mut actions = self.actions.clone();
        actions.push(a);
        let text = session_text(self.loader.text(), self.seed, self.file_seed, &actions);
        let sc = load(&self.loader, text).map_err(|e| format!("{e:#}"))?;
        self.actions = actions;
        self.current = sc;
        // The new entry is due now; apply it (and nothing later).
        self.advance(sim, ms * 1_000_000)
            .map_err(|e| e.to_string())?;
        Ok(sim.now_s())
    }

    fn publish(&self, sim: &Simulation, error: Option<String>, rates: (f64, f64)) {
        let rows = sim.rows();
        let now = sim.now_ns();
        let (measure, healthy) = self.health(sim, rows, now);
        let Ok(mut live) = self.shared.lock() else {
            return;
        };
        if live.run != self.run || live.rows.len() > rows.len() {
            live.rows.clear();
        }
        let have = live.rows.len();
        live.rows.extend_from_slice(&rows[have..]);
        live.run = self.run;
        live.seed = self.seed;
        live.now_s = ns_to_secs(now);
        live.end_s = ns_to_secs(sim.end_ns());
        live.status = if error.is_some() {
            "failed"
        } else if now >= sim.end_ns() {
            "finished"
        } else if self.paused {
            "paused"
        } else {
            "running"
        };
        live.speed = self.speed;
        (live.achieved_speed, live.updates_per_s) = rates;
        live.measure = measure;
        live.healthy = healthy;
        if live.log.len() != self.actions.len() {
            live.log = self.actions.clone();
        }
        live.error = error;
    }

    /// The tipping sweep's measure over the recent rows, and its verdict.
    fn health(
        &self,
        sim: &Simulation,
        rows: &[Vec<f64>],
        now: SimTime,
    ) -> (Option<f64>, Option<bool>) {
        let Some((m, h)) = &self.gauge else {
            return (None, None);
        };
        let Some(last) = rows.last() else {
            return (None, None);
        };
        let window = self.current.window;
        let to = crate::engine::time::secs_to_ns(last[0]).saturating_add(window);
        let span = (6 * window).max(60_000_000_000);
        let columns = crate::scenario::columns::columns(&self.current.config);
        let Ok(g) = Gauge::of(m, *h, &columns, to.saturating_sub(span), to) else {
            return (None, None);
        };
        let _ = (sim, now);
        let x = g.measure(rows, to);
        (x, x.map(|_| h.is_healthy(x)))
    }
}

/// (simulated seconds per wall second, ticks per second) over the last second.
fn rates(recent: &mut std::collections::VecDeque<(Instant, f64)>, now_s: f64) -> (f64, f64) {
    let t = Instant::now();
    recent.push_back((t, now_s));
    while recent
        .front()
        .is_some_and(|(w, _)| t.duration_since(*w) > Duration::from_secs(1))
    {
        recent.pop_front();
    }
    let (w0, s0) = recent[0];
    let dt = t.duration_since(w0).as_secs_f64();
    if dt <= 0.0 {
        return (0.0, 0.0);
    }
    ((now_s - s0) / dt, (recent.len() - 1) as f64 / dt)
}
