//! The bundled scenarios: every `scenarios/*.toml` compiled into the binary (by `build.rs`),
//! so an installed `brink` runs them from any folder. A command's FILE argument that is
//! not an existing path but names one of them (`retry-storm` or `retry-storm.toml`) loads
//! the embedded text, byte for byte the file's.

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
    }
}
