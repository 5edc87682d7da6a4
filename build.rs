//! Embeds every `scenarios/*.toml` in the binary: writes `$OUT_DIR/bundled.rs`, a table of
//! `(name, include_str!(file))` in name order, so a new scenario file needs no code change;
//! and every file of `scenarios/data/` (the telemetry the bundled scenarios read) in
//! `$OUT_DIR/bundled_data.rs`, a table of `("data/NAME", include_bytes!(file))`.

use std::path::{Path, PathBuf};

/// The files of `dir` that `keep` accepts, in name order, each with its (UTF-8) name and
/// path; the build reruns when the folder changes.
fn files(dir: &Path, keep: impl Fn(&Path) -> bool) -> Vec<(String, String)> {
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.is_file() && keep(p));
    files.sort();
    files
        .iter()
        .map(|f| {
            let name = f.file_name().and_then(|s| s.to_str()).expect("UTF-8 names");
            let path = f.to_str().expect("a UTF-8 path");
            (name.to_string(), path.to_string())
        })
        .collect()
}

/// Writes `rows` as a slice expression to `$OUT_DIR/NAME`.
fn write_table(name: &str, rows: impl Iterator<Item = String>) {
    let mut table = String::from("&[\n");
    for row in rows {
        table.push_str(&format!("    {row},\n"));
    }
    table.push(']');
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it")).join(name);
    std::fs::write(out, table).expect("write a bundled table");
}

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"))
        .join("scenarios");
    let scenarios = files(&dir, |p| p.extension().is_some_and(|x| x == "toml"));
    assert!(
        !scenarios.is_empty(),
        "the scenarios folder holds scenarios"
    );
    write_table(
        "bundled.rs",
        scenarios.iter().map(|(name, path)| {
            let stem = name.strip_suffix(".toml").unwrap_or(name);
            format!("Bundled {{ name: {stem:?}, text: include_str!({path:?}) }}")
        }),
    );
    let data = files(&dir.join("data"), |_| true);
    write_table(
        "bundled_data.rs",
        data.iter().map(|(name, path)| {
            format!("({:?}, include_bytes!({path:?}))", format!("data/{name}"))
        }),
    );
}
