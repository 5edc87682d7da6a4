//! Issue 22, item 5: warnings that catch slips. `brink check` and `brink run` warn on
//! stderr (exit 0) when a valid file is almost certainly not what its author meant;
//! `--deny-warnings` makes each an error (exit 2, nothing written). The bundled scenarios
//! warn about nothing.

use crate::common::{Run, brink};

/// An M/M/1 written in milliseconds, with `extra` lines and `service` as given.
fn file(service: &str, rate: &str, extra: &str) -> String {
    format!(
        r#"
title = "slip"
duration = "60s"

[class.request]
rate = {rate}
timeout = "500ms"
steps = [{{ query = "server" }}]

[pool.server]
workers = 4
service = {service}
queue_limit = 1000
{extra}
"#
    )
}

/// `brink check` and `brink run` of `text`: each warning line, then that `--deny-warnings`
/// refuses it with exit 2 and writes nothing.
fn warned(text: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slip.toml");
    std::fs::write(&path, text).unwrap();
    let o = brink(["check"]).arg(&path).run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<String> = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .map(String::from)
        .collect();
    let out = dir.path().join("out");
    let o = brink(["run", "--deny-warnings"])
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .run();
    if lines.is_empty() {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    } else {
        assert_eq!(o.status.code(), Some(2), "{lines:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--deny-warnings"));
        assert!(!out.exists(), "wrote {out:?}");
    }
    lines
}

/// One of the warnings holds every part.
fn has(warnings: &[String], parts: &[&str]) {
    assert!(
        warnings.iter().any(|l| parts.iter().all(|p| l.contains(p))),
        "no warning with {parts:?} in {warnings:?}"
    );
}

#[test]
fn a_sound_file_warns_about_nothing() {
    let w = warned(&file(r#"{ law = "exp", mean = "8ms" }"#, "100", ""));
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn a_service_mean_beyond_the_timeout_warns() {
    // The issue's slip: "8m" meant as 8 ms. It is also minutes among milliseconds.
    let w = warned(&file(r#"{ law = "exp", mean = "8m" }"#, "100", ""));
    has(&w, &["`pool.server.service`", "timeout"]);
    has(&w, &["did you mean \"8ms\""]);
}

#[test]
fn a_pool_overloaded_by_its_own_arithmetic_warns() {
    // 4 workers x 1 / 8 ms = 500/s of capacity, offered 600/s: 1.2 times.
    let w = warned(&file(r#"{ law = "exp", mean = "8ms" }"#, "600", ""));
    has(&w, &["`pool.server`", "1.20 times"]);
}

#[test]
fn a_cache_that_cannot_hit_warns() {
    // 100 lookups/s over 100 000 uniform keys: a key is looked up every 1000 s, its TTL is
    // 10 s.
    let text = file(r#"{ law = "exp", mean = "8ms" }"#, "100", "").replace(
        r#"steps = [{ query = "server" }]"#,
        r#"steps = [{ cache = "c", keys = 1, query = "server" }]"#,
    ) + "\n[cache.c]\nnodes = 1\nkeys = 100000\nttl = \"10s\"\n";
    let w = warned(&text);
    has(&w, &["`cache.c.ttl`", "hardly hit"]);
}

#[test]
fn the_bundled_scenarios_warn_about_nothing() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let o = brink(["check", "--deny-warnings"]).args(&files).run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning:"));
}
