//! Issue 26 (item 4): no upward import. The library's layers, lowest first, as
//! docs/architecture.md draws them: a file may name (`crate::MODULE`) only a layer of a
//! lower rank, never its own rank's neighbours or anything above. Issue 21 (item 7) is one
//! case: `stats/` (a sweep's statistics) reads neither `model/` nor what shows it, and
//! `report/` and `export/` never import from `experiment/`, `serve/` or the binary's `cli/`.
//! Within `model/`, the request lifecycle's protocol (`Next`, `PartDone`) is plain data in
//! `model/protocol.rs`, so no concept file imports the lifecycle's driver.

use std::path::{Path, PathBuf};

/// The layers, lowest first; the modules of one rank do not read each other. The binary
/// (`main.rs`, `cli/`) is above them all and reads the library as `brink::`.
const RANKS: &[&[&str]] = &[
    &["engine"],
    &["laws"],
    &["scenario"],
    &["model", "stats", "traces"],
    &["report"],
    &["export"],
    &["experiment"],
    &["serve"],
];

/// Every `.rs` file of module `dir` (`src/DIR.rs` and `src/DIR/**`), test files left out.
fn files(dir: &str) -> Vec<PathBuf> {
    let mut files = vec![Path::new("src").join(format!("{dir}.rs"))];
    let mut stack = vec![Path::new("src").join(dir)];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    // Test code (a `tests/` folder) may use anything.
    files.retain(|f| !f.components().any(|c| c.as_os_str() == "tests"));
    files
}

/// Every `PREFIX` + name a file's code names (comments and `#[cfg(test)]` code left out:
/// a doc comment may point at what is above), with the file.
fn names(files: &[PathBuf], prefix: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices(prefix) {
                let name: String = line[i + prefix.len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '{')
                    .collect();
                out.push((f.display().to_string(), name));
            }
        }
    }
    out
}

/// The upward (or sideways) imports in the library, one line each.
fn upward_imports() -> Vec<String> {
    let rank = |m: &str| RANKS.iter().position(|r| r.contains(&m));
    let mut wrong = Vec::new();
    for (r, layer) in RANKS.iter().enumerate() {
        for dir in layer.iter() {
            for (file, module) in names(&files(dir), "crate::") {
                if module.starts_with('{') {
                    wrong.push(format!(
                        "{file}: `crate::{{…}}` hides its layers; write one `use crate::X` per module"
                    ));
                } else if rank(&module).is_none_or(|m| m >= r) && module != *dir {
                    wrong.push(format!("{file} ({dir}) imports crate::{module}"));
                }
            }
        }
    }
    wrong
}

#[test]
fn no_layer_imports_from_above() {
    let wrong = upward_imports();
    assert!(wrong.is_empty(), "upward imports:\n{}", wrong.join("\n"));
}

#[test]
fn every_library_module_has_a_layer() {
    let lib = std::fs::read_to_string("src/lib.rs").unwrap();
    let unranked: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';'))
        .filter(|m| !RANKS.iter().any(|r| r.contains(m)))
        .collect();
    assert!(
        unranked.is_empty(),
        "modules with no rank in RANKS (give each one): {unranked:?}"
    );
}

#[test]
fn no_concept_file_imports_the_lifecycle_driver() {
    let model: Vec<PathBuf> = files("model")
        .into_iter()
        .filter(|f| !f.ends_with("lifecycle.rs"))
        .collect();
    let wrong: Vec<String> = names(&model, "super::")
        .into_iter()
        .filter(|(_, m)| m == "lifecycle")
        .map(|(f, _)| format!("{f} imports super::lifecycle (name `model::protocol` instead)"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
