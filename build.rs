//! Embeds every `scenarios/*.toml` in the binary: writes `$OUT_DIR/bundled.rs`, a table of
//! `(name, include_str!(file))` in name order, so a new scenario file needs no code change.

use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"))
        .join("scenarios");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the scenarios folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut table = String::from("&[\n");
    for f in &files {
        let name = f
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("scenario file names are UTF-8");
        let path = f.to_str().expect("the scenarios folder's path is UTF-8");
        table.push_str(&format!(
            "    Bundled {{ name: {name:?}, text: include_str!({path:?}) }},\n"
        ));
    }
    table.push(']');
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it")).join("bundled.rs");
    std::fs::write(out, table).expect("write bundled.rs");
}
