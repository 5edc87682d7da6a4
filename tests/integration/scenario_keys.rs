//! Issue 26 (item 5): every key table in `docs/scenario.md` is held against the raw (serde)
//! shapes in `src/scenario/raw.rs` and `raw/`. A key documented but not accepted, or
//! accepted but not documented anywhere, fails; so does a word list (`"fifo"`, `"lifo"`)
//! that differs from the enum that reads the key.
//!
//! Nothing is listed by hand on the code's side: a probe deserializer asks each raw type
//! for its shape. serde's derive tells a `Deserializer` a struct's keys only in passing
//! (`deserialize_struct`'s `fields`), and a hand-written `Deserialize` (a duration, a key
//! count that is a number or a law) tells nothing; so the probe offers every table one key
//! no schema has (`PROBE`), and a table refuses it with `unknown_field(key, expected)`,
//! which the probe's error type keeps. To learn what a key holds, the probe deserializes
//! the whole scenario again down one path, offering one key at each level (one `NAME` of a
//! table of tables, one entry of an array). A struct that would accept the probe key has
//! no `deny_unknown_fields` and fails the test too ("unknown keys are errors").
//!
//! On the docs' side a table is one whose header starts `| key |`; its rows name keys in
//! backticks in the first cell (`` `from`, `to` ``; a dotted `` `slo.p50` `` is a key of a
//! table below), and a type cell that spells a nested table's keys in braces
//! (`{ with, per, max }`, `{ for = DURATION, factor = F }`) documents them too. Which
//! raw table each section documents is said once, in [`SECTIONS`].
//!
//! Two more lists are held to the code: every word key to `raw::choices` (the live page's
//! drop-down lists), and the `[event.NAME]` kinds table to `RawEventKind`, to each kind's
//! section and to the keys the validator lets that kind take.

use brink::scenario::raw::{RawScenario, choices};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Each section of docs/scenario.md with a key table, and the raw table it documents, as a
/// path from the top of the file (`*`: any name of a table of tables, any array entry).
/// Several sections may document one table (every `kind = "..."` section documents part of
/// `[event.NAME]`); a key must be documented in one of them.
const SECTIONS: &[(&str, &str)] = &[
    ("Top level", ""),
    ("`[metrics]`", "metrics"),
    ("`[class.NAME]`", "class.*"),
    ("`[class.NAME.profile]`", "class.*.profile"),
    ("`[class.NAME.retry]`", "class.*.retry"),
    ("`[class.NAME.retry.breaker]`", "class.*.retry.breaker"),
    (
        "Token buckets (`rate_limit` and `budget`)",
        "class.*.rate_limit",
    ),
    ("`[class.NAME.steps]`", "class.*.steps.*"),
    ("Keys and parts", "class.*.steps.*.keys"),
    ("`[pool.NAME]`", "pool.*"),
    ("Load slowdown (`slowdown`)", "pool.*.slowdown"),
    (
        "Outlier ejection (`outlier_ejection`)",
        "pool.*.outlier_ejection",
    ),
    ("Health checks (`health_check`)", "pool.*.health_check"),
    (
        "A resource that grows with the fleet (`peers`)",
        "pool.*.peers",
    ),
    ("Server sync (`[pool.NAME.sync]`)", "pool.*.sync"),
    ("`[pool.NAME.service]`", "pool.*.service"),
    ("`[pool.NAME.client]`", "pool.*.client"),
    ("`[[pool.NAME.calls]]`", "pool.*.calls.*"),
    ("`[pool.NAME.shed]`", "pool.*.shed"),
    ("`[pool.NAME.lease]`", "pool.*.lease"),
    ("`[pool.NAME.autoscale]`", "pool.*.autoscale"),
    ("`[cache.NAME]`", "cache.*"),
    ("`[event.NAME]`", "event.*"),
    ("`kind = \"slowdown\"`", "event.*"),
    ("`kind = \"outage\"`", "event.*"),
    ("`kind = \"burst\"`", "event.*"),
    ("`kind = \"rolling_restart\"`", "event.*"),
    ("`kind = \"partition\"`", "event.*"),
    ("`kind = \"flush\"`", "event.*"),
    ("`kind = \"crash\"`", "event.*"),
    ("`kind = \"add_servers\"`", "event.*"),
    ("`kind = \"restart\"`", "event.*"),
    ("`kind = \"fail_fast\"`", "event.*"),
    ("`kind = \"resync\"`", "event.*"),
    ("`kind = \"crash_loop\"`", "event.*"),
    ("`[[at]]` (interventions)", "at.*"),
    ("`[variant.NAME]`", "variant.*"),
    ("`[tipping]`", "tipping"),
    ("`[phase]`", "phase"),
    ("`[collapse]`", "collapse"),
    ("`[hysteresis]`", "hysteresis"),
];

/// Rows whose braces name only some of a nested table's keys, on purpose: (the section's
/// path, the key, why). Any other brace list of bare names (`{ with, per, max }`) must name
/// them all; a list with values (`{ for = DURATION, factor = F }`) is an example.
const PARTIAL_BRACES: &[(&str, &str, &str)] = &[(
    "pool.*.sync",
    "retry",
    "a sync's retry takes only the delay keys: validate/sync.rs refuses max_attempts, \
     retry_on, budget and breaker there; the full table is documented under [class.NAME.retry]",
)];

/// Keys that take words but that `raw::choices` (the live page's drop-down lists) does not
/// offer: (the key, why).
const NOT_CHOICES: &[(&str, &str)] = &[
    (
        "kind",
        "an event's kind is structure: no intervention may change it, so no control offers it",
    ),
    (
        "law",
        "two enums end in `law` (a service law, a key count's law) and `choices` reads the \
         last key; a law's other keys change with it, so the live page shows it as text",
    ),
    (
        "retry_on",
        "a list of words, not one word: its control is a list",
    ),
];

// ---------------------------------------------------------------------------------------
// The probe: the raw shapes as serde sees them.

/// A key no schema has: every table refuses it, naming the keys it takes.
const PROBE: &str = "\u{1}probe";

/// What a key holds.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// A table with fixed keys: its id in [`Shapes::tables`].
    Table(String),
    /// A table of named tables, or an array: the shape of one entry.
    Each(Box<Kind>),
    /// One of a fixed set of words (a unit enum), as the file spells them.
    Word(&'static [&'static str]),
    /// Anything else: a number, a string, a duration, a free-form table (`set`).
    Leaf,
}

/// What the probe found at the end of its path.
#[derive(Debug, Clone)]
enum Found {
    /// A table; `name` is the Rust type's where serde says it, `open` if it took the
    /// probe key (no `deny_unknown_fields`).
    Table {
        name: Option<&'static str>,
        keys: &'static [&'static str],
        open: bool,
    },
    Each,
    Word(&'static [&'static str]),
    Leaf,
    /// The probe key was taken: its value was asked for ([`Taken`]).
    Open,
}

/// The probe's error: serde's messages, or what was found.
#[derive(Debug)]
struct Probe {
    found: Option<Found>,
    message: String,
}

impl Probe {
    fn found(found: Found) -> Self {
        Probe {
            found: Some(found),
            message: String::new(),
        }
    }
}

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} ({:?})", self.message, self.found)
    }
}

impl std::error::Error for Probe {}

impl de::Error for Probe {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Probe {
            found: None,
            message: msg.to_string(),
        }
    }
    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        if field == PROBE {
            Probe::found(Found::Table {
                name: None,
                keys: expected,
                open: false,
            })
        } else {
            Probe::custom(format!("unknown field `{field}`"))
        }
    }
}

/// Deserializes whatever is asked of it down `rest`, offering one key at each table, and
/// at the end of the path fails with what it found there.
struct Down<'p> {
    rest: &'p [&'static str],
}

/// What a free-form table (`toml::Value`) that took the probe key gets as its value.
struct Taken;

/// A table of one key, `key`, whose value is `value`.
struct OneKey<V> {
    key: Option<&'static str>,
    value: Option<V>,
}

/// An array of one entry.
struct OneEntry<'p>(Option<Down<'p>>);

impl<'de, V: Deserializer<'de, Error = Probe>> MapAccess<'de> for OneKey<V> {
    type Error = Probe;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Probe> {
        match self.key.take() {
            Some(k) => seed
                .deserialize(IntoDeserializer::<Probe>::into_deserializer(k))
                .map(Some),
            None => Ok(None),
        }
    }
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Probe> {
        seed.deserialize(self.value.take().expect("one value per key"))
    }
}

impl<'de> SeqAccess<'de> for OneEntry<'_> {
    type Error = Probe;
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Probe> {
        match self.0.take() {
            Some(d) => seed.deserialize(d).map(Some),
            None => Ok(None),
        }
    }
}

impl<'de> Deserializer<'de> for Taken {
    type Error = Probe;
    fn deserialize_any<V: de::Visitor<'de>>(self, _: V) -> Result<V::Value, Probe> {
        Err(Probe::found(Found::Open))
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
        struct enum identifier ignored_any
    }
}

impl<'p> Down<'p> {
    /// Offers the next key of the path to a table's visitor.
    fn into_table<'de, V: de::Visitor<'de>>(
        self,
        key: &'static str,
        v: V,
    ) -> Result<V::Value, Probe> {
        v.visit_map(OneKey {
            key: Some(key),
            value: Some(Down {
                rest: &self.rest[1..],
            }),
        })
    }

    /// A table's visitor: down the path, or at its end, what it does with the probe key.
    fn table<'de, V: de::Visitor<'de>>(
        self,
        derived: Option<(&'static str, &'static [&'static str])>,
        v: V,
    ) -> Result<V::Value, Probe> {
        match self.rest.first() {
            None => Err(Self::probe_table(derived, v)),
            Some(&key) => self.into_table(key, v),
        }
    }

    /// At the end of the path: what a table's visitor does with the probe key. `derived`:
    /// the struct's name and keys, when serde's derive called `deserialize_struct`.
    fn probe_table<'de, V: de::Visitor<'de>>(
        derived: Option<(&'static str, &'static [&'static str])>,
        v: V,
    ) -> Probe {
        let e = match v.visit_map(OneKey {
            key: Some(PROBE),
            value: Some(Taken),
        }) {
            Ok(_) => return Probe::found(Found::Leaf),
            Err(e) => e,
        };
        let name = derived.map(|(name, _)| name);
        match (e.found, derived) {
            (Some(Found::Table { keys, .. }), _) => Probe::found(Found::Table {
                name,
                keys,
                open: false,
            }),
            // A struct without `deny_unknown_fields` took it.
            (Some(Found::Open), Some((_, keys))) => Probe::found(Found::Table {
                name,
                keys,
                open: true,
            }),
            // A free-form table (`toml::Value`), or not a table at all (a duration, a name
            // or a list of names): a value.
            _ => Probe::found(Found::Leaf),
        }
    }
}

impl<'de> Deserializer<'de> for Down<'_> {
    type Error = Probe;

    fn deserialize_any<V: de::Visitor<'de>>(self, v: V) -> Result<V::Value, Probe> {
        // A hand-written `Deserialize` (a duration, a count or its law, a name or names, a
        // TOML value): a table, if it takes one, tells its keys by refusing the probe.
        self.table(None, v)
    }
    fn deserialize_struct<V: de::Visitor<'de>>(
        self,
        name: &'static str,
        keys: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Probe> {
        self.table(Some((name, keys)), v)
    }
    fn deserialize_map<V: de::Visitor<'de>>(self, v: V) -> Result<V::Value, Probe> {
        match self.rest.first() {
            None => Err(Probe::found(Found::Each)),
            Some(_) => self.into_table("NAME", v),
        }
    }
    fn deserialize_seq<V: de::Visitor<'de>>(self, v: V) -> Result<V::Value, Probe> {
        match self.rest.first() {
            None => Err(Probe::found(Found::Each)),
            Some(_) => v.visit_seq(OneEntry(Some(Down {
                rest: &self.rest[1..],
            }))),
        }
    }
    fn deserialize_option<V: de::Visitor<'de>>(self, v: V) -> Result<V::Value, Probe> {
        v.visit_some(self)
    }
    fn deserialize_newtype_struct<V: de::Visitor<'de>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value, Probe> {
        v.visit_newtype_struct(self)
    }
    fn deserialize_enum<V: de::Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Probe> {
        Err(Probe::found(Found::Word(variants)))
    }
    fn deserialize_ignored_any<V: de::Visitor<'de>>(self, _: V) -> Result<V::Value, Probe> {
        Err(Probe::found(Found::Leaf))
    }
    fn deserialize_bool<V: de::Visitor<'de>>(self, _: V) -> Result<V::Value, Probe> {
        Err(Probe::found(Found::Leaf))
    }
    serde::forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf unit unit_struct tuple tuple_struct identifier
    }
}

/// The raw tables: each one's keys, what each key holds, and the first path it was met at.
#[derive(Debug, Default)]
struct Shapes {
    /// The id of the top table (`RawScenario`).
    root: String,
    tables: BTreeMap<String, RawTable>,
}

#[derive(Debug)]
struct RawTable {
    path: String,
    open: bool,
    keys: BTreeMap<&'static str, Kind>,
}

impl Shapes {
    /// Every table reachable from `RawScenario`.
    fn of_scenario() -> Shapes {
        Shapes::of::<RawScenario>()
    }

    /// Every table reachable from `T`, a table.
    fn of<T: for<'de> Deserialize<'de>>() -> Shapes {
        let mut shapes = Shapes::default();
        match shapes.describe::<T>(&mut Vec::new()) {
            Kind::Table(id) => shapes.root = id,
            other => panic!("not a table: {other:?}"),
        }
        shapes
    }

    /// What `path` holds, exploring each table the first time it is met.
    fn describe<T: for<'de> Deserialize<'de>>(&mut self, path: &mut Vec<&'static str>) -> Kind {
        let found = match T::deserialize(Down { rest: &path[..] }) {
            Err(Probe { found: Some(f), .. }) => f,
            Err(e) => panic!("the probe down `{}` found nothing: {e}", path.join(".")),
            Ok(_) => panic!("the probe down `{}` read a whole value", path.join(".")),
        };
        match found {
            Found::Leaf | Found::Open => Kind::Leaf,
            Found::Word(words) => Kind::Word(words),
            Found::Each => {
                path.push("*");
                let entry = self.describe::<T>(path);
                path.pop();
                Kind::Each(Box::new(entry))
            }
            Found::Table { name, keys, open } => {
                let id = name.map_or_else(|| path.join("."), str::to_string);
                if !self.tables.contains_key(&id) {
                    self.tables.insert(
                        id.clone(),
                        RawTable {
                            path: path.join("."),
                            open,
                            keys: BTreeMap::new(),
                        },
                    );
                    for &key in keys {
                        path.push(key);
                        let kind = self.describe::<T>(path);
                        path.pop();
                        self.tables.get_mut(&id).unwrap().keys.insert(key, kind);
                    }
                }
                Kind::Table(id)
            }
        }
    }

    /// What a dotted path from the top of the file holds (`*` steps into an entry).
    fn resolve(&self, path: &str) -> Option<Kind> {
        let mut kind = Kind::Table(self.root.clone());
        for seg in path.split('.').filter(|s| !s.is_empty()) {
            kind = match (kind, seg) {
                (Kind::Each(entry), "*") => *entry,
                (Kind::Table(id), key) => self.tables[&id].keys.get(key)?.clone(),
                _ => return None,
            };
        }
        Some(kind)
    }
}

// ---------------------------------------------------------------------------------------
// The docs: key tables by section.

/// One row of a key table: its section, keys and type cell.
#[derive(Debug)]
struct Row {
    section: String,
    line: usize,
    keys: Vec<String>,
    ty: Option<String>,
}

/// A table row's cells: split at `|` outside backticks.
fn cells(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut code = false;
    for c in line
        .trim()
        .trim_start_matches('|')
        .trim_end_matches('|')
        .chars()
    {
        match c {
            '`' => {
                code = !code;
                out.last_mut().unwrap().push(c);
            }
            '|' if !code => out.push(String::new()),
            _ => out.last_mut().unwrap().push(c),
        }
    }
    out.iter().map(|c| c.trim().to_string()).collect()
}

/// The backticked spans of a cell.
fn spans(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Where [`key_rows`] is: outside a table, in another table, or in a key table (with its
/// type column, if it has one).
#[derive(Clone, Copy)]
enum InTable {
    Outside,
    Other,
    Keys(Option<usize>),
}

/// Every row of every key table (`| key | ...`), with its section (the heading above it,
/// without its `#`s); headings inside code fences are TOML comments, not headings.
fn key_rows(doc: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut section = String::new();
    let mut fence = false;
    let mut table = InTable::Outside;
    for (i, line) in doc.lines().enumerate() {
        if line.starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        if line.starts_with('#') {
            section = line.trim_start_matches('#').trim().to_string();
        }
        if !line.starts_with('|') {
            table = InTable::Outside;
            continue;
        }
        let c = cells(line);
        match table {
            InTable::Outside if c[0] == "key" => {
                table = InTable::Keys(c.iter().position(|h| h == "type"));
            }
            // Not a key table (`| unit |`, `| policy |`, `| `kind` |`): its rows are not keys.
            InTable::Outside => table = InTable::Other,
            InTable::Other => {}
            InTable::Keys(_) if c[0].starts_with("---") => {}
            InTable::Keys(ty) => rows.push(Row {
                section: section.clone(),
                line: i + 1,
                keys: spans(&c[0]),
                ty: ty.and_then(|t| c.get(t).cloned()),
            }),
        }
    }
    rows
}

/// The keys a type cell spells in braces: per group, each name and whether it is given a
/// value (`{ for = DURATION }`) or bare (`{ with, per, max }`).
fn braces(ty: &str) -> Vec<Vec<(String, bool)>> {
    let ty = ty.replace('`', "");
    let mut groups = Vec::new();
    let mut rest = ty.as_str();
    while let Some(start) = rest.find('{') {
        let mut depth = 0;
        let mut items = vec![String::new()];
        let mut end = rest.len();
        for (j, c) in rest[start..].char_indices() {
            match c {
                '{' | '[' => depth += 1,
                '}' | ']' => depth -= 1,
                ',' if depth == 1 => {
                    items.push(String::new());
                    continue;
                }
                _ => {}
            }
            if depth == 0 {
                end = start + j + 1;
                break;
            }
            if !(depth == 1 && c == '{') {
                items.last_mut().unwrap().push(c);
            }
        }
        groups.push(
            items
                .iter()
                .map(|item| {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    (name, item.contains('='))
                })
                .filter(|(name, _)| !name.is_empty())
                .collect(),
        );
        rest = &rest[end..];
    }
    groups
}

/// The quoted words of a type cell (`"fifo"`, `"lifo"`), if it is a list of words.
fn words(ty: &str) -> BTreeSet<String> {
    ty.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Every disagreement between the docs' key tables and the raw shapes.
fn mismatches(doc: &str, shapes: &Shapes) -> Vec<String> {
    let mut problems = Vec::new();
    let sections: BTreeMap<&str, &str> = SECTIONS.iter().copied().collect();
    // Keys documented per raw table.
    let mut documented: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (id, table) in &shapes.tables {
        if table.open {
            problems.push(format!(
                "`{}` ({id}) accepts unknown keys: add #[serde(deny_unknown_fields)]",
                table.path
            ));
        }
    }
    let mut seen_sections = BTreeSet::new();
    for row in key_rows(doc) {
        let Some(&base) = sections.get(row.section.as_str()) else {
            problems.push(format!(
                "docs/scenario.md:{}: a key table under `{}`, a section the test does not know: \
                 add it to SECTIONS with the raw table it documents",
                row.line, row.section
            ));
            continue;
        };
        seen_sections.insert(row.section.clone());
        if row.keys.is_empty() {
            problems.push(format!(
                "docs/scenario.md:{}: a key table row without a key in backticks",
                row.line
            ));
        }
        for key in &row.keys {
            let full = if base.is_empty() {
                key.clone()
            } else {
                format!("{base}.{key}")
            };
            let (table, last) = full.rsplit_once('.').unwrap_or(("", &full));
            let Some(Kind::Table(id)) = shapes.resolve(table) else {
                problems.push(format!(
                    "docs/scenario.md:{}: `{full}`: `{table}` is not a table the loader reads",
                    row.line
                ));
                continue;
            };
            let Some(kind) = shapes.tables[&id].keys.get(last) else {
                problems.push(format!(
                    "docs/scenario.md:{}: `{full}` is documented but not accepted ({id} has no `{last}`)",
                    row.line
                ));
                continue;
            };
            documented.entry(id).or_default().insert(last.to_string());
            let Some(ty) = &row.ty else { continue };
            // A word list must be the enum's.
            let mut inner = kind.clone();
            while let Kind::Each(entry) = inner {
                inner = *entry;
            }
            if let Kind::Word(accepted) = inner {
                let accepted: BTreeSet<String> = accepted.iter().map(|w| w.to_string()).collect();
                if words(ty) != accepted {
                    problems.push(format!(
                        "docs/scenario.md:{}: `{full}` lists {:?}; the loader takes {:?}",
                        row.line,
                        words(ty),
                        accepted
                    ));
                }
            }
            // A nested table's keys in braces.
            for group in braces(ty) {
                let Kind::Table(nested) = kind else {
                    problems.push(format!(
                        "docs/scenario.md:{}: `{full}` spells keys in braces, but holds no table",
                        row.line
                    ));
                    break;
                };
                let accepted: BTreeSet<&str> = shapes.tables[nested].keys.keys().copied().collect();
                let named: BTreeSet<&str> = group.iter().map(|(n, _)| n.as_str()).collect();
                for name in named.difference(&accepted) {
                    problems.push(format!(
                        "docs/scenario.md:{}: `{full}.{name}` is documented but not accepted \
                         ({nested} has no `{name}`)",
                        row.line
                    ));
                }
                let bare = group.iter().all(|(_, valued)| !valued);
                let partial = PARTIAL_BRACES
                    .iter()
                    .any(|&(p, k, _)| p == base && k == key.as_str());
                if bare && !partial {
                    for name in accepted.difference(&named) {
                        problems.push(format!(
                            "docs/scenario.md:{}: `{full}` lists its keys in braces without `{name}`",
                            row.line
                        ));
                    }
                }
                let entry = documented.entry(nested.clone()).or_default();
                entry.extend(named.intersection(&accepted).map(|n| n.to_string()));
            }
        }
    }
    for (section, _) in SECTIONS {
        if !seen_sections.contains(*section) {
            problems.push(format!(
                "SECTIONS names `{section}`, which has no key table in docs/scenario.md"
            ));
        }
    }
    for (id, table) in &shapes.tables {
        let none = BTreeSet::new();
        let doc = documented.get(id).unwrap_or(&none);
        for key in table.keys.keys() {
            if !doc.contains(*key) {
                let at = if table.path.is_empty() {
                    key.to_string()
                } else {
                    format!("{}.{key}", table.path)
                };
                problems.push(format!(
                    "`{at}` ({id}) is accepted but not documented in docs/scenario.md"
                ));
            }
        }
    }
    problems
}

fn doc() -> String {
    std::fs::read_to_string("docs/scenario.md").unwrap()
}

#[test]
fn every_key_table_matches_the_raw_shapes() {
    let shapes = Shapes::of_scenario();
    let problems = mismatches(&doc(), &shapes);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The probe sees what serde sees: nested tables, renamed keys, tables inside
/// hand-written `Deserialize`s, words, and a recursive shape met once.
#[test]
fn the_probe_reads_the_shapes_serde_reads() {
    let shapes = Shapes::of_scenario();
    let keys = |path: &str| match shapes.resolve(path) {
        Some(Kind::Table(id)) => shapes.tables[&id].keys.keys().copied().collect::<Vec<_>>(),
        other => panic!("{path}: {other:?}"),
    };
    assert_eq!(keys("class.*.give_up"), ["after", "for"]);
    assert_eq!(keys("class.*.steps.*.keys"), ["law", "mean", "min"]);
    assert_eq!(
        keys("pool.*.calls.*.retry.breaker"),
        keys("class.*.retry.breaker")
    );
    assert_eq!(
        shapes.resolve("pool.*.service.parts.*"),
        Some(Kind::Table("RawService".into()))
    );
    assert_eq!(
        shapes.resolve("pool.*.discipline"),
        Some(Kind::Word(&["fifo", "lifo"]))
    );
    assert_eq!(shapes.resolve("duration"), Some(Kind::Leaf));
    assert_eq!(shapes.resolve("event.*.pool"), Some(Kind::Leaf));
    assert_eq!(
        shapes.resolve("at.*.set"),
        Some(Kind::Each(Box::new(Kind::Leaf)))
    );
    assert_eq!(shapes.resolve("pool.*.nothing"), None);
    assert!(!keys("pool.*.service").contains(&"measured"));
}

/// The check can fail: a row taken out, a row made up, a word dropped from a list and a
/// key dropped from a brace list are each reported, naming the key.
#[test]
fn a_removed_or_invented_row_is_reported() {
    let shapes = Shapes::of_scenario();
    let doc = doc();
    // The one problem the docs changed from `from` to `to` give, which must say `says`.
    let only = |from: &str, to: &str, says: &str| {
        assert!(doc.contains(from), "{from}");
        let problems = mismatches(&doc.replacen(from, to, 1), &shapes);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains(says), "{problems:?}");
    };
    let lease_row = doc
        .lines()
        .find(|l| l.starts_with("| `lease` |"))
        .expect("the pool table documents lease");
    let lease_row = format!("{lease_row}\n");
    only(
        &lease_row,
        "",
        "`pool.*.lease` (RawPool) is accepted but not documented in docs/scenario.md",
    );
    only(
        &lease_row,
        &format!("{lease_row}| `leases` | table | | none | | Made up. |\n"),
        "`pool.*.leases` is documented but not accepted",
    );
    only(
        "| `\"fifo\"`, `\"lifo\"` |",
        "| `\"fifo\"` |",
        "`pool.*.discipline` lists",
    );
    only(
        "`{ with, per, max }`",
        "`{ with, per }`",
        "`pool.*.slowdown` lists its keys in braces without `max`",
    );
}

/// A table that takes any key (no `deny_unknown_fields`) is found and reported, with its
/// keys still read.
#[test]
fn a_table_without_deny_unknown_fields_is_reported() {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        loose: Option<Loose>,
    }
    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Loose {
        rate: f64,
    }
    let shapes = Shapes::of::<Strict>();
    assert!(!shapes.tables["Strict"].open);
    assert!(shapes.tables["Loose"].open);
    assert_eq!(shapes.resolve("loose.rate"), Some(Kind::Leaf));
    assert_eq!(
        mismatches("", &shapes).first().map(String::as_str),
        Some("`loose` (Loose) accepts unknown keys: add #[serde(deny_unknown_fields)]")
    );
}

/// Every key that takes one word is offered by `raw::choices` (the live page's drop-down
/// lists) with the enum's words, or is named in [`NOT_CHOICES`] with a reason.
#[test]
fn every_word_key_is_offered_with_its_words() {
    let shapes = Shapes::of_scenario();
    let mut problems = Vec::new();
    for table in shapes.tables.values() {
        for (key, kind) in &table.keys {
            let words: &[&str] = match kind {
                Kind::Word(w) => w,
                Kind::Each(entry) if matches!(**entry, Kind::Word(_)) => &[][..],
                _ => continue,
            };
            let path = format!("{}.{key}", table.path).replace('*', "x");
            let exempt = NOT_CHOICES.iter().any(|(k, _)| k == key);
            match choices(&path) {
                Some(offered) if !exempt && offered == words => {}
                None if exempt => {}
                offered => problems.push(format!(
                    "`{path}`: choices gives {offered:?}, the enum takes {words:?}{}",
                    if exempt {
                        " (named in NOT_CHOICES)"
                    } else {
                        ""
                    }
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The `[event.NAME]` kinds table (`| `kind` | keys | length |`): each kind's keys.
fn kinds_table(doc: &str) -> BTreeMap<String, BTreeSet<String>> {
    doc.lines()
        .skip_while(|l| !l.starts_with("| `kind` | keys |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let c = cells(l);
            (spans(&c[0])[0].clone(), spans(&c[1]).into_iter().collect())
        })
        .collect()
}

/// The kinds table names every kind the loader takes, with the keys its own section
/// documents and the validator lets it take (read from its refusal of a key it does not:
/// "does not apply to a burst event (it takes: class, clients, spread)").
#[test]
fn each_kind_takes_the_keys_its_table_says() {
    let shapes = Shapes::of_scenario();
    let doc = doc();
    let table = kinds_table(&doc);
    let Some(Kind::Word(kinds)) = shapes.resolve("event.*.kind") else {
        panic!("an event's kind is a word");
    };
    let listed: Vec<&str> = table.keys().map(String::as_str).collect();
    let mut kinds = kinds.to_vec();
    kinds.sort_unstable();
    assert_eq!(listed, kinds, "the kinds table against RawEventKind");
    for (kind, keys) in &table {
        let section = format!("`kind = \"{kind}\"`");
        let documented: BTreeSet<String> = key_rows(&doc)
            .into_iter()
            .filter(|r| r.section == section)
            .flat_map(|r| r.keys)
            .collect();
        assert_eq!(
            &documented, keys,
            "{section}'s key table against the kinds table"
        );
        // A key this kind does not take, of a type every kind's refusal can read.
        let (other, value) = [("factor", "2.0"), ("clients", "1")]
            .into_iter()
            .find(|(k, _)| !keys.contains(*k))
            .unwrap();
        let text = format!(
            "duration = \"1m\"\n[class.c]\nrate = 1\nsteps = [{{ query = \"p\" }}]\n\
             [pool.p]\nservice = {{ mean = \"1ms\" }}\n\
             [event.e]\nkind = \"{kind}\"\nat = \"1s\"\n{other} = {value}\n"
        );
        let loader = brink::scenario::Loader::from_text("k.toml", "k", text).unwrap();
        let message = format!("{:#}", loader.load(None, &[]).unwrap_err());
        let takes = message
            .split_once("(it takes: ")
            .and_then(|(_, rest)| rest.split_once(')'))
            .unwrap_or_else(|| panic!("{kind} with `{other}`: {message}"))
            .0;
        let takes: BTreeSet<String> = takes.split(", ").map(str::to_string).collect();
        assert_eq!(&takes, keys, "the validator's keys of a {kind} event");
    }
}
