//! [`PgStore`]: a team's memories in one PostgreSQL database, each repository's under
//! its own scope, behind the same [`crate::MemoryStore`] as the SQLite store and with the
//! same behaviour. Every mutation is one `SERIALIZABLE` transaction that writes its
//! version, retried on conflicts with concurrent writers (`retry.rs`); every
//! connection has a statement timeout; the schema migrates on connect under an
//! advisory lock (`migrate.rs`). See docs/memory.md, "The PostgreSQL store".

mod ctx;
mod entities;
mod extraction;
mod fts;
mod handle;
mod merge;
mod migrate;
mod nul;
mod pgvector;
mod read;
mod retry;
mod rows;
mod schema;
mod seam;
mod url;
mod vectors;
mod write;

pub use handle::{PgOptions, PgStore};
pub use url::redacted;
