//! The one path ruler of loci: roots from local configuration, locators that
//! name a workspace without an absolute path, and containment that no caller
//! can talk past. It carries seed 002 (ADR 0144: two roots with their own
//! errors, the discriminated locator `managed | mounted | unavailable`, the
//! permit-list of modes, three barriers, the base is never a workspace) and
//! the path half of seed 001 (ADR 0151: the base is local configuration, one
//! shared ruler, the two-way loop check, the folder picker), and it keeps
//! DESIGN.md invariants 1 (no absolute path crosses a network boundary) and
//! 2 (one ruler: component-wise, lexical first, then on the real path of the
//! nearest existing ancestor with the missing suffix re-appended). It does no
//! SQLite and no HTTP.
//!
//! ```
//! use loci_paths::{Locator, RootKind, RootValues, Roots, SERVED_MODES};
//!
//! let dir = tempfile::tempdir()?;
//! // Roots come from local configuration only (here: explicit values).
//! let roots = Roots::from_values(
//!     RootValues::default(),
//!     RootValues { env: Some(dir.path().into()), config: None },
//! )?;
//! // A caller names a workspace by locator, never by path.
//! let locator: Locator = serde_json::from_str(r#"{"kind":"mounted","segment":"team/app"}"#)?;
//! let target = roots.resolve(&locator, SERVED_MODES)?;
//! assert_eq!(target.path(), dir.path().join("team/app"));
//! // `mkdir -p` beneath the root handle (openat2 on Linux).
//! loci_paths::create_dir_all(&target)?;
//! let listing = loci_paths::list_dirs(roots.get(RootKind::Base)?, None)?;
//! assert_eq!(listing.entries[0].name, "team");
//!
//! // The other root is not configured: its own error, naming the variable.
//! let missing = roots.managed().unwrap_err();
//! assert!(missing.to_string().contains("LOCI_MANAGED_ROOT"));
//! // Refusals carry a stable kind.
//! let refused = loci_paths::Segment::parse("a/../../etc").unwrap_err();
//! assert_eq!(refused.kind(), "parent_dir_component");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The three barriers are independent: [`segment_under`] (the caller side:
//! is this local path under the root, and as which segment), [`Segment`]
//! (the validator) and [`contain`] (root + segment as a whole, producing a
//! [`ContainedPath`], which only this crate constructs). [`RootDir`] then
//! creates and lists through directory handles so a symlink swapped in after
//! the check cannot lead outside. [`check_no_loop`] is the two-way check for
//! copies and mirrors.
//!
//! **Unicode.** A segment that is not in Normalization Form C is *refused*
//! (`not_nfc`), never normalised: normalising would make the folder on disk
//! differ from the name the caller sent, and let two different strings name
//! one folder. Characters whose compatibility form contains `/`, `\` or `.`
//! (fullwidth solidus U+FF0F, one dot leader U+2024...) and a few slashes
//! that have no such form (division slash U+2215...) are refused as
//! `look_alike`, so no later layer that folds compatibility characters can
//! turn them into path syntax. The rules, the barriers and the platform
//! fallbacks are in `docs/paths.md`.

#![deny(missing_docs)]

mod beneath;
mod contain;
mod locator;
mod name;
mod read;
mod real;
mod resolve;
mod roots;
mod segment;

pub use beneath::{
    BeneathError, DirEntry, FileKind, Listing, MAX_LIST_ENTRIES, OpenedDir, Probe, RootDir,
    create_dir_all, list_dirs,
};
pub use contain::{
    ContainError, ContainedPath, LoopError, MAX_PATH_BYTES, UnderError, check_no_loop, contain,
    inside_or_equal, locate, segment_under, strictly_inside,
};
pub use locator::{
    LOCATOR_KINDS, Locator, LocatorError, LocatorWire, MAX_REASON_BYTES, Mode, ModeError,
    SERVED_MODES,
};
pub use name::{MAX_NAME_BYTES, NameError, WorkspaceName};
pub use read::{open_file_beneath, read_file_beneath};
pub use real::RealError;
pub use resolve::ResolveError;
pub use roots::{
    MANAGED_ROOT_KEY, MANAGED_ROOT_VAR, PROJECTS_BASE_KEY, PROJECTS_BASE_VAR, Root, RootError,
    RootKind, RootOrigin, RootValues, Roots, lookup_root,
};
pub use segment::{
    MAX_COMPONENT_BYTES, MAX_SEGMENT_BYTES, SEGMENT_ERROR_KINDS, Segment, SegmentError,
};
