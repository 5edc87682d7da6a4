//! `brink serve`: a scenario run live in the browser. A local HTTP server (hyper, on
//! loopback unless told otherwise, every request guarded and bounded) serves one page, embedded in the binary with its chart
//! library ([uPlot](page)), that polls the run's rows ten times a second and drives it
//! with controls; every action that changes the system is an `[[at]]` entry, so a session
//! saves as a scenario file that `brink run` replays.
//!
//! | file | owns |
//! |---|---|
//! | [`session`] | the run thread: the clock, the actions, resets and extensions |
//! | [`text`] | the session's text: the file set up (seed, variant, duration) and its actions |
//! | [`controls`] | which controls a scenario gets (load, knobs, events, variants) |
//! | [`api`] | the HTTP routes, the checks of their bodies, the JSON errors |
//! | [`guard`] | who may drive the session: the token, `Host`, `Origin`, `Content-Type` |
//! | [`http`] | the HTTP plumbing: the accept loop, the limits and timeouts |
//! | [`tipping`] | the tipping picture: `tipping.json` from the output folder, or a quick sweep |
//! | [`page`] | the embedded page, script, styles and chart library |

pub mod api;
pub mod controls;
pub mod guard;
pub mod http;
pub mod listing;
pub mod page;
pub mod session;
pub mod text;
pub mod tipping;

use crate::engine::time::ns_to_secs;
use crate::scenario::{Loader, Override, ScenarioError};
use api::{App, Tipping};
use serde_json::json;
use session::Live;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// How to serve.
#[derive(Debug, Clone)]
pub struct Options {
    /// The address to listen on (loopback by default).
    pub bind: IpAddr,
    /// The port (0: a free one).
    pub port: u16,
    /// Simulated seconds per wall second at the start.
    pub speed: f64,
    /// The output folder where an earlier sweep's `tipping.json` may be.
    pub out: PathBuf,
    /// Run a quick tipping sweep when the output folder has none.
    pub sweep: bool,
    /// How long the run goes on, as typed (the file's `duration` when not given).
    pub duration: Option<String>,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("cannot listen on {addr}: {cause}")]
    Bind { addr: SocketAddr, cause: String },
    #[error("speed {0} is outside {lo} to {hi} simulated seconds per second", lo = session::SPEED_RANGE.0, hi = session::SPEED_RANGE.1)]
    Speed(f64),
    #[error(transparent)]
    Budget(#[from] crate::model::SimError),
    #[error("{0}")]
    Text(String),
    #[error("{0}")]
    Token(String),
    #[error("the server stopped: {0}")]
    Stopped(String),
}

/// A server that has bound its address and started its run thread.
pub struct Server {
    listener: std::net::TcpListener,
    addr: SocketAddr,
    guard: Arc<guard::Guard>,
    app: Arc<App>,
}

impl Server {
    /// Validates the scenario, binds the address and starts the run (and, if there is no
    /// `tipping.json`, the quick sweep) in threads of their own.
    pub fn start(loader: Loader, opts: &Options) -> Result<Self, ServeError> {
        let (lo, hi) = session::SPEED_RANGE;
        if !(lo..=hi).contains(&opts.speed) {
            return Err(ServeError::Speed(opts.speed));
        }
        let file = loader.load(None, &[])?;
        // The session as it starts: the file, run for `--duration` if given (checked as an
        // override of the file's `duration`, and against the memory ceiling).
        let sets: Vec<Override> = opts
            .duration
            .iter()
            .map(|d| {
                Override::new(
                    "duration",
                    toml::Value::String(d.clone()),
                    format!("--duration {d}"),
                )
            })
            .collect();
        let sc = loader.load(None, &sets)?;
        crate::model::budget::check_before(&sc).map_err(ServeError::Budget)?;
        let design = text::Design {
            duration: opts.duration.as_ref().map(|_| sc.duration),
            ..text::Design::of_file(file.seed)
        };
        let first =
            text::session_text(loader.text(), file.seed, &design, &[]).map_err(ServeError::Text)?;
        let addr = SocketAddr::new(opts.bind, opts.port);
        let listener = http::listen(addr).map_err(|e| ServeError::Bind {
            addr,
            cause: e.to_string(),
        })?;
        let addr = listener.local_addr().map_err(|e| ServeError::Bind {
            addr,
            cause: e.to_string(),
        })?;
        let guard = guard::Guard::new(addr).map_err(ServeError::Token)?;
        let controls = controls::Controls::of(&loader, &sc);
        let schema = crate::scenario::columns::columns(&sc.config);
        let columns: Vec<&str> = schema.iter().map(|c| c.name.as_str()).collect();
        let health = sc.tipping.as_ref().map(|t| {
            json!({
                "measure": t.measure_name,
                "healthy_above": t.health.healthy_above(),
                "healthy_below": t.health.healthy_below(),
                "vary": t.axis.path,
            })
        });
        let info = json!({
            "name": sc.name,
            "title": sc.title,
            "description": sc.description,
            "duration_s": ns_to_secs(sc.duration),
            "window_s": ns_to_secs(sc.window),
            "seed": sc.seed,
            "columns": columns,
            "controls": controls,
            "health": health,
            "version": env!("CARGO_PKG_VERSION"),
        });
        let live = Arc::new(Mutex::new(Live::new(&sc, opts.speed, &first)));
        let picture = match tipping::from_output(&opts.out, &loader) {
            Some(j) => Tipping::Ready(
                j,
                opts.out
                    .join(&loader.name)
                    .join("tipping.json")
                    .display()
                    .to_string(),
            ),
            None if sc.tipping.is_none() => {
                Tipping::None("the scenario has no [tipping] section".into())
            }
            None if !opts.sweep => Tipping::None("no tipping.json in the output folder".into()),
            None => Tipping::Running,
        };
        let running = matches!(picture, Tipping::Running);
        let picture = Arc::new(Mutex::new(picture));
        if running {
            let (l, p) = (loader.clone(), picture.clone());
            std::thread::spawn(move || {
                let r = match tipping::quick_sweep(&l) {
                    Ok(j) => Tipping::Ready(j, "a quick sweep at start (2 seeds)".into()),
                    Err(e) => Tipping::None(e),
                };
                if let Ok(mut slot) = p.lock() {
                    *slot = r;
                }
            });
        }
        let (tx, rx) = std::sync::mpsc::channel();
        {
            let (l, s, speed) = (loader.clone(), live.clone(), opts.speed);
            let knobs = controls.knobs.iter().map(|k| k.path.clone()).collect();
            std::thread::spawn(move || session::run_thread(l, design, knobs, speed, s, rx));
        }
        let app = Arc::new(App {
            name: loader.name.clone(),
            text: loader.text().to_string(),
            extend_by: file.duration,
            info,
            controls,
            columns: schema,
            live,
            tipping: picture,
            commands: Mutex::new(tx),
            index: page::index(guard.token()),
        });
        Ok(Self {
            listener,
            addr,
            guard: Arc::new(guard),
            app,
        })
    }

    /// The address listened on (with the port chosen when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A warning for people when the address is not loopback: anyone who can reach it can
    /// load the page, and with the page's token, drive the simulation.
    pub fn exposure_warning(&self) -> Option<String> {
        (!self.addr.ip().is_loopback()).then(|| {
            format!(
                "brink serve listens on {}, not on loopback: anyone who can reach this address can open the page and drive the simulation",
                self.addr
            )
        })
    }

    /// Answers requests until the process ends (`http`: one thread, bounded).
    pub fn serve(self) -> Result<(), ServeError> {
        http::serve(self.listener, self.app, self.guard, http::Limits::DEFAULT)
            .map_err(|e| ServeError::Stopped(e.to_string()))
    }
}
