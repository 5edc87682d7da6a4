//! Assignments to a scenario's table: a variant's and `--set` overrides before the run,
//! an `[[at]]` intervention's during it. Each names only entries the file defines and
//! only keys that take effect where it is made.

use super::Loader;
use crate::scenario::error::ScenarioError;
use crate::scenario::overrides::{self, Override};
use crate::scenario::validate::{self, did_you_mean};
use toml::{Table, Value};

impl Loader {
    /// The file's table with variant `variant` (if any) and then `sets` applied, in order,
    /// and where each assignment came from (its path and its place, for messages).
    pub(super) fn assigned(
        &self,
        variant: Option<&str>,
        sets: &[Override],
    ) -> Result<(Table, Vec<(String, String)>), ScenarioError> {
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
        Ok((table, origins))
    }

    /// The assignments of variant `v`, flattened, in file order.
    pub(super) fn variant_set(&self, v: &str) -> Vec<(String, Value)> {
        let mut flat = Vec::new();
        if let Some(Value::Table(set)) = overrides::get(&self.table, &format!("variant.{v}.set")) {
            overrides::flatten(set, "", &mut flat);
        }
        flat
    }

    /// ``variant `v` (FILE:LINE:COL)``, the place of its assignments in messages.
    pub(super) fn variant_place(&self, v: &str) -> String {
        format!(
            "variant `{v}` ({})",
            self.place_in_file(&format!("variant.{v}"))
        )
    }

    /// Whether an `[[at]]` intervention may set `path` to `value` in this file (the live
    /// page offers only the knobs it may); `Err` says why not.
    pub fn settable_during_run(&self, path: &str, value: &Value) -> Result<(), String> {
        target(&self.table, path, value, Scope::Intervention)
    }

    /// Sets `path` to `value` in `table`, refusing a path that names an entry the table
    /// does not define or (in `scope`) would have no effect.
    pub(super) fn apply(
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
}

/// Where an assignment is made: before the run (a variant, `--set`, a sweep) or during it
/// (an `[[at]]` intervention).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
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
