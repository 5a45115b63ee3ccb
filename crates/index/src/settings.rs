//! The run's stored settings: the crate map, the module configs and the resolution
//! rules' version. A change to one marks the files whose edges depend on it for
//! re-resolution, in the transaction that stores it.

use rusqlite::Connection;

use crate::meta::{meta_get, meta_set};
use crate::{Lang, MetaKey, crates, module_configs, resolve, walk};

/// Brings the stored crate map up to date with the walked manifests; when it changed,
/// marks every Rust file for re-resolution in the same transaction.
pub(crate) fn refresh_crates(
    conn: &mut Connection,
    manifests: &[walk::Found],
) -> rusqlite::Result<crates::Refreshed> {
    let tx = conn.transaction()?;
    let refreshed = crates::refresh(&tx, manifests)?;
    if refreshed.changed {
        tx.execute(
            "UPDATE files SET resolved = 0 WHERE resolved = 1 AND lang = ?1",
            [Lang::Rust.name()],
        )?;
    }
    tx.commit()?;
    Ok(refreshed)
}

/// Whether the stored edges were made by other resolution rules than this build's
/// ([`resolve::RULES_VERSION`]); an index from before rules had a version counts as other.
pub(crate) fn rules_outdated(conn: &Connection) -> rusqlite::Result<bool> {
    Ok(meta_get(conn, MetaKey::ResolverRules)?.as_deref()
        != Some(resolve::RULES_VERSION.to_string().as_str()))
}

/// Records this build's resolution rules; when the stored edges were made by others,
/// marks every file for re-resolution in the same transaction. Whether it wrote.
pub(crate) fn refresh_rules(conn: &mut Connection) -> rusqlite::Result<bool> {
    if !rules_outdated(conn)? {
        return Ok(false);
    }
    let tx = conn.transaction()?;
    tx.execute("UPDATE files SET resolved = 0 WHERE resolved = 1", [])?;
    meta_set(
        &tx,
        MetaKey::ResolverRules,
        &resolve::RULES_VERSION.to_string(),
    )?;
    tx.commit()?;
    Ok(true)
}

/// Brings the stored module settings (tsconfig, go.mod) up to date; when the
/// TypeScript ones changed, marks every JavaScript/TypeScript file for re-resolution,
/// when the Go modules changed every Go file, in the same transaction.
pub(crate) fn refresh_configs(
    conn: &mut Connection,
    files: &[walk::Found],
) -> rusqlite::Result<module_configs::Refreshed> {
    let tx = conn.transaction()?;
    let refreshed = module_configs::refresh(&tx, files)?;
    let mut langs = Vec::new();
    if refreshed.ts_changed {
        langs.extend([Lang::JavaScript, Lang::TypeScript, Lang::Tsx]);
    }
    if refreshed.go_changed {
        langs.push(Lang::Go);
    }
    for lang in langs {
        tx.execute(
            "UPDATE files SET resolved = 0 WHERE resolved = 1 AND lang = ?1",
            [lang.name()],
        )?;
    }
    tx.commit()?;
    Ok(refreshed)
}
