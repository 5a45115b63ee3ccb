//! An interrupted first index is a resumable state, not corruption; resuming it takes
//! the first-index path again; and a background run outlives the gate that started it.
//! Real processes throughout: the real `loci`, real signals, real SQLite files.

use crate::lifecycle_support;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use lifecycle_support::*;
use loci_store::rusqlite::{self, OpenFlags};

/// Files in the generated tree: several of the writer's 1,000-file transactions, so a
/// run can be stopped after the first one committed and well before the end.
const FILES: usize = 2500;

/// A tree of `FILES` Python modules that import and call each other.
fn big_tree() -> Vec<(String, String)> {
    (0..FILES)
        .map(|i| {
            let next = (i + 1) % FILES;
            let far = (i * 7 + 3) % FILES;
            let mut text = format!("from m{next} import f{next}_0\nfrom m{far} import K{far}\n\n");
            for f in 0..6 {
                text.push_str(&format!(
                    "def f{i}_{f}(x):\n    \"\"\"Function {f} of module {i}.\"\"\"\n    y = f{next}_0(x) + {f}\n    return K{far}(y).run()\n\n"
                ));
            }
            text.push_str(&format!(
                "class K{i}:\n    def __init__(self, v):\n        self.v = v\n\n    def run(self):\n        return f{i}_0(self.v)\n"
            ));
            (format!("pkg{}/m{i}.py", i % 40), text)
        })
        .collect()
}

fn big_ws() -> Ws {
    let files = big_tree();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    Ws::new(&refs)
}

fn read_only(db: &Path) -> Option<rusqlite::Connection> {
    rusqlite::Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).ok()
}

/// `(files written, meta.state)` of the index as a reader sees it now.
fn progress(db: &Path) -> Option<(i64, Option<String>)> {
    let conn = read_only(db)?;
    let files = conn
        .query_row("SELECT count(*) FROM files", [], |r| r.get(0))
        .ok()?;
    let state = conn
        .query_row("SELECT value FROM meta WHERE key = 'state'", [], |r| {
            r.get(0)
        })
        .ok();
    Some((files, state))
}

/// Starts `loci index` and stops it with `signal` once its first transactions are
/// committed (at least 1,000 files written) and the run is still unfinished.
fn interrupt_first_index(ws: &Ws, signal: i32) {
    let mut child = ws
        .cmd()
        .args(["index", "--json"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let db = ws.index_db();
    let mid_run = wait_for(Duration::from_secs(120), || {
        progress(&db)
            .filter(|(files, state)| *files >= 1000 && state.as_deref() == Some("indexing"))
    });
    unsafe { libc_kill(child.id() as i32, signal) };
    let _ = child.wait();
    let (files, state) = progress(&db).expect("the interrupted index does not open");
    assert!(
        mid_run.is_some() && state.as_deref() != Some("complete"),
        "the run was not stopped mid-way ({files} files, state {state:?}): the tree is too small"
    );
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

const SIGINT: i32 = 2;
const SIGKILL: i32 = 9;
const SIGTERM: i32 = 15;

/// The dump of a fresh index of a copy of `ws`'s tree (without its `.loci/`).
fn fresh_dump(ws: &Ws) -> String {
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&ws.root(), copy.path());
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(bin())
        .args(["index", "--json"])
        .arg(copy.path())
        .env("LOCI_HOME", home.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    dump(copy.path())
}

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().unwrap().is_dir() {
            if e.file_name() != ".loci" {
                std::fs::create_dir_all(&dst).unwrap();
                copy_tree(&src, &dst);
            }
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// A workspace holding a copy of `ws`'s index (checkpointed) with a page in the middle
/// overwritten: it opens, and `quick_check` fails.
fn damaged_copy(ws: &Ws) -> Ws {
    let copy = Ws::new(&[("a.py", "x = 1\n")]);
    let db = copy.index_db();
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    for suffix in ["", "-wal"] {
        let from = format!("{}{suffix}", ws.index_db().display());
        if Path::new(&from).exists() {
            std::fs::copy(&from, format!("{}{suffix}", db.display())).unwrap();
        }
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    let page: u64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    let mut bytes = std::fs::read(&db).unwrap();
    let pages = bytes.len() as u64 / page;
    let at = (pages / 2 * page) as usize;
    bytes[at..at + page as usize].fill(0xA5);
    std::fs::write(&db, bytes).unwrap();
    copy
}

fn dump(root: &Path) -> String {
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
    loci_index::dump(&conn).unwrap()
}

#[test]
fn killed_first_index_is_resumable_and_the_gate_with_auto_create_resumes_it() {
    let ws = big_ws();
    interrupt_first_index(&ws, SIGKILL);

    // Not corrupt: no usable index yet, and nothing running; the state says how to go on.
    let status = ws.status();
    assert_eq!(state(&status), "unindexed", "{status}");
    assert_eq!(status["facts"]["interrupted"], true, "{status}");
    assert!(
        status["hint"].as_str().unwrap().contains("loci sync"),
        "{status}"
    );

    // The same interrupted index with a damaged page is corrupt: even with consent to
    // create, the gate neither resumes nor touches it.
    let damaged = damaged_copy(&ws);
    let before = std::fs::read(damaged.index_db()).unwrap();
    let (answer, _) = damaged.gate(&["--session", "s1"], &[("LOCI_LIFECYCLE_AUTO_CREATE", "1")]);
    assert_eq!(state(&answer), "corrupt", "{answer}");
    assert!(answer.get("started").is_none(), "{answer}");
    assert_eq!(std::fs::read(damaged.index_db()).unwrap(), before);

    // Without consent to create, the gate only says so, once.
    let (off, _) = ws.gate(&["--session", "s1"], &[]);
    assert_eq!(state(&off), "unindexed", "{off}");
    assert_eq!(notice_ids(&off), ["interrupted"]);
    assert!(off.get("started").is_none(), "{off}");

    // With it, the gate resumes the index in the background.
    let (on, _) = ws.gate(&["--session", "s2"], &[("LOCI_LIFECYCLE_AUTO_CREATE", "1")]);
    assert_eq!(state(&on), "indexing", "{on}");
    assert_eq!(on["started"]["purpose"], "index", "{on}");
    assert_eq!(notice_ids(&on), ["indexing-resumed"]);
    let status = ws.status();
    assert_eq!(state(&status), "clean", "{status}");
    assert_eq!(status["last_run"]["result"], "ok", "{status}");
    assert_eq!(dump(&ws.root()), fresh_dump(&ws));
}

#[test]
fn sync_on_an_interrupted_first_index_takes_the_first_index_path_again() {
    let ws = big_ws();
    interrupt_first_index(&ws, SIGINT);
    let status = ws.status();
    assert_eq!(state(&status), "unindexed", "{status}");
    assert_eq!(status["facts"]["interrupted"], true, "{status}");

    let out = ws.cmd().args(["sync", "--json"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let report = parse(&out);
    // Every file goes through the bulk load, resolution from memory and the side-built
    // search index, as a rebuild's would: none through the incremental path.
    assert_eq!(report["first_index"], true, "{report}");
    assert_eq!(report["restarted_first_index"], true, "{report}");
    assert_eq!(report["files_parsed"], FILES, "{report}");
    assert_eq!(report["files_resolved"], FILES, "{report}");
    assert_eq!(state(&ws.status()), "clean");
    assert_eq!(dump(&ws.root()), fresh_dump(&ws));

    // A complete index is never started over: the next runs are incremental.
    let again = parse(&ws.cmd().args(["sync", "--json"]).output().unwrap());
    assert_eq!(again["first_index"], false, "{again}");
    assert_eq!(again["files_parsed"], 0, "{again}");
}

#[test]
fn killing_the_gate_after_it_answers_does_not_kill_the_background_run() {
    let ws = Ws::new(SOURCES);
    // A run that waits, past the gate's answer and death, until the test lets it go.
    let slow = ws.script(
        "loci-slow",
        "echo $$ > \"$SCRATCH/run.pid\"\nwhile [ ! -e \"$SCRATCH/go\" ]; do sleep 0.05; done\nexec \"$LOCI\" \"$@\"",
    );
    let mut gate = ws
        .cmd()
        .args(["gate", "--json", "--session", "s1"])
        .env("LOCI_LIFECYCLE_AUTO_CREATE", "1")
        .env("LOCI_LIFECYCLE_EXECUTABLE", &slow)
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut text = String::new();
    gate.stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let answer: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(state(&answer), "indexing", "{answer}");
    let run: i32 = wait_for(Duration::from_secs(10), || {
        std::fs::read_to_string(ws.scratch_file("run.pid"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
    })
    .expect("the run never started");
    // The host's hook timeout: the gate's process group is terminated, then killed.
    let group = gate.id() as i32;
    unsafe { libc_kill(-group, SIGTERM) };
    let ended = wait_for(Duration::from_secs(10), || gate.try_wait().unwrap());
    unsafe { libc_kill(-group, SIGKILL) };
    let _ = gate.wait();
    assert!(
        ended.is_some() || !alive(group),
        "the gate outlived SIGTERM"
    );
    assert!(alive(run), "the run died with its gate");

    // Meanwhile later gates see the run in flight and start nothing.
    let (later, _) = ws.gate_no_wait(&["--session", "s2"], &[("LOCI_LIFECYCLE_AUTO_CREATE", "1")]);
    assert_eq!(state(&later), "indexing", "{later}");
    assert!(
        later.get("started").is_none(),
        "a second run started: {later}"
    );

    std::fs::write(ws.scratch_file("go"), "").unwrap();
    ws.wait_for_owners();
    let status = ws.status();
    assert_eq!(state(&status), "clean", "{status}");
    assert_eq!(status["last_run"]["result"], "ok", "{status}");
    assert_eq!(status["last_run"]["purpose"], "index", "{status}");
}
