//! The discriminated locator a caller names a workspace by, and the
//! permit-list of modes a server serves.
//!
//! On the wire: `{"kind":"managed","name":…}`, `{"kind":"mounted","segment":…}`
//! or `{"kind":"unavailable","reason":…}`. An unknown kind is refused naming
//! it, a field that does not belong to the kind is refused naming it (so a
//! `path` can never ride along), and `unavailable` always carries a reason.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{NameError, RootKind, Segment, SegmentError, WorkspaceName};

/// The kinds a locator may have, in wire spelling.
pub const LOCATOR_KINDS: &[&str] = &["managed", "mounted", "unavailable"];

/// Longest `unavailable` reason accepted from the wire, in bytes.
pub const MAX_REASON_BYTES: usize = 1024;

/// Names a workspace relative to a root of the server's own configuration,
/// or says why no root of this server reaches it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", try_from = "LocatorWire")]
pub enum Locator {
    /// A workspace under the managed root.
    Managed {
        /// Its name.
        name: WorkspaceName,
    },
    /// A workspace under the projects base.
    Mounted {
        /// Its path relative to the base.
        segment: Segment,
    },
    /// No root of this server reaches the folder. Never a null: the reason
    /// tells the operator which fix applies.
    Unavailable {
        /// Why (never empty).
        reason: String,
    },
}

impl Locator {
    /// An `unavailable` locator. An empty reason is replaced by a generic
    /// one, so the state is never reasonless.
    pub fn unavailable(reason: impl Into<String>) -> Locator {
        let reason = reason.into();
        let reason = if reason.is_empty() {
            "no root of this server reaches the folder".to_owned()
        } else {
            reason
        };
        Locator::Unavailable { reason }
    }

    /// The root a reachable locator resolves against.
    pub fn root_kind(&self) -> Option<RootKind> {
        match self {
            Locator::Managed { .. } => Some(RootKind::Managed),
            Locator::Mounted { .. } => Some(RootKind::Base),
            Locator::Unavailable { .. } => None,
        }
    }

    /// The segment under its root (a managed name is a one-level segment).
    pub fn segment(&self) -> Option<Segment> {
        match self {
            Locator::Managed { name } => Some(name.to_segment()),
            Locator::Mounted { segment } => Some(segment.clone()),
            Locator::Unavailable { .. } => None,
        }
    }

    /// The mode this locator asks to be served in.
    pub fn mode(&self) -> Option<Mode> {
        match self {
            Locator::Managed { .. } => Some(Mode::Managed),
            Locator::Mounted { .. } => Some(Mode::Mounted),
            Locator::Unavailable { .. } => None,
        }
    }

    /// Checks this locator against the server's permit-list: an
    /// `unavailable` locator and a mode not in `served` are refused.
    pub fn permit(&self, served: &[Mode]) -> Result<Mode, ModeError> {
        match self.mode() {
            None => Err(ModeError::Unavailable {
                reason: match self {
                    Locator::Unavailable { reason } => reason.clone(),
                    _ => unreachable!("only unavailable has no mode"),
                },
            }),
            Some(mode) if served.contains(&mode) => Ok(mode),
            Some(mode) => Err(ModeError::NotServed {
                mode: mode.as_str().to_owned(),
                served: list(served),
            }),
        }
    }
}

/// The locator exactly as it arrives, before any rule applies. A server
/// may deserialize this (it only fails on malformed JSON or a non-string
/// value) and convert with `Locator::try_from` to get a typed
/// [`LocatorError`] with a [`kind`](LocatorError::kind).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct LocatorWire {
    /// The discriminator.
    pub kind: Option<String>,
    /// `managed` only.
    pub name: Option<String>,
    /// `mounted` only.
    pub segment: Option<String>,
    /// `unavailable` only.
    pub reason: Option<String>,
    /// Anything else (refused by name).
    #[serde(flatten)]
    pub other: BTreeMap<String, serde::de::IgnoredAny>,
}

/// Why a locator was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LocatorError {
    /// No `kind` field.
    #[error("locator has no \"kind\"; expected one of managed, mounted, unavailable")]
    MissingKind,
    /// A `kind` this crate does not know.
    #[error("unknown locator kind {kind:?}; expected one of managed, mounted, unavailable")]
    UnknownKind {
        /// The kind sent.
        kind: String,
    },
    /// The field the kind requires is absent.
    #[error("a {kind} locator needs the field {field:?}")]
    MissingField {
        /// The locator kind.
        kind: &'static str,
        /// The missing field.
        field: &'static str,
    },
    /// A field that does not belong to the kind (a `path`, say).
    #[error("a {kind} locator does not take the field {field:?}")]
    UnexpectedField {
        /// The locator kind.
        kind: &'static str,
        /// The field sent.
        field: String,
    },
    /// The managed name is invalid.
    #[error(transparent)]
    Name(#[from] NameError),
    /// The mounted segment is invalid.
    #[error(transparent)]
    Segment(#[from] SegmentError),
    /// An `unavailable` locator with an empty reason.
    #[error("an unavailable locator needs a non-empty reason")]
    EmptyReason,
    /// An `unavailable` reason over [`MAX_REASON_BYTES`].
    #[error("the unavailable reason is {len} bytes, over the limit of {max} bytes")]
    ReasonTooLong {
        /// Length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
}

impl LocatorError {
    /// A stable snake_case name for this refusal; a refused name or segment
    /// reports its own kind (`parent_dir_component`, `invalid_name_character`...).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::MissingKind => "missing_kind",
            Self::UnknownKind { .. } => "unknown_kind",
            Self::MissingField { .. } => "missing_field",
            Self::UnexpectedField { .. } => "unexpected_field",
            Self::Name(e) => e.kind(),
            Self::Segment(e) => e.kind(),
            Self::EmptyReason => "empty_reason",
            Self::ReasonTooLong { .. } => "reason_too_long",
        }
    }
}

impl TryFrom<LocatorWire> for Locator {
    type Error = LocatorError;

    fn try_from(wire: LocatorWire) -> Result<Locator, LocatorError> {
        let LocatorWire {
            kind,
            name,
            segment,
            reason,
            other,
        } = wire;
        let kind: &'static str = match kind.as_deref() {
            None => return Err(LocatorError::MissingKind),
            Some("managed") => "managed",
            Some("mounted") => "mounted",
            Some("unavailable") => "unavailable",
            Some(other) => {
                return Err(LocatorError::UnknownKind {
                    kind: other.to_owned(),
                });
            }
        };
        let unexpected = |field: &str| LocatorError::UnexpectedField {
            kind,
            field: field.to_owned(),
        };
        if let Some(field) = other.keys().next() {
            return Err(unexpected(field));
        }
        let present = [
            ("name", name.is_some()),
            ("segment", segment.is_some()),
            ("reason", reason.is_some()),
        ];
        let wanted = match kind {
            "managed" => "name",
            "mounted" => "segment",
            _ => "reason",
        };
        if let Some((field, _)) = present.iter().find(|(f, p)| *p && *f != wanted) {
            return Err(unexpected(field));
        }
        let missing = LocatorError::MissingField {
            kind,
            field: wanted,
        };
        match kind {
            "managed" => Ok(Locator::Managed {
                name: WorkspaceName::try_from(name.ok_or(missing)?)?,
            }),
            "mounted" => Ok(Locator::Mounted {
                segment: Segment::try_from(segment.ok_or(missing)?)?,
            }),
            _ => {
                let reason = reason.ok_or(missing)?;
                if reason.is_empty() {
                    return Err(LocatorError::EmptyReason);
                }
                if reason.len() > MAX_REASON_BYTES {
                    return Err(LocatorError::ReasonTooLong {
                        len: reason.len(),
                        max: MAX_REASON_BYTES,
                    });
                }
                Ok(Locator::Unavailable { reason })
            }
        }
    }
}

/// A mode a server may serve: which root a workspace lives under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Workspaces under the managed root.
    Managed,
    /// Workspaces under the projects base.
    Mounted,
}

/// Every mode this crate implements: the default permit-list.
pub const SERVED_MODES: &[Mode] = &[Mode::Managed, Mode::Mounted];

impl Mode {
    /// `"managed"` or `"mounted"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Managed => "managed",
            Self::Mounted => "mounted",
        }
    }

    /// The root this mode resolves against.
    pub fn root_kind(self) -> RootKind {
        match self {
            Self::Managed => RootKind::Managed,
            Self::Mounted => RootKind::Base,
        }
    }

    /// Parses a mode name against a permit-list: anything not in `served`
    /// (a future mode, `runner`, a typo) is refused, never accepted by
    /// default.
    pub fn permit(raw: &str, served: &[Mode]) -> Result<Mode, ModeError> {
        served
            .iter()
            .copied()
            .find(|m| m.as_str() == raw)
            .ok_or_else(|| ModeError::NotServed {
                mode: raw.to_owned(),
                served: list(served),
            })
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode the server does not serve.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModeError {
    /// Not in the permit-list.
    #[error("mode {mode:?} is not served here; this server serves: {served}")]
    NotServed {
        /// The mode asked for.
        mode: String,
        /// The permit-list, comma-separated.
        served: String,
    },
    /// The locator is `unavailable`: no root of this server reaches it.
    #[error("the workspace is unavailable on this server: {reason}")]
    Unavailable {
        /// The locator's reason.
        reason: String,
    },
}

impl ModeError {
    /// A stable snake_case name for this refusal.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotServed { .. } => "mode_not_served",
            Self::Unavailable { .. } => "unavailable",
        }
    }
}

fn list(served: &[Mode]) -> String {
    if served.is_empty() {
        return "(none)".to_owned();
    }
    served
        .iter()
        .map(|m| m.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
