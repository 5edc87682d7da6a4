//! The server's HTTP interface: the page and its assets, the state the page polls, the
//! controls, the saved session. Every refusal is a 4xx JSON `{"error": "..."}` naming the
//! problem, and changes nothing.

use super::controls::{self, Controls};
use super::page;
use super::session::{Command, Live, Reply as RunReply, SPEED_RANGE};
use super::text::Action;
use super::text::Variant;
use hyper::Method;
use serde_json::{Value as Json, json};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The largest request body read, in bytes: a control is a few dozen.
pub const MAX_BODY: usize = 16 * 1024;
/// How long a control waits for the run thread.
const REPLY_WAIT: Duration = Duration::from_secs(5);

/// The tipping picture, as the page sees it.
#[derive(Debug, Clone)]
pub enum Tipping {
    /// A quick sweep is running.
    Running,
    /// `tipping.json`'s content, and where it came from.
    Ready(Json, String),
    /// None, and why.
    None(String),
}

/// What the handlers share.
pub struct App {
    pub name: String,
    pub text: String,
    /// How much longer `extend` runs when the page does not say: the file's duration.
    pub extend_by: crate::engine::time::SimTime,
    pub info: Json,
    pub controls: Controls,
    /// The time-series schema of the run.
    pub columns: Vec<crate::scenario::Column>,
    pub live: Arc<Mutex<Live>>,
    pub tipping: Arc<Mutex<Tipping>>,
    pub commands: Mutex<Sender<(Command, Sender<RunReply>)>>,
    /// The page, with the session's token in its `<meta name="brink-token">`.
    pub index: String,
}

/// A refusal: status and message.
pub type Refusal = (u16, String);

/// A request as the routes see it: read in full (the body bounded) and checked by the
/// guard (`super::guard`) before it comes here.
pub struct Request<'a> {
    /// The method.
    pub method: &'a Method,
    /// The path, without the query.
    pub path: &'a str,
    /// The query, without `?` (empty when none).
    pub query: &'a str,
    /// The body (at most [`MAX_BODY`] bytes).
    pub body: &'a [u8],
}

/// An answer: status, content type, other headers, body.
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The `Content-Type`.
    pub kind: &'static str,
    /// Other headers.
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Reply {
    /// A JSON answer, never cached.
    pub fn json(status: u16, body: &Json) -> Self {
        Self {
            status,
            kind: "application/json",
            headers: vec![("Cache-Control", "no-store".into())],
            body: serde_json::to_vec(body).unwrap_or_default(),
        }
    }

    /// A refusal as JSON: `{"error": "..."}`.
    pub fn error(status: u16, msg: &str) -> Self {
        Self::json(status, &json!({ "error": msg }))
    }

    fn bytes(kind: &'static str, body: Vec<u8>) -> Self {
        Self {
            status: 200,
            kind,
            headers: vec![],
            body,
        }
    }
}

/// Whether a request to `path` with `method` is a control: the one route that changes
/// the session, which the guard checks further.
pub fn is_control(method: &Method, path: &str) -> bool {
    method == Method::POST && path == "/api/control"
}

/// Whether the route is the page's or an asset's (answered at once, nothing shared read).
pub fn is_asset(path: &str) -> bool {
    !path.starts_with("/api/")
}

/// Answers one request.
pub fn handle(app: &App, req: &Request) -> Reply {
    let (method, path, query) = (req.method, req.path, req.query);
    let response = match (method, path) {
        (&Method::GET, "/") => Ok(no_store(Reply::bytes(
            "text/html; charset=utf-8",
            app.index.clone().into_bytes(),
        ))),
        (&Method::GET, "/app.js") => Ok(asset(page::APP_JS, "text/javascript")),
        (&Method::GET, "/app.css") => Ok(asset(page::APP_CSS, "text/css")),
        (&Method::GET, "/uplot.js") => Ok(asset(page::UPLOT_JS, "text/javascript")),
        (&Method::GET, "/uplot.css") => Ok(asset(page::UPLOT_CSS, "text/css")),
        (&Method::GET, "/api/info") => Ok(Reply::json(200, &app.info)),
        (&Method::GET, "/api/state") => state(app, query).map(|j| Reply::json(200, &j)),
        (&Method::GET, "/api/tipping") => Ok(Reply::json(200, &tipping(app))),
        (&Method::GET, "/api/markers") => Ok(Reply::json(200, &markers(app))),
        (&Method::GET, "/api/session") => Ok(session(app)),
        (&Method::GET, "/api/timeseries.csv") => Ok(timeseries(app)),
        (&Method::POST, "/api/control") => control(app, req.body).map(|j| Reply::json(200, &j)),
        (_, "/" | "/app.js" | "/app.css" | "/uplot.js" | "/uplot.css")
        | (_, "/api/info" | "/api/state" | "/api/tipping" | "/api/session" | "/api/markers")
        | (_, "/api/timeseries.csv") => {
            Err((405, format!("{method} is not allowed on {path}; use GET")))
        }
        (_, "/api/control") => Err((
            405,
            format!("{method} is not allowed on {path}; use POST with a JSON body"),
        )),
        _ => Err((404, format!("no such page `{path}`"))),
    };
    response.unwrap_or_else(|(status, msg)| Reply::error(status, &msg))
}

fn no_store(mut r: Reply) -> Reply {
    r.headers.push(("Cache-Control", "no-store".into()));
    r
}

fn asset(body: &'static str, kind: &'static str) -> Reply {
    Reply::bytes(kind, body.as_bytes().to_vec())
}

/// `since=N&run=R`: the rows from N of run R (all rows if the run has changed).
fn state(app: &App, query: &str) -> Result<Json, Refusal> {
    let mut since = 0usize;
    let mut run = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let n = v
            .parse::<u64>()
            .map_err(|_| (400, format!("`{k}` must be a whole number; got `{v}`")))?;
        match k {
            "since" => since = n as usize,
            "run" => run = Some(n),
            _ => return Err((400, format!("unknown parameter `{k}` (known: since, run)"))),
        }
    }
    let live = app
        .live
        .lock()
        .map_err(|_| (500, "the session state is unavailable".to_string()))?;
    if run != Some(live.run) {
        since = 0;
    }
    let since = since.min(live.rows.len());
    let mut j = serde_json::to_value(&*live).unwrap_or(Json::Null);
    j["from"] = json!(since);
    j["rows"] = json!(live.rows[since..]);
    Ok(j)
}

/// The session's events (each occurrence, `start_s` to `end_s`) and interventions (at
/// `start_s`), in time order: the bands and lines on the charts.
fn markers(app: &App) -> Json {
    match app.live.lock() {
        Ok(l) => json!({ "run": l.run, "markers": *l.markers }),
        Err(_) => json!({ "markers": [] }),
    }
}

fn tipping(app: &App) -> Json {
    match app.tipping.lock().map(|t| t.clone()) {
        Ok(Tipping::Ready(data, source)) => {
            json!({ "status": "ready", "source": source, "data": data })
        }
        Ok(Tipping::Running) => json!({ "status": "running" }),
        Ok(Tipping::None(why)) => json!({ "status": "none", "note": why }),
        Err(_) => json!({ "status": "none", "note": "unavailable" }),
    }
}

/// The session as a scenario file: the file as the session was set up (seed, variant,
/// duration), and an `[[at]]` entry per action.
fn session(app: &App) -> Reply {
    let text = match app.live.lock() {
        Ok(l) => l.text.to_string(),
        Err(_) => app.text.clone(),
    };
    let mut r = Reply::bytes("application/toml; charset=utf-8", text.into_bytes());
    r.headers.push((
        "Content-Disposition",
        format!("attachment; filename=\"{}-session.toml\"", app.name),
    ));
    no_store(r)
}

/// The rows so far as `timeseries.csv`, written by the same exporter as `brink run`: the
/// session's file replayed by `brink run` writes these lines first.
fn timeseries(app: &App) -> Reply {
    let rows = app.live.lock().map(|l| l.rows.clone()).unwrap_or_default();
    let ts = crate::model::TimeSeries {
        columns: app.columns.clone(),
        rows,
    };
    no_store(Reply::bytes(
        "text/csv; charset=utf-8",
        crate::export::timeseries_csv(&ts),
    ))
}

const CONTROLS: [&str; 9] = [
    "pause", "resume", "reset", "seed", "speed", "extend", "set", "fire", "variant",
];

/// The fields each control takes besides `control`.
const FIELDS: [(&str, &[&str]); 9] = [
    ("pause", &[]),
    ("resume", &[]),
    ("reset", &["variant"]),
    ("seed", &["value"]),
    ("speed", &["value"]),
    ("extend", &["by"]),
    ("set", &["path", "value"]),
    ("fire", &["event"]),
    ("variant", &["name"]),
];

/// The body as a JSON object whose keys are each given once.
fn read_object(body: &[u8]) -> Result<serde_json::Map<String, Json>, Refusal> {
    // Read as a list of entries: serde_json's own map would keep the last of repeated keys.
    let Entries(entries) = serde_json::from_slice(body).map_err(|e| {
        let msg = if e.is_data() {
            "the body must be a JSON object, e.g. {\"control\": \"pause\"}".to_string()
        } else {
            format!("the body is not JSON: {e}")
        };
        (400, msg)
    })?;
    let mut obj = serde_json::Map::new();
    for (k, v) in entries {
        if obj.contains_key(&k) {
            return Err((400, format!("the body gives `{k}` more than once")));
        }
        obj.insert(k, v);
    }
    Ok(obj)
}

/// A JSON object's entries in order, repeated keys kept.
struct Entries(Vec<(String, Json)>);

impl<'de> serde::Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = m.next_entry::<String, Json>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// Carries out the control the JSON body (read, bounded) asks for; waits for the run
/// thread's answer (at most 5 s), so it runs off the server's own thread.
fn control(app: &App, body: &[u8]) -> Result<Json, Refusal> {
    let obj = read_object(body)?;
    let name = obj
        .get("control")
        .and_then(Json::as_str)
        .ok_or_else(|| (400, "`control` (a string) is missing".to_string()))?;
    if let Some((_, fields)) = FIELDS.iter().find(|(c, _)| *c == name) {
        // A misspelt field would otherwise be a different action (a reset without its
        // variant): refused.
        for k in obj.keys() {
            if k != "control" && !fields.contains(&k.as_str()) {
                let known = if fields.is_empty() {
                    "none".to_string()
                } else {
                    fields.join(", ")
                };
                return Err((
                    400,
                    format!(
                        "control `{name}` takes no field `{k}` (its fields: {known}){}",
                        crate::scenario::validate::did_you_mean(k, fields.iter().copied())
                    ),
                ));
            }
        }
    }
    let field = |k: &str| {
        obj.get(k)
            .ok_or_else(|| (400, format!("control `{name}` needs `{k}`")))
    };
    let cmd = match name {
        "pause" => Command::Pause,
        "resume" => Command::Resume,
        "reset" => match obj.get("variant") {
            None => Command::Reset(None),
            Some(Json::Null) => Command::Reset(Some(None)),
            Some(Json::String(v)) => {
                let b = by_name(&app.controls.variants, v, "variant", |b| &b.name)?;
                Command::Reset(Some(Some(Variant {
                    name: b.name.clone(),
                    set: b.set.clone(),
                })))
            }
            Some(v) => {
                return Err((
                    400,
                    format!(
                        "`variant` takes a variant's name, or null for the file as it is; got {v}"
                    ),
                ));
            }
        },
        "seed" => {
            let v = field("value")?;
            Command::Seed(
                v.as_u64()
                    .filter(|s| i64::try_from(*s).is_ok())
                    .ok_or_else(|| {
                        (
                            400,
                            format!(
                                "`seed` takes a whole number from 0 to {}; got {v}",
                                i64::MAX
                            ),
                        )
                    })?,
            )
        }
        "extend" => {
            let by = match obj.get("by") {
                None => app.extend_by,
                Some(Json::String(t)) => crate::engine::time::parse_duration(t)
                    .ok()
                    .filter(|d| *d > 0)
                    .ok_or_else(|| {
                        (
                            400,
                            format!("`by` takes a duration such as \"30m\"; got {t:?}"),
                        )
                    })?,
                Some(v) => {
                    return Err((
                        400,
                        format!("`by` takes a duration such as \"30m\"; got {v}"),
                    ));
                }
            };
            Command::Extend(by)
        }
        "speed" => {
            let v = field("value")?;
            let (lo, hi) = SPEED_RANGE;
            match v.as_f64() {
                Some(x) if (lo..=hi).contains(&x) => Command::Speed(x),
                _ => {
                    return Err((
                        400,
                        format!(
                            "`speed` takes a number of simulated seconds per second from {lo} to {hi}; got {v}"
                        ),
                    ));
                }
            }
        }
        "set" => {
            let path = field("path")?
                .as_str()
                .ok_or_else(|| (400, "`path` must be a string".to_string()))?;
            let Some(k) = app.controls.knob(path) else {
                let known: Vec<&str> = app.controls.knobs.iter().map(|k| k.path.as_str()).collect();
                return Err((
                    400,
                    format!(
                        "no control `{path}` (controls: {}){}",
                        known.join(", "),
                        crate::scenario::validate::did_you_mean(path, known.iter().copied())
                    ),
                ));
            };
            let value = controls::toml_value(k, field("value")?).map_err(|m| (400, m))?;
            Command::Act(Action {
                time_ms: 0,
                label: format!("live: {path} = {value}"),
                set: vec![(path.to_string(), value)],
                fire: None,
            })
        }
        "fire" => {
            let e = field("event")?
                .as_str()
                .ok_or_else(|| (400, "`event` must be a string".to_string()))?;
            let b = by_name(&app.controls.events, e, "event", |b| &b.name)?;
            Command::Act(Action {
                time_ms: 0,
                label: format!("live: fire {}", b.name),
                set: vec![],
                fire: Some(b.name.clone()),
            })
        }
        "variant" => {
            let v = field("name")?
                .as_str()
                .ok_or_else(|| (400, "`name` must be a string".to_string()))?;
            let b = by_name(&app.controls.variants, v, "variant", |b| &b.name)?;
            if !b.live {
                return Err((
                    422,
                    format!(
                        "variant `{v}` replaces the [[at]] list, so it cannot start in the middle of a run; start over with it: {{\"control\": \"reset\", \"variant\": \"{v}\"}}"
                    ),
                ));
            }
            Command::Act(Action {
                time_ms: 0,
                label: format!("live: variant {v}"),
                set: b.set.clone(),
                fire: None,
            })
        }
        _ => {
            return Err((
                400,
                format!(
                    "unknown control `{name}` (controls: {}){}",
                    CONTROLS.join(", "),
                    crate::scenario::validate::did_you_mean(name, CONTROLS)
                ),
            ));
        }
    };
    let (tx, rx) = std::sync::mpsc::channel();
    app.commands
        .lock()
        .map_err(|_| (500, "the run thread is unavailable".to_string()))?
        .send((cmd, tx))
        .map_err(|_| (503, "the run thread has stopped".to_string()))?;
    match rx.recv_timeout(REPLY_WAIT) {
        Ok(Ok(t)) => Ok(json!({ "ok": true, "control": name, "time_s": t })),
        Ok(Err(msg)) => Err((422, msg)),
        Err(_) => Err((503, "the run thread did not answer".to_string())),
    }
}

/// The item of `items` called `name`, or a 400 naming what there is (`what`: `event`,
/// `variant`) with a did-you-mean.
fn by_name<'a, T>(
    items: &'a [T],
    name: &str,
    what: &str,
    name_of: impl Fn(&T) -> &String,
) -> Result<&'a T, (u16, String)> {
    if let Some(b) = items.iter().find(|b| name_of(b) == name) {
        return Ok(b);
    }
    let known: Vec<&str> = items.iter().map(|b| name_of(b).as_str()).collect();
    let list = if known.is_empty() {
        "none".to_string()
    } else {
        known.join(", ")
    };
    Err((
        400,
        format!(
            "no {what} `{name}` ({what}s: {list}){}",
            crate::scenario::validate::did_you_mean(name, known.iter().copied())
        ),
    ))
}
