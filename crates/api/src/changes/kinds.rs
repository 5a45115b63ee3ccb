//! The two vocabularies the modules of `changes` share with its answer: why a file was
//! not read, and how a definition changed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why a changed file's definitions were not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NotRead {
    /// No language loci extracts (or a symlink, a submodule).
    NotSource,
    /// Binary.
    Binary,
    /// Larger than 1 MiB.
    TooLarge,
    /// Could not be read.
    Unreadable,
    /// The extractor gave up (past its memory, nesting or time limit).
    TooComplex,
}

/// How a definition changed.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SymbolChange {
    /// Only on the new side.
    Added,
    /// On both sides, its text different, a hunk touching it.
    Changed,
    /// Only on the old side.
    Removed,
    /// Somewhere else on the new side: another file, or other lines with the same text.
    Moved,
}
