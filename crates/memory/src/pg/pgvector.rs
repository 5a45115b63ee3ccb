//! pgvector, when the database has it: found (or created) on connect, under the
//! migrations' advisory lock, so vector recall asks the database for its k-NN instead
//! of reading every vector into loci.
//!
//! The step runs after the numbered migrations (`schema.rs`), in their transaction:
//! with the extension installed (or installable by this role) and at least version 0.5
//! (HNSW), `embeddings` gets an `embedding
//! vector` column beside the `real[]` one, filled from it, and one HNSW index
//! (cosine) per dimension in use, partial on `dim` since one column holds every
//! model's vectors. Without pgvector the step changes nothing and the exact cosine in
//! loci answers; since the extension may be installed after the database was migrated,
//! every connect checks again (a few catalog reads) and completes the step then.

use postgres::Transaction;

use super::ctx::{Ctx, Db};
use super::schema::SCHEMA;
use crate::MemoryError;

/// The oldest pgvector with HNSW indexes.
const MIN_VERSION: (u32, u32) = (0, 5);
/// The largest dimension pgvector's HNSW index takes for `vector`.
pub(super) const MAX_INDEXED_DIM: i32 = 2000;

/// pgvector as this database has it: where its type and operators live, and whether
/// its HNSW scan can continue past rows a filter drops (`hnsw.iterative_scan`, 0.8).
#[derive(Debug, Clone)]
pub(super) struct Pgvector {
    /// The schema the extension was created in, quoted for SQL.
    pub(super) schema: String,
    /// 0.8 or newer: `SET LOCAL hnsw.iterative_scan` is known.
    pub(super) iterative_scan: bool,
}

impl Pgvector {
    /// The `vector(dim)` type, qualified.
    pub(super) fn ty(&self, dim: i32) -> String {
        format!("{}.vector({dim})", self.schema)
    }

    /// The cosine-distance operator, qualified.
    pub(super) fn cosine(&self) -> String {
        format!("OPERATOR({}.<=>)", self.schema)
    }
}

/// Makes pgvector ready when the database can have it, inside the migrations'
/// transaction: `None` (the exact fallback) when the extension is not available, older
/// than 0.5, or may not be created by this role.
pub(super) fn prepare(tx: &mut Transaction<'_>, c: &Ctx) -> Result<Option<Pgvector>, MemoryError> {
    let found = match installed(tx, c)? {
        Some(found) => Some(found),
        None => create(tx, c)?,
    };
    let Some((version, schema)) = found else {
        return Ok(None);
    };
    let parsed = parse_version(&version);
    if parsed < MIN_VERSION {
        tracing::info!(target: "memory", database = %c.target, version, "pgvector older than 0.5 (no HNSW): exact vector recall");
        return Ok(None);
    }
    let pv = Pgvector {
        schema: quote_ident(&schema),
        iterative_scan: parsed >= (0, 8),
    };
    let has_column: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns
                 WHERE table_schema = $1 AND table_name = 'embeddings' AND column_name = 'embedding')",
            &[&SCHEMA],
        )
        .db(c)?
        .try_get(0)
        .db(c)?;
    if !has_column {
        tx.batch_execute(&format!(
            "ALTER TABLE {SCHEMA}.embeddings ADD COLUMN embedding {}.vector;
             UPDATE {SCHEMA}.embeddings SET embedding = vector::{}.vector;",
            pv.schema, pv.schema
        ))
        .db(c)?;
    }
    let dims: Vec<i32> = tx
        .query(
            &format!("SELECT DISTINCT dim FROM {SCHEMA}.embeddings"),
            &[],
        )
        .db(c)?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()
        .db(c)?;
    for dim in dims {
        ensure_index(tx, c, &pv, dim)?;
    }
    Ok(Some(pv))
}

/// The HNSW index of `dim`-dimension vectors, created when missing (the caller holds
/// the migrations' advisory lock, so two writers do not create it at once).
pub(super) fn ensure_index(
    tx: &mut Transaction<'_>,
    c: &Ctx,
    pv: &Pgvector,
    dim: i32,
) -> Result<(), MemoryError> {
    if !(1..=MAX_INDEXED_DIM).contains(&dim) {
        return Ok(());
    }
    tx.batch_execute(&format!(
        "CREATE INDEX IF NOT EXISTS embeddings_hnsw_{dim} ON {SCHEMA}.embeddings
         USING hnsw ((embedding::{ty}) {schema}.vector_cosine_ops) WHERE dim = {dim}",
        ty = pv.ty(dim),
        schema = pv.schema,
    ))
    .db(c)
}

/// The installed extension's version and schema.
fn installed(tx: &mut Transaction<'_>, c: &Ctx) -> Result<Option<(String, String)>, MemoryError> {
    tx.query_opt(
        "SELECT e.extversion, n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
         WHERE e.extname = 'vector'",
        &[],
    )
    .db(c)?
    .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
    .transpose()
    .db(c)
}

/// Creates the extension in loci's schema when the server has it; a role that may not
/// (pgvector is not a trusted extension: a superuser, or the database's owner once an
/// administrator installed it) keeps the exact fallback, logged.
fn create(tx: &mut Transaction<'_>, c: &Ctx) -> Result<Option<(String, String)>, MemoryError> {
    let available: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')",
            &[],
        )
        .db(c)?
        .try_get(0)
        .db(c)?;
    if !available {
        return Ok(None);
    }
    let mut sp = tx.savepoint("loci_pgvector").db(c)?;
    match sp.batch_execute(&format!(
        "CREATE EXTENSION IF NOT EXISTS vector SCHEMA {SCHEMA}"
    )) {
        Ok(()) => sp.commit().db(c)?,
        Err(e) => {
            tracing::warn!(target: "memory", database = %c.target, error = %e, "pgvector is available but could not be created: exact vector recall");
            sp.rollback().db(c)?;
            return Ok(None);
        }
    }
    installed(tx, c)
}

/// `"0.8.2"` as `(0, 8)`; anything unreadable as `(0, 0)`.
fn parse_version(v: &str) -> (u32, u32) {
    let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// `name` as a quoted SQL identifier.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_major_and_minor() {
        assert_eq!(parse_version("0.8.2"), (0, 8));
        assert!(parse_version("0.4.4") < MIN_VERSION);
        assert!(parse_version("0.10.0") >= (0, 8));
        assert_eq!(parse_version("x"), (0, 0));
    }
}
