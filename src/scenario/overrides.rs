//! Setting a scenario value by dotted path (`class.request.rate=2.5`): used by `--set`,
//! variants, interventions and sweeps alike, so all four behave the same.

use super::error::ScenarioError;
use toml::{Table, Value};

/// The most segments a dotted key path may have (`class.request.steps.0.retry.budget.rate`
/// has 7): deeper paths name nothing a scenario has, and would make the tables built for
/// them arbitrarily deep.
pub const MAX_PATH_SEGMENTS: usize = 16;

/// Refuses a key path with more than [`MAX_PATH_SEGMENTS`] segments.
pub fn check_depth(path: &str) -> Result<(), String> {
    let n = path.split('.').count();
    if n > MAX_PATH_SEGMENTS {
        return Err(format!(
            "the key path has {n} segments; no key is deeper than {MAX_PATH_SEGMENTS}"
        ));
    }
    Ok(())
}

/// One `path = value` assignment and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// The dotted key path, e.g. `pool.server.workers`.
    pub path: String,
    /// The value to set.
    pub value: Value,
    /// Where it came from, for error messages (`--set pool.server.workers=0`).
    pub origin: String,
    /// A sweep's probe: it moves the scenario away from its operating point for one run
    /// (what the operating point derives, a cache's keyspace from its hit ratio, stays).
    pub probe: bool,
}

impl Override {
    /// Parses `path=value` as given on the command line. The value is read as a TOML value
    /// (`4`, `2.5`, `true`, `"text"`, `[1, 2]`); anything else is taken as a string, so
    /// `--set class.request.timeout=10s` works without quotes.
    pub fn parse(arg: &str) -> Result<Self, ScenarioError> {
        let Some((path, text)) = arg.split_once('=') else {
            return Err(ScenarioError::BadOverride {
                arg: arg.into(),
                msg: "expected `path=value`, e.g. `class.request.rate=2.5`".into(),
            });
        };
        let path = path.trim();
        if path.is_empty() || path.split('.').any(|s| s.trim().is_empty()) {
            return Err(ScenarioError::BadOverride {
                arg: arg.into(),
                msg: "the key path is empty or has an empty segment".into(),
            });
        }
        check_depth(path).map_err(|msg| ScenarioError::BadOverride {
            arg: arg.chars().take(80).collect::<String>() + "...",
            msg,
        })?;
        Ok(Self {
            path: path.into(),
            value: parse_value(text.trim()),
            origin: format!("--set {arg}"),
            probe: false,
        })
    }

    /// An override made by the program itself (sweeps), with its origin for messages.
    pub fn new(path: &str, value: Value, origin: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            value,
            origin: origin.into(),
            probe: false,
        }
    }

    /// A sweep's probe value (see [`Override::probe`](Self#structfield.probe)).
    pub fn probe(path: &str, value: Value, origin: impl Into<String>) -> Self {
        Self {
            probe: true,
            ..Self::new(path, value, origin)
        }
    }
}

/// Reads `text` as a TOML value, or as a plain string if it is not one.
pub fn parse_value(text: &str) -> Value {
    match toml::from_str::<Table>(&format!("v = {text}")) {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| Value::String(text.into())),
        Err(_) => Value::String(text.into()),
    }
}

/// Flattens a table of settings (`{ class.boot.rate = 5 }` or `{ "class.boot.rate" = 5 }`)
/// into dotted paths and leaf values, in file order. A table with a `law` key (a service
/// law, a key count) is one value: which keys it takes depend on the law, so it replaces
/// the old table whole rather than merging into it (a mixture must not keep a gamma's
/// `mean` and `cv`). Iterative, so no nesting overflows the stack; a table nested deeper
/// than [`MAX_PATH_SEGMENTS`] is one value, whose path [`apply`] then refuses.
pub fn flatten(table: &Table, prefix: &str, out: &mut Vec<(String, Value)>) {
    // A stack of (path of the table, its entries still to visit), so that no nesting
    // overflows the call stack and file order is kept.
    let mut stack = vec![(prefix.to_string(), table.iter())];
    while let Some((here, entries)) = stack.last_mut() {
        let Some((k, v)) = entries.next() else {
            stack.pop();
            continue;
        };
        let path = if here.is_empty() {
            k.clone()
        } else {
            format!("{here}.{k}")
        };
        match v {
            Value::Table(t)
                if !t.is_empty() && !t.contains_key("law") && stack.len() <= MAX_PATH_SEGMENTS =>
            {
                stack.push((path, t.iter()));
            }
            _ => out.push((path, v.clone())),
        }
    }
}

/// Sets `path` in `root` to `value`, creating tables on the way. Numeric segments index
/// arrays (`class.boot.steps.0.cost`).
pub fn apply(root: &mut Table, path: &str, value: Value) -> Result<(), String> {
    check_depth(path)?;
    let segs: Vec<&str> = path.split('.').collect();
    let mut cur: &mut Value = {
        let first = segs[0];
        if segs.len() == 1 {
            root.insert(first.into(), value);
            return Ok(());
        }
        root.entry(first.to_string())
            .or_insert_with(|| Value::Table(Table::new()))
    };
    for (i, seg) in segs.iter().enumerate().skip(1) {
        let last = i == segs.len() - 1;
        let here = segs[..i].join(".");
        match cur {
            Value::Table(t) => {
                if last {
                    t.insert(seg.to_string(), value);
                    return Ok(());
                }
                cur = t
                    .entry(seg.to_string())
                    .or_insert_with(|| Value::Table(Table::new()));
            }
            Value::Array(a) => {
                let idx: usize = seg.parse().map_err(|_| {
                    format!("`{here}` is a list; index it with a number, e.g. `{here}.0`")
                })?;
                let len = a.len();
                let Some(slot) = a.get_mut(idx) else {
                    return Err(format!(
                        "`{here}` has {len} entries; there is no entry {idx}"
                    ));
                };
                if last {
                    *slot = value;
                    return Ok(());
                }
                cur = slot;
            }
            _ => {
                return Err(format!(
                    "`{here}` is a single value, not a table; cannot set `{path}`"
                ));
            }
        }
    }
    Ok(())
}

/// Reads the value at `path`, if present.
pub fn get<'a>(root: &'a Table, path: &str) -> Option<&'a Value> {
    let mut segs = path.split('.');
    let mut cur = root.get(segs.next()?)?;
    for seg in segs {
        cur = match cur {
            Value::Table(t) => t.get(seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_typed_values_and_bare_strings() {
        assert_eq!(Override::parse("a.b=4").unwrap().value, Value::Integer(4));
        assert_eq!(Override::parse("a=2.5").unwrap().value, Value::Float(2.5));
        assert_eq!(
            Override::parse("a=true").unwrap().value,
            Value::Boolean(true)
        );
        assert_eq!(
            Override::parse("a=10s").unwrap().value,
            Value::String("10s".into())
        );
        assert_eq!(
            Override::parse("a=\"x y\"").unwrap().value,
            Value::String("x y".into())
        );
        assert!(Override::parse("novalue").is_err());
        assert!(Override::parse("a..b=1").is_err());
    }

    #[test]
    fn applies_nested_and_indexed_paths() {
        let mut t: Table = toml::from_str("[class.r]\nrate = 1\nsteps = [{cost = 1}]").unwrap();
        apply(&mut t, "class.r.rate", Value::Integer(3)).unwrap();
        apply(&mut t, "class.r.retry.max_attempts", Value::Integer(2)).unwrap();
        apply(&mut t, "class.r.steps.0.cost", Value::Integer(9)).unwrap();
        assert_eq!(get(&t, "class.r.rate"), Some(&Value::Integer(3)));
        assert_eq!(
            get(&t, "class.r.retry.max_attempts"),
            Some(&Value::Integer(2))
        );
        assert_eq!(get(&t, "class.r.steps.0.cost"), Some(&Value::Integer(9)));
        assert!(apply(&mut t, "class.r.steps.5.cost", Value::Integer(1)).is_err());
        assert!(apply(&mut t, "class.r.rate.x", Value::Integer(1)).is_err());
    }

    #[test]
    fn a_table_with_a_law_replaces_the_old_one_whole() {
        let set: Table = toml::from_str(
            "\"pool.db.service\" = { law = \"empirical\", samples = [\"1ms\"] }\n\"pool.db.workers\" = 2",
        )
        .unwrap();
        let mut flat = Vec::new();
        flatten(&set, "", &mut flat);
        let paths: Vec<&str> = flat.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["pool.db.service", "pool.db.workers"]);
        let mut t: Table =
            toml::from_str("[pool.db]\nservice = { law = \"gamma\", mean = \"1ms\", cv = 2 }")
                .unwrap();
        for (p, v) in flat {
            apply(&mut t, &p, v).unwrap();
        }
        assert_eq!(get(&t, "pool.db.service.mean"), None);
        assert!(get(&t, "pool.db.service.samples").is_some());
    }
}
