//! `loci query` through the real binary: the JSON shape, row cap, bound
//! parameters, refusals (exit 5), deadlines (exit 1, kind `timeout`) and
//! both engines.

use crate::common;

use common::Env;

const HUGE_CTE: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000000) SELECT count(*) FROM c";

fn indexed() -> Env {
    let env = Env::new();
    env.write(&[
        ("src/a.rs", "pub fn alpha() {}\n"),
        ("src/b.rs", "pub fn beta() { crate::a::alpha() }\n"),
        ("src/c.rs", "pub fn gamma() {}\n"),
    ]);
    let (code, report) = env.json(&["index"]);
    assert_eq!(code, 0, "{report}");
    env
}

const ENGINES: [&str; 2] = ["in-process", "worker"];

#[test]
fn query_prints_columns_rows_truncated_and_elapsed_on_both_engines() {
    let env = indexed();
    for engine in ENGINES {
        let (code, v) = env.json(&[
            "query",
            "SELECT path FROM files ORDER BY path",
            "--engine",
            engine,
        ]);
        assert_eq!(code, 0, "{v}");
        assert_eq!(v["engine"], engine);
        assert_eq!(v["columns"], serde_json::json!(["path"]));
        assert_eq!(
            v["rows"],
            serde_json::json!([["src/a.rs"], ["src/b.rs"], ["src/c.rs"]])
        );
        assert_eq!(v["row_count"], 3);
        assert_eq!(v["truncated"], false);
        assert!(v["elapsed_ms"].is_f64(), "{v}");
    }
}

#[test]
fn max_rows_truncates_and_params_are_bound() {
    let env = indexed();
    for engine in ENGINES {
        let (code, v) = env.json(&[
            "query",
            "SELECT path FROM files",
            "--max-rows",
            "2",
            "--engine",
            engine,
        ]);
        assert_eq!(code, 0, "{v}");
        assert_eq!(
            (v["row_count"].as_u64(), v["truncated"].as_bool()),
            (Some(2), Some(true))
        );
        let (code, v) = env.json(&[
            "query",
            "SELECT count(*), :big, :blob FROM files WHERE path = :path",
            "--params",
            r#"{"path": "src/b.rs", "big": {"$int": "9223372036854775807"}, "blob": {"$blob": "AP8="}}"#,
            "--engine",
            engine,
        ]);
        assert_eq!(code, 0, "{v}");
        assert_eq!(
            v["rows"],
            serde_json::json!([[1, {"$int": "9223372036854775807"}, {"$blob": "AP8="}]])
        );
    }
}

#[test]
fn refused_and_invalid_statements_exit_5_and_leave_the_index_alone() {
    let env = indexed();
    let db = env.root().join(".loci/index.db");
    let before = std::fs::read(&db).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("copy.db");
    for engine in ENGINES {
        for (sql, kind) in [
            ("DELETE FROM files".to_string(), "not_read_only"),
            ("DROP TABLE symbols".into(), "not_read_only"),
            ("PRAGMA query_only = 0".into(), "not_read_only"),
            (
                format!("VACUUM INTO '{}'", target.display()),
                "not_read_only",
            ),
            (
                format!("ATTACH '{}' AS x", target.display()),
                "not_read_only",
            ),
            ("SELECT 1; DELETE FROM files".into(), "multiple_statements"),
            ("SELEKT 1".into(), "syntax"),
        ] {
            let (code, v) = env.json(&["query", &sql, "--engine", engine]);
            assert_eq!(code, 5, "{engine} {sql}: {v}");
            assert_eq!(v["error"]["kind"], kind, "{engine} {sql}: {v}");
            assert_eq!(v["error"]["code"], 5);
        }
    }
    assert!(!target.exists());
    assert_eq!(std::fs::read(&db).unwrap(), before, "the index changed");
    let (code, v) = env.json(&["query", "SELECT count(*) FROM files"]);
    assert_eq!((code, &v["rows"]), (0, &serde_json::json!([[3]])));
}

#[test]
fn a_deadline_exits_1_with_kind_timeout_on_both_engines() {
    let env = indexed();
    for engine in ENGINES {
        let t0 = std::time::Instant::now();
        let (code, v) = env.json(&["query", HUGE_CTE, "--timeout", "200ms", "--engine", engine]);
        assert_eq!(code, 1, "{v}");
        assert_eq!(v["error"]["kind"], "timeout", "{v}");
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(3),
            "{engine}: {:?}",
            t0.elapsed()
        );
    }
}

#[test]
fn bad_params_no_index_and_a_hidden_worker() {
    let env = indexed();
    let (code, v) = env.json(&["query", "SELECT ?", "--params", "[1"]);
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (5, Some("invalid_params")),
        "{v}"
    );
    let (code, v) = env.json(&["query", "SELECT ?, ?", "--params", "[1]"]);
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (5, Some("invalid_params")),
        "{v}"
    );
    let empty = Env::new();
    let (code, v) = empty.json(&["query", "SELECT 1"]);
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (4, Some("no_index")),
        "{v}"
    );
    let help = env.cmd().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("query") && !help.contains("worker"), "{help}");
}

#[test]
fn human_output_is_a_table_with_a_summary() {
    let env = indexed();
    let out = env
        .cmd()
        .args([
            "query",
            "SELECT path, 1 AS one FROM files ORDER BY path LIMIT 1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "path | one");
    assert_eq!(lines[1], "src/a.rs | 1");
    assert!(lines[2].starts_with("(1 row, "), "{text}");
}
