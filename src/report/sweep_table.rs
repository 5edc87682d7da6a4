//! The console tables of a sweep: the headroom table (also drawn under the tipping picture
//! and written into `index.html`) and a phase map's region counts.

use super::human_time::budget_spent_at;
use super::sweep_result::{Region, SweepReport};
use crate::stats::plan::{Bound, CollapseTime, is_slo_measure};
use std::fmt::Write;

/// A number for people: three significant figures (`0.962`, `14.3`, `1230`;
/// [`crate::report::timeline::axis::sig3`]); `-` for none.
pub fn sig3(x: Option<f64>) -> String {
    x.map_or("-".into(), crate::report::timeline::axis::sig3)
}

/// A point with its 95% confidence interval, for people: `14.3 (95% CI 12.8-15.6)`; the
/// point alone (3 significant figures) when there is no interval.
pub fn with_ci(x: Option<f64>, ci: Option<[f64; 2]>) -> String {
    match (x, ci) {
        (Some(x), Some([a, b])) => {
            let [x, a, b] = crate::engine::number::interval(x, a, b);
            format!("{x} (95% CI {a}-{b})")
        }
        _ => sig3(x),
    }
}

/// One line per variant whose adaptive search did not pin its tipping point to the
/// tolerance, saying why (`tipping.json`'s `tolerance_note`).
pub fn precision_notes(r: &SweepReport) -> Vec<String> {
    r.variants
        .iter()
        .filter(|v| v.tolerance_met == Some(false))
        .filter_map(|v| {
            v.tolerance_note
                .as_ref()
                .map(|n| format!("{}: tolerance not met: {n}", v.variant))
        })
        .collect()
}

/// With `recover_within`, one line per variant: how many values recover slowly or not at
/// all, and when the recovered triggered runs recovered (each value's median, 3
/// significant figures). None without it.
pub fn recovery_notes(r: &SweepReport) -> Vec<String> {
    let Some(w) = r.recover_within_s else {
        return Vec::new();
    };
    r.variants
        .iter()
        .map(|v| {
            let count = |x: Region| v.points.iter().filter(|c| c.state == x).count();
            let times: Vec<String> = v
                .points
                .iter()
                .filter_map(|c| {
                    c.recovery_s.map(|q| {
                        format!("{} s at {}", sig3(Some(q.p50)), sig3(Some(c.value)))
                    })
                })
                .collect();
            format!(
                "{}: recovery within {} s: {} of {} values slow_recovery, {} metastable; median recovery time {}",
                v.variant,
                sig3(Some(w)),
                count(Region::SlowRecovery),
                v.points.len(),
                count(Region::Metastable),
                if times.is_empty() {
                    "- (no triggered run recovered)".to_string()
                } else {
                    times.join(", ")
                }
            )
        })
        .collect()
}

/// With an SLO measure, one line per variant: its capacity at SLO (the overload point)
/// with its 95% interval, 3 significant figures, as a breakpoint test reports it
/// ("base: capacity at SLO 412 requests/s (95% CI 405-418)"). None for other measures.
pub fn slo_notes(r: &SweepReport) -> Vec<String> {
    if !is_slo_measure(&r.measure) {
        return Vec::new();
    }
    let unit = r
        .unit
        .as_deref()
        .map(|u| format!(" {u}"))
        .unwrap_or_default();
    r.variants
        .iter()
        .map(|v| {
            let at = match (v.capacity_at_slo, v.capacity_at_slo_ci95) {
                (Some(c), Some([a, b])) => format!(
                    "{}{unit} (95% CI {}-{})",
                    sig3(Some(c)),
                    sig3(Some(a)),
                    sig3(Some(b))
                ),
                (Some(c), None) => format!("{}{unit} (no 95% interval)", sig3(Some(c))),
                (None, _) => {
                    "above the swept range (no value failed its SLO without a trigger)".to_string()
                }
            };
            format!("{}: capacity at SLO {at}", v.variant)
        })
        .collect()
}

/// The headroom table as rows of cells: a header, then one row per variant; a sixth
/// column, the mean time to spontaneous collapse at the operating point, when the sweep
/// estimated it.
pub fn headroom_rows(r: &SweepReport) -> Vec<Vec<String>> {
    let mttc = r.variants.iter().any(|v| v.mean_time_to_collapse.is_some());
    let mut rows = vec![vec![
        "variant".to_string(),
        "operating".into(),
        "tipping".into(),
        if is_slo_measure(&r.measure) {
            "capacity at SLO"
        } else {
            "overload"
        }
        .into(),
        "headroom".into(),
    ]];
    if mttc {
        rows[0].push("mean time to collapse".into());
    }
    for v in &r.variants {
        let name = if v.swept_without_trigger.is_empty() {
            v.variant.clone()
        } else {
            format!("{} (no trigger)", v.variant)
        };
        let mut row = vec![
            name,
            sig3(Some(v.operating_point)),
            with_ci(v.tipping_point, v.tipping_ci95),
            with_ci(v.overload_point, v.overload_ci95),
            v.headroom_cell(),
        ];
        if mttc {
            row.push(
                v.mean_time_to_collapse
                    .as_ref()
                    .map_or("-".into(), collapse_cell),
            );
        }
        rows.push(row);
    }
    rows
}

/// A mean time to collapse for the table: "3.2 days at 70", or for a bound (the estimate
/// spent its event budget) "> 101 years at 70; budget spent at level 7 of 10".
fn collapse_cell(t: &CollapseTime) -> String {
    let at = sig3(Some(t.at));
    match (t.bound, t.budget_spent_at_level, t.levels) {
        (Some(Bound::Lower), Some(level), Some(levels)) => {
            format!("> {} at {at}; {}", t.text, budget_spent_at(level, levels))
        }
        (Some(Bound::Lower), ..) => format!("> {} at {at}", t.text),
        (None, ..) => format!("{} at {at}", t.text),
    }
}

/// What the headroom table's "mean time to collapse" means, in a sentence, when the table
/// has that column: a student reading that the design which recovers from the trigger
/// (retry-storm's lifo) collapses sooner than the one which does not asks why (finding 17
/// of the new-user review). The level is each variant's `[collapse]` level, named once
/// when they agree.
pub fn collapse_note(r: &SweepReport) -> Option<String> {
    let mut levels: Vec<&str> = Vec::new();
    let mut bounded = false;
    for t in r
        .variants
        .iter()
        .filter_map(|v| v.mean_time_to_collapse.as_ref())
    {
        if !levels.contains(&t.level.as_str()) {
            levels.push(&t.level);
        }
        bounded |= t.bound.is_some();
    }
    if levels.is_empty() {
        return None;
    }
    let mut note = format!(
        "Mean time to collapse: at the operating point and with no trigger, how long it \
         takes on average until chance alone (random arrivals and service times) drives the \
         system to collapse ({}). It measures how long a design lasts untouched, not how it copes with a \
         trigger: a design that recovers from a trigger can still reach that level sooner.",
        levels.join("; ")
    );
    if bounded {
        note.push_str(
            " A time after \">\" is a lower bound: the estimate spent its event budget \
             (collapse.max_events) at the level named and counted the levels it did not \
             finish as certain; raise the budget for an estimate.",
        );
    }
    Some(note)
}

/// The headroom table as aligned text, for the console (with [`collapse_note`] under it
/// when the table has that column).
pub fn headroom_table(r: &SweepReport) -> String {
    let rows = headroom_rows(r);
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let unit = r
        .unit
        .as_deref()
        .map(|u| format!(" ({u})"))
        .unwrap_or_default();
    let mut out = format!(
        "{}: {}{unit}, measure {}\n",
        r.scenario,
        r.axis_name(),
        r.measure
    );
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 0 {
                    format!("{c:<w$}", w = widths[i])
                } else {
                    format!("{c:>w$}", w = widths[i])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    if let Some(note) = collapse_note(r) {
        out.push_str(&note);
        out.push('\n');
    }
    for note in slo_notes(r)
        .into_iter()
        .chain(precision_notes(r))
        .chain(recovery_notes(r))
    {
        out.push_str(&note);
        out.push('\n');
    }
    out
}

/// The region counts of a phase map, per variant, for the console.
pub fn phase_table(r: &SweepReport) -> String {
    let mut out = format!(
        "{}: phase map of {} x {}\n",
        r.scenario,
        r.axis_name(),
        r.axis2_name()
    );
    for v in &r.variants {
        let count = |x: Region| v.points.iter().filter(|c| c.state == x).count();
        let slow = match count(Region::SlowRecovery) {
            0 => String::new(),
            n => format!(", {n} slow_recovery"),
        };
        let _ = writeln!(
            out,
            "  {}: {} stable, {} metastable{slow}, {} overloaded cells",
            v.variant,
            count(Region::Stable),
            count(Region::Metastable),
            count(Region::Overloaded)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_for_people_carry_three_significant_figures() {
        let cases = [
            (0.96237, "0.962"),
            (14.286, "14.3"),
            (1234.5, "1230"),
            (0.5, "0.5"),
            (1.0, "1"),
            (0.000123456, "0.000123"),
            (-2.345, "-2.35"),
        ];
        for (x, s) in cases {
            assert_eq!(sig3(Some(x)), s, "{x}");
        }
        assert_eq!(
            with_ci(Some(14.286), Some([12.84, 15.62])),
            "14.3 (95% CI 12.8-15.6)"
        );
        assert_eq!(with_ci(Some(14.286), None), "14.3");
    }
}
