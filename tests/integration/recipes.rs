//! Issue 22, item 6: every `toml` block of docs/recipes.md is a scenario brink checks and
//! runs, held to the law its recipe states (the page cannot drift from the model).
//!
//! - **cpu**: cores cap throughput at cores / CPU time (a saturated multi-server queue
//!   serves at its capacity), whatever the thread count; the threads fill.
//! - **cache**: the database sees the misses only, `(1 − h) × rate`; Redis every lookup,
//!   utilisation `rate × service / connections` (the utilisation law); hit ratio `h`.
//! - **connections**: an M/M/20 queue at ρ = 0.75: utilisation ρ, and the mean wait for a
//!   connection Erlang C's `C(c, a) / (cμ − λ)`.
//!
//! Tolerances: each run serves 96 000 to 900 000 requests; rates and utilisations are held
//! within 2–5% (over 10 standard errors), the mean wait within 10% (an M/M/c wait's
//! standard error over 300 s at ρ 0.75 is about 2%).

use crate::common::{Run, brink, run};
use brink::model::RunResult;
use brink::scenario::Loader;
use std::collections::BTreeMap;

/// The page's examples by the name in their first line (`# recipe: NAME`).
fn recipes() -> BTreeMap<String, String> {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/recipes.md"))
        .expect("docs/recipes.md");
    let mut out = BTreeMap::new();
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```toml" {
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        let name = block
            .first()
            .and_then(|l| l.strip_prefix("# recipe: "))
            .unwrap_or_else(|| panic!("a toml block without `# recipe: NAME`: {block:?}"));
        out.insert(name.to_string(), block.join("\n") + "\n");
    }
    out
}

fn run_recipe(text: &str) -> RunResult {
    let sc = Loader::from_text("recipe.toml", "recipe", text.to_string())
        .unwrap()
        .load(None, &[])
        .unwrap();
    run(&sc, 0)
}

fn within(what: &str, got: f64, law: f64, tol: f64) {
    assert!(
        (got - law).abs() <= tol * law,
        "{what}: {got}, law {law} (tolerance {tol})"
    );
}

#[test]
fn every_recipe_is_a_scenario_brink_checks() {
    let all = recipes();
    assert_eq!(
        all.keys().cloned().collect::<Vec<_>>(),
        ["cache", "connections", "cpu"],
        "the page's recipes"
    );
    let tmp = tempfile::Builder::new()
        .prefix("brink-recipes-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    for (name, text) in &all {
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(&file, text).unwrap();
        let o = brink([
            "--deny-warnings".as_ref(),
            "check".as_ref(),
            file.as_os_str(),
        ])
        .run();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn cores_cap_the_throughput_whatever_the_threads() {
    let r = run_recipe(&recipes()["cpu"]);
    let served = r.summary.pools["cpu"].served as f64 / 120.0;
    within("requests computed per second", served, 8.0 / 0.010, 0.03);
    let threads = r.summary.pools["api"].utilization;
    assert!(threads > 0.99, "the 64 threads fill: utilisation {threads}");
}

#[test]
fn a_cache_with_its_own_round_trip_sends_only_misses_on() {
    let r = run_recipe(&recipes()["cache"]);
    let (rate, h, duration) = (600.0, 0.95, 300.0);
    within(
        "database queries per second",
        r.summary.pools["db"].served as f64 / duration,
        (1.0 - h) * rate,
        0.05,
    );
    within(
        "Redis connections' utilisation",
        r.summary.pools["redis"].utilization,
        rate * 0.3e-3 / 16.0,
        0.05,
    );
    let got = r.summary.caches["redis_keys"].hit_ratio.unwrap();
    assert!((got - h).abs() < 0.01, "hit ratio {got}, asked {h}");
}

#[test]
fn a_connection_pool_is_an_mmc_queue() {
    let r = run_recipe(&recipes()["connections"]);
    let (lambda, mu, c) = (3000.0, 200.0, 20u32);
    let a = lambda / mu;
    let rho = a / c as f64;
    let pg = &r.summary.pools["postgres"];
    within("connections' utilisation", pg.utilization, rho, 0.02);
    within(
        "mean wait for a connection (s)",
        pg.mean_wait_s,
        erlang_c(c, a) / (c as f64 * mu - lambda),
        0.10,
    );
}

/// Erlang C: the probability that an arrival waits in an M/M/c queue offered `a` Erlangs.
fn erlang_c(c: u32, a: f64) -> f64 {
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..c {
        term *= a / k as f64;
        sum += term;
    }
    let last = term * a / c as f64 * c as f64 / (c as f64 - a);
    last / (sum + last)
}
