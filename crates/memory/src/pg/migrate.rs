//! Bringing a database's memory schema up to this build's, on connect: one transaction
//! under a transaction-scoped advisory lock, so two processes starting at once take
//! turns (the second finds the work done), and a database migrated past what this build
//! knows is refused before anything is read or written.
//!
//! A small table of applied versions (`loci_memory.schema_version`) rather than the
//! `refinery` crate: refinery 0.10 needs Rust 1.92 (the workspace builds with 1.90),
//! brings URL, time and TOML parsers for nothing loci uses, and takes no lock, so
//! two processes migrating one database at once would race; the SQLite store keeps its
//! steps the same way (a list of SQL scripts, `user_version`).

use postgres::Client;

use super::ctx::{Ctx, Db};
use super::pgvector::Pgvector;
use super::schema::{MIGRATIONS, SCHEMA};
use crate::MemoryError;

/// The advisory lock key of migrations (`"lociMEM1"` as a big-endian integer): every
/// loci process migrating the same database takes the same one.
pub(super) const LOCK_KEY: i64 = 0x6c6f_6369_4d45_4d31;

/// How long one migration statement may run, in place of the store's statement
/// timeout (which bounds a request, not a schema change): a step that rewrites the
/// memories table takes as long as the table is big, and a process starting beside one
/// that is migrating waits for its lock as long as that takes.
const MIGRATION_TIMEOUT: &str = "15min";

/// Runs the missing migrations, or refuses a newer schema; then makes pgvector ready
/// when the database can have it (`pgvector.rs`), which is what it returns.
pub(super) fn migrate(client: &mut Client, c: &Ctx) -> Result<Option<Pgvector>, MemoryError> {
    let known = MIGRATIONS.len() as i32;
    let mut tx = client.transaction().db(c)?;
    tx.batch_execute(&format!(
        "SET LOCAL statement_timeout = '{MIGRATION_TIMEOUT}'"
    ))
    .db(c)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
        .db(c)?;
    // Created only when missing: a role allowed to use an existing schema but not to
    // create one still connects.
    let has_schema: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)",
            &[&SCHEMA],
        )
        .db(c)?
        .try_get(0)
        .db(c)?;
    if !has_schema {
        tx.batch_execute(&format!("CREATE SCHEMA {SCHEMA}")).db(c)?;
    }
    let has_table: bool = tx
        .query_one(
            "SELECT to_regclass($1) IS NOT NULL",
            &[&format!("{SCHEMA}.schema_version")],
        )
        .db(c)?
        .try_get(0)
        .db(c)?;
    if !has_table {
        tx.batch_execute(&format!(
            "CREATE TABLE {SCHEMA}.schema_version (
                 version    integer PRIMARY KEY,
                 applied_at timestamptz NOT NULL DEFAULT now()
             )"
        ))
        .db(c)?;
    }
    let found: i32 = tx
        .query_one(
            &format!("SELECT coalesce(max(version), 0) FROM {SCHEMA}.schema_version"),
            &[],
        )
        .db(c)?
        .try_get(0)
        .db(c)?;
    if found > known {
        return Err(MemoryError::PgSchemaTooNew {
            target: c.target.clone(),
            found,
            known,
        });
    }
    for (step, sql) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
        let version = step as i32 + 1;
        tx.batch_execute(sql).db(c)?;
        tx.execute(
            &format!("INSERT INTO {SCHEMA}.schema_version (version) VALUES ($1)"),
            &[&version],
        )
        .db(c)?;
        tracing::info!(target: "memory", database = %c.target, version, "memory schema migrated");
    }
    let pgvector = super::pgvector::prepare(&mut tx, c)?;
    tx.commit().db(c)?;
    Ok(pgvector)
}
