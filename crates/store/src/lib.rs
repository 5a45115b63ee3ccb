//! SQLite storage for loci: the per-workspace index database (schema,
//! migrations, connection settings) and the registry of known workspaces.
//!
//! Every connection loci opens on an index goes through [`open_index`],
//! [`open_index_read_only`] or (the query engine's) [`open_read_only`], so WAL mode, the busy timeout and the schema
//! version check are the same everywhere (DESIGN.md invariant 8: readers are
//! never blocked by the indexer).
//!
//! ```no_run
//! let conn = loci_store::open_index(std::path::Path::new("/repo/.loci/index.db")).unwrap();
//! let files: i64 = conn.query_row("SELECT count(*) FROM files", [], |r| r.get(0)).unwrap();
//! ```
#![deny(missing_docs)]

mod error;
mod file_stamp;
mod guard;
mod index_db;
mod process_config;
pub use process_config::prefer_parallel_reads;
mod read_only;
pub mod registry;
mod schema;
mod side_db;
pub use side_db::open_side_db;
pub mod search_index;

pub use error::StoreError;
pub use file_stamp::FileStamp;
pub use index_db::{
    INDEX_DIR, INDEX_FILE, index_path_for, open_index, open_index_read_only, quick_check,
};
pub use read_only::{ReadOnlyDb, Snapshot, open_read_only};
pub use rusqlite;
pub use schema::{
    SCHEMA_VERSION, create_edge_indexes, create_fact_indexes, drop_edge_indexes, drop_fact_indexes,
};
