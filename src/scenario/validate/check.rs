//! The small checks every section's validation is made of: a [`Problem`] names the key
//! path and what is wrong; names are suggested by [`nearest`].

use crate::engine::time::SimTime;
use crate::scenario::raw::Dur;

/// A validation failure: the dotted key path and what is wrong.
pub type Problem = (String, String);
/// A validated value, or the problem with it.
pub type V<T> = Result<T, Problem>;

/// Fails with a problem at `path`.
pub fn bad<T>(path: impl Into<String>, msg: impl Into<String>) -> V<T> {
    Err((path.into(), msg.into()))
}

/// The closest of `candidates` to `name`, if any is close enough to be a likely typo.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score >= 0.75)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// Words another tool uses for one of brink's keys, which no spelling distance finds: a
/// pool's `workers` are its threads or connections elsewhere.
const SYNONYMS: &[(&str, &str)] = &[
    ("threads", "workers"),
    ("thread_count", "workers"),
    ("connections", "workers"),
    ("max_connections", "workers"),
    ("pool_size", "workers"),
];

/// "; did you mean `X`?" with the closest of `candidates` to `name` (or the key a synonym
/// stands for, when it is a candidate), or nothing.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    let synonym = SYNONYMS
        .iter()
        .find(|(word, key)| *word == name && candidates.contains(key))
        .map(|(_, key)| *key);
    synonym
        .or_else(|| nearest(name, candidates))
        .map(|n| format!("; did you mean `{n}`?"))
        .unwrap_or_default()
}

/// Names for a message, quoted: "`a`, `b`".
pub fn listing<S: AsRef<str>>(names: &[S]) -> String {
    names
        .iter()
        .map(|n| format!("`{}`", n.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Resolves a reference to a `what` (pool, cache, class) at `path`: the index of `name`
/// among the `known` names.
pub fn index_of(path: &str, what: &str, name: &str, known: &[String]) -> V<usize> {
    known.iter().position(|k| k == name).ok_or_else(|| {
        let hint = did_you_mean(name, known.iter().map(|s| s.as_str()));
        (
            path.into(),
            format!("no {what} named `{name}` (known: {}){hint}", listing(known)),
        )
    })
}

/// What a step may name: pools (and their endpoints) and cache tiers.
pub struct Targets<'a> {
    pub pools: &'a [String],
    /// Per pool, its endpoints (`""` first).
    pub endpoints: &'a [Vec<String>],
    pub caches: &'a [String],
}

/// `x` if finite and >= 0.
pub fn finite_nonneg(path: &str, x: f64) -> V<f64> {
    if !x.is_finite() || x < 0.0 {
        return bad(path, format!("must be a finite number >= 0, not {x}"));
    }
    Ok(x)
}

/// `x` if finite and > 0.
pub fn positive(path: &str, x: f64) -> V<f64> {
    if !x.is_finite() || x <= 0.0 {
        return bad(path, format!("must be a finite number > 0, not {x}"));
    }
    Ok(x)
}

/// `x` if at most `max`: every float key has a finite upper bound, so what is computed
/// from it (a law's parameters, products of factors) stays finite.
pub fn up_to(path: &str, x: f64, max: f64) -> V<f64> {
    if x > max {
        return bad(
            path,
            format!("must be at most {}, not {}", short(max), short(x)),
        );
    }
    Ok(x)
}

/// `x` if above `lo` and at most `hi` (NaN is neither); else "`what` must be above `lo`
/// and at most `hi`, not `x`".
pub fn above_up_to(path: &str, what: &str, x: f64, lo: f64, hi: f64) -> V<f64> {
    if !(x > lo && x <= hi) {
        return bad(
            path,
            format!(
                "{what} must be above {} and at most {}, not {}",
                short(lo),
                short(hi),
                short(x)
            ),
        );
    }
    Ok(x)
}

/// `x` for a message: with an exponent when very large or small.
pub fn short(x: f64) -> String {
    if x != 0.0 && !(1e-4..=1e4).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// The largest rate of arrivals or tokens, per second.
pub const MAX_RATE: f64 = 1e9;
/// The largest cost (a multiple of a service time) or profile factor.
pub const MAX_FACTOR: f64 = 1e6;
/// The largest coefficient of variation of a service law.
pub const MAX_CV: f64 = 100.0;

/// `x` if from `lo` to `hi`.
pub fn int_in(path: &str, x: i64, lo: i64, hi: i64) -> V<i64> {
    if x < lo || x > hi {
        return bad(
            path,
            format!("must be a whole number from {lo} to {hi}, not {x}"),
        );
    }
    Ok(x)
}

/// `d` in nanoseconds if longer than zero.
pub fn nonzero_dur(path: &str, d: Dur) -> V<SimTime> {
    if d.0 == 0 {
        return bad(path, "must be longer than zero");
    }
    Ok(d.0)
}

/// The time-series window of a run of length `duration`: `metrics.step`, or by default a
/// thousandth of the run (at least 1 ns).
pub fn window(step: Option<Dur>, duration: SimTime) -> V<SimTime> {
    match step {
        Some(s) => nonzero_dur("metrics.step", s),
        None => Ok((duration / 1000).max(1)),
    }
}

/// The longest name of a component or variant.
pub const MAX_NAME_LEN: usize = 64;

/// Refuses a component or variant name (the last segment of `path`) that is not a safe
/// path segment and CSV field: 1 to [`MAX_NAME_LEN`] ASCII letters, digits, `_` and `-`,
/// not starting with `-`. Names become folder names (`--variant ../../x` would write
/// outside `--out`), CSV column names and dotted key paths (so no `.`, `,` or newline).
pub fn name(path: &str, name: &str) -> V<()> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.is_empty()
        || name.len() > MAX_NAME_LEN
        || name.starts_with('-')
        || !name.chars().all(ok_char)
    {
        return bad(
            path,
            format!(
                "{:?} is not a valid name: use 1 to {MAX_NAME_LEN} letters, digits, `_` and `-` (not first), e.g. `db-replica`",
                name
            ),
        );
    }
    Ok(())
}

/// The first control character of `s` (a NUL, an escape, a carriage return...), allowing
/// newlines and tabs only when `lines` (a description's paragraphs). Free text is written
/// into SVG and HTML (XML 1.0 refuses most control characters) and to the terminal (where
/// an escape sequence would act); names are stricter still ([`name`]).
pub fn control_char(s: &str, lines: bool) -> Option<char> {
    s.chars()
        .find(|&c| c.is_control() && !(lines && (c == '\n' || c == '\t')))
}

/// Refuses free text at `path` (a title, label or unit; a description when `lines`) that
/// holds a control character.
pub fn text(path: &str, s: &str, lines: bool) -> V<()> {
    match control_char(s, lines) {
        None => Ok(()),
        Some(c) => bad(
            path,
            format!(
                "holds the control character {:?} (U+{:04X}): text here is drawn in SVG and HTML and printed to the terminal; remove it",
                c, c as u32
            ),
        ),
    }
}

/// Refuses more than `max` entries of a section (indices must fit the model's 16-bit
/// counters, and a larger scenario is a mistake).
pub fn at_most(path: &str, what: &str, n: usize, max: usize) -> V<()> {
    if n > max {
        return bad(path, format!("{n} {what}; at most {max} are allowed"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_path_segments() {
        for good in ["db", "slack-2022-02-22", "consul_rollout", "r2", "_x"] {
            assert!(name("pool.x", good).is_ok(), "{good}");
        }
        let long = "a".repeat(MAX_NAME_LEN + 1);
        for bad in [
            "",
            "../../x",
            "a.b",
            "a,b",
            "a\nb",
            "-x",
            "a b",
            "é",
            long.as_str(),
        ] {
            assert!(name("pool.x", bad).is_err(), "{bad:?}");
        }
    }
}
