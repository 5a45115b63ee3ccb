//! Workspace creation and the folder picker, for `loci workspace create/ls`
//! and the HTTP server alike: validate a name or segment, `mkdir -p` beneath
//! its root, `git init` or `git clone -- URL .` through the supervisor (120 s,
//! 8 MiB, no shell), then confirm the workspace in the registry through its
//! one confirmation function. It carries seed 001's `workspace create` (the
//! base is local configuration, creation then the one idempotent
//! confirmation path, a picker that lists under the base) over seed 002's
//! roots and locators, and keeps DESIGN.md invariants 1 (callers name a
//! workspace by locator; results hold no absolute path), 2 (all containment
//! through `loci-paths`) and 3 (git runs only through `loci-supervisor`).
//!
//! ```no_run
//! use loci_paths::{RootKind, Roots};
//! use loci_store::registry::Registry;
//! use loci_supervisor::Supervisor;
//! use loci_workspace::{CreateRequest, create, ls};
//!
//! let roots = Roots::from_env(None, None)?;
//! let created = create(
//!     &roots,
//!     &CreateRequest::mounted("team/app").clone_from("https://example.com/app.git"),
//!     &Supervisor::new(),
//!     &Registry::open_default()?,
//! )?;
//! println!("{}", serde_json::to_string(&created)?);
//! let picker = ls(&roots, RootKind::Base, Some("team"))?;
//! assert!(picker.entries.iter().any(|e| e.name == "app"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A request may carry the caller's project id ([`ProjectId`]); the registry binds
//! one project to one locator, so the same create asked again is a no-op and a
//! project asked for elsewhere is refused before anything is made.
//!
//! Failures name one of `no_root`, `invalid_segment`, `invalid_clone_url`,
//! `invalid_project_id`, `project_conflict`, `not_a_directory`, `mkdir`, `git` (plus `registry` when the confirmation cannot be written);
//! see [`CreateError`]. The rules themselves are in `docs/paths.md`.

#![deny(missing_docs)]

mod address;
mod clone_url;
mod create;
mod egress;
mod error;
mod exclusive;
mod git;
mod ls;
mod project_id;

pub use address::{AddressClass, AddressPolicy, Allowance, Refusal};
pub use clone_url::{
    ClonePolicy, CloneScheme, CloneUrl, CloneUrlError, MAX_URL_BYTES, REMOTE_EXTRA_SCHEMES,
    REMOTE_SCHEMES,
};
pub use create::{
    Action, Confirmed, CreateOptions, CreateRequest, Created, GIT_BUDGET, GIT_OUTPUT_CAP, Target,
    create, create_with, registry_locator,
};
pub use error::{CreateError, ListError};
pub use git::ALLOWED_PROTOCOLS;
pub use ls::ls;
pub use project_id::{MAX_PROJECT_ID, PROJECT_ID_PATTERN, ProjectId, ProjectIdError};
