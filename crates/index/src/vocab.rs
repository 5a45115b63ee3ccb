//! The index's vocabularies as types: what an edge is and how sure it is, next to the
//! definition kinds ([`SymbolKind`]) and languages ([`Lang`]). Each is stored as its
//! stable name and read back through [`FromSql`], so a query's output carries the enum,
//! never a free string.

use std::fmt;

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ValueRef};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Lang;
use crate::extract::SymbolKind;

/// What an edge of the code graph means.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum EdgeKind {
    /// A definition contains another (a class its methods).
    #[serde(rename = "CONTAINS")]
    Contains,
    /// A call or instantiation.
    #[serde(rename = "CALLS")]
    Calls,
    /// A use of a type or name that is not a call.
    #[serde(rename = "REFERENCES")]
    References,
    /// An import of a definition or a file.
    #[serde(rename = "IMPORTS")]
    Imports,
    /// A class extends a base.
    #[serde(rename = "INHERITS")]
    Inherits,
    /// A type implements an interface or trait.
    #[serde(rename = "IMPLEMENTS")]
    Implements,
}

impl EdgeKind {
    /// Every kind.
    pub const ALL: [EdgeKind; 6] = [
        EdgeKind::Contains,
        EdgeKind::Calls,
        EdgeKind::References,
        EdgeKind::Imports,
        EdgeKind::Inherits,
        EdgeKind::Implements,
    ];

    /// The stable name stored in the index.
    pub const fn name(self) -> &'static str {
        match self {
            EdgeKind::Contains => "CONTAINS",
            EdgeKind::Calls => "CALLS",
            EdgeKind::References => "REFERENCES",
            EdgeKind::Imports => "IMPORTS",
            EdgeKind::Inherits => "INHERITS",
            EdgeKind::Implements => "IMPLEMENTS",
        }
    }

    /// Parses a stored name.
    pub fn from_name(name: &str) -> Option<EdgeKind> {
        EdgeKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// How sure an edge is: `exact` (same scope or a qualified path that names it),
/// `import` (through an import), `name` (by name alone, among few candidates).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Resolved through scope or a qualified path.
    Exact,
    /// Resolved through an import.
    Import,
    /// Linked by name alone.
    Name,
}

impl Confidence {
    /// Every confidence, surest first.
    pub const ALL: [Confidence; 3] = [Confidence::Exact, Confidence::Import, Confidence::Name];

    /// The stable name stored in the index.
    pub const fn name(self) -> &'static str {
        match self {
            Confidence::Exact => "exact",
            Confidence::Import => "import",
            Confidence::Name => "name",
        }
    }

    /// Parses a stored name.
    pub fn from_name(name: &str) -> Option<Confidence> {
        Confidence::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Keys of the index's `meta` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaKey {
    /// `indexing` while a run is unfinished, `complete` after.
    State,
    /// When the last run completed (ms since the epoch).
    CompletedAt,
    /// The files the last run skipped, with the fingerprints of those a parse or a
    /// resolution refused (JSON, `skip_record.rs`).
    SkippedFiles,
    /// The Rust crates the workspace's `Cargo.toml` files declare, with the manifests'
    /// fingerprints (JSON).
    RustCrates,
    /// The TypeScript configs and Go modules of the workspace, with the files'
    /// fingerprints (JSON).
    ModuleConfigs,
    /// The version of the resolution rules the stored edges were made with
    /// (`resolve::RULES_VERSION`).
    ResolverRules,
    /// The git checkout the last completed run saw: `HEAD`'s commit, its branch and
    /// whether the working tree differed (JSON, `checkout.rs`). Absent outside git.
    Checkout,
}

impl MetaKey {
    /// The stored key.
    pub fn name(self) -> &'static str {
        match self {
            MetaKey::State => "state",
            MetaKey::CompletedAt => "completed_at",
            MetaKey::SkippedFiles => "skipped_files",
            MetaKey::RustCrates => "rust_crates",
            MetaKey::ModuleConfigs => "module_configs",
            MetaKey::ResolverRules => "resolver_rules",
            MetaKey::Checkout => "checkout",
        }
    }
}

/// The index's own record of its last run (`meta.state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IndexState {
    /// A run is writing, or one was interrupted: answers may be partial.
    Indexing,
    /// The last run finished.
    Complete,
    /// No run has written anything yet.
    Empty,
}

impl IndexState {
    /// The stored value (`empty` is the absence of one).
    pub fn name(self) -> &'static str {
        match self {
            IndexState::Indexing => "indexing",
            IndexState::Complete => "complete",
            IndexState::Empty => "empty",
        }
    }

    /// Reads a stored `meta.state`; anything but `complete` or nothing means a run is
    /// unfinished.
    pub fn from_stored(value: Option<&str>) -> IndexState {
        match value {
            None => IndexState::Empty,
            Some("complete") => IndexState::Complete,
            Some(_) => IndexState::Indexing,
        }
    }
}

macro_rules! named_vocab {
    ($($ty:ty => $what:literal),* $(,)?) => {$(
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromSql for $ty {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                let text = value.as_str()?;
                <$ty>::from_name(text).ok_or_else(|| {
                    FromSqlError::Other(format!("unknown {} `{text}` in the index", $what).into())
                })
            }
        }
    )*};
}

named_vocab!(EdgeKind => "edge kind", Confidence => "confidence", SymbolKind => "symbol kind", Lang => "language");

impl fmt::Display for IndexState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_vocabulary_round_trips_through_its_stored_name_and_serde() {
        for k in EdgeKind::ALL {
            assert_eq!(EdgeKind::from_name(k.name()), Some(k));
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
        for c in Confidence::ALL {
            assert_eq!(Confidence::from_name(c.name()), Some(c));
            assert_eq!(serde_json::to_value(c).unwrap(), c.name());
        }
        for k in SymbolKind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
        for l in Lang::ALL {
            assert_eq!(serde_json::to_value(l).unwrap(), l.name());
        }
    }

    #[test]
    fn an_unknown_stored_name_is_an_error_not_a_guess() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let r: rusqlite::Result<EdgeKind> = conn.query_row("SELECT 'CALLZ'", [], |r| r.get(0));
        assert!(
            r.unwrap_err()
                .to_string()
                .contains("unknown edge kind `CALLZ`")
        );
    }
}
