//! Issue 21 (item 7): the sweep's statistics live below what reads them. `stats/` reads
//! only `scenario` and `engine`; `report/` and `export/` read `stats/` and never import
//! from `experiment/`, `serve/` or the binary's `cli/` above them.

use std::path::Path;

/// Every `crate::MODULE` a file under `src/DIR` names, with the file.
fn imports(dir: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![Path::new("src").join(dir)];
    let top = Path::new("src").join(format!("{dir}.rs"));
    let mut files = vec![top];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    // Test code (a `tests/` folder, or after `#[cfg(test)]`) may use anything, and a
    // doc comment may name what is above.
    for f in files
        .iter()
        .filter(|f| !f.components().any(|c| c.as_os_str() == "tests"))
    {
        let text = std::fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("crate::") {
                let name: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push((f.display().to_string(), name));
            }
        }
    }
    out
}

#[test]
fn no_layer_imports_from_above() {
    let rules: [(&str, &[&str]); 3] = [
        (
            "stats",
            &["experiment", "export", "report", "serve", "model"],
        ),
        ("report", &["experiment", "serve"]),
        ("export", &["experiment", "serve"]),
    ];
    let mut wrong = Vec::new();
    for (dir, above) in rules {
        for (file, module) in imports(dir) {
            if above.contains(&module.as_str()) {
                wrong.push(format!("{file} imports crate::{module}"));
            }
        }
    }
    assert!(wrong.is_empty(), "upward imports:\n{}", wrong.join("\n"));
}
