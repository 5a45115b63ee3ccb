//! Barrier 2: the segment validator.
//!
//! A [`Segment`] is a relative path of one or more levels, `/`-separated,
//! naming a workspace under the projects base. Everything is checked on the
//! raw string, before any normalisation: nothing is trimmed, collapsed or
//! rewritten, so the folder on disk is byte for byte the segment the caller
//! sent.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Longest component accepted, in bytes (Linux `NAME_MAX`).
pub const MAX_COMPONENT_BYTES: usize = 255;

/// Longest segment accepted, in bytes (Linux `PATH_MAX`).
pub const MAX_SEGMENT_BYTES: usize = 4096;

/// Every stable [`SegmentError::kind`], for tests and documentation.
pub const SEGMENT_ERROR_KINDS: &[&str] = &[
    "empty",
    "too_long",
    "nul",
    "control_character",
    "format_character",
    "backslash",
    "look_alike",
    "absolute",
    "empty_component",
    "current_dir_component",
    "parent_dir_component",
    "git_dir_component",
    "component_too_long",
    "not_nfc",
    "not_utf8",
];

/// A validated relative path under a root: one or more `/`-separated
/// components, none empty, `.`, `..` or `.git`, no NUL, control, format or
/// backslash characters, no look-alikes of path syntax, NFC, and within
/// [`MAX_COMPONENT_BYTES`] and [`MAX_SEGMENT_BYTES`].
///
/// The only way to get one is [`Segment::parse`] (or its `FromStr`,
/// `TryFrom` and serde forms, which call it).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Segment(String);

/// Why a segment was refused. Each variant has a stable [`kind`](Self::kind).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SegmentError {
    /// The segment is the empty string (which would name the root itself).
    #[error("segment is empty: it would name the root itself")]
    Empty,
    /// The whole segment is longer than [`MAX_SEGMENT_BYTES`].
    #[error("segment is {len} bytes, over the limit of {max} bytes")]
    TooLong {
        /// Length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A NUL byte.
    #[error("segment {segment:?} contains a NUL byte at byte {at}")]
    Nul {
        /// The refused segment.
        segment: String,
        /// Byte offset.
        at: usize,
    },
    /// A control character (Unicode category Cc: C0, DEL, C1).
    #[error("segment {segment:?} contains control character U+{code:04X} at byte {at}")]
    ControlCharacter {
        /// The refused segment.
        segment: String,
        /// The code point.
        code: u32,
        /// Byte offset.
        at: usize,
    },
    /// An invisible or bidirectional format character (zero-width space,
    /// right-to-left override, byte order mark...), which makes a name read
    /// differently from what it is.
    #[error("segment {segment:?} contains invisible format character U+{code:04X} at byte {at}")]
    FormatCharacter {
        /// The refused segment.
        segment: String,
        /// The code point.
        code: u32,
        /// Byte offset.
        at: usize,
    },
    /// A backslash: only `/` separates components.
    #[error("segment {segment:?} contains a backslash at byte {at}: only '/' separates components")]
    Backslash {
        /// The refused segment.
        segment: String,
        /// Byte offset.
        at: usize,
    },
    /// A non-ASCII character whose compatibility form contains `/`, `\` or
    /// `.`, or which is drawn as a slash (fullwidth solidus U+FF0F, one dot
    /// leader U+2024, division slash U+2215...). Another layer that folds
    /// compatibility characters would turn it into path syntax.
    #[error(
        "segment {segment:?} contains U+{code:04X} at byte {at}, a look-alike of {looks_like:?}"
    )]
    LookAlike {
        /// The refused segment.
        segment: String,
        /// The code point.
        code: u32,
        /// Byte offset.
        at: usize,
        /// The path syntax it imitates.
        looks_like: char,
    },
    /// A leading `/`.
    #[error("segment {segment:?} is absolute: it must be relative to its root")]
    Absolute {
        /// The refused segment.
        segment: String,
    },
    /// An empty component: a doubled `//` or a trailing `/`.
    #[error("segment {segment:?} has an empty component (a doubled or trailing '/')")]
    EmptyComponent {
        /// The refused segment.
        segment: String,
    },
    /// A `.` component.
    #[error("segment {segment:?} has a '.' component")]
    CurrentDirComponent {
        /// The refused segment.
        segment: String,
    },
    /// A `..` component.
    #[error("segment {segment:?} has a '..' component")]
    ParentDirComponent {
        /// The refused segment.
        segment: String,
    },
    /// A `.git` component (in any case): a workspace never lives inside another
    /// repository's git directory, where git would read what it finds as its own.
    #[error(
        "segment {segment:?} has a '.git' component: a workspace never goes inside a repository's git directory"
    )]
    GitDirComponent {
        /// The refused segment.
        segment: String,
    },
    /// A component longer than [`MAX_COMPONENT_BYTES`].
    #[error("component {component:?} is {len} bytes, over the limit of {max} bytes")]
    ComponentTooLong {
        /// The refused component.
        component: String,
        /// Length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Not in Unicode Normalization Form C. Refused, never normalised: see
    /// the crate documentation.
    #[error("segment {segment:?} is not in Unicode NFC; send its NFC form")]
    NotNfc {
        /// The refused segment.
        segment: String,
    },
    /// A path that is not valid UTF-8 (only from [`Segment::from_path`]).
    #[error("path {path:?} is not valid UTF-8")]
    NotUtf8 {
        /// The path, lossily decoded.
        path: String,
    },
}

impl SegmentError {
    /// A stable snake_case name for this refusal (one of
    /// [`SEGMENT_ERROR_KINDS`]).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Empty => "empty",
            Self::TooLong { .. } => "too_long",
            Self::Nul { .. } => "nul",
            Self::ControlCharacter { .. } => "control_character",
            Self::FormatCharacter { .. } => "format_character",
            Self::Backslash { .. } => "backslash",
            Self::LookAlike { .. } => "look_alike",
            Self::Absolute { .. } => "absolute",
            Self::EmptyComponent { .. } => "empty_component",
            Self::CurrentDirComponent { .. } => "current_dir_component",
            Self::ParentDirComponent { .. } => "parent_dir_component",
            Self::GitDirComponent { .. } => "git_dir_component",
            Self::ComponentTooLong { .. } => "component_too_long",
            Self::NotNfc { .. } => "not_nfc",
            Self::NotUtf8 { .. } => "not_utf8",
        }
    }
}

impl Segment {
    /// Validates `raw` as it is. See [`Segment`] for the rules; the first
    /// rule broken is the one reported, in the order: length, characters,
    /// structure, components, normalisation.
    pub fn parse(raw: &str) -> Result<Segment, SegmentError> {
        validate(raw)?;
        Ok(Segment(raw.to_owned()))
    }

    /// Validates a relative path taken from the local filesystem. Fails with
    /// [`SegmentError::NotUtf8`] when it is not UTF-8; otherwise exactly
    /// [`Segment::parse`] on its bytes (no normalisation by `Path`).
    pub fn from_path(path: &Path) -> Result<Segment, SegmentError> {
        match path.to_str() {
            Some(raw) => Segment::parse(raw),
            None => Err(SegmentError::NotUtf8 {
                path: path.to_string_lossy().into_owned(),
            }),
        }
    }

    /// The segment as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The segment as a relative path.
    pub fn as_path(&self) -> &Path {
        Path::new(&self.0)
    }

    /// Its components, in order (never empty, never `.` or `..`).
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }

    /// How many components it has (at least one).
    pub fn depth(&self) -> usize {
        self.components().count()
    }

    /// The last component.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// This segment with one more component, validated as a whole.
    pub fn join(&self, component: &str) -> Result<Segment, SegmentError> {
        Segment::parse(&format!("{}/{}", self.0, component))
    }
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for Segment {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<Path> for Segment {
    fn as_ref(&self) -> &Path {
        self.as_path()
    }
}

impl FromStr for Segment {
    type Err = SegmentError;
    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        Segment::parse(raw)
    }
}

impl TryFrom<String> for Segment {
    type Error = SegmentError;
    fn try_from(raw: String) -> Result<Self, Self::Error> {
        validate(&raw)?;
        Ok(Segment(raw))
    }
}

impl TryFrom<&str> for Segment {
    type Error = SegmentError;
    fn try_from(raw: &str) -> Result<Self, Self::Error> {
        Segment::parse(raw)
    }
}

impl From<Segment> for String {
    fn from(segment: Segment) -> String {
        segment.0
    }
}

fn validate(raw: &str) -> Result<(), SegmentError> {
    if raw.is_empty() {
        return Err(SegmentError::Empty);
    }
    if raw.len() > MAX_SEGMENT_BYTES {
        return Err(SegmentError::TooLong {
            len: raw.len(),
            max: MAX_SEGMENT_BYTES,
        });
    }
    let owned = || raw.to_owned();
    for (at, ch) in raw.char_indices() {
        let code = u32::from(ch);
        if ch == '\0' {
            return Err(SegmentError::Nul {
                segment: owned(),
                at,
            });
        }
        if ch.is_control() {
            return Err(SegmentError::ControlCharacter {
                segment: owned(),
                code,
                at,
            });
        }
        if ch == '\\' {
            return Err(SegmentError::Backslash {
                segment: owned(),
                at,
            });
        }
        if is_format_character(ch) {
            return Err(SegmentError::FormatCharacter {
                segment: owned(),
                code,
                at,
            });
        }
        if let Some(looks_like) = look_alike_of(ch) {
            return Err(SegmentError::LookAlike {
                segment: owned(),
                code,
                at,
                looks_like,
            });
        }
    }
    if raw.starts_with('/') {
        return Err(SegmentError::Absolute { segment: owned() });
    }
    for component in raw.split('/') {
        match component {
            "" => return Err(SegmentError::EmptyComponent { segment: owned() }),
            "." => return Err(SegmentError::CurrentDirComponent { segment: owned() }),
            ".." => return Err(SegmentError::ParentDirComponent { segment: owned() }),
            _ if component.eq_ignore_ascii_case(".git") => {
                return Err(SegmentError::GitDirComponent { segment: owned() });
            }
            _ if component.len() > MAX_COMPONENT_BYTES => {
                return Err(SegmentError::ComponentTooLong {
                    component: component.to_owned(),
                    len: component.len(),
                    max: MAX_COMPONENT_BYTES,
                });
            }
            _ => {}
        }
    }
    if !unicode_normalization::is_nfc(raw) {
        return Err(SegmentError::NotNfc { segment: owned() });
    }
    Ok(())
}

/// Invisible and bidirectional format characters (category Cf) that change
/// how a name reads without changing what it is.
fn is_format_character(ch: char) -> bool {
    matches!(
        ch,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
    )
}

/// The path syntax a non-ASCII character imitates, if any: its compatibility
/// decomposition (NFKD) contains `/`, `\` or `.`, or it is one of the slashes
/// that NFKD leaves alone.
fn look_alike_of(ch: char) -> Option<char> {
    if ch.is_ascii() {
        return None;
    }
    match ch {
        // DIVISION SLASH, FRACTION SLASH, BIG SOLIDUS, PHILIPPINE SINGLE PUNCTUATION
        '\u{2215}' | '\u{2044}' | '\u{29F8}' | '\u{1735}' => return Some('/'),
        // SET MINUS, REVERSE SOLIDUS OPERATOR, BIG REVERSE SOLIDUS
        '\u{2216}' | '\u{29F5}' | '\u{29F9}' => return Some('\\'),
        _ => {}
    }
    let mut found = None;
    unicode_normalization::char::decompose_compatible(ch, |d| {
        if found.is_none() && matches!(d, '/' | '\\' | '.') {
            found = Some(d);
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alikes_are_found_by_decomposition() {
        assert_eq!(look_alike_of('\u{FF0F}'), Some('/'));
        assert_eq!(look_alike_of('\u{2024}'), Some('.'));
        assert_eq!(look_alike_of('\u{2025}'), Some('.'));
        assert_eq!(look_alike_of('\u{FF3C}'), Some('\\'));
        assert_eq!(look_alike_of('\u{FE52}'), Some('.'));
        assert_eq!(look_alike_of('é'), None);
        assert_eq!(look_alike_of('a'), None);
    }
}
