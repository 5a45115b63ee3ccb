//! The code graph of a workspace: walk it, parse every source file with
//! tree-sitter, resolve calls, imports and inheritance across files, and keep
//! the result fresh incrementally in the workspace's SQLite index.
//!
//! ```no_run
//! let facts = loci_index::extract::extract(loci_index::Lang::Rust, "fn main() { run(); }").unwrap();
//! assert_eq!(facts.symbols[0].name, "main");
//! ```
#![deny(missing_docs)]

mod budget;
pub mod checkout;
mod counts;
mod crates;
pub mod drift;
mod dump;
pub mod extract;
mod first_index;
mod freed_memory;
mod git_exclude;
pub mod graph;
mod header;
pub mod highlight;
mod lang;
pub mod lock;
mod meta;
mod module_configs;
mod parse;
mod parse_pool;
mod progress;
mod resident;
mod resolve;
mod resolve_chunks;
mod root;
mod run_writer;
mod settings;
mod side_search;
mod skip_record;
mod sources;
mod stored_refs;
mod sync;
mod trigram;
pub mod vocab;
mod walk;
mod write;

pub use budget::{DEFAULT_FILE_BUDGET, FILE_BUDGET_MS_RANGE, FileBudget};
pub use dump::dump;
pub use extract::SymbolKind;
pub use first_index::is_interrupted_first_index;
pub use lang::Lang;
pub use lock::WriteWork;
pub use meta::meta_get;
pub use progress::{NoProgress, Progress};
pub use resolve::RULES_VERSION;
pub use root::{IndexError, workspace_root};
pub use skip_record::{SkippedFiles, recorded_skips};
pub use sources::source_files;
pub use sync::{DEFAULT_MAX_FILE_BYTES, IndexOptions, IndexReport, index_workspace};
pub use trigram::TermsBuilder;
pub use vocab::{Confidence, EdgeKind, IndexState, MetaKey};
pub use walk::{SkipReason, Skipped};
