//! Write attempts of every kind are refused by the guarded connection, and
//! neither the database file nor its directory changes.

use crate::common;

use common::TestDb;
use loci_query::{MAX_SQL_BYTES, Params, Query, QueryEngine, Value};

/// Statements that must be refused, with the kind each is refused as.
const WRITES: &[(&str, &str)] = &[
    ("INSERT INTO t(name) VALUES ('x')", "not_read_only"),
    (
        "INSERT INTO t(name) VALUES ('x') RETURNING id",
        "not_read_only",
    ),
    ("REPLACE INTO t(id, name) VALUES (1, 'x')", "not_read_only"),
    ("UPDATE t SET name = 'x'", "not_read_only"),
    ("DELETE FROM t", "not_read_only"),
    ("WITH a AS (SELECT 1) DELETE FROM t", "not_read_only"),
    ("DROP TABLE t", "not_read_only"),
    ("DROP INDEX t_name", "not_read_only"),
    ("CREATE TABLE u(x)", "not_read_only"),
    ("CREATE TEMP TABLE u(x)", "not_read_only"),
    ("CREATE INDEX u ON t(big)", "not_read_only"),
    ("CREATE VIEW v AS SELECT 1", "not_read_only"),
    (
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END",
        "not_read_only",
    ),
    ("ALTER TABLE t ADD COLUMN y", "not_read_only"),
    ("PRAGMA user_version = 7", "not_read_only"),
    ("PRAGMA journal_mode = WAL", "not_read_only"),
    ("PRAGMA query_only = 0", "not_read_only"),
    ("PRAGMA query_only = OFF", "not_read_only"),
    ("PRAGMA writable_schema = 1", "not_read_only"),
    ("PRAGMA main.user_version = 7", "not_read_only"),
    ("REINDEX", "not_read_only"),
    ("ANALYZE", "not_read_only"),
    ("VACUUM", "not_read_only"),
    ("BEGIN IMMEDIATE", "not_read_only"),
    ("SAVEPOINT s", "not_read_only"),
    ("SELECT load_extension('/tmp/nope')", "not_read_only"),
    ("SELECT 1; DELETE FROM t", "multiple_statements"),
    ("SELECT 1; SELECT 2", "multiple_statements"),
    ("DELETE FROM t; SELECT 1", "not_read_only"),
];

#[test]
fn write_attempts_of_every_kind_are_refused_and_nothing_changes() {
    let db = TestDb::small();
    let elsewhere = tempfile::tempdir().unwrap();
    let vacuum_target = elsewhere.path().join("x.db");
    let attach_target = elsewhere.path().join("y.db");
    let before = db.snapshot();
    let engine = QueryEngine::in_process(&db.path).unwrap();
    let mut cases: Vec<(String, &str)> = WRITES.iter().map(|(s, k)| (s.to_string(), *k)).collect();
    cases.push((
        format!("VACUUM INTO '{}'", vacuum_target.display()),
        "not_read_only",
    ));
    cases.push((
        format!("ATTACH '{}' AS y", attach_target.display()),
        "not_read_only",
    ));
    cases.push((
        format!("ATTACH 'file:{}?mode=rwc' AS y", attach_target.display()),
        "not_read_only",
    ));
    cases.push(("DETACH main".into(), "not_read_only"));
    for (sql, kind) in &cases {
        let err = engine.execute(&Query::new(sql.as_str())).unwrap_err();
        assert_eq!(err.kind(), *kind, "{sql}: {err}");
        assert!(err.is_invalid_input(), "{sql}");
        // The connection is still guarded and usable after every refusal.
        let r = engine.execute(&Query::new("PRAGMA query_only")).unwrap();
        assert_eq!(r.rows, vec![vec![Value::Integer(1)]], "after {sql}");
    }
    assert!(!vacuum_target.exists() && !attach_target.exists());
    assert_eq!(common::snapshot(elsewhere.path()).len(), 0);
    let r = engine
        .execute(&Query::new("SELECT count(*) FROM t"))
        .unwrap();
    assert_eq!(r.rows, vec![vec![Value::Integer(1)]]);
    drop(engine);
    assert_eq!(db.snapshot(), before, "the database directory changed");
}

#[test]
fn introspection_pragmas_and_reads_are_allowed() {
    let db = TestDb::small();
    let engine = QueryEngine::in_process(&db.path).unwrap();
    for sql in [
        "PRAGMA table_info(t)",
        "PRAGMA index_list('t')",
        "PRAGMA user_version",
        "SELECT name FROM pragma_table_info('t')",
        "SELECT name FROM sqlite_master",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) SELECT sum(x) FROM c",
        "SELECT 1; -- a trailing comment is not a statement",
        "EXPLAIN SELECT * FROM t",
    ] {
        engine
            .execute(&Query::new(sql))
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

#[test]
fn invalid_statements_name_the_cause() {
    let db = TestDb::small();
    let engine = QueryEngine::in_process(&db.path).unwrap();
    let kind = |q: Query| engine.execute(&q).unwrap_err().kind();
    assert_eq!(kind(Query::new("SELEC 1")), "syntax");
    assert_eq!(kind(Query::new("SELECT * FROM nope")), "syntax");
    assert_eq!(
        kind(Query::new(format!(
            "SELECT '{}'",
            "x".repeat(MAX_SQL_BYTES)
        ))),
        "too_long"
    );
    assert_eq!(kind(Query::new("SELECT ?")), "invalid_params");
    assert_eq!(
        kind(Query::new("SELECT ?").params(Params::Positional(vec![Value::Null, Value::Null]))),
        "invalid_params"
    );
    assert_eq!(
        kind(Query::new("SELECT :a").params(Params::Named(vec![("b".into(), Value::Null)]))),
        "invalid_params"
    );
}

#[test]
fn values_and_parameters_come_back_exact_in_process() {
    let db = TestDb::small();
    let engine = QueryEngine::in_process(&db.path).unwrap();
    let r = engine
        .execute(&Query::new("SELECT id, name, data, big FROM t"))
        .unwrap();
    assert_eq!(r.columns, ["id", "name", "data", "big"]);
    assert_eq!(
        r.rows,
        vec![vec![
            Value::Integer(1),
            Value::Text("one".into()),
            Value::Blob(vec![0, 255]),
            Value::Integer(i64::MAX)
        ]]
    );
    let p = Params::from_json(
        r#"{"a": {"$int": "-9223372036854775808"}, ":b": {"$blob": "AAEC"}, "c": 0.1}"#,
    )
    .unwrap();
    let r = engine
        .execute(&Query::new("SELECT :a, :b, :c").params(p))
        .unwrap();
    assert_eq!(
        r.rows[0],
        vec![
            Value::Integer(i64::MIN),
            Value::Blob(vec![0, 1, 2]),
            Value::Real(0.1)
        ]
    );
}

#[test]
fn max_rows_truncates() {
    let db = TestDb::rows(50);
    let engine = QueryEngine::in_process(&db.path).unwrap();
    let r = engine
        .execute(&Query::new("SELECT id FROM r").max_rows(10))
        .unwrap();
    assert_eq!((r.rows.len(), r.truncated), (10, true));
    let r = engine
        .execute(&Query::new("SELECT id FROM r").max_rows(50))
        .unwrap();
    assert_eq!((r.rows.len(), r.truncated), (50, false));
}

#[test]
fn a_missing_database_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.db");
    let err = QueryEngine::in_process(&path).unwrap_err();
    assert_eq!(err.kind(), "open");
    assert!(!path.exists());
}
