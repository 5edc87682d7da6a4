//! The live API as documented (issue 23, item 2): every curl example of `docs/serve.md`
//! is run, in order, against a live `brink serve retry-storm --no-sweep --speed 10` (its
//! `$PORT` and `$TOKEN` filled in), and must answer the status written under it, with
//! the documented error's words or the documented object's keys.

use crate::serve::{Served, request, serve_paused};
use std::path::Path;

/// One example: the curl line and the reply written under it (`# STATUS REPLY`).
struct Example {
    line: usize,
    curl: String,
    status: u16,
    reply: String,
}

/// The curl examples of the ```sh blocks of `text`, each with the line that follows it.
fn examples(text: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("```") {
            in_sh = !in_sh && l.trim() == "```sh";
            continue;
        }
        if !in_sh || !l.starts_with("curl ") || l.contains("$(") {
            continue;
        }
        let next = lines.get(i + 1).copied().unwrap_or("");
        let said = next
            .strip_prefix("# ")
            .unwrap_or_else(|| panic!("docs/serve.md:{}: no `# STATUS` after the example", i + 2));
        let (status, reply) = said.split_once(' ').unwrap_or((said, ""));
        out.push(Example {
            line: i + 1,
            curl: l.to_string(),
            status: status
                .parse()
                .unwrap_or_else(|_| panic!("docs/serve.md:{}: `{status}` is no status", i + 2)),
            reply: reply.to_string(),
        });
    }
    out
}

/// A command line split as the shell splits it (single and double quotes, no escapes).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (None, ' ') => out.extend(word.take()),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (Some(q), c) if c == q => quote = None,
            (_, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word);
    out
}

/// The request a curl line makes: (address, method, path, headers, body).
type Call = (String, String, String, Vec<(String, String)>, String);

/// What curl sends for `args` (the flags the examples use: -s, -X, -H, -d).
fn call_of(args: &[String], at: usize) -> Call {
    let (mut method, mut headers, mut body, mut url) = (None, Vec::new(), None, None);
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "-s" => {}
            "-X" => method = it.next().cloned(),
            "-H" => {
                let h = it.next().expect("a header after -H");
                let (k, v) = h.split_once(':').expect("a header `K: V`");
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
            "-d" => body = it.next().cloned(),
            u if u.starts_with("http://") => url = Some(u.to_string()),
            other => panic!("docs/serve.md:{at}: the test knows no curl flag `{other}`"),
        }
    }
    let url = url.unwrap_or_else(|| panic!("docs/serve.md:{at}: no URL"));
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if body.is_some()
        && !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        headers.push((
            "Content-Type".into(),
            "application/x-www-form-urlencoded".into(),
        ));
    }
    let method = method.unwrap_or_else(|| if body.is_some() { "POST" } else { "GET" }.into());
    (
        addr.into(),
        method,
        path.into(),
        headers,
        body.unwrap_or_default(),
    )
}

/// The keys of the documented object (`"key":`), in its text.
fn keys(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("\":") {
        if let Some(start) = text[..i].rfind('"') {
            let k = &text[start + 1..i];
            if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                out.push(k.to_string());
            }
        }
    }
    out
}

fn check(s: &Served, ex: &Example) {
    let line = ex
        .curl
        .replace("$PORT", s.addr.rsplit(':').next().unwrap())
        .replace("$TOKEN", &s.token);
    let (addr, method, path, headers, body) = call_of(&words(&line), ex.line);
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let (status, got) = request(&addr, &method, &path, &headers, body.as_bytes());
    let got = String::from_utf8_lossy(&got).to_string();
    let at = format!("docs/serve.md:{}: {}", ex.line, ex.curl);
    assert_eq!(status, ex.status, "{at}: {got}");
    let shown = ex.reply.split("...").next().unwrap_or("");
    if let Some(msg) = shown.strip_prefix("{\"error\": \"") {
        let j: serde_json::Value = serde_json::from_str(&got).expect("a JSON error");
        let msg = msg.trim_end_matches("\"}");
        let err = j["error"].as_str().unwrap_or("");
        assert!(err.starts_with(msg), "{at}: `{err}` should start `{msg}`");
    } else if ex.reply.starts_with('{') {
        let j: serde_json::Value = serde_json::from_str(&got).expect("a JSON answer");
        for k in keys(&ex.reply) {
            let top = j.get(&k).is_some();
            let nested = j
                .get("markers")
                .and_then(|m| m.get(0))
                .and_then(|m| m.get(&k))
                .is_some();
            assert!(top || nested, "{at}: no `{k}` in {got}");
        }
    } else {
        assert!(
            got.starts_with(shown),
            "{at}: should start `{shown}`: {}",
            &got[..got.len().min(200)]
        );
    }
}

#[test]
fn every_documented_example_answers_as_documented() {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/serve.md");
    let text = std::fs::read_to_string(doc).unwrap();
    let all = examples(&text);
    // Every route appears in an example, and every status the doc promises for them.
    for route in [
        "/api/info",
        "/api/state",
        "/api/markers",
        "/api/tipping",
        "/api/session",
        "/api/timeseries.csv",
        "/api/control",
    ] {
        assert!(
            all.iter().any(|e| e.curl.contains(route)),
            "no example of {route}"
        );
    }
    for status in [200, 400, 403, 404, 405, 422] {
        assert!(
            all.iter().any(|e| e.status == status),
            "no example of a {status}"
        );
    }
    for control in [
        "pause", "resume", "speed", "set", "fire", "reset", "seed", "extend",
    ] {
        let body = format!("{{\"control\": \"{control}\"");
        assert!(
            all.iter()
                .any(|e| e.curl.contains(&body) && e.status == 200),
            "no example of `{control}`"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let s = serve_paused("retry-storm", &["--no-sweep", "--speed", "10"], dir.path());
    for ex in &all {
        check(&s, ex);
    }
}

#[test]
fn the_doc_examples_are_read_as_the_shell_reads_them() {
    let w = words(r#"curl -s -H 'A: b c' -d '{"x": 1}' "http://h:1/p?q=2""#);
    assert_eq!(
        w,
        [
            "curl",
            "-s",
            "-H",
            "A: b c",
            "-d",
            "{\"x\": 1}",
            "http://h:1/p?q=2"
        ]
    );
    let (addr, method, path, headers, body) = call_of(&w, 1);
    assert_eq!(
        (addr.as_str(), method.as_str(), path.as_str()),
        ("h:1", "POST", "/p?q=2")
    );
    assert_eq!(headers[0], ("A".to_string(), "b c".to_string()));
    assert_eq!(
        headers[1].1, "application/x-www-form-urlencoded",
        "curl's own default"
    );
    assert_eq!(body, "{\"x\": 1}");
    assert_eq!(
        keys(r#"{"ok": true, "control": "pause", "t": "a:b"}"#),
        ["ok", "control", "t"]
    );
}
