//! The text of a live session: the scenario file as the page has set it up (another seed, a
//! longer run, a variant applied from the start) with each action taken appended as an
//! `[[at]]` entry. The set-up is written into the file with toml_edit, so its comments and
//! layout stay; the text is what "save session" returns and what the run thread loads, so
//! `brink run` on it replays the session.

use crate::engine::time::{SimTime, format_duration, parse_duration};
use crate::scenario::{Loader, overrides};
use serde::Serialize;
use toml::Value;
use toml_edit::{DocumentMut, Item, TableLike};

/// One action taken on the run: an `[[at]]` entry.
#[derive(Debug, Clone, Serialize)]
pub struct Action {
    /// Simulated time, whole milliseconds.
    pub time_ms: u64,
    pub label: String,
    /// Assignments (path, value), in order.
    #[serde(skip)]
    pub set: Vec<(String, Value)>,
    /// The event it fires, if any.
    pub fire: Option<String>,
}

/// A variant of the file: its name and its assignments (path, value) in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    pub name: String,
    pub set: Vec<(String, Value)>,
}

impl Variant {
    /// The variant `name` of `loader`'s file, if it has one.
    pub fn of(loader: &Loader, name: &str) -> Option<Self> {
        let Value::Table(t) = loader.raw_value(&format!("variant.{name}"))? else {
            return None;
        };
        let mut set = Vec::new();
        if let Some(Value::Table(s)) = t.get("set") {
            overrides::flatten(s, "", &mut set);
        }
        Some(Self {
            name: name.to_string(),
            set,
        })
    }

    /// True when it replaces the `[[at]]` list: it cannot start in the middle of a run.
    pub fn replaces_timeline(&self) -> bool {
        self.set
            .iter()
            .any(|(p, _)| p == "at" || p.starts_with("at."))
    }
}

/// How a session is set up before any action: what a reset starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct Design {
    pub seed: u64,
    /// The run's length, when the page has extended it.
    pub duration: Option<SimTime>,
    /// The variant applied from the start, if any.
    pub variant: Option<Variant>,
}

impl Design {
    /// The file as it is.
    pub fn of_file(seed: u64) -> Self {
        Self {
            seed,
            duration: None,
            variant: None,
        }
    }
}

/// The session's text: `original` set up as `design` says (`file_seed` is the file's own
/// seed), then an `[[at]]` entry per action. `Err` says why the set-up cannot be written
/// into this file (a variant path through something that is not a table or a list).
pub fn session_text(
    original: &str,
    file_seed: u64,
    design: &Design,
    actions: &[Action],
) -> Result<String, String> {
    let mut text = set_up(original, file_seed, design)?;
    if !actions.is_empty() {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("\n# Actions of a live session (brink serve), in the order taken.\n");
    }
    for a in actions {
        text.push_str(&format!(
            "\n[[at]]\ntime = \"{}ms\"\nlabel = {}\n",
            a.time_ms,
            Value::String(a.label.clone())
        ));
        if !a.set.is_empty() {
            let parts: Vec<String> = a
                .set
                .iter()
                .map(|(p, v)| format!("{} = {v}", Value::String(p.clone())))
                .collect();
            text.push_str(&format!("set = {{ {} }}\n", parts.join(", ")));
        }
        if let Some(e) = &a.fire {
            text.push_str(&format!("fire = {}\n", Value::String(e.clone())));
        }
    }
    Ok(text)
}

/// `original` with the design's seed, duration and variant written in (unchanged, byte for
/// byte, when the design is the file's own).
fn set_up(original: &str, file_seed: u64, design: &Design) -> Result<String, String> {
    if design.seed == file_seed && design.duration.is_none() && design.variant.is_none() {
        return Ok(original.to_string());
    }
    let mut doc: DocumentMut = original
        .parse()
        .map_err(|e| format!("cannot edit the file: {e}"))?;
    let mut said = Vec::new();
    if let Some(v) = &design.variant {
        for (path, value) in &v.set {
            if path == "at" {
                set_timeline(&mut doc, value)?;
            } else {
                set_path(doc.as_item_mut(), path, value)
                    .map_err(|e| format!("variant `{}`: `{path}`: {e}", v.name))?;
            }
        }
        said.push(format!("variant `{}` applied from the start", v.name));
    }
    if design.seed != file_seed {
        let seed = i64::try_from(design.seed)
            .map_err(|_| format!("seed {} is larger than TOML's integers", design.seed))?;
        put(doc.as_table_mut(), "seed", toml_edit::Value::from(seed));
        said.push(format!("seed {}", design.seed));
    }
    if let Some(d) = design.duration {
        let text = duration_text(d);
        said.push(format!("run for {text}"));
        put(doc.as_table_mut(), "duration", toml_edit::Value::from(text));
    }
    Ok(format!(
        "# Set up by brink serve: {}.\n{doc}",
        said.join("; ")
    ))
}

/// A duration as the file would write it: compact when that reads back exactly, else in
/// milliseconds.
pub fn duration_text(d: SimTime) -> String {
    let short = format_duration(d);
    if parse_duration(&short) == Ok(d) {
        short
    } else {
        format!("{}ms", d / 1_000_000)
    }
}

/// Replaces the `[[at]]` list with `value` (a list of tables), written as `[[at]]` entries
/// so that appended actions extend it.
fn set_timeline(doc: &mut DocumentMut, value: &Value) -> Result<(), String> {
    doc.remove("at");
    let Value::Array(entries) = value else {
        return Err("a variant's `at` must be a list of tables".into());
    };
    if entries.is_empty() {
        return Ok(());
    }
    let mut list = toml_edit::ArrayOfTables::new();
    for e in entries {
        let toml_edit::Value::InlineTable(t) = edit_value(e) else {
            return Err("a variant's `at` must be a list of tables".into());
        };
        list.push(t.into_table());
    }
    doc.insert("at", Item::ArrayOfTables(list));
    Ok(())
}

/// A value as toml_edit holds it.
fn edit_value(v: &Value) -> toml_edit::Value {
    match v {
        Value::String(s) => s.as_str().into(),
        Value::Integer(i) => (*i).into(),
        Value::Float(f) => (*f).into(),
        Value::Boolean(b) => (*b).into(),
        Value::Datetime(d) => d
            .to_string()
            .parse()
            .unwrap_or_else(|_| d.to_string().into()),
        Value::Array(a) => toml_edit::Value::Array(a.iter().map(edit_value).collect()),
        Value::Table(t) => {
            let mut it = toml_edit::InlineTable::new();
            for (k, v) in t {
                it.insert(k, edit_value(v));
            }
            toml_edit::Value::InlineTable(it)
        }
    }
}

/// Sets `key` of `t` to `v`, keeping the comments around an old value.
fn put(t: &mut dyn TableLike, key: &str, v: toml_edit::Value) {
    match t.get_mut(key).and_then(Item::as_value_mut) {
        Some(old) => replace(old, v),
        None => {
            t.insert(key, Item::Value(v));
        }
    }
}

/// Sets dotted `path` under `item` as the loader's overrides do: tables on the way are
/// created, numeric segments index lists.
fn set_path(item: &mut Item, path: &str, v: &Value) -> Result<(), String> {
    let segs: Vec<&str> = path.split('.').collect();
    in_item(item, &segs, v)
}

fn in_item(item: &mut Item, segs: &[&str], v: &Value) -> Result<(), String> {
    match item {
        Item::Table(t) => in_table(t, false, segs, v),
        Item::Value(val) => in_value(val, segs, v),
        Item::ArrayOfTables(list) => {
            let (i, rest) = index(segs)?;
            let len = list.len();
            let t = nth(list.get_mut(i), i, len)?;
            if rest.is_empty() {
                return Err("a whole list entry cannot be replaced".into());
            }
            in_table(t, false, rest, v)
        }
        Item::None => Err("no such key".into()),
    }
}

fn in_table(t: &mut dyn TableLike, inline: bool, segs: &[&str], v: &Value) -> Result<(), String> {
    let Some((key, rest)) = segs.split_first() else {
        return Err("an empty key path".into());
    };
    if rest.is_empty() {
        put(t, key, edit_value(v));
        return Ok(());
    }
    if !t.contains_key(key) {
        let new = if inline {
            Item::Value(toml_edit::Value::InlineTable(Default::default()))
        } else {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            Item::Table(table)
        };
        t.insert(key, new);
    }
    match t.get_mut(key) {
        Some(child) => in_item(child, rest, v),
        None => Err(format!("cannot create `{key}`")),
    }
}

fn in_value(val: &mut toml_edit::Value, segs: &[&str], v: &Value) -> Result<(), String> {
    match val {
        toml_edit::Value::InlineTable(t) => in_table(t, true, segs, v),
        toml_edit::Value::Array(a) => {
            let (i, rest) = index(segs)?;
            let len = a.len();
            let slot = nth(a.get_mut(i), i, len)?;
            if rest.is_empty() {
                replace(slot, edit_value(v));
                return Ok(());
            }
            in_value(slot, rest, v)
        }
        _ => Err("a single value, not a table, is on the way".into()),
    }
}

/// Replaces `old` with `new`, keeping the comments and spaces around it.
fn replace(old: &mut toml_edit::Value, new: toml_edit::Value) {
    let decor = old.decor().clone();
    *old = new;
    *old.decor_mut() = decor;
}

/// Entry `i` of a list of `len`, or why there is none.
fn nth<T>(entry: Option<T>, i: usize, len: usize) -> Result<T, String> {
    entry.ok_or_else(|| format!("the list has {len} entries; there is no entry {i}"))
}

/// The list index at the head of `segs`, and the rest.
fn index<'a, 'b>(segs: &'a [&'b str]) -> Result<(usize, &'a [&'b str]), String> {
    match segs.split_first() {
        Some((s, rest)) => s
            .parse()
            .map(|i| (i, rest))
            .map_err(|_| format!("a list is indexed with a number, not `{s}`")),
        None => Err("an empty key path".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::bundled;

    fn load(text: String) -> crate::scenario::Scenario {
        Loader::from_text("s.toml", "s", text)
            .unwrap()
            .load(None, &[])
            .unwrap()
    }

    /// What a run of a scenario depends on, printed.
    fn behaviour(sc: &crate::scenario::Scenario) -> String {
        format!(
            "{:?}\n{:?}\n{} {} {}",
            sc.config, sc.interventions, sc.seed, sc.duration, sc.window
        )
    }

    /// Every bundled scenario and variant: the variant written into the text loads to the
    /// same configuration, timeline, seed and duration as `--variant` on the file.
    #[test]
    fn a_variant_written_into_the_file_is_the_variant() {
        let mut checked = 0;
        for b in bundled::all() {
            let loader = Loader::bundled(b).unwrap();
            let file_seed = loader.load(None, &[]).unwrap().seed;
            for name in loader.variant_names() {
                let want = loader.load(Some(&name), &[]).unwrap();
                let design = Design {
                    variant: Variant::of(&loader, &name),
                    ..Design::of_file(file_seed)
                };
                let text = session_text(loader.text(), file_seed, &design, &[]).unwrap();
                // In the file's place: its telemetry is read from the same folder.
                let got = loader
                    .with_text(text.clone())
                    .unwrap()
                    .load(None, &[])
                    .unwrap();
                assert_eq!(
                    behaviour(&got),
                    behaviour(&want),
                    "{} variant {name}:\n{text}",
                    b.name
                );
                checked += 1;
            }
        }
        assert!(checked >= 20, "every variant: {checked}");
    }

    #[test]
    fn seed_and_duration_are_written_and_comments_stay() {
        let b = bundled::find("retry-storm").unwrap();
        let loader = Loader::bundled(b).unwrap();
        let sc = loader.load(None, &[]).unwrap();
        let design = Design {
            seed: 7,
            duration: Some(2 * sc.duration + 1_000_000),
            variant: None,
        };
        let text = session_text(loader.text(), sc.seed, &design, &[]).unwrap();
        let got = load(text.clone());
        assert_eq!(got.seed, 7);
        assert_eq!(got.duration, 2 * sc.duration + 1_000_000);
        assert!(text.starts_with("# Set up by brink serve: seed 7; run for "));
        for line in loader.text().lines().filter(|l| l.starts_with('#')) {
            assert!(text.contains(line), "comment kept: {line}");
        }
        // The file's own design is the file, byte for byte.
        let same = session_text(loader.text(), sc.seed, &Design::of_file(sc.seed), &[]).unwrap();
        assert_eq!(same, loader.text());
    }

    /// A variant that replaces the timeline with entries of its own: they are written as
    /// `[[at]]` tables, so the session's actions extend the same list.
    #[test]
    fn a_variant_timeline_is_extended_by_the_actions() {
        let b = bundled::find("retry-storm").unwrap();
        let text = format!(
            "{}\n[variant.swap]\ndescription = \"x\"\nset = {{ at = [{{ time = \"1m\", label = \"more workers\", set = {{ \"pool.server.workers\" = 12 }} }}] }}\n",
            b.text
        );
        let loader = Loader::from_text("s.toml", "s", text).unwrap();
        let seed = loader.load(None, &[]).unwrap().seed;
        let design = Design {
            variant: Variant::of(&loader, "swap"),
            ..Design::of_file(seed)
        };
        let action = Action {
            time_ms: 120_000,
            label: "live: fire slowdown".into(),
            set: vec![],
            fire: Some("slowdown".into()),
        };
        let text = session_text(loader.text(), seed, &design, &[action]).unwrap();
        let sc = load(text.clone());
        let labels: Vec<&str> = sc.interventions.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["more workers", "live: fire slowdown"], "{text}");
        assert_eq!(sc.interventions[0].config.pools[0].workers, 12);
    }

    #[test]
    fn durations_read_back_exactly() {
        for d in [
            1_000_000,
            59_000_000_000,
            5_400_000_000_000,
            5_400_001_000_000,
        ] {
            assert_eq!(parse_duration(&duration_text(d)), Ok(d), "{d}");
        }
    }
}
