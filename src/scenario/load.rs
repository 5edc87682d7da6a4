//! Loading a scenario file: parse, apply a variant and `--set` overrides, deserialize,
//! validate, and precompute the configuration each intervention puts in force. Every error
//! names the key path and the place (file, line and column, or the override it came from).

use super::bundled::{self, Bundled};
use super::error::{ScenarioError, toml_types};
use super::overrides::{self, Override};
use super::provenance::Provenance;
use super::raw::RawScenario;
use super::spec::{Config, Intervention, Scenario};
use super::strict::Strict;
use super::validate::{self, did_you_mean};
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
}

impl Loader {
    /// Reads and parses a scenario file.
    pub fn open(path: &Path) -> Result<Self, ScenarioError> {
        let file = path.display().to_string();
        let io = |cause| ScenarioError::Io {
            file: file.clone(),
            cause,
        };
        let size = std::fs::metadata(path).map_err(io)?.len();
        if size > MAX_FILE_BYTES {
            return Err(ScenarioError::Syntax {
                place: format!("{file}:1:1"),
                msg: format!(
                    "the file holds {size} bytes; a scenario may hold at most {MAX_FILE_BYTES}"
                ),
            });
        }
        let bytes = std::fs::read(path).map_err(io)?;
        let text = String::from_utf8(bytes).map_err(|e| {
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
        })?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into());
        Self::from_text(&file, &name, text)
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
        Self::from_text(&b.file(), b.name, b.text.to_string())
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
        })
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
        // Every variant names only entries the file defines, chosen or not: the names are
        // known without applying it.
        for v in self.variant_names() {
            for (path, value) in self.variant_set(&v) {
                target(&self.table, &path, &value, Scope::Setup)
                    .and_then(|()| overrides::check_depth(&path))
                    .map_err(|msg| ScenarioError::Invalid {
                        place: self.variant_place(&v),
                        path,
                        msg,
                    })?;
            }
        }
        let mut table = self.table.clone();
        let mut origins: Vec<(String, String)> = Vec::new();
        if let Some(v) = variant {
            let known = self.variant_names();
            if !known.iter().any(|k| k == v) {
                let hint = did_you_mean(v, known.iter().map(|s| s.as_str()));
                let list = if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                };
                return Err(ScenarioError::Invalid {
                    place: format!("--variant {v}"),
                    path: format!("variant.{v}"),
                    msg: format!(
                        "{} defines no such variant (it has: {list}){hint}",
                        self.file
                    ),
                });
            }
            let place = self.variant_place(v);
            for (path, value) in self.variant_set(v) {
                self.apply(&mut table, &path, value, &place, Scope::Setup)?;
                origins.push((path, place.clone()));
            }
        }
        for o in sets {
            self.apply(
                &mut table,
                &o.path,
                o.value.clone(),
                &o.origin,
                Scope::Setup,
            )?;
            origins.push((o.path.clone(), o.origin.clone()));
        }
        let (raw, meta, config) = self.build(&table, &origins)?;
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
        let collapse = validate::collapse(&raw, &config)
            .map_err(|(path, msg)| self.invalid(&path, &msg, &origins))?;
        let config = Arc::new(config);
        let mut interventions = Vec::new();
        let mut order: Vec<usize> = (0..raw.at.len()).collect();
        order.sort_by_key(|&i| raw.at[i].time.0);
        let mut current = config.clone();
        let mut live = table.clone();
        for i in order {
            let at = &raw.at[i];
            let place = format!(
                "[[at]] entry {} ({})",
                i + 1,
                self.place_in_file(&format!("at.{i}"))
            );
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
                let (_, _, next) = self.build(&live, &origins)?;
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
                ..self.provenance.clone()
            },
        })
    }

    /// The assignments of variant `v`, flattened, in file order.
    fn variant_set(&self, v: &str) -> Vec<(String, Value)> {
        let mut flat = Vec::new();
        if let Some(Value::Table(set)) = overrides::get(&self.table, &format!("variant.{v}.set")) {
            overrides::flatten(set, "", &mut flat);
        }
        flat
    }

    /// ``variant `v` (FILE:LINE:COL)``, the place of its assignments in messages.
    fn variant_place(&self, v: &str) -> String {
        format!(
            "variant `{v}` ({})",
            self.place_in_file(&format!("variant.{v}"))
        )
    }

    /// Sets `path` to `value` in `table`, refusing a path that names an entry the table
    /// does not define or (in `scope`) would have no effect.
    fn apply(
        &self,
        table: &mut Table,
        path: &str,
        value: Value,
        origin: &str,
        scope: Scope,
    ) -> Result<(), ScenarioError> {
        target(table, path, &value, scope)
            .and_then(|()| overrides::apply(table, path, value))
            .map_err(|msg| ScenarioError::Invalid {
                place: origin.to_string(),
                path: path.to_string(),
                msg,
            })
    }

    fn build(
        &self,
        table: &Table,
        origins: &[(String, String)],
    ) -> Result<(RawScenario, validate::Meta, Config), ScenarioError> {
        let raw: RawScenario =
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
        let (meta, config) =
            validate::validate(&raw).map_err(|(path, msg)| self.invalid(&path, &msg, origins))?;
        Ok((raw, meta, config))
    }

    fn invalid(&self, path: &str, msg: &str, origins: &[(String, String)]) -> ScenarioError {
        let mut from_override = origins.iter().rev().find(|(p, _)| {
            p == path || path.starts_with(&format!("{p}.")) || p.starts_with(&format!("{path}."))
        });
        if from_override.is_none() && !origins.is_empty() && self.valid_alone() {
            // The file is fine on its own, so an override broke another key (setting a
            // backoff that then needs a base): blame the override nearest in the tree.
            from_override = origins
                .iter()
                .rev()
                .max_by_key(|(p, _)| common_prefix(p, path));
        }
        let place = match from_override {
            Some((_, origin)) => origin.clone(),
            None => self.place_in_file(path),
        };
        ScenarioError::Invalid {
            place,
            path: if path.is_empty() {
                "(top level)".into()
            } else {
                path.into()
            },
            msg: msg.into(),
        }
    }

    /// An error of the `[tipping]` checks. The measuring window (`tipping.settle`) starts
    /// where the trigger events end, so an override that moves them (a phase map's axis
    /// over `event.slowdown.for`), the run's length or the metrics step is to blame before
    /// any other: the last such override, else as [`invalid`](Self::invalid) places it.
    fn invalid_window(
        &self,
        path: &str,
        msg: &str,
        origins: &[(String, String)],
        tipping: &Option<super::raw::RawTipping>,
    ) -> ScenarioError {
        let mut moves = vec!["duration".to_string(), "metrics.step".to_string()];
        for name in tipping.iter().flat_map(|t| &t.trigger) {
            for key in ["at", "for", "every"] {
                moves.push(format!("event.{name}.{key}"));
            }
        }
        let mover = origins.iter().rev().find(|(p, _)| {
            moves
                .iter()
                .any(|m| p == m || m.starts_with(&format!("{p}.")))
        });
        match mover {
            Some((_, origin)) if path == "tipping.settle" => ScenarioError::Invalid {
                place: origin.clone(),
                path: path.into(),
                msg: msg.into(),
            },
            _ => self.invalid(path, msg, origins),
        }
    }

    /// An error about `path` placed like the loader's own: in the file, or at the last of
    /// `sets` that assigned it (for checks made after loading, e.g. by sweeps).
    pub fn problem(&self, path: &str, msg: &str, sets: &[Override]) -> ScenarioError {
        let place = sets
            .iter()
            .rev()
            .find(|o| o.path == path || path.starts_with(&format!("{}.", o.path)))
            .map(|o| o.origin.clone())
            .unwrap_or_else(|| self.place_in_file(path));
        ScenarioError::Invalid {
            place,
            path: path.into(),
            msg: msg.into(),
        }
    }

    /// True when the file, with no variant or override, is valid.
    fn valid_alone(&self) -> bool {
        self.build(&self.table, &[]).is_ok()
    }

    /// `file:line:col` of the key at `path`, or of its nearest ancestor present in the file.
    fn place_in_file(&self, path: &str) -> String {
        let offset = locate(&self.text, path).unwrap_or(0);
        let (line, col) = line_col(&self.text, offset);
        format!("{}:{line}:{col}", self.file)
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

/// Where an assignment is made: before the run (a variant, `--set`, a sweep) or during it
/// (an `[[at]]` intervention).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Setup,
    Intervention,
}

/// The named sections an assignment may reach into, and what their entries are called.
const NAMED: [(&str, &str); 4] = [
    ("class", "class"),
    ("pool", "pool"),
    ("cache", "cache tier"),
    ("event", "event"),
];

/// Refuses an assignment to `path` that would create a named entry `table` does not
/// define (`pool.dbb.workers`, a typo of `db`, or the whole section at once,
/// `pool = { dbb = {...} }`) or would have no effect where it is made.
fn target(table: &Table, path: &str, value: &Value, scope: Scope) -> Result<(), String> {
    let segs: Vec<&str> = path.split('.').collect();
    let first = segs[0];
    if let (Some(_), [_], Value::Table(entries)) = (
        NAMED.iter().find(|(s, _)| *s == first),
        segs.as_slice(),
        value,
    ) {
        // A whole section is assigned: each entry it names must be one the file defines.
        for name in entries.keys() {
            target(
                table,
                &format!("{first}.{name}"),
                &Value::Boolean(true),
                scope,
            )?;
        }
    }
    if first == "variant" {
        return Err(
            "variants are chosen with --variant before any setting applies; setting one has no effect"
                .into(),
        );
    }
    if let (Some((_, what)), Some(name)) = (NAMED.iter().find(|(s, _)| *s == first), segs.get(1)) {
        let known: Vec<&str> = match table.get(first) {
            Some(Value::Table(t)) => t.keys().map(String::as_str).collect(),
            _ => vec![],
        };
        if !known.contains(name) {
            let list = if known.is_empty() {
                "none".to_string()
            } else {
                validate::listing(&known)
            };
            let hint = did_you_mean(name, known.iter().copied());
            return Err(format!(
                "unknown {what} `{name}` (the file defines: {list}); a setting cannot add one{hint}"
            ));
        }
    }
    if scope == Scope::Setup {
        return Ok(());
    }
    match (first, segs.get(2).copied()) {
        ("class" | "pool", _) => Ok(()),
        ("event", Some("enabled")) if segs.len() == 3 => Ok(()),
        ("event", Some("label")) => Err(
            "the timeline keeps the labels of the start of the run; an intervention can only switch an event on or off (`enabled`)".into(),
        ),
        ("event", _) => Err(
            "an event is fixed for the run (a running event must end the way it started); an intervention can only switch it on or off (`enabled`)".into(),
        ),
        ("cache", _) => Err(
            "a cache tier cannot change during a run; change it in a variant instead".into(),
        ),
        (
            "title" | "description" | "case" | "duration" | "seed" | "metrics" | "at" | "tipping"
            | "phase" | "collapse" | "hysteresis",
            _,
        ) => Err(format!(
            "`{first}` applies to the whole run, so an intervention setting it would have no effect; an intervention changes classes, pools and events' `enabled`"
        )),
        _ => Ok(()),
    }
}

/// Rewrites serde's messages into ones that name the fix: the nearest valid key for a
/// misspelling, and the unknown key itself in the path.
fn explain(msg: &str, path: &mut Vec<String>) -> String {
    for what in ["unknown field", "unknown variant"] {
        if let Some(rest) = msg.strip_prefix(what) {
            let name = rest.split('`').nth(1).unwrap_or("");
            let expected: Vec<&str> = rest
                .split("expected")
                .nth(1)
                .unwrap_or("")
                .split('`')
                .skip(1)
                .step_by(2)
                .collect();
            let list = validate::listing(&expected);
            let hint = did_you_mean(name, expected.iter().copied());
            if what == "unknown field" {
                if path.last().map(|s| s.as_str()) != Some(name) {
                    path.push(name.to_string());
                }
                return format!("unknown key `{name}` (valid keys here: {list}){hint}");
            }
            return format!("unknown value `{name}` (valid values: {list}){hint}");
        }
    }
    if let Some(rest) = msg.strip_prefix("missing field") {
        let name = rest.split('`').nth(1).unwrap_or("");
        if !name.is_empty() && path.last().map(|s| s.as_str()) != Some(name) {
            path.push(name.to_string());
        }
        return format!("missing required key `{name}`");
    }
    // Serde names Rust types ("f64", "struct RawService"); say what the file needs instead.
    toml_types(msg)
}

/// The byte offset of the key at `path` (or its nearest present ancestor) in `text`.
fn locate(text: &str, path: &str) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let doc = DeTable::parse(text).ok()?;
    let mut best = None;
    let mut table = Some(doc.get_ref());
    let mut array: Option<&toml::de::DeArray> = None;
    for seg in path.split('.').filter(|s| !s.is_empty()) {
        // Stop at the deepest key present: a missing key is reported at its parent.
        let found = if let Some(t) = table {
            t.iter()
                .find(|(k, _)| k.get_ref().as_ref() == seg)
                .map(|(k, v)| (k.span().start, v))
        } else if let Some(a) = array {
            seg.parse::<usize>()
                .ok()
                .and_then(|i| a.get(i))
                .map(|v| (v.span().start, v))
        } else {
            None
        };
        let Some((start, value)) = found else { break };
        best = Some(start);
        table = None;
        array = None;
        match value.get_ref() {
            DeValue::Table(t) => table = Some(t),
            DeValue::Array(a) => array = Some(a),
            _ => {}
        }
    }
    best
}

/// How many leading path segments two dotted paths share.
fn common_prefix(a: &str, b: &str) -> usize {
    a.split('.')
        .zip(b.split('.'))
        .take_while(|(x, y)| x == y)
        .count()
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    // Columns count characters, not bytes (a `µs` earlier on the line is one column).
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

/// The TOML reader's message, with the one that leaks a Rust type for an integer beyond 64
/// bits put in TOML's words.
fn toml_message(msg: &str) -> String {
    let msg = msg.trim();
    match msg.strip_prefix("invalid type: integer ") {
        Some(rest) if rest.contains(" as i128") => {
            let n = rest.split(" as i128").next().unwrap_or("");
            format!(
                "integer {n} is too large: TOML integers are 64-bit (at most 9223372036854775807)"
            )
        }
        _ => msg.to_string(),
    }
}
