//! A calibration's report (`brink calibrate`, `calibration.json`): each observed figure
//! beside the simulated one over seeds, what they add up to (mean absolute percentage
//! error, bias, verdict), the fit, and the console table.

use crate::stats::student::mean_ci95;
use serde::Serialize;

/// One figure: observed, simulated (mean over seeds, with its 95% interval), and how far
/// apart.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Comparison {
    /// `class.api.p99`, `pool.db.utilisation`, `cache.sessions.hit_ratio`.
    pub figure: String,
    /// `1/s`, `ratio`, `s` (latencies) or `queries`.
    pub unit: &'static str,
    pub observed: f64,
    /// The mean over seeds; none when a seed has no value (no successful request).
    pub simulated: Option<f64>,
    /// The 95% Student t confidence interval of the mean over seeds (two seeds or more).
    pub ci95: Option<[f64; 2]>,
    /// Each seed's value, in run order.
    pub per_seed: Vec<f64>,
    /// (simulated - observed) / observed; none when nothing was observed (0) or simulated.
    pub relative_error: Option<f64>,
    /// Whether the observed value lies inside `ci95`.
    pub within_ci95: bool,
    /// Whether the figure agrees: inside `ci95`, or within the tolerance.
    pub agrees: bool,
}

/// Which way the simulation errs on the whole.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Bias {
    /// `over` (simulated above observed), `under`, or `none` (mean signed relative error
    /// within 1%).
    pub direction: &'static str,
    /// The mean signed relative error over the figures that have one.
    pub mean_relative_error: Option<f64>,
    /// Figures simulated above and below their observed value.
    pub above: usize,
    pub below: usize,
}

/// A set of comparisons and what they add up to.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Assessment {
    pub figures: Vec<Comparison>,
    /// Figures whose observed value is inside the interval.
    pub within_ci95: usize,
    /// Figures that agree ([`Comparison::agrees`]).
    pub agreeing: usize,
    /// Mean absolute percentage error over the figures that have a relative error (as a
    /// fraction: 0.05 is 5%).
    pub mape: Option<f64>,
    pub bias: Bias,
    /// `consistent` (every figure agrees) or `inconsistent`.
    pub verdict: &'static str,
    /// The verdict in words, naming the worst figure.
    pub verdict_text: String,
}

/// One fitted key.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FittedKey {
    /// The `--set` path.
    pub key: String,
    /// `number` or `duration` (values in seconds).
    pub unit: &'static str,
    /// Its value before the fit (the file's, after variant and `--set`s).
    pub start: f64,
    /// The value that minimises the error.
    pub fitted: f64,
    /// The searched range: a factor of 4 either side of `start`.
    pub range: [f64; 2],
    /// Whether the fitted value sits at an end of the range (the best value may lie
    /// beyond it).
    pub at_range_end: bool,
    /// The refits' values on independent seed batches.
    pub refits: Vec<f64>,
    /// The smallest and largest of `fitted` and `refits`: a spread over seed batches, not
    /// a confidence interval.
    pub spread: [f64; 2],
}

/// What `--fit` did.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FitReport {
    pub keys: Vec<FittedKey>,
    /// Objective evaluations of the main search (each `seeds` runs).
    pub evaluations: usize,
    /// The objective (mean squared relative error) before and after.
    pub objective_before: f64,
    pub objective_after: f64,
    /// The comparison at the file's values, before the fit (`figures` of the report are
    /// those after it).
    pub before: Assessment,
}

/// `calibration.json`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CalibrationReport {
    pub scenario: String,
    pub variant: Option<String>,
    /// The observed file's name (without its folder) and the SHA-256 of its bytes.
    pub observed_file: String,
    pub observed_sha256: String,
    /// `[load]` of the observed file, as `path=value`.
    pub load: Vec<String>,
    /// The measured stretch of the run, seconds (the whole run without `window`).
    pub window_s: [f64; 2],
    pub seeds: u32,
    /// The tolerance counted as agreement.
    pub tolerance: f64,
    /// The comparison (after the fit, with `--fit`).
    #[serde(flatten)]
    pub assessment: Assessment,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitReport>,
}

/// One figure's comparison: its name and unit, the observed value, the per-seed values.
pub fn compare(
    figure: String,
    unit: &'static str,
    observed: f64,
    xs: &[f64],
    tolerance: f64,
) -> Comparison {
    let (simulated, ci95) = match mean_ci95(xs) {
        Some((m, ci)) => (Some(m), ci),
        None => (None, None),
    };
    let relative_error = simulated
        .filter(|_| observed > 0.0)
        .map(|m| (m - observed) / observed);
    let within_ci95 = ci95.is_some_and(|[lo, hi]| lo <= observed && observed <= hi)
        || (ci95.is_none() && simulated == Some(observed));
    let agrees = within_ci95
        || relative_error.is_some_and(|e| e.abs() <= tolerance)
        || (observed == 0.0 && simulated == Some(0.0));
    Comparison {
        figure,
        unit,
        observed,
        simulated,
        ci95,
        per_seed: xs.to_vec(),
        relative_error,
        within_ci95,
        agrees,
    }
}

/// What a set of comparisons adds up to.
pub fn assessment(figures: Vec<Comparison>, tolerance: f64) -> Assessment {
    let errors: Vec<f64> = figures.iter().filter_map(|c| c.relative_error).collect();
    let mape = (!errors.is_empty())
        .then(|| errors.iter().map(|e| e.abs()).sum::<f64>() / errors.len() as f64);
    let mean = (!errors.is_empty()).then(|| errors.iter().sum::<f64>() / errors.len() as f64);
    let bias = Bias {
        direction: match mean {
            Some(m) if m > 0.01 => "over",
            Some(m) if m < -0.01 => "under",
            _ => "none",
        },
        mean_relative_error: mean,
        above: errors.iter().filter(|e| **e > 0.0).count(),
        below: errors.iter().filter(|e| **e < 0.0).count(),
    };
    let agreeing = figures.iter().filter(|c| c.agrees).count();
    let within = figures.iter().filter(|c| c.within_ci95).count();
    let worst = figures.iter().filter(|c| !c.agrees).max_by(|a, b| {
        let e = |c: &Comparison| c.relative_error.map_or(f64::INFINITY, f64::abs);
        e(a).total_cmp(&e(b))
    });
    let sig3 = |x: f64| crate::report::timeline::axis::sig3(x);
    let verdict_text = match worst {
        None => format!(
            "consistent: all {} figures agree (inside the 95% interval or within {}%)",
            figures.len(),
            sig3(tolerance * 100.0)
        ),
        Some(w) => format!(
            "inconsistent: {} of {} figures disagree; the worst, {}, is {}",
            figures.len() - agreeing,
            figures.len(),
            w.figure,
            match w.relative_error {
                Some(_) => format!("{} off", percent(w.relative_error)),
                None => "without a simulated value".into(),
            }
        ),
    };
    Assessment {
        verdict: if worst.is_none() {
            "consistent"
        } else {
            "inconsistent"
        },
        verdict_text,
        within_ci95: within,
        agreeing,
        mape,
        bias,
        figures,
    }
}

/// A value for people in its unit: 3 significant figures, latencies in µs, ms or s.
pub fn value_text(unit: &str, x: f64) -> String {
    let sig3 = crate::report::timeline::axis::sig3;
    match unit {
        "s" if x < 1e-3 => format!("{}µs", sig3(x * 1e6)),
        "s" if x < 1.0 => format!("{}ms", sig3(x * 1e3)),
        "s" => format!("{}s", sig3(x)),
        _ => sig3(x),
    }
}

/// A relative error for people: `+3.2%`, `-0.41%`, `-` for none.
/// Below 0.001% an error reads as none.
fn percent(e: Option<f64>) -> String {
    match e.map(|e| e * 100.0) {
        Some(p) if p.abs() < 1e-3 => "0%".into(),
        Some(p) => format!(
            "{}{}%",
            if p > 0.0 { "+" } else { "" },
            crate::report::timeline::axis::sig3(p)
        ),
        None => "-".into(),
    }
}

/// The console table of a calibration: a line per figure (observed, simulated with its
/// 95% interval over seeds, relative error, inside the interval), the verdict, the mean
/// absolute percentage error and the bias; with a fit, the fitted values first.
pub fn calibration_table(r: &CalibrationReport) -> String {
    let mut out = String::new();
    if let Some(fit) = &r.fit {
        out += &format!(
            "fit ({} evaluations of {} seeds; mean squared relative error {} -> {}):\n",
            fit.evaluations,
            r.seeds,
            crate::report::timeline::axis::sig3(fit.objective_before),
            crate::report::timeline::axis::sig3(fit.objective_after)
        );
        for k in &fit.keys {
            let u = if k.unit == "duration" { "s" } else { "" };
            out += &format!(
                "  {} = {} (from {}; spread over {} refits on other seeds {} to {}; range {} to {}){}\n",
                k.key,
                value_text(u, k.fitted),
                value_text(u, k.start),
                k.refits.len(),
                value_text(u, k.spread[0]),
                value_text(u, k.spread[1]),
                value_text(u, k.range[0]),
                value_text(u, k.range[1]),
                if k.at_range_end {
                    " at the end of its range"
                } else {
                    ""
                }
            );
        }
        out += &format!(
            "before the fit: {}; MAPE {}\n",
            fit.before.verdict_text,
            fit.before
                .mape
                .map_or("-".into(), |m| percent(Some(m)).replace('+', ""))
        );
    }
    let rows: Vec<[String; 5]> = r
        .assessment
        .figures
        .iter()
        .map(|c| {
            let sim = match (c.simulated, c.ci95) {
                (Some(m), Some([a, b])) => format!(
                    "{} ({} to {})",
                    value_text(c.unit, m),
                    value_text(c.unit, a),
                    value_text(c.unit, b)
                ),
                (Some(m), None) => value_text(c.unit, m),
                _ => "-".into(),
            };
            [
                c.figure.clone(),
                value_text(c.unit, c.observed),
                sim,
                percent(c.relative_error),
                if c.within_ci95 { "yes" } else { "no" }.into(),
            ]
        })
        .collect();
    let head = [
        "figure".to_string(),
        "observed".into(),
        format!("simulated (95% CI, {} seeds)", r.seeds),
        "error".into(),
        "in CI".into(),
    ];
    let widths: Vec<usize> = (0..5)
        .map(|i| {
            rows.iter()
                .map(|row| row[i].chars().count())
                .chain([head[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in std::iter::once(&head).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                let pad = w - c.chars().count();
                if i == 0 || i == 2 {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect();
        out += cells.join("  ").trim_end();
        out += "\n";
    }
    let a = &r.assessment;
    out += &format!("{}\n", a.verdict_text);
    out += &format!(
        "MAPE {}; bias: {} (mean relative error {}; {} above, {} below); {} of {} inside the 95% interval\n",
        a.mape
            .map_or("-".into(), |m| percent(Some(m)).replace('+', "")),
        a.bias.direction,
        percent(a.bias.mean_relative_error),
        a.bias.above,
        a.bias.below,
        a.within_ci95,
        a.figures.len()
    );
    out
}
