//! Where `brink all` and `brink list` find their scenarios: a folder of `*.toml` files, or
//! the bundled ones compiled into the binary.

use super::Error;
use crate::scenario::{Loader, bundled};
use std::path::{Path, PathBuf};

/// A set of scenarios.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The `*.toml` files of a folder, in name order.
    Folder(PathBuf),
    /// The scenarios compiled into the binary (`scenarios/*.toml` when it was built).
    Bundled,
}

impl Source {
    /// `brink all`'s scenarios: the folder given; else `./scenarios` when there is one
    /// (the repository's own run reads its files); else the bundled ones, so an installed
    /// `brink all` works from any folder.
    pub fn folder_or_bundled(dir: Option<PathBuf>) -> Self {
        match dir {
            Some(d) => Source::Folder(d),
            None if Path::new("scenarios").is_dir() => Source::Folder("scenarios".into()),
            None => Source::Bundled,
        }
    }

    /// Reads and parses every scenario, in name order.
    pub fn loaders(&self) -> Result<Vec<Loader>, Error> {
        let loaders = match self {
            Source::Folder(dir) => scenario_files(dir)?
                .iter()
                .map(|f| Loader::open(f))
                .collect::<Result<Vec<_>, _>>()?,
            Source::Bundled => bundled::all()
                .iter()
                .map(Loader::bundled)
                .collect::<Result<Vec<_>, _>>()?,
        };
        if loaders.is_empty() {
            return Err(Error::NoScenarios {
                dir: self.to_string(),
            });
        }
        Ok(loaders)
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Folder(dir) => write!(f, "{}", dir.display()),
            Source::Bundled => f.write_str("the bundled scenarios"),
        }
    }
}

/// The scenario files (`*.toml`) of a folder, in name order.
pub fn scenario_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::ScenarioFolder {
            dir: dir.display().to_string(),
            source: e,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundled source reads what the repository's folder holds: the same names, in the
    /// same order, from the same text, named as bundled in messages.
    #[test]
    fn bundled_and_folder_sources_agree() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let folder = Source::Folder(dir).loaders().unwrap();
        let embedded = Source::Bundled.loaders().unwrap();
        assert_eq!(folder.len(), embedded.len());
        for (f, b) in folder.iter().zip(&embedded) {
            assert_eq!(f.name, b.name);
            assert_eq!(f.text(), b.text());
            assert_eq!(b.file, format!("{}.toml (bundled)", b.name));
        }
        assert_eq!(
            Source::folder_or_bundled(Some("x".into())),
            Source::Folder("x".into())
        );
    }
}
