//! loci's memory: what an agent learns about a codebase — decisions, conventions,
//! incidents — kept per workspace in its own SQLite database (`.loci/memory.db`, beside
//! the index, so a rebuilt index never costs a memory), in a user-level store, or in a
//! PostgreSQL database a team shares, and recalled in milliseconds by hybrid search tied
//! to the code graph.
//!
//! - **Data**: memories (name unique per namespace, nine types, versions on every
//!   change), entities and weighted relationships, chunks and their vectors, and code
//!   links keyed by path + qualified name + kind with the code's content hash, so a
//!   note about a function knows when the function changed ([`code::check`]).
//! - **Storage seam**: [`MemoryStore`]; [`SqliteStore`] keeps a workspace's memories in
//!   a file, [`PgStore`] a team's in PostgreSQL (one scope per repository). Recall,
//!   staleness and the service layer only see the trait.
//! - **Code graph seam**: [`CodeGraph`], implemented by the service layer over the
//!   workspace's index; this crate needs no index.
//! - **Vectors seam**: [`Embedder`]; without one, recall runs full text and graph and
//!   says `vectors: off`.
//!
//! ```no_run
//! use loci_memory::{NewMemory, SqliteStore, NoCode, ops, recall};
//!
//! let mut store = SqliteStore::open(std::path::Path::new("/repo/.loci/memory.db")).unwrap();
//! let m = NewMemory { name: "retry-policy".into(), body: "We retry `fetch` 3 times.".into(), ..Default::default() };
//! ops::remember(&mut store, &NoCode, false, &m, &[]).unwrap();
//! let req = recall::RecallRequest { query: "retry".into(), filter: loci_memory::Filter { namespace: "default".into(), ..Default::default() }, ..Default::default() };
//! let answer = recall::recall(&mut store, &NoCode, false, None, &req).unwrap();
//! assert_eq!(answer.vectors.state, recall::Vectors::Off);
//! ```
#![deny(missing_docs)]

pub mod chunk;
pub mod code;
pub mod cosine;
mod error;
pub mod extract;
pub mod fusion;
pub mod graph;
pub mod mentions;
pub mod merge;
pub mod model;
pub mod ops;
pub mod pg;
pub mod recall;
pub mod snippet;
mod sqlite;
pub mod store;
pub mod transfer;
pub mod vector;

pub use code::{CodeGraph, CodeTarget, LinkState, NoCode};
pub use error::MemoryError;
pub use model::{
    CodeKey, CodeLink, Edit, EntityInfo, EntityInput, Memory, MemorySummary, MemoryType,
    NAME_PATTERN, NewCodeLink, NewMemory, Relationship, RelationshipInput, Version,
};
pub use pg::{PgOptions, PgStore};
pub use sqlite::{MEMORY_FILE, MERGED_INTO, SqliteStore, VectorCacheStats, merged_body};
pub use store::{
    Filter, MAX_AMONG_ENTITIES, MemoryStore, StoreDescription, StoreKind, StoreStats, VectorSearch,
};
pub use vector::{EmbedError, Embedder};
