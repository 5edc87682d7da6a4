//! The folder of a run with overrides: `brink run`, `hysteresis` and `collapse-time` with
//! `--set` or a `--seed` other than the scenario's write into
//! `<scenario folder>/runs/<name>/`, never over the base run's files. The name is
//! `--name NAME`, or derived from the overrides: deterministic, a safe path segment, and
//! at most [`MAX_NAME`] characters.

use std::path::{Path, PathBuf};

/// The longest run name.
pub const MAX_NAME: usize = 64;

/// The folder of the named run `name` of the scenario whose folder is `base`.
pub fn runs_dir(base: &Path, name: &str) -> PathBuf {
    base.join("runs").join(name)
}

/// Refuses a `--name` that is not a safe path segment: 1 to [`MAX_NAME`] letters, digits,
/// `-`, `_` and `.`, not starting with `.`.
pub fn check_name(name: &str) -> Result<String, String> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(format!(
            "a run name has 1 to {MAX_NAME} characters, not {}",
            name.chars().count()
        ));
    }
    if name.starts_with('.') {
        return Err("a run name may not start with `.`".into());
    }
    if let Some(c) = name.chars().find(|c| !safe(*c)) {
        return Err(format!(
            "`{c}` is not allowed in a run name (letters, digits, `-`, `_` and `.`)"
        ));
    }
    Ok(name.to_string())
}

fn safe(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// The name derived from a run's overrides: `seed-<S>` for a seed other than the scenario's,
/// then `<path>-<value>` for each `--set`, joined by `_`, e.g.
/// `seed-7_pool.db.workers-8`. Characters other than letters, digits, `-`, `_` and `.`
/// become `-`; a name that changed so, or is longer than [`MAX_NAME`], is cut and ends in
/// a hash of the exact overrides, so that different overrides get different folders.
/// `None` without overrides: the base run.
pub fn derived_name(seed: Option<u64>, sets: &[(String, String)]) -> Option<String> {
    let mut parts: Vec<String> = seed.iter().map(|s| format!("seed-{s}")).collect();
    parts.extend(sets.iter().map(|(p, v)| format!("{p}-{v}")));
    if parts.is_empty() {
        return None;
    }
    let exact = parts.join("_");
    let mut name: String = exact
        .chars()
        .map(|c| if safe(c) { c } else { '-' })
        .collect();
    if name != exact || name.len() > MAX_NAME || name.starts_with('.') {
        // 16 hex digits and a `-`.
        name.truncate(MAX_NAME - 17);
        let kept = name
            .trim_start_matches('.')
            .trim_end_matches(['-', '_', '.']);
        name = format!("{kept}-{:016x}", fnv1a(exact.as_bytes()));
    }
    Some(name)
}

/// FNV-1a, 64 bits: a hash that is the same on every platform and release.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(p: &str, v: &str) -> (String, String) {
        (p.into(), v.into())
    }

    #[test]
    fn a_plain_name_reads_as_the_overrides() {
        assert_eq!(derived_name(None, &[]), None);
        assert_eq!(
            derived_name(Some(7), &[set("pool.db.workers", "8")]).unwrap(),
            "seed-7_pool.db.workers-8"
        );
    }

    #[test]
    fn an_unsafe_or_long_name_is_cut_and_hashed_apart() {
        let a = derived_name(None, &[set("title", "../../x")]).unwrap();
        let b = derived_name(None, &[set("title", "..-..-x")]).unwrap();
        assert!(a.starts_with("title-..-..-x-"), "{a}");
        assert_ne!(a, b);
        assert!(check_name(&a).is_ok());
        let long = derived_name(None, &[set("class.request.rate", &"9".repeat(200))]).unwrap();
        assert_eq!(long.len(), MAX_NAME);
        assert!(check_name(&long).is_ok());
        // The same overrides, the same folder.
        assert_eq!(
            long,
            derived_name(None, &[set("class.request.rate", &"9".repeat(200))]).unwrap()
        );
        // A name cut down to a leading `.` still yields a safe name.
        let dots = derived_name(None, &[set(".", "x")]).unwrap();
        assert!(check_name(&dots).is_ok(), "{dots}");
    }

    #[test]
    fn a_given_name_must_be_a_safe_segment() {
        assert!(check_name("fast-db_2.1").is_ok());
        for bad in ["", "..", ".hidden", "a/b", "a b", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
