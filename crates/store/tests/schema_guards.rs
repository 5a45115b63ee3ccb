//! What an index file must be before loci touches it. A file loci refuses (a schema
//! version it does not know, negative or newer; a directory) is
//! refused by the writer's open and the read-only open alike, with an error naming the
//! path, and is left byte for byte as it was: no migration, no `journal_mode` switch.

use std::path::{Path, PathBuf};

use loci_store::rusqlite::Connection;
use loci_store::{StoreError, open_index, open_index_read_only};

/// A temp dir with an index path in it.
fn index_path() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".loci").join("index.db");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    (dir, path)
}

/// A database in rollback-journal mode (`journal_mode=DELETE`) with one table and
/// `user_version` set to `version`.
fn database_with_version(path: &Path, version: i64) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = DELETE; CREATE TABLE t (x); INSERT INTO t VALUES (1);",
    )
    .unwrap();
    conn.pragma_update(None, "user_version", version).unwrap();
}

/// Every file in the index's directory with its bytes: what must not change.
fn snapshot(path: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
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

type Open = fn(&Path) -> Result<Connection, StoreError>;
const OPENS: [(&str, Open); 2] = [("writer", open_index), ("read-only", open_index_read_only)];

#[test]
fn unknown_schema_versions_are_refused_by_every_open_and_left_untouched() {
    for version in [
        -1,
        -7,
        i64::from(i32::MIN),
        loci_store::SCHEMA_VERSION + 1,
        99,
    ] {
        for (open_name, open) in OPENS {
            let (_dir, path) = index_path();
            database_with_version(&path, version);
            let before = snapshot(&path);
            match open(&path) {
                Err(ref e @ StoreError::UnknownSchema { found, .. }) => {
                    assert_eq!(found, version, "{open_name}");
                    let message = e.to_string();
                    assert!(
                        message.contains(&path.display().to_string())
                            && message.contains(&format!("version {version}")),
                        "{open_name}: {message}"
                    );
                }
                other => panic!("{open_name} on version {version}: {:?}", other.map(|_| ())),
            }
            assert!(
                snapshot(&path) == before,
                "{open_name} changed a version-{version} file"
            );
            // Still in rollback-journal mode, still the same rows.
            let conn = Connection::open(&path).unwrap();
            let mode: String = conn
                .query_row("PRAGMA journal_mode", [], |r| r.get(0))
                .unwrap();
            assert_eq!(mode, "delete", "{open_name}");
            let v: i64 = conn
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .unwrap();
            assert_eq!(v, version);
        }
    }
}

#[test]
fn a_directory_at_the_index_path_is_the_same_clear_error_for_every_open() {
    let mut messages = Vec::new();
    for (open_name, open) in OPENS {
        let (_dir, path) = index_path();
        std::fs::create_dir(&path).unwrap();
        let before = snapshot(&path);
        match open(&path) {
            Err(e @ StoreError::NotAFile { .. }) => {
                let message = e.to_string();
                assert!(
                    message.contains(&path.display().to_string())
                        && message.contains("is a directory"),
                    "{open_name}: {message}"
                );
                messages.push(message.replace(&path.display().to_string(), "<path>"));
            }
            other => panic!("{open_name}: {:?}", other.map(|_| ())),
        }
        assert!(
            snapshot(&path) == before,
            "{open_name} changed the directory"
        );
        assert!(std::fs::read_dir(&path).unwrap().next().is_none());
    }
    assert_eq!(messages[0], messages[1]);
}
