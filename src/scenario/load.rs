//! Loading a scenario file: parse, apply a variant and `--set` overrides, deserialize,
//! validate, and precompute the configuration each intervention puts in force. Every error
//! names the key path and the place (file, line and column, or the override it came from).
//! What an assignment may touch is checked in `assign.rs`; where an error is, in `place.rs`.

mod assign;
mod place;

use super::bounded::{Unreadable, read_bounded};
use super::bundled::{self, Bundled};
use super::error::ScenarioError;
use super::hit_ratio;
use super::overrides::{self, Override};
use super::provenance::Provenance;
use super::raw::{Law, RawScenario, RawService};
use super::spec::sweep::Measure;
use super::spec::{CacheCfg, Config, Intervention, Scenario, SlowCount};
use super::strict::Strict;
use super::telemetry;
use super::validate::{self, did_you_mean};
use crate::laws::fitted::FitReport;
use assign::Scope;
use place::{explain, line_col, toml_message};
pub use place::{place_at, place_in_text};
use std::path::Path;
use std::sync::Arc;
use toml::{Table, Value};

/// The largest scenario file read, in bytes (16 MiB: far more than any hand-written file,
/// with room for long empirical samples).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// A scenario file read into memory, ready to be loaded with any variant and overrides.
#[derive(Debug, Clone)]
pub struct Loader {
    /// The path as given, for messages.
    pub file: String,
    /// The file stem: the scenario's name.
    pub name: String,
    text: String,
    table: Table,
    /// What the file's outputs record; seed, variant and overrides are filled per load.
    provenance: Provenance,
    /// Where telemetry files are read from: the scenario file's folder, the bundled data
    /// for a bundled scenario, or the current folder for text without a file (a library
    /// caller).
    dir: telemetry::Folder,
}

impl Loader {
    /// Reads and parses a scenario file.
    pub fn open(path: &Path) -> Result<Self, ScenarioError> {
        let file = path.display().to_string();
        let text = read_text(path, MAX_FILE_BYTES, "a scenario")?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into());
        let mut loader = Self::from_text(&file, &name, text)?;
        loader.dir =
            telemetry::Folder::Path(path.parent().map(Path::to_path_buf).unwrap_or_default());
        Ok(loader)
    }

    /// Reads the scenario a command names: the file at `arg` if it exists (or `arg.toml`
    /// for a name without `.toml`), else the bundled scenario of that name (`retry-storm`
    /// or `retry-storm.toml`): a file in the current folder wins over a bundled name.
    pub fn resolve(arg: &Path) -> Result<Self, ScenarioError> {
        if !arg.exists() {
            let with_ext = arg.with_extension("toml");
            if arg.extension().is_none() && with_ext.is_file() {
                return Self::open(&with_ext);
            }
            if let Some(b) = arg.to_str().and_then(bundled::find) {
                return Self::bundled(b);
            }
        }
        Self::open(arg).map_err(|e| match e {
            ScenarioError::Io { file, cause } if cause.kind() == std::io::ErrorKind::NotFound => {
                let stem = arg
                    .file_stem()
                    .map(|s| s.to_string_lossy())
                    .unwrap_or_default();
                let hint = did_you_mean(&stem, bundled::all().iter().map(|b| b.name));
                ScenarioError::NotFound { file, hint }
            }
            e => e,
        })
    }

    /// Parses a bundled scenario; messages name it `NAME.toml (bundled)`.
    pub fn bundled(b: &Bundled) -> Result<Self, ScenarioError> {
        let mut loader = Self::from_text(&b.file(), b.name, b.text.to_string())?;
        loader.dir = telemetry::Folder::Bundled;
        Ok(loader)
    }

    /// Parses scenario text; `file` is used in messages, `name` names the output folder.
    pub fn from_text(file: &str, name: &str, text: String) -> Result<Self, ScenarioError> {
        let table: Table = toml::from_str(&text).map_err(|e| {
            let (line, col) = e.span().map(|s| line_col(&text, s.start)).unwrap_or((1, 1));
            ScenarioError::Syntax {
                place: format!("{file}:{line}:{col}"),
                msg: toml_message(e.message()),
            }
        })?;
        Ok(Self {
            file: file.into(),
            name: name.into(),
            provenance: Provenance::of_text(name, &text),
            text,
            table,
            dir: telemetry::Folder::default(),
        })
    }

    /// Another text in this file's place: its name, messages and folder (where its
    /// telemetry files are read from) are this loader's (a live session's edited text).
    pub fn with_text(&self, text: String) -> Result<Self, ScenarioError> {
        let mut loader = Self::from_text(&self.file, &self.name, text)?;
        loader.dir = self.dir.clone();
        Ok(loader)
    }

    /// The file's text, exactly as read.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The names of the variants the file defines, in file order.
    pub fn variant_names(&self) -> Vec<String> {
        match self.table.get("variant") {
            Some(Value::Table(t)) => t.keys().cloned().collect(),
            _ => vec![],
        }
    }

    /// The raw value at a dotted path after nothing is applied (for sweeps' operating points).
    pub fn raw_value(&self, path: &str) -> Option<&Value> {
        overrides::get(&self.table, path)
    }

    /// The file's table with the variant and then `sets` applied: all that a load builds
    /// from. Two loads whose tables are equal (and whose further `sets` are equal) build
    /// the same scenario but for its variant's name and provenance, so a sweep runs one
    /// for both (`experiment/sweep.rs`, `Sweep::sources`).
    pub fn table(&self, variant: Option<&str>, sets: &[Override]) -> Result<Table, ScenarioError> {
        Ok(self.assigned(variant, sets)?.0)
    }

    /// The kind and value of a number or duration key at `path`, after the variant and
    /// `sets` ([`validate::settable_number`]): what a calibration's `--fit KEY` searches.
    /// An error is placed at `origin` (the flag that named the key).
    pub fn settable_number(
        &self,
        variant: Option<&str>,
        sets: &[Override],
        path: &str,
        origin: &str,
    ) -> Result<(super::sweep::AxisUnit, Value), ScenarioError> {
        let (table, _) = self.assigned(variant, sets)?;
        validate::settable_number(&table, path).map_err(|msg| ScenarioError::Invalid {
            place: origin.into(),
            path: path.into(),
            msg,
        })
    }

    /// Builds the validated scenario with an optional variant and overrides (applied after
    /// the variant, in order), its `[tipping]`, `[phase]` and `[hysteresis]` sections
    /// validated for the sweeps and ramps that use them.
    pub fn load(
        &self,
        variant: Option<&str>,
        sets: &[Override],
    ) -> Result<Scenario, ScenarioError> {
        self.load_for(variant, sets, Sections::Sweeps)
    }

    /// The scenario of a single run: as [`load`](Self::load), but the `[tipping]`,
    /// `[phase]` and `[hysteresis]` sections are only read, not validated, and left out
    /// (`None`): a run does not use their windows, so a `--set` that moves the trigger
    /// must not fail it on them (`brink check` and the sweeps validate them).
    pub fn load_run(
        &self,
        variant: Option<&str>,
        sets: &[Override],
    ) -> Result<Scenario, ScenarioError> {
        self.load_for(variant, sets, Sections::Run)
    }

    fn load_for(
        &self,
        variant: Option<&str>,
        sets: &[Override],
        sections: Sections,
    ) -> Result<Scenario, ScenarioError> {
        let (table, mut origins) = self.assigned(variant, sets)?;
        let (raw, meta, mut config) = self.build(&table, &origins)?;
        let derived = self.derived_caches(&config, variant, sets, &origins)?;
        hit_ratio::pin(&mut config, &derived);
        validate::starting_fleet(&config)
            .map_err(|(path, msg)| self.invalid(&path, &msg, &origins))?;
        let (tipping, phase, hysteresis) = match sections {
            Sections::Run => (None, None, None),
            Sections::Sweeps => {
                let (tipping, phase) = validate::tipping(&raw, &table, &config, meta.duration)
                    .map_err(|(path, msg)| {
                        self.invalid_window(&path, &msg, &origins, &raw.tipping)
                    })?;
                let hysteresis = validate::hysteresis(&raw, tipping.as_ref())
                    .map_err(|(path, msg)| self.invalid(&path, &msg, &origins))?;
                (tipping, phase, hysteresis)
            }
        };
        // An SLO measure reads its class's slow requests: the one column it adds.
        config.slow =
            match tipping.as_ref().map(|t| &t.measure) {
                Some(Measure::Slo(slo)) => config
                    .classes
                    .iter()
                    .position(|c| c.name == slo.class)
                    .map(|class| SlowCount {
                        class,
                        above_ns: slo.bound_ns,
                    }),
                _ => None,
            };
        let collapse = validate::collapse(&raw, &config)
            .map_err(|(path, msg)| self.invalid(&path, &msg, &origins))?;
        let fitted = config
            .pools
            .iter()
            .flat_map(|p| FitReport::of(p.service.solved.as_ref()))
            .chain(config.classes.iter().flat_map(|c| {
                c.users
                    .as_ref()
                    .map(|u| FitReport::of(u.think.solved.as_ref()))
                    .unwrap_or_default()
            }))
            .collect();
        let config = Arc::new(config);
        let mut interventions = Vec::new();
        let mut order: Vec<usize> = (0..raw.at.len()).collect();
        order.sort_by_key(|&i| raw.at[i].time.0);
        let mut current = config.clone();
        // Each entry's configuration is built from the table without the `[[at]]` entries:
        // an intervention cannot change them, the first build has checked them, and built
        // again at each entry they would make loading O(entries²).
        let mut live = table.clone();
        live.remove("at");
        let places = place::places_in_text(
            &self.file,
            &self.text,
            &(0..raw.at.len())
                .map(|i| format!("at.{i}"))
                .collect::<Vec<_>>(),
        );
        for i in order {
            let at = &raw.at[i];
            let place = format!("[[at]] entry {} ({})", i + 1, places[i]);
            let mut flat = Vec::new();
            overrides::flatten(&at.set, "", &mut flat);
            if flat.is_empty() && at.fire.is_none() {
                return Err(self.invalid(
                    &format!("at.{i}.set"),
                    "sets nothing and fires nothing; give at least one `path = value` in `set`, or `fire = \"EVENT\"`",
                    &[],
                ));
            }
            if !flat.is_empty() {
                for (path, value) in flat {
                    self.apply(&mut live, &path, value, &place, Scope::Intervention)?;
                    origins.push((path, place.clone()));
                }
                let (_, _, mut next) = self.build(&live, &origins)?;
                hit_ratio::pin(&mut next, &derived);
                next.slow = config.slow;
                validate::same_structure(&current, &next).map_err(|msg| {
                    ScenarioError::Invalid {
                        place: place.clone(),
                        path: format!("at.{i}.set"),
                        msg: format!("interventions change parameters, not structure: {msg}"),
                    }
                })?;
                current = Arc::new(next);
            }
            let fire = match &at.fire {
                None => None,
                Some(name) => Some(
                    validate::fired_trigger(
                        &current.triggers,
                        name,
                        at.time.0,
                        meta.duration,
                        &interventions,
                    )
                    .map_err(|msg| ScenarioError::Invalid {
                        place: place.clone(),
                        path: format!("at.{i}.fire"),
                        msg,
                    })?,
                ),
            };
            let label = at
                .label
                .clone()
                .unwrap_or_else(|| format!("intervention {}", i + 1));
            interventions.push(Intervention {
                time: at.time.0,
                label,
                config: current.clone(),
                fire,
            });
        }
        Ok(Scenario {
            name: self.name.clone(),
            title: meta.title.unwrap_or_else(|| self.name.clone()),
            description: meta.description.unwrap_or_default(),
            case: meta.case.unwrap_or_default(),
            seed: meta.seed,
            duration: meta.duration,
            window: meta.step,
            zoom: meta.zoom,
            config,
            interventions,
            variant: variant.map(str::to_string),
            variants: raw
                .variant
                .iter()
                .map(|(k, v)| (k.clone(), v.description.clone().unwrap_or_default()))
                .collect(),
            tipping,
            phase,
            collapse,
            hysteresis,
            provenance: Provenance {
                seed: meta.seed,
                variant: variant.map(str::to_string),
                overrides: sets
                    .iter()
                    .map(|o| format!("{}={}", o.path, o.value))
                    .collect(),
                fitted,
                ..self.provenance.clone()
            },
        })
    }
    /// The cache tiers with a `hit_ratio`, solved at the operating point: the file with the
    /// variant and the user's overrides, without a sweep's probes (a design's keyspace does
    /// not follow the load). `config` is that point's model when no override is a probe.
    fn derived_caches(
        &self,
        config: &Config,
        variant: Option<&str>,
        sets: &[Override],
        origins: &[(String, String)],
    ) -> Result<Vec<CacheCfg>, ScenarioError> {
        if config.caches.iter().all(|c| c.target.is_none()) {
            return Ok(vec![]);
        }
        let mut op = if sets.iter().any(|o| o.probe) {
            let plain: Vec<Override> = sets.iter().filter(|o| !o.probe).cloned().collect();
            let (table, origins) = self.assigned(variant, &plain)?;
            self.build(&table, &origins)?.2
        } else {
            config.clone()
        };
        hit_ratio::derive(&mut op).map_err(|(path, msg)| self.invalid(&path, &msg, origins))?;
        Ok(op.caches)
    }

    fn build(
        &self,
        table: &Table,
        origins: &[(String, String)],
    ) -> Result<(RawScenario, validate::Meta, Config), ScenarioError> {
        let mut raw: RawScenario =
            serde_path_to_error::deserialize(Strict(Value::Table(table.clone()))).map_err(|e| {
                let mut path: Vec<String> = e
                    .path()
                    .iter()
                    .filter_map(|s| match s {
                        serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
                        serde_path_to_error::Segment::Map { key } => Some(key.clone()),
                        serde_path_to_error::Segment::Enum { variant } => Some(variant.clone()),
                        serde_path_to_error::Segment::Unknown => None,
                    })
                    .collect();
                let msg = e.inner().to_string().trim().to_string();
                let msg = explain(&msg, &mut path);
                self.invalid(&path.join("."), &msg, origins)
            })?;
        self.read_telemetry(&mut raw)
            .map_err(|(path, msg)| self.invalid(&path, &msg, origins))?;
        let (meta, config) =
            validate::validate(&raw).map_err(|(path, msg)| self.invalid(&path, &msg, origins))?;
        Ok((raw, meta, config))
    }
}

impl Loader {
    /// Reads the telemetry file of every `law = "histogram"` (a pool's service, a class's
    /// think time, a mixture's part) into its raw table, for validation to fit.
    fn read_telemetry(&self, raw: &mut RawScenario) -> Result<(), (String, String)> {
        let pools = raw
            .pool
            .iter_mut()
            .map(|(n, p)| (format!("pool.{n}.service"), &mut p.service));
        let classes = raw
            .class
            .iter_mut()
            .filter_map(|(n, c)| c.think.as_mut().map(|t| (format!("class.{n}.think"), t)));
        for (path, s) in pools.chain(classes) {
            self.read_service(&path, s)?;
        }
        Ok(())
    }

    fn read_service(&self, path: &str, s: &mut RawService) -> Result<(), (String, String)> {
        for (i, part) in s.parts.iter_mut().flatten().enumerate() {
            self.read_service(&format!("{path}.parts.{i}"), part)?;
        }
        if s.law != Law::Histogram {
            return Ok(());
        }
        let need = |key: &str| {
            (
                format!("{path}.{key}"),
                format!("missing required key `{key}` (the histogram law needs it)"),
            )
        };
        let req = telemetry::Request {
            file: s.file.as_deref().ok_or_else(|| need("file"))?,
            format: s.format.as_deref().ok_or_else(|| need("format"))?,
            metric: s.metric.as_deref(),
            labels: s.labels.as_ref(),
            unit: s.unit.as_deref(),
        };
        let m = telemetry::read(&req, &self.dir)
            .map_err(|(key, msg)| (format!("{path}.{key}"), msg))?;
        s.measured = Some(Arc::new(m));
        Ok(())
    }
}

/// Which sections a load validates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sections {
    /// A single run's: the sweep sections are left out.
    Run,
    /// Every section, for the sweeps and ramps.
    Sweeps,
}

/// Reads a TOML input file of at most `max` bytes as UTF-8 text (`what` names it in the
/// message of a file too large: `a scenario`): errors name the file and the place.
pub fn read_text(path: &Path, max: u64, what: &str) -> Result<String, ScenarioError> {
    let file = path.display().to_string();
    let io = |cause| ScenarioError::Io {
        file: file.clone(),
        cause,
    };
    let bytes = read_bounded(path, max).map_err(|e| match e {
        Unreadable::Io(cause) => io(cause),
        Unreadable::NotAFile => io(std::io::Error::other(
            "not a regular file (a FIFO, a device or a folder)",
        )),
        Unreadable::TooLarge { .. } => ScenarioError::Syntax {
            place: format!("{file}:1:1"),
            msg: format!("{what} may hold at most {max} bytes; this file holds more"),
        },
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        // The prefix up to the first bad byte is valid UTF-8.
        let before = std::str::from_utf8(&bytes[..at]).unwrap_or("");
        let (line, col) = line_col(before, at);
        ScenarioError::Syntax {
            place: format!("{file}:{line}:{col}"),
            msg: format!(
                "not UTF-8 at line {line}, column {col} (byte 0x{:02x}); TOML files are UTF-8",
                bytes[at]
            ),
        }
    })
}
