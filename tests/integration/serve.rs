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
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `brink serve FILE ARGS` on a free port in `cwd` and reads the address it prints.
pub fn serve(file: &str, args: &[&str], cwd: &Path) -> Served {
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
    Served { child, addr }
}

/// One HTTP/1.0 request; returns (status, body).
pub fn http(addr: &str, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
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
pub fn control(addr: &str, body: &str) -> (u16, serde_json::Value) {
    let (status, b) = http(addr, "POST", "/api/control", body.as_bytes());
    (status, serde_json::from_slice(&b).expect("a JSON answer"))
}

/// The state, without rows.
pub fn state(addr: &str) -> serde_json::Value {
    let (status, b) = http(addr, "GET", "/api/state", b"");
    assert_eq!(status, 200);
    let mut j: serde_json::Value = serde_json::from_slice(&b).unwrap();
    j["rows"] = serde_json::Value::Null;
    j
}

/// Waits (at most two minutes) until `ok` holds of the state.
pub fn wait_for(
    addr: &str,
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
pub fn save_and_replay(addr: &str, dir: &Path) -> (String, String) {
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
    let a = &s.addr;
    let cases: [(&str, u16, &str); 9] = [
        (r#"{"control": "zap"}"#, 400, "unknown control `zap`"),
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

#[test]
fn a_saved_session_replays_to_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve("retry-storm", &["--no-sweep", "--speed", "600"], dir.path());
    let a = &s.addr;
    wait_for(a, "one minute", |s| s["now_s"].as_f64() > Some(60.0));
    let (status, j) = control(a, r#"{"control": "fire", "event": "slowdown"}"#);
    assert_eq!(status, 200, "{j}");
    // Firing it again while it runs is refused.
    let (status, j) = control(a, r#"{"control": "fire", "event": "slowdown"}"#);
    assert_eq!(status, 422, "{j}");
    let st = wait_for(a, "four minutes", |s| s["now_s"].as_f64() > Some(240.0));
    assert_eq!(st["healthy"], false, "stuck after the fired slowdown: {st}");
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
    let a = &s.addr;
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
