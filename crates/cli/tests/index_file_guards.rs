//! What `loci` does with an index file it must not use: a schema version it does not
//! know (negative, or newer), a file that is not a SQLite database, a directory. Every
//! command, `loci index` and the readers alike, refuses it with a storage error (exit
//! 10) naming the path, and the file is left byte for byte as it was.

use crate::common;

use std::path::{Path, PathBuf};

use common::Env;
use loci_store::rusqlite::Connection;

/// Every command that opens the index, readers and the writer.
const COMMANDS: &[&[&str]] = &[
    &["index"],
    &["find", "main_fn"],
    &["stats"],
    &["outline", "main.rs"],
    &["search", "main_fn"],
    &["query", "SELECT 1"],
    &["query", "SELECT 1", "--engine", "worker"],
];

fn indexed() -> Env {
    let env = Env::new();
    env.write(&[("main.rs", "fn main_fn() {}\n")]);
    let (code, report) = env.json(&["index"]);
    assert_eq!(code, 0, "{report}");
    env
}

fn db(env: &Env) -> PathBuf {
    loci_store::index_path_for(env.root())
}

/// Every file in `.loci/` but the write lock's record, with its bytes.
fn snapshot(path: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != "index.lock")
        .map(|e| {
            let bytes = if e.file_type().unwrap().is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                b"<dir>".to_vec()
            };
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    out.sort();
    out
}

/// Runs every command; each must fail with exit 10 and a message containing `says`
/// and the index path, with `.loci/` unchanged.
fn every_command_refuses(env: &Env, says: &str, kinds: &[&str]) {
    let path = db(env);
    let before = snapshot(&path);
    for args in COMMANDS {
        let (code, out) = env.json(args);
        let error = &out["error"];
        let message = error["message"].as_str().unwrap_or_default();
        assert_eq!(code, 10, "{args:?}: {out}");
        assert!(
            kinds.contains(&error["kind"].as_str().unwrap_or_default()),
            "{args:?}: {out}"
        );
        assert!(
            message.contains(says) && message.contains(&path.display().to_string()),
            "{args:?}: {out}"
        );
        assert!(
            snapshot(&path) == before,
            "{args:?} changed {}",
            path.display()
        );
    }
}

/// Rewrites the index in rollback-journal mode with `user_version = version`.
fn set_version_in_delete_mode(env: &Env, version: i64) {
    let conn = Connection::open(db(env)).unwrap();
    conn.execute_batch("PRAGMA journal_mode = DELETE").unwrap();
    conn.pragma_update(None, "user_version", version).unwrap();
}

fn journal_mode(env: &Env) -> String {
    Connection::open(db(env))
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_negative_schema_version_is_refused_by_index_and_left_untouched() {
    let env = indexed();
    set_version_in_delete_mode(&env, -1);
    let before = snapshot(&db(&env));
    for args in [&["index"][..], &["find", "main_fn"], &["stats"]] {
        let (code, out) = env.json(args);
        assert_eq!(code, 10, "{args:?}: {out}");
        assert_eq!(out["error"]["kind"], "unknown_schema", "{args:?}: {out}");
        let message = out["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("schema version -1")
                && message.contains(&db(&env).display().to_string()),
            "{message}"
        );
        assert!(snapshot(&db(&env)) == before, "{args:?} wrote into it");
    }
    assert_eq!(journal_mode(&env), "delete");
}

#[test]
fn a_future_schema_in_rollback_journal_mode_is_refused_without_switching_to_wal() {
    let env = indexed();
    set_version_in_delete_mode(&env, 99);
    let before = snapshot(&db(&env));
    let (code, out) = env.json(&["index"]);
    assert_eq!(code, 10, "{out}");
    assert_eq!(out["error"]["kind"], "unknown_schema", "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("schema version 99"),
        "{out}"
    );
    assert!(snapshot(&db(&env)) == before, "loci index changed the file");
    assert_eq!(journal_mode(&env), "delete");
}

/// Deletes the index and its WAL files, leaving `.loci/` with its lock record.
fn remove_index(env: &Env) {
    let path = db(env);
    std::fs::remove_file(&path).unwrap();
    for sidecar in ["index.db-wal", "index.db-shm"] {
        let _ = std::fs::remove_file(path.with_file_name(sidecar));
    }
}

#[test]
fn a_file_that_is_not_a_database_is_a_storage_error_for_every_command() {
    let env = indexed();
    remove_index(&env);
    std::fs::write(db(&env), "garbage, not SQLite\n".repeat(100)).unwrap();
    every_command_refuses(&env, "not a database", &["storage", "open"]);
}

#[test]
fn a_directory_at_the_index_path_is_a_storage_error_for_every_command() {
    let env = indexed();
    remove_index(&env);
    std::fs::create_dir(db(&env)).unwrap();
    every_command_refuses(&env, "is a directory", &["storage", "open"]);
}
