//! The exit-code contract of docs/cli.md where it is easiest to break: a user who may
//! read an index but not write beside it, and inputs longer than their limit. Each
//! failure has the kind (and so the exit code) the table gives it, and a message that
//! names the path, the permission or the limit.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::Env;
use loci_api::ErrorKind;

fn exit_of(kind: ErrorKind) -> i32 {
    i32::from(kind.exit().code())
}

/// A workspace indexed by its owner, read by a user who may not write its `.loci/`:
/// `nobody` when the tests run as root (CI), else the owner with `.loci/` made 0555.
struct Reader {
    env: Env,
    as_root: bool,
}

impl Reader {
    fn new() -> Reader {
        let env = Env::new();
        env.write(&[("a.py", "def foo():\n    return 1\n")]);
        let (code, report) = env.json(&["index"]);
        assert_eq!(code, 0, "{report}");
        let as_root = rustix::process::geteuid().is_root();
        if as_root {
            // Root writes anything: drop to `nobody`, who may enter the temp dirs but
            // not write `.loci/` (0755, owned by root).
            for dir in [env.root(), env.home.path()] {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
            }
        } else {
            std::fs::set_permissions(
                env.root().join(".loci"),
                std::fs::Permissions::from_mode(0o555),
            )
            .unwrap();
        }
        Reader { env, as_root }
    }

    fn index_dir(&self) -> PathBuf {
        self.env.root().join(".loci")
    }

    fn index_path(&self) -> PathBuf {
        self.index_dir().join("index.db")
    }

    /// Runs `loci ARGS --json` as the reader.
    fn json(&self, args: &[&str]) -> (i32, serde_json::Value) {
        let out = self.command().args(args).arg("--json").output().unwrap();
        (out.status.code().unwrap_or(-1), common::parse(&out))
    }

    /// Lets the owner write `.loci/` for the length of `f`.
    fn as_owner(&self, f: impl FnOnce()) {
        let mode = |m| {
            if !self.as_root {
                std::fs::set_permissions(self.index_dir(), std::fs::Permissions::from_mode(m))
                    .unwrap();
            }
        };
        mode(0o755);
        f();
        mode(0o555);
    }

    /// A `loci` command run as the reader.
    fn command(&self) -> std::process::Command {
        let mut cmd = if self.as_root {
            let mut cmd = std::process::Command::new("setpriv");
            cmd.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
                .arg(common::bin());
            cmd
        } else {
            std::process::Command::new(common::bin())
        };
        cmd.env("LOCI_HOME", self.env.home.path())
            .env("HOME", self.env.home.path())
            .env_remove("LOCI_LOG")
            .current_dir(self.env.root());
        cmd
    }

    /// Leaves committed changes in `index.db-wal` that the main file lacks, and no
    /// `-shm`: what a writer killed mid-run leaves, once the shared memory is gone.
    fn leave_an_unfolded_log(&self) {
        use loci_store::rusqlite::{Connection, config::DbConfig};
        let conn = Connection::open(self.index_path()).unwrap();
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .unwrap();
        conn.execute_batch("PRAGMA wal_autocheckpoint=0; CREATE TABLE scratch(a);")
            .unwrap();
        drop(conn);
        let side = |suffix: &str| {
            let mut name = self.index_path().into_os_string();
            name.push(suffix);
            PathBuf::from(name)
        };
        let _ = std::fs::remove_file(side("-shm"));
        assert!(std::fs::metadata(side("-wal")).unwrap().len() > 0);
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        // Let the temp dir's removal in.
        let _ = std::fs::set_permissions(self.index_dir(), std::fs::Permissions::from_mode(0o755));
    }
}

fn message(out: &serde_json::Value) -> &str {
    out["error"]["message"].as_str().unwrap_or_default()
}

fn assert_nothing_beside(dir: &Path) {
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("index.db-"))
        .collect();
    assert!(names.is_empty(), "the reader created {names:?}");
}

#[test]
fn a_user_who_cannot_write_the_index_directory_still_runs_read_only_sql_and_graph_queries() {
    let reader = Reader::new();
    for engine in ["in-process", "worker"] {
        let (code, out) = reader.json(&["query", "SELECT 1", "--engine", engine]);
        assert_eq!(code, 0, "{engine}: {out}");
        let (code, out) = reader.json(&["query", "SELECT count(*) FROM files", "--engine", engine]);
        assert_eq!(code, 0, "{engine}: {out}");
        assert_eq!(out["rows"], serde_json::json!([[1]]), "{engine}");
    }
    let (code, out) = reader.json(&["find", "foo"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["symbols"][0]["path"], "a.py");
    let (code, out) = reader.json(&["search", "return"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["hits"][0]["line"], 2);
    let (code, out) = reader.json(&["stats"]);
    assert_eq!(code, 0, "{out}");
    // A write is still refused for what it is.
    let (code, out) = reader.json(&["query", "DELETE FROM files"]);
    assert_eq!(code, exit_of(ErrorKind::NotReadOnly), "{out}");
    assert_eq!(out["error"]["kind"], "not_read_only");
    assert_nothing_beside(&reader.index_dir());
}

#[test]
fn a_long_lived_worker_of_a_user_who_cannot_write_reads_the_owners_next_sync_whole() {
    use std::io::{BufRead, Write};
    let reader = Reader::new();
    let mut worker = reader
        .command()
        .arg("worker")
        .arg("--db")
        .arg(reader.index_path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = worker.stdin.take().unwrap();
    let stdout = worker.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<serde_json::Value>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                break;
            }
        }
    });
    let mut ask = |id: u64, sql: &str| -> serde_json::Value {
        let request = serde_json::json!({"id": id, "op": "query", "sql": sql});
        writeln!(stdin, "{request}").unwrap();
        loop {
            let answer = rx
                .recv_timeout(std::time::Duration::from_secs(20))
                .expect("the worker answers");
            if answer["id"] == id {
                return answer;
            }
        }
    };
    const COUNTS: &str = "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM symbols)";
    assert_eq!(ask(1, COUNTS)["rows"], serde_json::json!([[1, 1]]));
    // The owner adds 300 files and syncs (its run checkpoints into the main file).
    let files: Vec<(String, String)> = (0..300)
        .map(|i| (format!("b{i}.py"), format!("def f{i}():\n    return {i}\n")))
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    reader.env.write(&files);
    reader.as_owner(|| {
        let (code, out) = reader.env.json(&["sync"]);
        assert_eq!(code, 0, "{out}");
    });
    // The worker's connection read the file as immutable: it must not answer from its
    // old pages mixed with new ones, but from the file as it is now.
    let answer = ask(2, COUNTS);
    assert_eq!(answer["rows"], serde_json::json!([[301, 301]]), "{answer}");
    drop(stdin);
    let _ = worker.wait();
}

#[test]
fn status_of_an_index_this_user_cannot_write_is_unavailable_naming_the_directory() {
    let reader = Reader::new();
    let (code, out) = reader.json(&["status"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["state"], "unavailable", "{out}");
    let reason = out["reason"].as_str().unwrap();
    let dir = reader.index_dir().canonicalize().unwrap();
    assert!(
        reason.contains(&dir.display().to_string()) && reason.contains("not writable"),
        "{reason}"
    );
}

#[test]
fn an_unfolded_log_this_user_cannot_read_is_a_storage_error_naming_the_shm_file() {
    let reader = Reader::new();
    reader.leave_an_unfolded_log();
    for args in [
        &["query", "SELECT 1"][..],
        &["query", "SELECT 1", "--engine", "worker"],
        &["find", "foo"],
        &["def", "foo"],
    ] {
        let (code, out) = reader.json(args);
        assert_eq!(code, exit_of(ErrorKind::Storage), "{args:?}: {out}");
        assert_eq!(out["error"]["kind"], "storage", "{args:?}");
        let m = message(&out);
        assert!(
            m.contains("index.db-shm") && m.contains("write permission"),
            "{args:?}: {m}"
        );
        // Said once, by whichever engine.
        assert!(m.matches("read-only:").count() <= 1, "{args:?}: {m}");
    }
}

#[test]
fn patterns_and_selectors_longer_than_the_limit_are_too_long_naming_the_limit() {
    let env = Env::new();
    env.write(&[("a.py", "def foo():\n    return 1\n")]);
    let (code, report) = env.json(&["index"]);
    assert_eq!(code, 0, "{report}");
    let limit = loci_index::graph::MAX_PATTERN_BYTES;
    // 50 KB: over SQLite's own GLOB cap, which used to fail `find` as a storage error.
    let glob = "*a".repeat(25_001);
    for args in [
        &["find", &glob][..],
        &["find", &glob, "--kind", "function"],
        &["search", &glob],
        &["search", "-e", &glob],
        &["search", "foo", "--path", &glob],
        &["def", &glob],
        &["refs", &glob],
        &["callers", &glob],
        &["impact", &glob],
    ] {
        let (code, out) = env.json(args);
        assert_eq!(code, exit_of(ErrorKind::TooLong), "{:?}: {out}", &args[..1]);
        assert_eq!(out["error"]["kind"], "too_long");
        assert!(
            message(&out).contains(&limit.to_string()),
            "{}",
            message(&out)
        );
    }
    // At the limit, a glob is still a glob.
    let (code, out) = env.json(&["find", &"*o".repeat(limit / 2)]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_reader_locked_out_by_a_writer_is_busy_on_every_engine() {
    let env = Env::new();
    env.write(&[("a.py", "def foo():\n    return 1\n")]);
    let (code, report) = env.json(&["index"]);
    assert_eq!(code, 0, "{report}");
    // A writer outside WAL mode holding the file exclusively: readers wait, then give up.
    let writer = loci_store::rusqlite::Connection::open(env.root().join(".loci/index.db")).unwrap();
    writer
        .execute_batch("PRAGMA journal_mode=DELETE; BEGIN EXCLUSIVE; UPDATE files SET size = size;")
        .unwrap();
    for args in [
        &["query", "SELECT count(*) FROM files", "--timeout", "1s"][..],
        &[
            "query",
            "SELECT count(*) FROM files",
            "--timeout",
            "1s",
            "--engine",
            "worker",
        ],
        &["find", "foo"],
    ] {
        let (code, out) = env.json(args);
        assert_eq!(code, exit_of(ErrorKind::Busy), "{args:?}: {out}");
        assert_eq!(out["error"]["kind"], "busy", "{args:?}");
        assert!(message(&out).contains("locked"), "{args:?}: {out}");
    }
    writer.execute_batch("ROLLBACK").unwrap();
    let (code, out) = env.json(&["query", "SELECT count(*) FROM files"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn an_index_of_an_older_schema_is_indexing_with_a_sync_hint_not_unknown_schema() {
    let env = Env::new();
    env.write(&[("a.py", "def foo():\n    return 1\n")]);
    let (code, report) = env.json(&["index"]);
    assert_eq!(code, 0, "{report}");
    // What a reader sees between two of the first index's migrations (each commits
    // its version), or in an index an older loci wrote.
    let older = loci_store::SCHEMA_VERSION - 1;
    let db = loci_store::rusqlite::Connection::open(env.root().join(".loci/index.db")).unwrap();
    db.pragma_update(None, "user_version", older).unwrap();
    drop(db);
    for args in [&["find", "foo"][..], &["def", "foo"], &["stats"]] {
        let (code, out) = env.json(args);
        assert_eq!(code, exit_of(ErrorKind::Indexing), "{args:?}: {out}");
        assert_eq!(out["error"]["kind"], "indexing", "{args:?}");
        assert!(
            message(&out).contains(&format!("schema version {older}")),
            "{out}"
        );
        assert!(out["error"]["hint"].as_str().unwrap().contains("loci sync"));
    }
}
