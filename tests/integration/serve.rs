//! `brink serve` without a browser (issue 13): the server's API driven over HTTP. Bad
//! input is refused with a 4xx JSON error and changes nothing; a session saved as a
//! scenario file replays under `brink run` to the same rows, byte for byte.

use crate::common::brink_bin;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `brink serve`, stopped when dropped.
pub struct Served {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The session's token, read from the page's `<meta name="brink-token">`.
    pub token: String,
}

impl Served {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `brink serve FILE ARGS` on a free port in `cwd`, reads the address it prints and
/// starts the clock (the run starts paused), as the page's Start button does.
pub fn serve(file: &str, args: &[&str], cwd: &Path) -> Served {
    let s = serve_paused(file, args, cwd);
    let (status, j) = control(&s, r#"{"control": "resume"}"#);
    assert_eq!(status, 200, "{j}");
    s
}

/// Starts `brink serve FILE ARGS` on a free port in `cwd` and reads the address it prints;
/// the run waits, paused at time zero.
pub fn serve_paused(file: &str, args: &[&str], cwd: &Path) -> Served {
    let mut child = Command::new(brink_bin())
        .arg("serve")
        .arg(file)
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("brink serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("brink serve: http://")
        .and_then(|a| a.strip_suffix('/'))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    assert!(
        addr.starts_with("127.0.0.1:"),
        "listens on loopback: {addr}"
    );
    let token = token_of(&addr);
    Served { child, addr, token }
}

/// The token in the page served at `addr`.
pub fn token_of(addr: &str) -> String {
    let (status, page) = request(addr, "GET", "/", &[], b"");
    assert_eq!(status, 200);
    let page = String::from_utf8(page).unwrap();
    let meta = "<meta name=\"brink-token\" content=\"";
    let at = page.find(meta).expect("the page carries the token") + meta.len();
    page[at..at + 32].to_string()
}

/// `serve` as fast as it goes, without the tipping sweep, for `duration`.
fn serve_fast(file: &str, duration: &str, cwd: &Path) -> Served {
    serve(
        file,
        &["--no-sweep", "--speed", "100000", "--duration", duration],
        cwd,
    )
}

/// One HTTP/1.0 request as the page sends it (its Host, JSON, the token); returns
/// (status, body).
pub fn http(s: &Served, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let headers = [
        ("Content-Type", "application/json"),
        ("X-Brink-Token", s.token.as_str()),
    ];
    request(&s.addr, method, path, &headers, body)
}

/// One HTTP/1.0 request to `addr` with `Host: addr` and these headers; returns (status,
/// body).
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.0\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head += &format!("Host: {addr}\r\n");
    }
    for (k, v) in headers {
        head += &format!("{k}: {v}\r\n");
    }
    head += &format!("Content-Length: {}\r\n\r\n", body.len());
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header");
    let status = String::from_utf8_lossy(&out[..split])
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status");
    (status, out[split + 4..].to_vec())
}

/// POSTs a control; returns (status, JSON answer).
pub fn control(addr: &Served, body: &str) -> (u16, serde_json::Value) {
    let (status, b) = http(addr, "POST", "/api/control", body.as_bytes());
    (status, serde_json::from_slice(&b).expect("a JSON answer"))
}

/// The state, without rows.
pub fn state(addr: &Served) -> serde_json::Value {
    let (status, b) = http(addr, "GET", "/api/state", b"");
    assert_eq!(status, 200);
    let mut j: serde_json::Value = serde_json::from_slice(&b).unwrap();
    j["rows"] = serde_json::Value::Null;
    j
}

/// Waits (at most two minutes) until `ok` holds of the state.
pub fn wait_for(
    addr: &Served,
    what: &str,
    ok: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let start = Instant::now();
    loop {
        let s = state(addr);
        if ok(&s) {
            return s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "waited two minutes for {what}; state {s}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Saves the session and replays it with `brink run`: returns (the live rows as CSV, the
/// run's timeseries.csv).
pub fn save_and_replay(addr: &Served, dir: &Path) -> (String, String) {
    let (status, text) = http(addr, "GET", "/api/session", b"");
    assert_eq!(status, 200);
    std::fs::write(dir.join("session.toml"), &text).unwrap();
    let (status, live) = http(addr, "GET", "/api/timeseries.csv", b"");
    assert_eq!(status, 200);
    let o = Command::new(brink_bin())
        .args(["run", "session.toml", "--out", "replay"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = std::fs::read_to_string(dir.join("replay/session/timeseries.csv")).unwrap();
    (String::from_utf8(live).unwrap(), run)
}

#[test]
fn bad_requests_get_a_4xx_json_error_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve("retry-storm", &["--no-sweep", "--speed", "10"], dir.path());
    let a = &s;
    let cases: [(&str, u16, &str); 12] = [
        (r#"{"control": "zap"}"#, 400, "unknown control `zap`"),
        (
            r#"{"control": "reset", "varient": "lifo"}"#,
            400,
            "control `reset` takes no field `varient` (its fields: variant); did you mean `variant`?",
        ),
        (
            r#"{"control": "pause", "control": "resume"}"#,
            400,
            "gives `control` more than once",
        ),
        (
            r#"{"control": "fire", "event": "slowdown", "extra": 1}"#,
            400,
            "takes no field `extra`",
        ),
        (
            r#"{"control": "firee", "event": "slowdown"}"#,
            400,
            "did you mean `fire`?",
        ),
        (
            r#"{"control": "fire", "event": "slowdwn"}"#,
            400,
            "did you mean `slowdown`?",
        ),
        (
            r#"{"control": "set", "path": "pool.server.wrkers", "value": 3}"#,
            400,
            "no control `pool.server.wrkers`",
        ),
        (
            r#"{"control": "set", "path": "pool.server.workers", "value": 0}"#,
            422,
            "must be a whole number from 1",
        ),
        (
            r#"{"control": "set", "path": "pool.server.workers", "value": "many"}"#,
            400,
            "takes a whole number",
        ),
        (
            r#"{"control": "speed", "value": -5}"#,
            400,
            "`speed` takes a number",
        ),
        (
            r#"{"control": "set", "path": "pool.server.discipline", "value": "random"}"#,
            400,
            "one of fifo, lifo",
        ),
        ("not json", 400, "not JSON"),
    ];
    for (body, want, says) in cases {
        let (status, j) = control(a, body);
        let msg = j["error"].as_str().unwrap_or("");
        assert_eq!(status, want, "{body}: {j}");
        assert!(msg.contains(says), "{body}: {msg:?} should say {says:?}");
    }
    let (status, _) = http(a, "POST", "/api/control", &vec![b' '; 20_000]);
    assert_eq!(status, 413, "a body over the bound");
    assert_eq!(http(a, "GET", "/nowhere", b"").0, 404);
    assert_eq!(http(a, "DELETE", "/api/state", b"").0, 405);
    assert_eq!(http(a, "GET", "/api/state?since=x", b"").0, 400);
    // Nothing changed: no action logged, the saved session is the file itself.
    let st = state(a);
    assert_eq!(st["log"], serde_json::json!([]));
    assert_eq!(st["speed"], 10.0);
    let (_, text) = http(a, "GET", "/api/session", b"");
    let bundled = brink::scenario::bundled::find("retry-storm").unwrap().text;
    assert_eq!(String::from_utf8(text).unwrap(), bundled);
}

/// retry-storm served in `dir` at 600x, its slowdown fired live after a minute.
fn fired_after_a_minute(dir: &Path) -> Served {
    let s = serve("retry-storm", &["--no-sweep", "--speed", "600"], dir);
    wait_for(&s, "one minute", |s| s["now_s"].as_f64() > Some(60.0));
    let (status, j) = control(&s, r#"{"control": "fire", "event": "slowdown"}"#);
    assert_eq!(status, 200, "{j}");
    s
}

#[test]
fn a_saved_session_replays_to_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let s = fired_after_a_minute(dir.path());
    let a = &s;
    // Firing it again while it runs is refused.
    let (status, j) = control(a, r#"{"control": "fire", "event": "slowdown"}"#);
    assert_eq!(status, 422, "{j}");
    let st = wait_for(a, "four minutes", |s| s["now_s"].as_f64() > Some(240.0));
    assert_eq!(st["healthy"], false, "stuck after the fired slowdown: {st}");
    // The run so far in words (issue 24 item 4): the live-fired slowdown, the fall, and
    // no end yet ("so far"), every sentence timed by now.
    let told: Vec<&str> = st["narrative"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["text"].as_str().unwrap())
        .collect();
    assert!(told.iter().any(|t| t.contains("begins")), "{told:?}");
    assert!(
        told.iter().any(|t| t.contains("falls below healthy")),
        "{told:?}"
    );
    assert!(
        !told.iter().any(|t| t.contains("end of the run")),
        "{told:?}"
    );
    // The system drawn from the rows so far (issue 24 item 5): the retry loop highlighted,
    // told "to now", the rates over the run so far's stretch.
    let drawn = st["structure"].as_str().unwrap();
    assert!(
        drawn.starts_with("<svg ") && drawn.contains("viewBox"),
        "{drawn}"
    );
    assert!(drawn.contains("timeouts come back as retries"), "{drawn}");
    assert!(drawn.contains(" to now ("), "{drawn}");
    let now = st["now_s"].as_f64().unwrap();
    assert!(
        st["narrative"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["t_s"].as_f64().unwrap() <= now)
    );
    let (status, j) = control(
        a,
        r#"{"control": "set", "path": "class.request.rate_limit.rate", "value": 80}"#,
    );
    assert_eq!(status, 200, "{j}");
    let (status, _) = control(a, r#"{"control": "speed", "value": 100000}"#);
    assert_eq!(status, 200);
    let st = wait_for(a, "the end", |s| s["status"] == "finished");
    assert_eq!(st["healthy"], true, "recovered under the rate limit: {st}");
    assert_eq!(
        st["log"].as_array().unwrap().len(),
        2,
        "fire, rate limit: {st}"
    );
    let (live, run) = save_and_replay(a, dir.path());
    assert_eq!(live.lines().count(), 1 + 1800 / 5, "every row of the run");
    assert_eq!(live, run, "the replay writes the live rows, byte for byte");
}

#[test]
fn reset_and_seed_start_again() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve("retry-storm", &["--no-sweep", "--speed", "600"], dir.path());
    let a = &s;
    wait_for(a, "a minute", |s| s["now_s"].as_f64() > Some(60.0));
    assert_eq!(
        control(
            a,
            r#"{"control": "set", "path": "class.request.rate", "value": 50}"#
        )
        .0,
        200
    );
    assert_eq!(control(a, r#"{"control": "seed", "value": 7}"#).0, 200);
    let st = wait_for(a, "the new run", |s| s["run"] == 1 && s["seed"] == 7);
    assert_eq!(
        st["log"],
        serde_json::json!([]),
        "a reset forgets the actions"
    );
    let (_, text) = http(a, "GET", "/api/session", b"");
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("seed = 7"),
        "the saved file has the seed in use"
    );
    assert!(
        brink::scenario::Loader::from_text("s.toml", "s", text)
            .unwrap()
            .load(None, &[])
            .is_ok()
    );
}

#[test]
fn a_run_extended_live_replays_from_its_saved_file() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve_fast("retry-storm", "10m", dir.path());
    let a = &s;
    let st = wait_for(a, "the end of ten minutes", |s| s["status"] == "finished");
    assert_eq!(st["end_s"], 600.0, "--duration sets the run's length: {st}");
    let (status, j) = control(
        a,
        r#"{"control": "set", "path": "class.request.rate", "value": 50}"#,
    );
    assert_eq!(status, 422, "{j}");
    assert!(j["error"].as_str().unwrap().contains("extend it"), "{j}");
    // Paused, so that the action is taken at the old end: at 100,000x the five minutes
    // more last 3 ms, which a busy machine can spend between two requests.
    let (status, _) = control(a, r#"{"control": "pause"}"#);
    assert_eq!(status, 200);
    let (status, j) = control(a, r#"{"control": "extend", "by": "5m"}"#);
    assert_eq!(status, 200, "{j}");
    assert_eq!(j["time_s"], 600.0, "extended where the run was: {j}");
    assert_eq!(state(a)["end_s"], 900.0, "the new end");
    let (status, j) = control(
        a,
        r#"{"control": "set", "path": "class.request.rate", "value": 50}"#,
    );
    assert_eq!(status, 200, "an action after the extension: {j}");
    assert_eq!(j["time_s"], 600.0, "{j}");
    let (status, _) = control(a, r#"{"control": "resume"}"#);
    assert_eq!(status, 200);
    let st = wait_for(a, "the new end", |s| s["status"] == "finished");
    assert_eq!(st["end_s"], 900.0, "{st}");
    // The charts' markers: the file's slowdown at 5:00 and the action just taken.
    let (_, m) = http(a, "GET", "/api/markers", b"");
    let m: serde_json::Value = serde_json::from_slice(&m).unwrap();
    let m = m["markers"].as_array().unwrap();
    assert_eq!(m.len(), 2, "{m:?}");
    assert_eq!(
        (m[0]["kind"].as_str(), m[0]["start_s"].as_f64()),
        (Some("event"), Some(300.0))
    );
    assert_eq!(m[0]["end_s"], 320.0);
    assert_eq!(m[1]["kind"], "intervention");
    assert_eq!(m[1]["label"], "live: class.request.rate = 50");
    // Without `by`, the page runs on for the file's own duration (30 minutes).
    let (status, j) = control(a, r#"{"control": "extend"}"#);
    assert_eq!(status, 200, "{j}");
    assert_eq!(state(a)["end_s"], 2700.0, "{j}");
    let st = wait_for(a, "the end", |s| s["status"] == "finished");
    assert_eq!(st["log"].as_array().unwrap().len(), 1, "{st}");
    let (_, text) = http(a, "GET", "/api/session", b"");
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("duration = \"45m\""), "{text}");
    let (live, run) = save_and_replay(a, dir.path());
    assert_eq!(live.lines().count(), 1 + 2700 / 5, "every row of the run");
    assert_eq!(live, run, "the replay writes the live rows, byte for byte");
}

#[test]
fn a_variant_that_replaces_the_timeline_starts_over_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve_fast("slack-2022-02-22", "40m", dir.path());
    let a = &s;
    // Its knobs are what an intervention may change: not the cache tier's control plane,
    // which a variant changes (that variant runs with "start over").
    let (_, info) = http(a, "GET", "/api/info", b"");
    let info: serde_json::Value = serde_json::from_slice(&info).unwrap();
    let knobs: Vec<&str> = info["controls"]["knobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["path"].as_str().unwrap())
        .collect();
    assert!(knobs.contains(&"class.boot.rate_limit.rate"), "{knobs:?}");
    assert!(
        !knobs.iter().any(|k| k.starts_with("cache.")),
        "no knob an intervention may not set: {knobs:?}"
    );
    // Slack's variants drop its remediation timeline: they cannot start mid-run...
    let (status, j) = control(a, r#"{"control": "variant", "name": "no-response"}"#);
    assert_eq!(status, 422, "{j}");
    assert!(
        j["error"].as_str().unwrap().contains("\"reset\""),
        "the error says how: {j}"
    );
    // ...but a run can start over with one, keeping the length asked for.
    let (status, j) = control(a, r#"{"control": "reset", "variant": "no-response"}"#);
    assert_eq!(status, 200, "{j}");
    let st = wait_for(a, "the variant's run", |s| {
        s["variant"] == "no-response" && s["status"] == "finished"
    });
    assert_eq!(st["end_s"], 2400.0, "{st}");
    let (_, text) = http(a, "GET", "/api/session", b"");
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.starts_with("# Set up by brink serve: variant `no-response` applied from the start"),
        "{}",
        &text[..200]
    );
    assert!(!text.contains("\n[[at]]"), "no interventions are left");

    let (live, run) = save_and_replay(a, dir.path());
    assert_eq!(live.lines().count(), 1 + 2400 / 30);
    assert_eq!(live, run, "the replay writes the live rows, byte for byte");
    // Back to the file as it is.
    let (status, j) = control(a, r#"{"control": "reset", "variant": null}"#);
    assert_eq!(status, 200, "{j}");
    wait_for(a, "the file's run", |s| {
        s["variant"].is_null() && s["run"] == 2
    });
    for (body, says) in [
        (
            r#"{"control": "reset", "variant": "no-respons"}"#,
            "did you mean `no-response`?",
        ),
        (r#"{"control": "reset", "variant": 3}"#, "`variant` takes"),
        (
            r#"{"control": "extend", "by": "soon"}"#,
            "`by` takes a duration",
        ),
        (
            r#"{"control": "extend", "by": "0s"}"#,
            "`by` takes a duration",
        ),
    ] {
        let (status, j) = control(a, body);
        assert_eq!(status, 400, "{body}: {j}");
        assert!(j["error"].as_str().unwrap().contains(says), "{body}: {j}");
    }
}

#[test]
fn a_refused_action_names_the_key_not_a_place_in_the_session_text() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve("retry-storm", &["--no-sweep", "--speed", "1"], dir.path());
    let a = &s;
    for (body, says) in [
        (
            r#"{"control": "set", "path": "class.request.rate_limit.rate", "value": -5}"#,
            "`class.request.rate_limit.rate`: must be a finite number >= 0, not -5",
        ),
        (
            r#"{"control": "set", "path": "pool.server.workers", "value": 0}"#,
            "`pool.server.workers`: must be a whole number from 1",
        ),
    ] {
        let (status, j) = control(a, body);
        let msg = j["error"].as_str().unwrap();
        assert_eq!(status, 422, "{body}: {j}");
        assert!(msg.starts_with(says), "{body}: {msg}");
        assert!(!msg.contains(".toml"), "no place in generated text: {msg}");
    }
    // Firing an event that is still running: said without the entry's generated path.
    assert_eq!(
        control(a, r#"{"control": "fire", "event": "slowdown"}"#).0,
        200
    );
    let (status, j) = control(a, r#"{"control": "fire", "event": "slowdown"}"#);
    let msg = j["error"].as_str().unwrap();
    assert_eq!(status, 422, "{j}");
    assert!(
        msg.starts_with("event `slowdown` would still be running"),
        "{msg}"
    );
    // A duration knob takes a duration, checked before the run thread sees it.
    let (status, j) = control(
        a,
        r#"{"control": "set", "path": "class.request.retry.base", "value": "soon"}"#,
    );
    assert_eq!(status, 400, "{j}");
    let (status, j) = control(
        a,
        r#"{"control": "set", "path": "class.request.retry.base", "value": "250ms"}"#,
    );
    assert_eq!(status, 200, "{j}");
}

#[test]
fn a_bad_duration_is_refused_before_serving() {
    for (arg, says) in [("banana", "--duration banana"), ("0s", "--duration 0s")] {
        let o = Command::new(brink_bin())
            .args(["serve", "retry-storm", "--no-sweep", "--duration", arg])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{arg}: {err}");
        assert!(err.contains(says), "{arg}: {err}");
    }
}

/// A service at 40% utilisation whose rate limit refuses 43% of its load (issue 21, item
/// 4): unhealthy by its goodput ratio, but by the design's own choice.
pub const RATE_LIMITED: &str = r#"
title = "Rate limited: refuses 43% at the front door, serves the rest in time"
duration = "5m"
seed = 1

[metrics]
step = "5s"

[class.api]
rate = 100
timeout = "1s"
rate_limit = { rate = 57, burst = 10 }
steps = [{ query = "server" }]

[pool.server]
workers = 10
service = { law = "exp", mean = "70ms" }   # 57/s admitted x 70 ms / 10 workers = 40%

[event.blip]
kind = "slowdown"
pool = "server"
at = "10s"
for = "1s"
factor = 1.5

[tipping]
vary = "class.api.rate"
from = 50
to = 200
points = 4
trigger = ["blip"]
settle = "10s"
measure = "goodput_ratio.api"
healthy_above = 0.8
"#;

/// The state at the end of `file` served as fast as it goes for `duration`, after checking
/// that it is unhealthy by its measure (the old field keeps its meaning) with this
/// verdict and cause; returns (its share, its verdict for people).
fn unhealthy_at_the_end(
    file: &str,
    duration: &str,
    dir: &Path,
    verdict: &str,
    cause: &str,
) -> (f64, String) {
    let s = serve_fast(file, duration, dir);
    let st = wait_for(&s, "the end", |s| s["status"] == "finished");
    assert_eq!(st["healthy"], false, "{file}: {st}");
    assert_eq!(
        (&st["verdict"], &st["cause"]),
        (&verdict.into(), &cause.into()),
        "{file}: {st}"
    );
    let share = st["share"].as_f64().unwrap_or(f64::NAN);
    (share, st["verdict_text"].as_str().unwrap_or("").to_string())
}

/// The page's verdict names its cause: a design that refuses load at its rate limit and
/// serves the rest in time is degraded (amber), not stuck; a retry storm after its trigger
/// is stuck, and says why.
#[test]
fn the_verdict_names_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("limited.toml"), RATE_LIMITED).unwrap();
    let (share, text) =
        unhealthy_at_the_end("limited.toml", "5m", dir.path(), "degraded", "rate_limit");
    assert!(
        (0.38..0.48).contains(&share),
        "about 43% refused: {share} {text}"
    );
    assert!(
        text.starts_with("degraded: shedding 4") && text.ends_with("% at the rate limit"),
        "{text}"
    );
    let (share, text) =
        unhealthy_at_the_end("retry-storm", "30m", dir.path(), "stuck", "expired_work");
    assert!(
        text.ends_with("% timed out, queue full of expired work"),
        "{text}"
    );
    assert!(share > 0.5, "most requests fail: {share} {text}");
}

/// The markers of the session, from `/api/markers`.
fn markers(a: &Served) -> Vec<serde_json::Value> {
    let (status, b) = http(a, "GET", "/api/markers", b"");
    assert_eq!(status, 200);
    let j: serde_json::Value = serde_json::from_slice(&b).unwrap();
    j["markers"].as_array().unwrap().clone()
}

/// The live page, fixed (issue 24 item 7), as the API gives it: the run waits, paused at
/// time zero, until started; `/api/state`'s `knobs` are the values in force now, the
/// file's or an action's; an enum knob offers the schema's words.
#[test]
fn the_run_starts_paused_and_knobs_show_the_values_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve_paused("retry-storm", &["--no-sweep", "--speed", "600"], dir.path());
    let a = &s;
    std::thread::sleep(Duration::from_millis(500));
    let st = state(a);
    assert_eq!(st["status"], "paused", "{st}");
    assert_eq!(st["now_s"], 0.0, "the clock waits: {st}");
    let (_, info) = http(a, "GET", "/api/info", b"");
    let info: serde_json::Value = serde_json::from_slice(&info).unwrap();
    let knob = |path: &str| {
        info["controls"]["knobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["path"] == path)
            .unwrap_or_else(|| panic!("a knob {path}: {info}"))
            .clone()
    };
    let d = knob("pool.server.discipline");
    assert_eq!(d["kind"], "choice");
    assert_eq!(d["options"], serde_json::json!(["fifo", "lifo"]));
    let workers = knob("pool.server.workers")["value"].clone();
    assert!(workers.is_i64(), "{workers}");
    assert_eq!(
        st["knobs"]["pool.server.workers"], workers,
        "the file's value"
    );
    assert!(st["knobs"]["class.request.rate_limit.rate"].is_null());
    for body in [
        r#"{"control": "set", "path": "class.request.rate_limit.rate", "value": 80}"#,
        r#"{"control": "set", "path": "pool.server.workers", "value": 31}"#,
        r#"{"control": "set", "path": "pool.server.discipline", "value": "lifo"}"#,
    ] {
        let (status, j) = control(a, body);
        assert_eq!(status, 200, "{body}: {j}");
    }
    let (status, j) = control(
        a,
        r#"{"control": "set", "path": "pool.server.discipline", "value": "stack"}"#,
    );
    assert_eq!(status, 400, "not one of the schema's words: {j}");
    assert!(j["error"].as_str().unwrap().contains("fifo, lifo"), "{j}");
    let st = state(a);
    assert_eq!(st["knobs"]["class.request.rate_limit.rate"], 80);
    assert_eq!(st["knobs"]["pool.server.workers"], 31);
    assert_eq!(st["knobs"]["pool.server.discipline"], "lifo");
    assert_eq!(st["status"], "paused", "actions do not start the clock");
    // Started, the run goes on with the values set.
    let (status, _) = control(a, r#"{"control": "resume"}"#);
    assert_eq!(status, 200);
    let st = wait_for(a, "ten seconds", |s| s["now_s"].as_f64() > Some(10.0));
    assert_eq!(st["status"], "running");
    assert_eq!(st["knobs"]["pool.server.workers"], 31);
    // A reset forgets the actions: the file's values again.
    let (status, _) = control(a, r#"{"control": "reset"}"#);
    assert_eq!(status, 200);
    let st = state(a);
    assert_eq!(st["knobs"]["pool.server.workers"], workers, "{st}");
    assert!(st["knobs"]["class.request.rate_limit.rate"].is_null());
}

/// A live-fired event is one marker, marked live, naming its action; the file's own event
/// is not live. Replayed from the saved file, the fired event is the file's and listed
/// once (not also as its `[[at]]` entry).
#[test]
fn a_fired_event_is_one_marker_live_or_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let s = fired_after_a_minute(dir.path());
    let a = &s;
    let (status, j) = control(
        a,
        r#"{"control": "set", "path": "class.request.rate_limit.rate", "value": 80}"#,
    );
    assert_eq!(status, 200, "{j}");
    let m = markers(a);
    let live: Vec<_> = m.iter().filter(|m| m["live"] == true).collect();
    assert_eq!(live.len(), 2, "the fire and the rate limit: {m:?}");
    let fired = live
        .iter()
        .find(|m| m["kind"] == "event")
        .expect("the fired event");
    assert_eq!(fired["by"], "live: fire slowdown", "{fired}");
    assert_eq!(fired["name"], "slowdown");
    assert!(
        !m.iter().any(|m| m["label"] == "live: fire slowdown"),
        "the fire is its event's marker, not another: {m:?}"
    );
    let file: Vec<_> = m.iter().filter(|m| m["live"] == false).collect();
    assert_eq!(file.len(), 1, "the file's own slowdown: {m:?}");
    assert_eq!(file[0]["start_s"], 300.0);
    // The saved session served: its entries are the file's now, each listed once.
    let (_, text) = http(a, "GET", "/api/session", b"");
    std::fs::write(dir.path().join("session.toml"), text).unwrap();
    drop(s);
    let r = serve_paused("session.toml", &["--no-sweep"], dir.path());
    let m = markers(&r);
    assert!(m.iter().all(|m| m["live"] == false), "{m:?}");
    let slowdowns = m.iter().filter(|m| m["name"] == "slowdown").count();
    assert_eq!(
        slowdowns, 2,
        "the file's and the fired one, once each: {m:?}"
    );
    assert_eq!(m.len(), 3, "and the rate limit: {m:?}");
}
