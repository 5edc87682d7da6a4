//! Kin: a variant that differs from an earlier one only in knobs a run may never reach
//! ([`crate::model::witness`]), such as a retry policy in runs where no attempt fails.
//!
//! A variant with a source ([`super::Sweep::sources`]) repeats its runs outright. Kin
//! repeat them only where the earlier variant's run shows it never reached any knob in
//! which the two differ: there the two runs are one run, and the later variant reads the
//! earlier one's result instead of running it (`Sweep::search_variants`). Elsewhere it
//! runs its own. Either way its result is the run its own scenario gives, so its search is
//! the one it would make alone. In the bundled sweeps that is most of the baseline branch
//! of variants that change how failures are handled (retries, backoff, a query's
//! completion, a client's refresh on error, `cancel_expired`, a cache's control plane):
//! a baseline run at a load the design carries seldom fails at all.
//!
//! Two tables are kin when every difference between them (a value, or a key one has and
//! the other has not) lies in a [`Knob`] of a component both have at the same place, and
//! the keys they share come in the same order.

use crate::model::witness::Knob;
use crate::scenario::Config;
use toml::Value;

/// The knobs in which table `b` differs from table `a` (both of one sweep's variants on a
/// branch), or `None` when some difference is not a knob. `cfg` names the components
/// (the same in both where they are kin).
pub(super) fn knobs(
    a: &toml::Table,
    b: &toml::Table,
    cfg: &Config,
    measured: &str,
) -> Option<Vec<Knob>> {
    let mut out = Vec::new();
    let at = At { cfg, measured };
    table(&mut Vec::new(), a, b, &at, &mut out)?;
    Some(out)
}

/// What names the components: the configuration, and the sweep's measure (`<measure>.<component>`).
struct At<'a> {
    cfg: &'a Config,
    measured: &'a str,
}

fn table(
    path: &mut Vec<String>,
    a: &toml::Table,
    b: &toml::Table,
    cfg: &At,
    out: &mut Vec<Knob>,
) -> Option<()> {
    let shared = |x: &toml::Table, y: &toml::Table| -> Vec<String> {
        x.keys().filter(|k| y.contains_key(*k)).cloned().collect()
    };
    if shared(a, b) != shared(b, a) {
        return None;
    }
    let only_b = b.keys().filter(|k| !a.contains_key(*k));
    for k in a.keys().chain(only_b) {
        path.push(k.clone());
        value(path, a.get(k), b.get(k), cfg, out)?;
        path.pop();
    }
    Some(())
}

fn value(
    path: &mut Vec<String>,
    a: Option<&Value>,
    b: Option<&Value>,
    cfg: &At,
    out: &mut Vec<Knob>,
) -> Option<()> {
    match (a, b) {
        (Some(Value::Table(x)), Some(Value::Table(y))) => table(path, x, y, cfg, out),
        (Some(Value::Array(x)), Some(Value::Array(y))) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                path.push(i.to_string());
                value(path, Some(p), Some(q), cfg, out)?;
                path.pop();
            }
            Some(())
        }
        (Some(Value::Float(x)), Some(Value::Float(y))) if x.to_bits() == y.to_bits() => Some(()),
        (Some(Value::Float(_)), Some(Value::Float(_))) => knob(path, a, b, cfg, out),
        (Some(x), Some(y)) if x == y => Some(()),
        _ => knob(path, a, b, cfg, out),
    }
}

/// The knob at `path`, where `a` and `b` differ, or `None` when it is not one.
fn knob(
    path: &[String],
    a: Option<&Value>,
    b: Option<&Value>,
    at: &At,
    out: &mut Vec<Knob>,
) -> Option<()> {
    let (cfg, measured) = (at.cfg, at.measured);
    let p: Vec<&str> = path.iter().map(String::as_str).collect();
    let class = |name: &str| {
        cfg.classes[..cfg.clients]
            .iter()
            .position(|c| c.name == name)
    };
    let pool = |name: &str| cfg.pools.iter().position(|c| c.name == name);
    // A retry policy's breaker is read on every outcome, success too: not a knob.
    let no_breaker = |v: Option<&Value>| {
        v.is_none_or(|v| v.as_table().is_none_or(|t| !t.contains_key("breaker")))
    };
    let retry = |rest: &[&str]| {
        rest.first() != Some(&"breaker") && (!rest.is_empty() || no_breaker(a) && no_breaker(b))
    };
    let k = match p[..] {
        ["class", c, "retry", ref rest @ ..] if retry(rest) => Knob::Retry(class(c)?),
        ["class", c, "steps", _, "retry", ref rest @ ..] if retry(rest) => Knob::Retry(class(c)?),
        ["class", c, "steps", _, "completion"] => Knob::Completion(class(c)?),
        ["pool", q, "calls", n, "retry", ref rest @ ..] if retry(rest) => {
            let (q, n) = (pool(q)?, n.parse::<usize>().ok()?);
            Knob::Retry(cfg.calls.iter().filter(|c| c.pool == q).nth(n)?.class)
        }
        ["pool", q, "client", "refresh_on_error"] => Knob::RefreshOnError(pool(q)?),
        ["pool", q, "cancel_expired"] => Knob::CancelExpired(pool(q)?),
        ["cache", k, "control_plane", "detect_after"] => {
            Knob::DetectAfter(cfg.caches.iter().position(|c| c.name == k)?)
        }
        // Not where a lease puts work back in the queue past the arrival's look, nor where
        // the pool's utilization is read: its autoscaler, or the sweep's measure.
        ["pool", q, "workers"] if !measured.split('.').any(|c| c == q) => {
            let p = pool(q)?;
            let pc = &cfg.pools[p];
            if pc.autoscale.is_some() || pc.lease.is_some() {
                return None;
            }
            let workers = |v: Option<&Value>| v.map_or(Some(1), Value::as_integer);
            let below = workers(a)?.min(workers(b)?);
            Knob::Workers {
                pool: p,
                below: u32::try_from(below).ok()?,
            }
        }
        _ => return None,
    };
    if !out.contains(&k) {
        out.push(k);
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Loader;

    const BASE: &str = "duration = \"10s\"\n\
        [class.c]\nrate = 1\ntimeout = \"1s\"\n\
        retry = { max_attempts = 3, backoff = \"none\" }\n\
        steps = [{ query = \"p\", keys = 4, fanout = \"keys\", read = \"replica\" }]\n\
        [class.d]\nrate = 1\nsteps = [{ query = \"p\" }]\n\
        [pool.p]\nshards = 2\nreplicas = 1\nworkers = 1\n\
        service = { law = \"exp\", mean = \"1ms\" }\n";

    fn tables(set: &str) -> (toml::Table, toml::Table, Config) {
        let t = |text: &str| -> toml::Table { toml::from_str(text).unwrap() };
        let loader = Loader::from_text("t.toml", "t", BASE.into()).unwrap();
        let cfg = (*loader.load(None, &[]).unwrap().config).clone();
        (t(BASE), t(&format!("{BASE}{set}")), cfg)
    }

    fn of(set: &str) -> Option<Vec<Knob>> {
        let (a, b, cfg) = tables(set);
        knobs(&a, &b, &cfg, "goodput_ratio.c")
    }

    /// Each knob is found where it is, by its component's index; anything else, a retry
    /// breaker included, is not a knob.
    #[test]
    fn finds_each_knob_and_nothing_else() {
        assert_eq!(of(""), Some(vec![]));
        assert_eq!(
            of("[pool.p.client]\nrefresh = \"60s\"\nrefresh_on_error = true\n"),
            None,
            "a client the other has not"
        );
        let (a, mut b, cfg) = tables("");
        let set = |b: &mut toml::Table, path: &[&str], v: Value| {
            let mut t = b;
            for k in &path[..path.len() - 1] {
                t = t.get_mut(*k).unwrap().as_table_mut().unwrap();
            }
            t.insert(path[path.len() - 1].into(), v);
        };
        set(
            &mut b,
            &["pool", "p", "cancel_expired"],
            Value::Boolean(true),
        );
        assert_eq!(
            knobs(&a, &b, &cfg, "goodput_ratio.c"),
            Some(vec![Knob::CancelExpired(0)])
        );
        set(
            &mut b,
            &["class", "d", "retry"],
            toml::from_str::<toml::Table>("max_attempts = 2")
                .unwrap()
                .into(),
        );
        assert_eq!(
            knobs(&a, &b, &cfg, "goodput_ratio.c"),
            Some(vec![Knob::Retry(1), Knob::CancelExpired(0)])
        );
        let mut c = b.clone();
        set(
            &mut c,
            &["class", "c", "retry", "max_attempts"],
            Value::Integer(1),
        );
        assert_eq!(
            knobs(&a, &c, &cfg, "goodput_ratio.c"),
            Some(vec![Knob::Retry(0), Knob::Retry(1), Knob::CancelExpired(0)])
        );
        let mut d = a.clone();
        let breaker = toml::from_str::<toml::Table>(
            "failure_ratio = 0.5\nwindow = \"1s\"\nmin_requests = 5\nopen_for = \"1s\"",
        )
        .unwrap();
        set(&mut d, &["class", "c", "retry", "breaker"], breaker.into());
        assert_eq!(knobs(&a, &d, &cfg, "goodput_ratio.c"), None, "a breaker");
        let mut e = a.clone();
        set(&mut e, &["pool", "p", "workers"], Value::Integer(3));
        let workers = Knob::Workers { pool: 0, below: 1 };
        assert_eq!(knobs(&a, &e, &cfg, "goodput_ratio.c"), Some(vec![workers]));
        assert_eq!(knobs(&a, &e, &cfg, "utilization.p"), None, "measured");
        let mut f = e.clone();
        set(&mut f, &["pool", "p", "service"], Value::Integer(2));
        assert_eq!(
            knobs(&e, &f, &cfg, "goodput_ratio.c"),
            None,
            "a service time"
        );
        assert_eq!(knobs(&e, &e, &cfg, "goodput_ratio.c"), Some(vec![]));
    }

    /// Components in another order are other components: not kin.
    #[test]
    fn keys_in_another_order_are_not_kin() {
        let t = |text: &str| -> toml::Table { toml::from_str(text).unwrap() };
        let (_, _, cfg) = tables("");
        let a = t("[pool.p]\nworkers = 1\n[pool.q]\nworkers = 1\n");
        let b = t("[pool.q]\nworkers = 1\n[pool.p]\nworkers = 1\n");
        assert_eq!(knobs(&a, &b, &cfg, "goodput_ratio.c"), None);
    }
}
