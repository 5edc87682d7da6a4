//! Issue 24 item 4: the run told in words. Each run's `summary.json` holds `narrative`,
//! timed sentences derived from what the run measured (`brink::report::narrative`); these
//! tests hold the story each bundled incident tells to its shape.

use crate::common::{Run, brink, bundled, run};
use brink::experiment::run::narrative;
use brink::report::narrative::Sentence;

fn story(name: &str, variant: Option<&str>) -> Vec<Sentence> {
    let sc = bundled(name, variant, &[]);
    let result = run(&sc, 0);
    let s = narrative(&sc, &result);
    // In time order, each with its time for people, none empty, and short.
    assert!(s.windows(2).all(|w| w[0].t_s <= w[1].t_s), "{s:#?}");
    assert!(
        s.iter().all(|x| !x.text.is_empty() && !x.at.is_empty()),
        "{s:#?}"
    );
    assert!(s.len() <= brink::report::narrative::MAX_SENTENCES, "{s:#?}");
    s
}

fn find<'a>(s: &'a [Sentence], words: &str) -> Vec<&'a Sentence> {
    s.iter().filter(|x| x.text.contains(words)).collect()
}

/// Retry storm (base): healthy, then the slowdown; goodput falls when it begins, with the
/// verdict (timed out, queue full of expired work) and the sustaining loop's sign (several
/// attempts per request against one before); the queue passes half its places; the
/// trigger ends and the run has not recovered at its end.
#[test]
fn retry_storm_tells_a_storm_that_outlives_its_trigger() {
    let s = story("retry-storm", None);
    assert!(
        s[0].t_s == 0.0 && s[0].text.starts_with("The run starts healthy"),
        "{s:#?}"
    );
    let begins = find(&s, "begins.");
    let ends = find(&s, "ends.");
    let falls = find(&s, "falls below healthy");
    assert_eq!((begins.len(), ends.len(), falls.len()), (1, 1, 1), "{s:#?}");
    let fall = falls[0];
    assert!(
        fall.t_s >= begins[0].t_s && fall.t_s < ends[0].t_s,
        "{s:#?}"
    );
    assert!(fall.text.contains("expired work"), "{}", fall.text);
    assert!(fall.text.contains("retries add load"), "{}", fall.text);
    assert_eq!(find(&s, "queue passes half").len(), 1, "{s:#?}");
    assert!(find(&s, "recovers").is_empty(), "{s:#?}");
    let last = s.last().unwrap();
    assert!(
        last.text.starts_with("It has not recovered"),
        "{}",
        last.text
    );
    assert_eq!(last.at, "30 min");
}

/// A variant that recovers: without retries the same slowdown costs a minute, and the
/// story says when it recovered and that it stayed healthy; no sign of retries.
#[test]
fn a_design_that_recovers_says_when() {
    let s = story("retry-storm", Some("no-retries"));
    let falls = find(&s, "falls below healthy");
    let recovers = find(&s, "It recovers");
    assert_eq!((falls.len(), recovers.len()), (1, 1), "{s:#?}");
    assert!(recovers[0].t_s > falls[0].t_s, "{s:#?}");
    assert!(
        recovers[0].text.contains("stays healthy to the end"),
        "{s:#?}"
    );
    assert!(find(&s, "retries add load").is_empty(), "{s:#?}");
    assert!(find(&s, "has not recovered").is_empty(), "{s:#?}");
}

/// Slack: the rollout, the fall with the cold cache named (its hit ratio against before)
/// and retries; every intervention in the published order with its effect; a recovery
/// after throttling, the relapse when the limit is raised too far, and the final
/// recovery.
#[test]
fn slack_tells_the_cold_cache_the_relapse_and_the_remediation() {
    let s = story("slack-2022-02-22", None);
    let falls = find(&s, "falls below healthy");
    assert_eq!(falls.len(), 2, "{s:#?}");
    assert!(
        falls[0].text.contains("cache `memcached` hits"),
        "{}",
        falls[0].text
    );
    let recovers = find(&s, "It recovers");
    assert_eq!(recovers.len(), 2, "{s:#?}");
    assert!(
        recovers[0].t_s < falls[1].t_s && falls[1].t_s < recovers[1].t_s,
        "{s:#?}"
    );
    let sc = bundled("slack-2022-02-22", None, &[]);
    let told: Vec<&str> = find(&s, "Intervention: ")
        .iter()
        .map(|x| x.text.as_str())
        .collect();
    assert_eq!(told.len(), sc.interventions.len(), "{s:#?}");
    for (text, iv) in told.iter().zip(&sc.interventions) {
        assert!(text.contains(&iv.label), "{text} / {}", iv.label);
    }
    // The relapse follows the intervention that raised the limit too far.
    let raise = find(&s, "too far")[0];
    assert!(falls[1].t_s >= raise.t_s, "{s:#?}");
}

/// `summary.json` carries the narrative as written by `brink run`.
#[test]
fn summary_json_carries_the_narrative() {
    let dir = tempfile::tempdir().unwrap();
    let out = brink(["run", "retry-storm", "--set", "duration=\"8m\"", "--out"])
        .arg(dir.path())
        .run();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A run with overrides writes into a folder of its own under the scenario's.
    let mut stack = vec![dir.path().to_path_buf()];
    let mut found = None;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "summary.json") {
                found = Some(p);
            }
        }
    }
    let text = std::fs::read_to_string(found.expect("summary.json written")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let n = v["narrative"].as_array().unwrap();
    assert!(n.len() >= 3, "{text}");
    assert!(
        n.iter()
            .all(|x| x["t_s"].is_number() && x["text"].is_string() && x["at"].is_string())
    );
    assert!(
        n.iter()
            .any(|x| x["text"].as_str().unwrap().contains("Slowdown")),
        "{text}"
    );
}
