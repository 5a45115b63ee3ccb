//! loci's one programmatic surface, shared by every front end: the CLI, the HTTP API
//! and MCP call these functions and only translate their inputs and outputs (as
//! rust-analyzer's `ide` crate is shared by its LSP server and its CLI).
//!
//! What lives here, and nowhere else:
//! - **one error type and one table** ([`ApiError`], [`ErrorKind::TABLE`]): every
//!   failure has a stable kind, an exit code and an HTTP status from the same row;
//! - **one rule for where an index lives** ([`locate`]): the `.loci/` marker, else the
//!   registry, else the default place — for queries, sync, watch, rebuild and status;
//! - **shareable, bounded reads** ([`Workspace`]): a pool of read-only connections per
//!   workspace, a deadline and a cancel token on every read, a limit, a total and a
//!   cursor on every list ([`PageRequest`], [`PageInfo`]), and the index's freshness
//!   on every answer ([`Freshness`]);
//! - **typed requests and responses** with JSON Schemas ([`schema::schemas`]), from
//!   which the HTTP OpenAPI document and the MCP tool schemas are generated.
//!
//! ```no_run
//! use loci_api::{ReadOptions, graph::{FindRequest, find}};
//!
//! let ws = loci_api::open(std::path::Path::new(".")).unwrap();
//! let req = FindRequest { pattern: "parse_*".into(), kind: None, lang: None, page: Default::default() };
//! let page = find(&ws, &req, &ReadOptions::default()).unwrap();
//! println!("{} of {} (index {})", page.symbols.len(), page.page.total, page.index.state);
//! ```
//!
//! **API boundary:** the request and response types, [`ErrorKind`] names and the exit
//! codes are stable (extended, never renumbered or renamed); the modules' internals are
//! not.
#![deny(missing_docs)]

pub mod api_probe;
pub mod changes;
pub mod confine;
mod convert;
pub mod error;
pub mod graph;
pub mod handle;
pub mod host;
pub mod maintain;
pub mod meaning;
pub mod memory;
pub mod models;
pub mod page;
mod parsed_sides;
pub mod picker;
mod poison;
pub mod remote;
pub mod repositories;
pub mod runs;
pub mod schema;
pub mod source;
pub mod sql;
pub mod sql_service;
#[cfg(test)]
mod test_support;
pub mod time;
pub mod tool_schema;
pub mod tracking;
pub mod vocab;
pub mod watching;
pub mod workspaces;

pub use convert::AMBIGUOUS_SHOWN;
pub use error::{ApiError, ErrorBody, ErrorEnvelope, ErrorKind, ExitCode};
pub use handle::{CancelToken, CommitStamp, Freshness, ReadOptions, Workspace};
pub use loci_index::{SkipReason, Skipped, SkippedFiles};
pub use loci_lifecycle::Located;
pub use loci_store::prefer_parallel_reads;
pub use maintain::{
    IndexRequest, config, enclosing_workspace, gate, gate_in_server, index, locate, open, rebuild,
    status, sync, workspace_root,
};
pub use page::{MAX_LIMIT, PageInfo, PageRequest};
pub use watching::watch;
