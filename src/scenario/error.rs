//! Errors in scenario input: every one names the key path and the place it came from.

/// What was wrong with a scenario, and where.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{file}: cannot read the scenario: {source}")]
    Io {
        /// The file's path.
        file: String,
        /// The operating system's reason.
        source: std::io::Error,
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
    #[error("{place}: `{path}`: {msg}")]
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
