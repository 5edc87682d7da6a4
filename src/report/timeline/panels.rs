//! Which panels a timeline draws and what they are called: chosen from the time series's
//! columns by their [`Measure`], each line styled and labelled, empty panels left out.

use super::axis::sig3;
use super::layout;
use super::style::{Dash, Line, Series, reference, series, styled};
use crate::model::metrics::TimeSeries;
use crate::report::queueing::Mmc;
use crate::scenario::{Measure, Owner};

/// One panel of the timeline.
pub struct Panel {
    pub title: String,
    pub lines: Vec<Line>,
    /// Fixed y range top (e.g. 1.05 for ratios), else from the data.
    pub y_max: Option<f64>,
    /// Whole-number series (queue lengths, servers, users): ticks on whole numbers.
    pub integer: bool,
}

/// Whether a series is worth a line: some finite value other than zero.
fn nonzero(values: &[f64]) -> bool {
    values.iter().any(|v| v.is_finite() && *v != 0.0)
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The title of the ratios panel from the ratios it holds.
pub fn ratio_title(measures: &[Measure]) -> String {
    let mut parts = Vec::new();
    let has = |m: Measure| measures.contains(&m);
    if has(Measure::Utilization) || has(Measure::PrimaryUtilization) {
        parts.push("Utilisation");
    }
    if has(Measure::HitRatio) {
        parts.push(if parts.is_empty() {
            "Cache hit ratio"
        } else {
            "cache hit ratio"
        });
    }
    if has(Measure::BreakerOpen) {
        parts.push(if parts.is_empty() {
            "Breaker open (share of time)"
        } else {
            "breaker open (share of time)"
        });
    }
    and_list(&parts)
}

/// The panels a time series offers: requests, the queues, queries to pools, latency,
/// utilisation and ratios, and where the scenario has them servers of autoscaled pools,
/// servers the balancer leaves out, workers waiting on calls and users of closed classes. `theory` (a textbook M/M/c
/// scenario) adds its mean queue length and mean sojourn as reference lines. Panels
/// without a line are left out.
pub fn default_panels(ts: &TimeSeries, theory: Option<&Mmc>) -> Vec<Panel> {
    let of = |m: Measure| {
        (0..ts.columns.len())
            .filter(move |&i| ts.columns[i].measure == m)
            .map(|i| (ts.component(i).to_string(), i))
    };
    let n_rows = ts.rows.len();
    // A class's other columns are found by its owner, not by name.
    let classes: Vec<(String, Owner)> = of(Measure::Goodput)
        .map(|(c, i)| (c, ts.columns[i].owner))
        .collect();
    // Each class's rate lines, kept apart so that classes of different scales can take
    // panels of their own.
    let mut class_rates: Vec<Vec<Series>> = Vec::new();
    let mut latency = Vec::new();
    let mut users = Vec::new();
    for (k, (c, owner)) in classes.iter().enumerate() {
        let get = |m: Measure| {
            ts.columns
                .iter()
                .position(|col| col.owner == *owner && col.measure == m)
                .map(|k| ts.values(k))
        };
        // Each measure its own dash (the order of Dash::CYCLE); failed and rejected
        // only when some request failed or was rejected, drawn over the others.
        let measures = [
            (Measure::Goodput, "goodput", true),
            (Measure::Offered, "offered", true),
            (Measure::Attempts, "attempts", true),
            (Measure::Failed, "failed", false),
            (Measure::Rejected, "rejected", false),
        ];
        let mut mine = Vec::new();
        for ((m, word, always), dash) in measures.into_iter().zip(Dash::CYCLE) {
            if let Some(v) = get(m).filter(|v| always || nonzero(v)) {
                mine.push(Series {
                    dash: Some(dash),
                    class: Some(k),
                    on_top: matches!(m, Measure::Failed | Measure::Rejected),
                    ..series(format!("{c} {word}"), v, m == Measure::Goodput)
                });
            }
        }
        class_rates.push(mine);
        if let Some(v) = get(Measure::LatencyP99) {
            latency.push(series(format!("{c} p99"), v, true));
        }
        if let Some(v) = get(Measure::UsersWaiting) {
            users.push(series(format!("{c} users waiting"), v, true));
        }
    }
    let peak = |lines: &[Series]| {
        lines
            .iter()
            .flat_map(|l| l.values.iter().copied())
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max)
    };
    let maxes: Vec<f64> = class_rates.iter().map(|r| peak(r)).collect();
    let groups = layout::scale_groups(&maxes);
    let several = groups.len() > 1;
    let mut rate_panels = Vec::new();
    let mut class_rates: Vec<Option<Vec<Series>>> = class_rates.into_iter().map(Some).collect();
    for group in groups {
        let lines: Vec<Series> = group
            .iter()
            .filter_map(|&k| class_rates[k].take())
            .flatten()
            .collect();
        let order = ["offered", "attempts", "goodput", "failed", "rejected"];
        let present: Vec<&str> = order
            .into_iter()
            .filter(|w| lines.iter().any(|l| l.label.ends_with(&format!(" {w}"))))
            .collect();
        // A panel of its own names its classes (the small ones' scale differs).
        let whose = if several {
            let names: Vec<&str> = group.iter().map(|&k| classes[k].0.as_str()).collect();
            format!(" ({})", and_list(&names))
        } else {
            String::new()
        };
        rate_panels.push((
            format!("Requests per second{whose}: {}", and_list(&present)),
            styled(lines),
        ));
    }
    // The queue of each pool: where a backlog builds.
    let queues: Vec<Series> = of(Measure::QueueLen)
        .map(|(pool, col)| series(format!("{pool} queued"), ts.values(col), true))
        .collect();
    // Queries sent to each pool (every part and every retry counts): shows amplification.
    // Then the tries of each pool call (queries per dependency) and the work pools shed.
    let mut queries: Vec<Series> = of(Measure::QueriesPerS)
        .map(|(pool, col)| {
            series(
                format!("{pool} queries (parts and retries)"),
                ts.values(col),
                true,
            )
        })
        .collect();
    let mut query_words = vec!["Queries sent to pools"];
    let calls: Vec<Series> = of(Measure::CallsPerS)
        .map(|(call, col)| series(format!("call {call} tries"), ts.values(col), false))
        .collect();
    if !calls.is_empty() {
        query_words.push("call tries");
    }
    queries.extend(calls);
    // Per pool beside what it was sent: queries shed, queries that failed without being
    // served (an outage, a crashed or fail-fast server), the share that went nowhere, and
    // work served past its own lease (wasted, `lease`).
    for (m, what, words) in [
        (Measure::ShedPerS, "shed", "queries shed"),
        (
            Measure::FailedFastPerS,
            "failed at once",
            "queries failed at once",
        ),
        (
            Measure::LeaseExpiredPerS,
            "leases expired",
            "leases expired",
        ),
    ] {
        let lines: Vec<Series> = of(m)
            .map(|(pool, col)| series(format!("{pool} {what}"), ts.values(col), false))
            .collect();
        if !lines.is_empty() {
            query_words.push(words);
        }
        queries.extend(lines);
    }
    // Workers held by jobs waiting on their calls: busy but not serving.
    let waiting: Vec<Series> = of(Measure::WaitingOnCalls)
        .map(|(pool, col)| {
            series(
                format!("{pool} workers waiting on calls"),
                ts.values(col),
                true,
            )
        })
        .collect();
    // Servers the balancer leaves out: ejected as outliers, or failing health checks.
    let held_out: Vec<Series> = of(Measure::Ejected)
        .map(|(pool, col)| series(format!("{pool} ejected"), ts.values(col), true))
        .chain(
            of(Measure::Unhealthy)
                .map(|(pool, col)| series(format!("{pool} unhealthy"), ts.values(col), true)),
        )
        .collect();
    // Servers their sync holds in service, and syncs in flight (pools with `sync`).
    let syncing: Vec<Series> =
        of(Measure::InService)
            .map(|(pool, col)| series(format!("{pool} in service"), ts.values(col), true))
            .chain(of(Measure::Syncing).map(|(pool, col)| {
                series(format!("{pool} syncs in flight"), ts.values(col), false)
            }))
            .collect();
    // Live servers of autoscaled pools.
    let servers: Vec<Series> = of(Measure::Servers)
        .map(|(pool, col)| series(format!("{pool} live servers"), ts.values(col), true))
        .collect();
    let mut ratios = Vec::new();
    let mut ratio_measures = Vec::new();
    for (col, c) in ts.columns.iter().enumerate() {
        if !c.measure.is_ratio() {
            continue;
        }
        let name = ts.component(col);
        let label = match c.measure {
            Measure::PrimaryUtilization => format!("{name} primaries' utilisation"),
            Measure::Utilization => format!("{name} utilisation"),
            Measure::BreakerOpen => format!("call {name} breaker open"),
            _ => format!("{name} hit ratio"),
        };
        ratio_measures.push(c.measure);
        ratios.push(series(label, ts.values(col), true));
    }
    let mut queue_lines = styled(queues);
    // Latency in ms when every value is below a second (theory's line included).
    let theory_p99 = theory.map(|m| m.sojourn_quantile_s(0.99));
    let (scale, unit) = layout::latency_unit(peak(&latency).max(theory_p99.unwrap_or(0.0)));
    for l in &mut latency {
        l.values.iter_mut().for_each(|v| *v *= scale);
    }
    let mut latency_lines = styled(latency);
    if let Some(m) = theory {
        queue_lines.push(reference(
            format!(
                "theory: mean queued {} ({})",
                sig3(m.mean_queue()),
                m.name()
            ),
            m.mean_queue(),
            n_rows,
        ));
        // The simulated line is a p99, so theory's is the p99 of the sojourn (its mean
        // would sit far below and seem to disagree).
        let p99 = theory_p99.unwrap_or(0.0);
        latency_lines.push(reference(
            format!(
                "theory: p99 sojourn {} {unit} ({})",
                sig3(p99 * scale),
                m.name()
            ),
            p99 * scale,
            n_rows,
        ));
    }
    let panel = |title: String, lines: Vec<Line>, y_max: Option<f64>, integer: bool| Panel {
        title,
        lines,
        y_max,
        integer,
    };
    let mut panels: Vec<Panel> = rate_panels
        .into_iter()
        .map(|(title, lines)| panel(title, lines, None, false))
        .collect();
    panels.extend([
        panel(
            "Queued queries per pool (time-average)".into(),
            queue_lines,
            None,
            true,
        ),
        panel(
            format!("{} per second", and_list(&query_words)),
            styled(queries),
            None,
            false,
        ),
        panel(
            if theory.is_some() {
                format!("Latency p99 of successful requests ({unit}), and the theoretical p99")
            } else {
                format!("Latency p99 of successful requests ({unit})")
            },
            latency_lines,
            None,
            false,
        ),
        panel(
            ratio_title(&ratio_measures),
            styled(ratios),
            Some(1.05),
            false,
        ),
        panel(
            "Servers of autoscaled pools (time-average)".into(),
            styled(servers),
            None,
            true,
        ),
        panel(
            "Servers the balancer leaves out (time-average)".into(),
            styled(held_out),
            None,
            true,
        ),
        panel(
            "Servers in service and syncs in flight (time-average)".into(),
            styled(syncing),
            None,
            true,
        ),
        panel(
            "Workers held waiting on calls (time-average)".into(),
            styled(waiting),
            None,
            true,
        ),
        panel(
            "Users waiting on a request (closed classes)".into(),
            styled(users),
            None,
            true,
        ),
    ]);
    panels.into_iter().filter(|p| !p.lines.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Panel titles name what the panels hold: no "hit ratio" without a cache.
    #[test]
    fn panel_titles_follow_their_contents() {
        assert_eq!(ratio_title(&[Measure::Utilization]), "Utilisation");
        assert_eq!(
            ratio_title(&[Measure::Utilization, Measure::HitRatio]),
            "Utilisation and cache hit ratio"
        );
        assert_eq!(
            ratio_title(&[
                Measure::Utilization,
                Measure::HitRatio,
                Measure::BreakerOpen
            ]),
            "Utilisation, cache hit ratio and breaker open (share of time)"
        );
        let titles = |name: &str, dur: &str| {
            let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("scenarios")
                .join(format!("{name}.toml"));
            let set = crate::scenario::Override::parse(&format!("duration=\"{dur}\"")).unwrap();
            let sc = crate::scenario::Loader::open(&path)
                .unwrap()
                .load(None, &[set])
                .unwrap();
            let r = crate::model::run(&sc, 0).unwrap();
            let theory = Mmc::of(&sc);
            default_panels(&r.series, theory.as_ref())
                .into_iter()
                .map(|p| {
                    let labels: Vec<String> = p.lines.iter().map(|l| l.label.clone()).collect();
                    (p.title, p.integer, labels)
                })
                .collect::<Vec<_>>()
        };
        // retry-storm: no cache, a queue, failures; every line of a panel differs in both
        // colour and dash from the others.
        let rs = titles("retry-storm", "600s");
        let names: Vec<&str> = rs.iter().map(|p| p.0.as_str()).collect();
        assert!(names.iter().all(|t| !t.contains("hit ratio")), "{names:?}");
        assert!(names.contains(&"Utilisation"), "{names:?}");
        assert!(
            rs.iter().any(|p| p.0.starts_with("Queued queries") && p.1),
            "{names:?}"
        );
        // mm1: the theoretical means drawn as reference lines.
        let mm1 = titles("mm1", "2000s");
        let refs: Vec<&String> = mm1
            .iter()
            .flat_map(|p| &p.2)
            .filter(|l| l.starts_with("theory:"))
            .collect();
        assert_eq!(refs.len(), 2, "{mm1:?}");
        // The queue's line is a time-average (theory's mean queued, 8.1); the latency's
        // a p99 (theory's p99 sojourn, ln 100 / (mu - lambda) = 46.1 s).
        assert!(
            refs[0].contains("mean queued 8.1") && refs[1].contains("p99 sojourn 46.1 s"),
            "{refs:?}"
        );
    }

    /// The panels of a run of `text` (a scenario), as (title, whole-number, labels).
    fn panels_of(text: &str) -> Vec<(String, bool, Vec<String>)> {
        let sc = crate::scenario::Loader::from_text("test.toml", "test", text.into())
            .unwrap()
            .load(None, &[])
            .unwrap();
        let r = crate::model::run(&sc, 0).unwrap();
        default_panels(&r.series, None)
            .into_iter()
            .map(|p| {
                let labels = p.lines.iter().map(|l| l.label.clone()).collect();
                (p.title, p.integer, labels)
            })
            .collect()
    }

    /// The population panel draws `users_waiting`, a column only closed classes (`users =
    /// N`) have: a line for the closed class `web`, none for the open class `api`, and no
    /// panel at all when every class is open.
    #[test]
    fn users_waiting_panel_is_drawn_for_closed_classes_only() {
        const POOL: &str = r#"
duration = "60s"
[pool.server]
workers = 4
service = { law = "exp", mean = "50ms" }
"#;
        const OPEN: &str = r#"
[class.api]
rate = 5
steps = [{ query = "server" }]
"#;
        const CLOSED: &str = r#"
[class.web]
users = 20
think = { law = "exp", mean = "1s" }
steps = [{ query = "server" }]
"#;
        let users = "Users waiting on a request (closed classes)";
        let both = panels_of(&format!("{POOL}{OPEN}{CLOSED}"));
        let panel = both.iter().find(|p| p.0 == users);
        assert_eq!(
            panel,
            Some(&(
                users.to_string(),
                true,
                vec!["web users waiting".to_string()]
            )),
            "{both:?}"
        );
        // The open class still has its rates: the panel's one line is not for want of it.
        assert!(
            both.iter().flat_map(|p| &p.2).any(|l| l == "api goodput"),
            "{both:?}"
        );
        let open = panels_of(&format!("{POOL}{OPEN}"));
        assert!(
            open.iter()
                .all(|p| p.0 != users && p.2.iter().all(|l| !l.contains("users waiting"))),
            "{open:?}"
        );
    }

    /// A pool that ejects outliers and checks health has a panel of the servers the
    /// balancer leaves out, and its queries panel shows what failed at once; a plain pool
    /// has neither.
    #[test]
    fn held_out_servers_and_fast_failures_are_drawn_only_for_pools_that_have_them() {
        const PLAIN: &str = r#"
duration = "20s"
[class.api]
rate = 5
steps = [{ query = "server" }]
[pool.server]
shards = 4
service = { law = "exp", mean = "50ms" }
"#;
        let held = "Servers the balancer leaves out (time-average)";
        let with = panels_of(&format!(
            "{PLAIN}outlier_ejection = {{ consecutive_errors = 5, eject_for = \"30s\" }}\n\
             health_check = {{ every = \"5s\" }}\n"
        ));
        let panel = with.iter().find(|p| p.0 == held);
        let lines = vec!["server ejected".to_string(), "server unhealthy".to_string()];
        assert_eq!(panel, Some(&(held.to_string(), true, lines)), "{with:?}");
        let queries = with
            .iter()
            .find(|p| p.0.starts_with("Queries sent to pools"));
        assert!(
            queries.is_some_and(|p| p.2.iter().any(|l| l == "server failed at once")),
            "{with:?}"
        );
        let plain = panels_of(PLAIN);
        assert!(
            plain
                .iter()
                .all(|p| p.0 != held && p.2.iter().all(|l| !l.contains("failed at once"))),
            "{plain:?}"
        );
    }
}
