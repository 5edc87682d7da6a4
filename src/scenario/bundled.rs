//! The bundled scenarios: every `scenarios/*.toml` compiled into the binary (by `build.rs`),
//! so an installed `brink` runs them from any folder. A command's FILE argument that is
//! not an existing path but names one of them (`retry-storm` or `retry-storm.toml`) loads
//! the embedded text, byte for byte the file's. The telemetry files they read
//! (`scenarios/data/`) are embedded too, and a bundled scenario reads them from here.

/// One bundled scenario.
#[derive(Debug, Clone, Copy)]
pub struct Bundled {
    /// The file stem, e.g. `retry-storm`: the scenario's name.
    pub name: &'static str,
    /// The file's text, exactly its bytes.
    pub text: &'static str,
}

impl Bundled {
    /// How messages name it: `retry-storm.toml (bundled)`.
    pub fn file(&self) -> String {
        format!("{}.toml (bundled)", self.name)
    }
}

static ALL: &[Bundled] = include!(concat!(env!("OUT_DIR"), "/bundled.rs"));
static DATA: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/bundled_data.rs"));

/// The bytes of the bundled data file at `path`, relative to `scenarios/` (`data/api.prom`,
/// or `./data/api.prom`).
pub fn data(path: &str) -> Option<&'static [u8]> {
    let path = path.strip_prefix("./").unwrap_or(path);
    DATA.iter().find(|(name, _)| *name == path).map(|(_, b)| *b)
}

/// Every bundled scenario, in name order.
pub fn all() -> &'static [Bundled] {
    ALL
}

/// The bundled scenario named `arg` (`retry-storm` or `retry-storm.toml`).
pub fn find(arg: &str) -> Option<&'static Bundled> {
    let name = arg.strip_suffix(".toml").unwrap_or(arg);
    ALL.iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table holds every file of `scenarios/`, each with its exact bytes.
    #[test]
    fn every_scenario_file_is_embedded_byte_for_byte() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let mut names = Vec::new();
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                let name = p.file_stem().unwrap().to_string_lossy().into_owned();
                let b = find(&name).unwrap_or_else(|| panic!("{name} is not bundled"));
                assert_eq!(b.text, std::fs::read_to_string(&p).unwrap(), "{name}");
                names.push(name);
            }
        }
        names.sort();
        let bundled: Vec<&str> = all().iter().map(|b| b.name).collect();
        assert_eq!(bundled, names);
        assert!(find("retry-storm.toml").is_some());
        assert!(find("no-such-scenario").is_none());
        for e in std::fs::read_dir(dir.join("data")).unwrap() {
            let p = e.unwrap().path();
            let name = format!("data/{}", p.file_name().unwrap().to_string_lossy());
            let bytes = data(&name).unwrap_or_else(|| panic!("{name} is not bundled"));
            assert_eq!(bytes, std::fs::read(&p).unwrap(), "{name}");
        }
        assert!(data("./data/api.prom").is_some());
        assert!(data("data/none.prom").is_none());
        assert!(find("no-such-scenario").is_none());
    }
}
