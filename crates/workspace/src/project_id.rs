//! `ProjectId`: the caller's name for the project a workspace belongs to (seed 001's
//! `projectId`), checked once at the boundary. The registry keeps it unique, so one
//! project has one workspace and the same create asked again is a no-op.

use std::fmt;

/// At most this many bytes (all ASCII, so also characters).
pub const MAX_PROJECT_ID: usize = 128;

/// The rule as a regular expression, for a schema: 1..=128 of `A-Z a-z 0-9 . _ : -`,
/// the first a letter or digit (so never `.`, `..` or something read as an option).
pub const PROJECT_ID_PATTERN: &str = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$";

/// A project id that passed [`ProjectId::parse`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProjectId(String);

/// Why a project id was refused; [`kind`](Self::kind) names the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProjectIdError {
    /// The id is empty.
    #[error("the project id is empty (give 1 to {MAX_PROJECT_ID} of A-Z a-z 0-9 . _ : -)")]
    Empty,
    /// The id is longer than [`MAX_PROJECT_ID`].
    #[error("the project id is {len} bytes long, over the limit of {MAX_PROJECT_ID}")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// A character outside `A-Z a-z 0-9 . _ : -`.
    #[error(
        "the project id has {found:?} at character {position}; only A-Z a-z 0-9 . _ : - are allowed"
    )]
    ForbiddenCharacter {
        /// The first such character.
        found: char,
        /// Its 0-based position, in characters.
        position: usize,
    },
    /// The first character is `.`, `_`, `:` or `-` (`..`, `.hidden`, `-x`).
    #[error("the project id starts with {found:?}; it must start with a letter or a digit")]
    LeadingPunctuation {
        /// The first character.
        found: char,
    },
}

impl ProjectIdError {
    /// A stable snake_case name of the rule broken.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Empty => "empty",
            Self::TooLong { .. } => "too_long",
            Self::ForbiddenCharacter { .. } => "forbidden_character",
            Self::LeadingPunctuation { .. } => "leading_punctuation",
        }
    }
}

impl ProjectId {
    /// Checks `raw` against [`PROJECT_ID_PATTERN`], naming the first rule it breaks.
    pub fn parse(raw: &str) -> Result<ProjectId, ProjectIdError> {
        if let Some((position, found)) = raw
            .chars()
            .enumerate()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-')))
        {
            return Err(ProjectIdError::ForbiddenCharacter { found, position });
        }
        let Some(first) = raw.chars().next() else {
            return Err(ProjectIdError::Empty);
        };
        if raw.len() > MAX_PROJECT_ID {
            return Err(ProjectIdError::TooLong { len: raw.len() });
        }
        if !first.is_ascii_alphanumeric() {
            return Err(ProjectIdError::LeadingPunctuation { found: first });
        }
        Ok(ProjectId(raw.to_owned()))
    }

    /// The id as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ProjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_ids_follow_the_pattern() {
        let max = "a".repeat(MAX_PROJECT_ID);
        for ok in [
            "p",
            "0",
            "proj_1",
            "org:team.app-2",
            "A.b_c:d-e",
            max.as_str(),
        ] {
            assert_eq!(ProjectId::parse(ok).unwrap().as_str(), ok);
        }
        let long = "a".repeat(MAX_PROJECT_ID + 1);
        let refused = [
            ("", "empty"),
            (long.as_str(), "too_long"),
            ("a/b", "forbidden_character"),
            ("a\0b", "forbidden_character"),
            ("a b", "forbidden_character"),
            (" a", "forbidden_character"),
            ("café", "forbidden_character"),
            ("a\nb", "forbidden_character"),
            ("..", "leading_punctuation"),
            (".", "leading_punctuation"),
            ("-rf", "leading_punctuation"),
            (":x", "leading_punctuation"),
        ];
        for (raw, kind) in refused {
            let err = ProjectId::parse(raw).unwrap_err();
            assert_eq!(err.kind(), kind, "{raw:?}: {err}");
        }
        // The schema's pattern says the same as the parser.
        let pattern = regex::Regex::new(PROJECT_ID_PATTERN).unwrap();
        for raw in ["p", "org:team.app-2", max.as_str()] {
            assert!(pattern.is_match(raw), "{raw:?}");
        }
        for (raw, _) in refused {
            assert!(!pattern.is_match(raw), "{raw:?}");
        }
        let err = ProjectId::parse("ok/../x").unwrap_err();
        assert_eq!(
            err,
            ProjectIdError::ForbiddenCharacter {
                found: '/',
                position: 2
            }
        );
    }
}
