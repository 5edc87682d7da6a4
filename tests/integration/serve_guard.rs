//! `brink serve` guarded (issue 23, item 1): another site's page cannot drive the session
//! (cross-origin POSTs, a rebound Host, a missing or wrong token are refused with a 403 and
//! change nothing), and no client can exhaust the server (an endless request line, a body
//! that never comes, a thousand idle connections): each check ends with an ordinary
//! client answered.

use crate::serve::{Served, http, request, serve, state};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A quiet session: slow, no sweep.
fn quiet(dir: &std::path::Path) -> Served {
    serve("retry-storm", &["--no-sweep", "--speed", "10"], dir)
}

/// An ordinary client is answered, within `within`.
fn answered(s: &Served, within: Duration) {
    let t = Instant::now();
    let (status, body) = http(s, "GET", "/api/info", b"");
    let took = t.elapsed();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert!(took < within, "an ordinary GET took {took:?}");
}

/// The status of what `stream` answers before it closes or `wait` passes (None: closed
/// without an answer, or nothing yet).
fn status_of(stream: &mut TcpStream, wait: Duration) -> Option<u16> {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        if got.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    String::from_utf8_lossy(&got)
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
}

/// The 403's message, checked to say `says`.
fn refused(s: &Served, method: &str, path: &str, headers: &[(&str, &str)], body: &str, says: &str) {
    let (status, b) = request(&s.addr, method, path, headers, body.as_bytes());
    let j: serde_json::Value = serde_json::from_slice(&b).expect("a JSON answer");
    let msg = j["error"].as_str().unwrap_or("");
    assert_eq!(status, 403, "{method} {path} {headers:?}: {j}");
    assert!(msg.contains(says), "{msg:?} should say {says:?}");
}

/// Nothing has changed: no action, the speed asked for, the file itself as the session.
fn unchanged(s: &Served) {
    let st = state(s);
    assert_eq!(st["log"], serde_json::json!([]), "{st}");
    assert_eq!(st["speed"], 10.0, "{st}");
    assert_eq!(st["status"], "running", "not paused: {st}");
    let (_, text) = http(s, "GET", "/api/session", b"");
    let bundled = brink::scenario::bundled::find("retry-storm").unwrap().text;
    assert_eq!(String::from_utf8(text).unwrap(), bundled);
}

#[test]
fn another_sites_post_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = quiet(dir.path());
    let token = s.token.as_str();
    let pause = r#"{"control": "pause"}"#;
    let speed = r#"{"control": "speed", "value": 500}"#;
    // What a page elsewhere can send without asking: a no-cors fetch or a form, text/plain.
    let evil = ("Origin", "http://evil.example");
    refused(
        &s,
        "POST",
        "/api/control",
        &[evil, ("Content-Type", "text/plain")],
        pause,
        "Origin `http://evil.example`",
    );
    // Even with the token and JSON, another origin is refused.
    let json = ("Content-Type", "application/json");
    let tok = ("X-Brink-Token", token);
    refused(
        &s,
        "POST",
        "/api/control",
        &[evil, json, tok],
        speed,
        "Origin",
    );
    // From the page's own origin: the token, and JSON, are still needed.
    let own = format!("http://{}", s.addr);
    let own = ("Origin", own.as_str());
    refused(
        &s,
        "POST",
        "/api/control",
        &[own, json],
        pause,
        "X-Brink-Token header is missing",
    );
    let wrong = ("X-Brink-Token", "0123456789abcdef0123456789abcdef");
    refused(
        &s,
        "POST",
        "/api/control",
        &[own, json, wrong],
        pause,
        "not this session's token",
    );
    let plain = ("Content-Type", "text/plain");
    refused(
        &s,
        "POST",
        "/api/control",
        &[own, plain, tok],
        pause,
        "must be application/json; got text/plain",
    );
    refused(&s, "POST", "/api/control", &[own, tok], pause, "got none");
    unchanged(&s);
    // The page's own request is taken.
    let (status, b) = request(
        &s.addr,
        "POST",
        "/api/control",
        &[own, json, tok],
        pause.as_bytes(),
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&b));
    answered(&s, Duration::from_secs(1));
}

#[test]
fn a_rebound_host_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = quiet(dir.path());
    let port = s.addr.rsplit(':').next().unwrap();
    let rebound = format!("evil.example:{port}");
    let host = ("Host", rebound.as_str());
    for path in [
        "/",
        "/api/session",
        "/api/state",
        "/api/info",
        "/api/timeseries.csv",
    ] {
        refused(
            &s,
            "GET",
            path,
            &[host],
            "",
            "the Host header `evil.example:",
        );
    }
    // A control with everything else right, from the rebound name, is refused too.
    let origin = format!("http://{rebound}");
    let control = [
        host,
        ("Origin", origin.as_str()),
        ("Content-Type", "application/json"),
        ("X-Brink-Token", s.token.as_str()),
    ];
    refused(
        &s,
        "POST",
        "/api/control",
        &control,
        r#"{"control": "pause"}"#,
        "Host",
    );
    refused(
        &s,
        "GET",
        "/api/state",
        &[("Host", "127.0.0.2:1")],
        "",
        "does not name",
    );
    unchanged(&s);
    // localhost names a loopback server.
    let local = format!("localhost:{port}");
    let (status, _) = request(
        &s.addr,
        "GET",
        "/api/state",
        &[("Host", local.as_str())],
        b"",
    );
    assert_eq!(status, 200);
    answered(&s, Duration::from_secs(1));
}

#[test]
fn an_endless_request_line_is_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let s = quiet(dir.path());
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    let line = vec![b'G'; 1 << 20];
    // The server stops reading at 16 KiB: the write may fail once it has answered.
    let _ = c.write_all(&line);
    let status = status_of(&mut c, Duration::from_secs(3));
    assert!(
        matches!(status, Some(431) | None),
        "431 or closed: {status:?}"
    );
    answered(&s, Duration::from_secs(1));
    // The same of a header that never ends.
    let mut c = TcpStream::connect(&s.addr).unwrap();
    let _ = c.write_all(format!("GET / HTTP/1.1\r\nHost: {}\r\nX: ", s.addr).as_bytes());
    let _ = c.write_all(&line);
    let status = status_of(&mut c, Duration::from_secs(3));
    assert!(matches!(status, Some(431) | None), "{status:?}");
    answered(&s, Duration::from_secs(1));
}

#[test]
fn a_body_that_never_comes_times_out_while_others_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let s = quiet(dir.path());
    let t = Instant::now();
    let mut c = TcpStream::connect(&s.addr).unwrap();
    let head = format!(
        "POST /api/control HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nX-Brink-Token: {}\r\nContent-Length: 100\r\n\r\n{{",
        s.addr, s.token
    );
    c.write_all(head.as_bytes()).unwrap();
    // A head with nothing after it either.
    let mut idle = TcpStream::connect(&s.addr).unwrap();
    idle.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    for _ in 0..5 {
        answered(&s, Duration::from_secs(1));
        std::thread::sleep(Duration::from_millis(300));
    }
    let status = status_of(&mut c, Duration::from_secs(8));
    let took = t.elapsed();
    assert!(
        matches!(status, Some(408) | None),
        "408 or closed: {status:?}"
    );
    assert!(
        (Duration::from_secs(4)..Duration::from_millis(6500)).contains(&took),
        "after the 5 s body timeout: {took:?}"
    );
    let status = status_of(&mut idle, Duration::from_secs(3));
    assert_eq!(status, None, "an unfinished head: closed");
    unchanged(&s);
    answered(&s, Duration::from_secs(1));
}

/// The server's resident memory, in kB (Linux).
fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_thousand_idle_connections_starve_no_one() {
    let dir = tempfile::tempdir().unwrap();
    let s = quiet(dir.path());
    let before = rss_kb(s.pid());
    let idle: Vec<TcpStream> = (0..1000)
        .map(|_| TcpStream::connect(&s.addr).unwrap())
        .collect();
    answered(&s, Duration::from_secs(1));
    if let Some(kb) = rss_kb(s.pid()) {
        assert!(
            kb < 200 * 1024,
            "RSS {kb} kB with 1,000 idle connections (before: {before:?})"
        );
    }
    // Past the cap of 1,024 a connection is told so at once.
    let mut over: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(&s.addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let busy = over
        .iter_mut()
        .filter_map(|c| status_of(c, Duration::from_millis(20)))
        .collect::<Vec<_>>();
    assert!(
        !busy.is_empty() && busy.iter().all(|&b| b == 503),
        "503s past the cap: {busy:?}"
    );
    drop(over);
    drop(idle);
    // The server frees the closed connections' places.
    let t = Instant::now();
    loop {
        let (status, _) = http(&s, "GET", "/api/info", b"");
        if status == 200 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "still {status}");
        std::thread::sleep(Duration::from_millis(50));
    }
    answered(&s, Duration::from_secs(1));
}
