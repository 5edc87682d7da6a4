//! `brink new NAME [--from SCENARIO]`: writes `NAME.toml`, the commented starter scenario
//! or a copy of another scenario, without ever replacing an existing file.

use super::Error;
use crate::scenario::Loader;
use crate::scenario::starter::STARTER;
use std::path::{Path, PathBuf};

/// Writes `dir/NAME.toml` (`name` may end in `.toml`) atomically: the starter scenario, or
/// the exact text of `from` (a file, or a bundled scenario's name as `brink run` takes it).
/// Refuses a name that is not a plain file name and a file that exists; returns its path.
pub fn new_scenario(name: &str, from: Option<&Path>, dir: &Path) -> Result<PathBuf, Error> {
    let stem = name.strip_suffix(".toml").unwrap_or(name);
    check_name(stem).map_err(|msg| Error::NewName {
        name: name.to_string(),
        msg,
    })?;
    let text = match from {
        Some(f) => Loader::resolve(f)?.text().to_string(),
        None => STARTER.to_string(),
    };
    let path = dir.join(format!("{stem}.toml"));
    crate::report::write_new_atomic(&path, text.as_bytes()).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            Error::NewExists {
                path: path.display().to_string(),
            }
        } else {
            Error::io(&path, e)
        }
    })?;
    Ok(path)
}

/// A scenario name is a plain file name: letters, digits, `-`, `_` and `.`, starting with a
/// letter or digit, at most 100 characters; it becomes the output folder's name too.
fn check_name(stem: &str) -> Result<(), String> {
    if stem.is_empty() {
        return Err("the name is empty".into());
    }
    if stem.len() > 100 {
        return Err("the name is longer than 100 characters".into());
    }
    if !stem.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err("the name must start with a letter or a digit".into());
    }
    if let Some(c) = stem
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "`{c}` is not allowed: use letters, digits, `-`, `_` and `.` (the file is written in the current folder)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_file_names() {
        for ok in ["x", "my-scenario", "retry_storm.v2", "2026-incident"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".hidden",
            "-x",
            "a/b",
            "../x",
            "a b",
            "é",
            &"x".repeat(101),
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
