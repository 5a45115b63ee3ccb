//! [`PgStore`]: a team's memories in one PostgreSQL database, each repository's under
//! its own scope, behind the same [`crate::MemoryStore`] as the SQLite store and with the
//! same behaviour. Every mutation is one `SERIALIZABLE` transaction that writes its
//! version, retried on conflicts with concurrent writers (`retry.rs`); every
//! connection has a statement timeout; connections come from a bounded pool per
//! database per process (`pool.rs`); the schema migrates on the pool's first connect
//! under an advisory lock (`migrate.rs`); TCP connections speak TLS as the URL's
//! `sslmode` says (`tls.rs`). See docs/memory.md, "The PostgreSQL store".

mod ctx;
mod entities;
mod extraction;
mod fts;
mod handle;
mod history;
mod merge;
mod migrate;
mod nul;
mod pgvector;
mod pool;
mod read;
mod retry;
mod rows;
mod schema;
mod seam;
mod tls;
mod url;
mod vectors;
mod write;

pub use handle::{PgOptions, PgStore};
pub use tls::SslMode;
pub use url::redacted;
