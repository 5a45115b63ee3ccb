//! A database whose name looks like an SQLite URI (`file:...?immutable=1`,
//! `?vfs=`) is opened as that exact file by every read-only open: both query
//! engines' and the store's. Its own test binary, because it changes the
//! process's working directory (a URI needs a relative name).

use std::path::Path;

use loci_query::{Query, QueryEngine, Value, WorkerConfig};
use loci_store::rusqlite::Connection;

fn make_db(path: &Path, table: &str) {
    let c = Connection::open(path).unwrap();
    c.execute_batch(&format!(
        "CREATE TABLE {table}(x); INSERT INTO {table} VALUES ('{table}'); PRAGMA user_version = {};",
        loci_store::SCHEMA_VERSION
    ))
    .unwrap();
}

fn tables(c: &Connection) -> Vec<String> {
    let mut s = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap();
    s.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn names_that_look_like_uris_open_that_exact_file_read_only() {
    let dir = tempfile::tempdir().unwrap();
    // As a URI, each of these names would open `t.db` (the decoy) instead.
    make_db(&dir.path().join("t.db"), "decoy");
    let names = [
        "file:t.db?immutable=1",
        "file:t.db?vfs=unix-none",
        "file:t.db?mode=rw",
        "file:t.db",
    ];
    for name in names {
        make_db(&dir.path().join(name), "exact");
    }
    std::env::set_current_dir(dir.path()).unwrap();
    for name in names {
        let engine = QueryEngine::in_process(Path::new(name)).unwrap();
        let r = engine
            .execute(&Query::new("SELECT x FROM sqlite_master, exact LIMIT 1"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.rows, vec![vec![Value::Text("exact".into())]], "{name}");
        let worker = QueryEngine::worker(WorkerConfig::new(
            env!("CARGO_BIN_EXE_loci-query-worker"),
            name,
        ))
        .unwrap_or_else(|e| panic!("worker {name}: {e}"));
        let r = worker
            .execute(&Query::new("SELECT x FROM exact"))
            .unwrap_or_else(|e| panic!("worker {name}: {e}"));
        assert_eq!(r.rows, vec![vec![Value::Text("exact".into())]], "{name}");
        let conn = loci_store::open_index_read_only(Path::new(name)).unwrap();
        assert_eq!(tables(&conn), vec!["exact".to_string()], "{name}");
    }
    // A missing file named like a URI is an error, not a new database.
    assert_eq!(
        QueryEngine::in_process(Path::new("file:missing.db?mode=rwc"))
            .unwrap_err()
            .kind(),
        "open"
    );
    let e = QueryEngine::worker(WorkerConfig::new(
        env!("CARGO_BIN_EXE_loci-query-worker"),
        "file:missing.db?mode=rwc",
    ))
    .unwrap_err();
    assert_eq!(e.kind(), "open");
    // The path once, not once per layer.
    assert_eq!(e.to_string().matches("cannot open").count(), 1, "{e}");
    assert!(loci_store::open_index_read_only(Path::new("file:missing.db?mode=rwc")).is_err());
    assert!(!dir.path().join("missing.db").exists());
    assert!(!dir.path().join("file:missing.db?mode=rwc").exists());
}
