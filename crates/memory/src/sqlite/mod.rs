//! [`SqliteStore`]: memories in one SQLite file (a workspace's `.loci/memory.db`, or the
//! user-level store), WAL with a busy timeout so several processes write safely, every
//! mutation one immediate transaction that writes its version.

mod extraction;
mod fts;
mod handle;
mod history;
mod merge;
mod open_connections;
mod read;
mod rows;
mod schema;
mod schema_extraction;
mod schema_porter;
mod schema_vector_log;
mod seam;
mod vector_cache;
mod vector_load;
mod vector_scan;
mod write;

pub use handle::SqliteStore;
pub use merge::{MERGED_INTO, merged_body};
pub use vector_cache::VectorCacheStats;
pub(crate) use vector_cache::{
    bytes_per_chunk as cache_bytes_per_chunk, set_reference as set_reference_scan,
};

/// The memory database's file name, beside the index in `.loci/`.
pub const MEMORY_FILE: &str = "memory.db";
