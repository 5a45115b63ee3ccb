//! What a configuration key is (its type, range, default) and what a value is: the
//! vocabulary both the key table (`keys.rs`) and the layered reader use.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

/// The type and valid range of a key.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// `true`/`false` (env: `1/0`, `true/false`, `yes/no`, `on/off`).
    Bool,
    /// An integer in `min..=max`.
    Int {
        /// Smallest valid value.
        min: u64,
        /// Largest valid value.
        max: u64,
    },
    /// A non-empty path.
    Path,
    /// A non-empty text.
    Text,
}

/// One configuration key.
#[derive(Debug, Clone)]
pub struct KeyDef {
    /// Dotted name, as in the TOML files: `lifecycle.autoCreate`.
    pub key: &'static str,
    /// The environment variable that overrides it.
    pub env: &'static str,
    /// Type and range.
    pub kind: Kind,
    /// Built-in default (`None`: unset unless a layer sets it).
    pub default: Option<Value>,
    /// One line for `loci config show`.
    pub doc: &'static str,
}

/// A configured value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(u64),
    /// A path.
    Path(PathBuf),
    /// A text.
    Text(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Path(p) => write!(f, "{}", p.display()),
            Value::Text(t) => f.write_str(t),
        }
    }
}
