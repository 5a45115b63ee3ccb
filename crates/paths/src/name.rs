//! Names of workspaces under the managed root: `^[A-Za-z0-9_-]{1,64}$`,
//! taken as sent (no trimming, no case folding, numbers are not coerced).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::Segment;

/// Longest managed workspace name, in bytes.
pub const MAX_NAME_BYTES: usize = 64;

/// A workspace name under the managed root: 1 to 64 characters from
/// `A-Z a-z 0-9 _ -`. A single level, never a path.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct WorkspaceName(String);

/// Why a managed workspace name was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The empty string.
    #[error("workspace name is empty")]
    Empty,
    /// Longer than [`MAX_NAME_BYTES`].
    #[error("workspace name is {len} bytes, over the limit of {max} bytes")]
    TooLong {
        /// Length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A character outside `A-Z a-z 0-9 _ -` (a `/` included: a managed
    /// workspace is one level).
    #[error(
        "workspace name {name:?} contains {ch:?} at byte {at}; only A-Z, a-z, 0-9, '_' and '-' are allowed"
    )]
    InvalidCharacter {
        /// The refused name.
        name: String,
        /// The offending character.
        ch: char,
        /// Byte offset.
        at: usize,
    },
}

impl NameError {
    /// A stable snake_case name for this refusal.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Empty => "empty_name",
            Self::TooLong { .. } => "name_too_long",
            Self::InvalidCharacter { .. } => "invalid_name_character",
        }
    }
}

impl WorkspaceName {
    /// Validates `raw` exactly as given.
    pub fn parse(raw: &str) -> Result<WorkspaceName, NameError> {
        validate(raw)?;
        Ok(WorkspaceName(raw.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name as a one-level segment under the managed root.
    pub fn to_segment(&self) -> Segment {
        Segment::parse(&self.0).expect("a valid workspace name is a valid one-level segment")
    }
}

fn validate(raw: &str) -> Result<(), NameError> {
    if raw.is_empty() {
        return Err(NameError::Empty);
    }
    if raw.len() > MAX_NAME_BYTES {
        return Err(NameError::TooLong {
            len: raw.len(),
            max: MAX_NAME_BYTES,
        });
    }
    if let Some((at, ch)) = raw
        .char_indices()
        .find(|&(_, ch)| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '-'))
    {
        return Err(NameError::InvalidCharacter {
            name: raw.to_owned(),
            ch,
            at,
        });
    }
    Ok(())
}

impl fmt::Display for WorkspaceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for WorkspaceName {
    type Err = NameError;
    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        WorkspaceName::parse(raw)
    }
}

impl TryFrom<String> for WorkspaceName {
    type Error = NameError;
    fn try_from(raw: String) -> Result<Self, Self::Error> {
        validate(&raw)?;
        Ok(WorkspaceName(raw))
    }
}

impl From<WorkspaceName> for String {
    fn from(name: WorkspaceName) -> String {
        name.0
    }
}
