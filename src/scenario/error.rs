//! Errors in scenario input: every one names the key path and the place it came from.

/// What was wrong with a scenario, and where.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{file}: cannot read the scenario: {cause}")]
    Io {
        /// The file's path.
        file: String,
        /// The operating system's reason, printed in the message (not as a source, which
        /// would print it twice).
        cause: std::io::Error,
    },
    /// No such file, and no bundled scenario of that name.
    #[error(
        "{file}: cannot read the scenario: no such file, and no bundled scenario of that name (`brink list` shows them){hint}"
    )]
    NotFound {
        /// The path as given.
        file: String,
        /// `; did you mean `retry-storm`?` when a bundled name is close, else empty.
        hint: String,
    },
    /// The file is not valid TOML.
    #[error("{place}: TOML syntax error: {msg}")]
    Syntax {
        /// `file:line:column`.
        place: String,
        /// The parser's message.
        msg: String,
    },
    /// A key has a bad value, a bad type, or is unknown.
    #[error("{place}: `{}`: {msg}", printable(path))]
    Invalid {
        /// `file:line:column`, or the `--set`/variant/intervention that supplied the value.
        place: String,
        /// The dotted key path.
        path: String,
        /// What is wrong and what would be right.
        msg: String,
    },
    /// A `--set` argument is not of the form `path=value`.
    #[error("--set {arg}: {msg}")]
    BadOverride {
        /// The argument as given.
        arg: String,
        /// What is wrong.
        msg: String,
    },
}

/// Rewrites serde's type errors in TOML's words: "invalid type: string "x", expected f64"
/// becomes "expected a number, found a string "x"" (f64 is a number; i64, u32... an
/// integer; str a string; a struct or map a table; a sequence an array; bool a boolean).
/// Other messages are returned unchanged.
pub fn toml_types(msg: &str) -> String {
    let Some((found, expected)) = ["invalid type: ", "invalid value: "]
        .iter()
        .find_map(|p| msg.strip_prefix(p))
        .and_then(|rest| rest.split_once(", expected "))
    else {
        if let Some((n, expected)) = msg
            .strip_prefix("invalid length ")
            .and_then(|rest| rest.split_once(", expected "))
        {
            let expected = match expected {
                "fewer elements in array" | "fewer elements in sequence" => {
                    "an array with fewer values".to_string()
                }
                e => toml_expected(e),
            };
            return format!("expected {expected}, found {n}");
        }
        return msg.to_string();
    };
    format!(
        "expected {}, found {}",
        toml_expected(expected),
        toml_found(found)
    )
}

/// What serde says it expected, in TOML's words.
fn toml_expected(what: &str) -> String {
    let what = what.trim();
    match what {
        "f32" | "f64" => return "a number".into(),
        "i8" | "i16" | "i32" | "i64" | "isize" => return "an integer".into(),
        "u8" | "u16" | "u32" | "u64" | "usize" => return "an integer >= 0".into(),
        "a sequence" => return "an array".into(),
        "a map" => return "a table".into(),
        "a borrowed string" | "a str" => return "a string".into(),
        _ => {}
    }
    if what.starts_with("struct ") || what.starts_with("map ") {
        return "a table".into();
    }
    if let Some(n) = what
        .strip_prefix("a tuple of size ")
        .or_else(|| what.strip_prefix("tuple of size "))
    {
        return format!("an array of {n} values");
    }
    what.to_string()
}

/// What serde says it found, in TOML's words.
fn toml_found(what: &str) -> String {
    let what = what.trim();
    for (serde, toml) in [
        ("string ", "a string "),
        ("integer ", "an integer "),
        ("floating point ", "a number "),
        ("boolean ", "a boolean "),
    ] {
        if let Some(rest) = what.strip_prefix(serde) {
            return format!("{toml}{rest}");
        }
    }
    match what {
        "sequence" => "an array".into(),
        "map" => "a table".into(),
        "datetime" => "a date-time".into(),
        _ => what.to_string(),
    }
}

/// A key path as a message shows it: control characters (a newline in a quoted TOML key)
/// escaped, so that the message stays on one line.
pub fn printable(path: &str) -> String {
    if path.chars().any(char::is_control) {
        path.chars()
            .flat_map(|c| {
                if c.is_control() {
                    c.escape_default().collect::<Vec<_>>()
                } else {
                    vec![c]
                }
            })
            .collect()
    } else {
        path.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::toml_types;

    #[test]
    fn type_errors_speak_toml() {
        let cases = [
            (
                "invalid type: string \"fast\", expected f64",
                "expected a number, found a string \"fast\"",
            ),
            (
                "invalid type: floating point `2.5`, expected i64",
                "expected an integer, found a number `2.5`",
            ),
            (
                "invalid type: sequence, expected a table",
                "expected a table, found an array",
            ),
            (
                "invalid type: map, expected struct RawService",
                "expected a table, found a table",
            ),
            (
                "invalid type: integer `3`, expected a string",
                "expected a string, found an integer `3`",
            ),
            (
                "invalid type: boolean `true`, expected a sequence",
                "expected an array, found a boolean `true`",
            ),
            (
                "invalid value: integer `-1`, expected u64",
                "expected an integer >= 0, found an integer `-1`",
            ),
            (
                "invalid length 1, expected a tuple of size 2",
                "expected an array of 2 values, found 1",
            ),
            ("unrelated", "unrelated"),
        ];
        for (serde, toml) in cases {
            assert_eq!(toml_types(serde), toml, "{serde}");
        }
    }
}
