//! Many threads on one workspace handle while the index changes under them: no reader
//! ever errors, answers during a first index are flagged partial, and a rebuild is
//! followed (the pool reopens on the new file).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use loci_api::graph::{Direction, FindRequest, TraversalRequest, find, traverse};
use loci_api::{ErrorKind, Located, ReadOptions, Workspace};

fn write_tree(root: &Path, files: usize) {
    std::fs::create_dir_all(root.join("src")).unwrap();
    let mut lib = String::from("pub fn target() {}\n");
    for i in 0..files {
        lib.push_str(&format!("pub mod m{i};\n"));
        std::fs::write(
            root.join(format!("src/m{i}.rs")),
            format!("use crate::target;\npub fn f{i}() {{ target(); }}\n"),
        )
        .unwrap();
    }
    std::fs::write(root.join("src/lib.rs"), lib).unwrap();
}

fn index(root: &Path) {
    loci_index::index_workspace(
        &loci_index::IndexOptions::new(root),
        &loci_index::NoProgress,
    )
    .unwrap();
}

fn handle(root: &Path) -> Arc<Workspace> {
    Arc::new(Workspace::new(Located {
        root: root.to_path_buf(),
        index_path: loci_store::index_path_for(root),
        decider: loci_lifecycle::state::Decider::Marker,
    }))
}

fn find_req(pattern: &str) -> FindRequest {
    FindRequest {
        pattern: pattern.into(),
        kind: None,
        lang: None,
        page: Default::default(),
    }
}

/// Readers on 8 threads while `change` runs; returns (reads, partial answers).
fn read_while(ws: &Arc<Workspace>, change: impl FnOnce()) -> (usize, usize) {
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let partial = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (ws, stop, reads, partial) =
                (ws.clone(), stop.clone(), reads.clone(), partial.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let answer = if t % 2 == 0 {
                        find(&ws, &find_req("f*"), &ReadOptions::default()).map(|p| p.index)
                    } else {
                        let req = TraversalRequest {
                            target: "target".into(),
                            include_name_only: false,
                            depth: Some(2),
                            include_unresolved: false,
                            path: None,
                            edges: None,
                            group_by: None,
                            page: Default::default(),
                        };
                        traverse(&ws, Direction::Callers, &req, &ReadOptions::default())
                            .map(|p| p.index)
                    };
                    match answer {
                        Ok(index) => {
                            if index.is_partial() {
                                partial.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        // Before the first file exists, or before its schema is
                        // committed, the answer is "no index yet"/"indexing", never
                        // a storage error.
                        Err(e) if matches!(e.kind, ErrorKind::NoIndex | ErrorKind::Indexing) => {}
                        // A selector that names nothing yet, while the first index
                        // has not written it.
                        Err(e) if e.kind == ErrorKind::NotFound => {}
                        Err(e) => panic!("reader failed: {e:?}"),
                    }
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    change();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    (
        reads.load(Ordering::Relaxed),
        partial.load(Ordering::Relaxed),
    )
}

#[test]
fn readers_on_one_handle_never_fail_during_a_first_index_a_sync_and_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), 1500);
    let ws = handle(dir.path());

    // A first index: answers taken while it runs are flagged partial.
    let (reads, partial) = read_while(&ws, || index(dir.path()));
    assert!(reads > 0);
    assert!(
        partial > 0,
        "no answer was flagged partial during the first index ({reads} reads)"
    );

    // A sync that changes many files.
    for i in 0..300 {
        std::fs::write(
            dir.path().join(format!("src/m{i}.rs")),
            format!(
                "use crate::target;\npub fn f{i}() {{ target(); target(); }}\npub fn g{i}() {{}}\n"
            ),
        )
        .unwrap();
    }
    let (reads, _) = read_while(&ws, || index(dir.path()));
    assert!(reads > 0);

    // A rebuild replaces the file: the handle follows it.
    let before = find(&ws, &find_req("g*"), &ReadOptions::default()).unwrap();
    assert_eq!(before.page.total, 300);
    let (reads, _) = read_while(&ws, || {
        loci_lifecycle::rebuild::rebuild(
            dir.path(),
            &loci_store::index_path_for(dir.path()),
            loci_index::DEFAULT_MAX_FILE_BYTES,
            loci_index::FileBudget::default(),
            loci_lifecycle::rebuild::Consent::from_flag(true).unwrap(),
            &loci_index::NoProgress,
        )
        .unwrap();
    });
    assert!(reads > 0);
    let after = find(&ws, &find_req("g*"), &ReadOptions::default()).unwrap();
    assert_eq!(after.page.total, 300);
    assert!(!after.index.is_partial());
}

#[test]
fn a_read_past_its_deadline_or_cancelled_stops_with_its_own_kind() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), 50);
    index(dir.path());
    let ws = handle(dir.path());
    let opts = ReadOptions {
        deadline: Duration::ZERO,
        ..ReadOptions::default()
    };
    let req = TraversalRequest {
        target: "target".into(),
        include_name_only: false,
        depth: Some(32),
        include_unresolved: false,
        path: None,
        edges: None,
        group_by: None,
        page: Default::default(),
    };
    let started = Instant::now();
    let e = traverse(&ws, Direction::Callers, &req, &opts).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Timeout, "{e:?}");
    assert!(started.elapsed() < Duration::from_secs(2));

    let opts = ReadOptions::default();
    opts.cancel.cancel();
    let e = find(&ws, &find_req("*"), &opts).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Cancelled, "{e:?}");

    // The handle is still good afterwards.
    assert!(find(&ws, &find_req("f1"), &ReadOptions::default()).is_ok());
    assert!(ws.idle_connections() >= 1);
}
