//! The integration tests of this crate, in one binary: one link instead of one per
//! file, which keeps builds and CI fast and small. Each file is a module; shared
//! helpers are the support modules below (`stores` and `pg_cluster`: the conformance
//! suite runs each store-generic test against SQLite and against a real PostgreSQL).

// Support: the stores under test and the throwaway PostgreSQL cluster.
mod pg_cluster;
mod pg_tls_cluster;
#[macro_use]
mod stores;

mod fts_ranking;
mod pg_store;
mod pg_tls;
mod pg_vectors;
mod recall_signals;
mod store;
mod store_among;
mod store_links;
mod transfer;
mod vector_cache;
