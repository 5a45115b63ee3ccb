//! Broad answers on real code (tokio's `sync` module, from the crate sources every build
//! fetches): "what depends on notify.rs" grouped by file is a fraction of the flat
//! answer and counts the same nodes; an edit makes the answers that read the file say
//! so until the index catches up.

use std::path::{Path, PathBuf};

use loci_api::graph::{Direction, GroupBy, TraversalRequest, traverse};
use loci_api::{Located, ReadOptions, Workspace};

/// The newest tokio 1.x in the cargo registry's sources.
fn tokio() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    let mut found: Vec<PathBuf> = std::fs::read_dir(home.join("registry/src"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("tokio-1."))
        })
        .collect();
    found.sort();
    found
        .pop()
        .expect("tokio in the cargo registry (a build fetches it)")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

fn request(group_by: Option<GroupBy>) -> TraversalRequest {
    TraversalRequest {
        target: "src/sync/notify.rs".into(),
        include_name_only: false,
        depth: Some(1),
        include_unresolved: false,
        path: None,
        edges: None,
        group_by,
        page: loci_api::PageRequest {
            limit: Some(10_000),
            cursor: None,
        },
    }
}

#[test]
fn what_depends_on_a_tokio_file_grouped_is_small_and_counts_the_same() {
    let work = tempfile::tempdir().unwrap();
    copy_dir(&tokio().join("src/sync"), &work.path().join("src/sync"));
    for doc in ["README.md", "CHANGELOG.md"] {
        std::fs::copy(tokio().join(doc), work.path().join(doc)).unwrap();
    }
    loci_index::index_workspace(
        &loci_index::IndexOptions::new(work.path()),
        &loci_index::NoProgress,
    )
    .unwrap();
    let ws = Workspace::new(Located {
        root: work.path().to_path_buf(),
        index_path: loci_store::index_path_for(work.path()),
        decider: loci_lifecycle::state::Decider::Marker,
    });
    let opts = ReadOptions::default();
    let flat = traverse(&ws, Direction::Impact, &request(None), &opts).unwrap();
    let grouped = traverse(&ws, Direction::Impact, &request(Some(GroupBy::File)), &opts).unwrap();
    let groups = grouped.groups.as_ref().unwrap();
    assert!(grouped.reached.is_empty());
    let counted: u64 = groups.iter().map(|g| g.count).sum();
    assert_eq!(counted as usize, flat.reached.len());
    let flat_chars = serde_json::to_string(&flat.reached).unwrap().len();
    let grouped_chars = serde_json::to_string(groups).unwrap().len();
    assert!(
        grouped_chars * 4 < flat_chars,
        "grouped {grouped_chars} chars vs flat {flat_chars}"
    );
    assert!(flat.index.changed_files.is_empty());

    // Links made by name alone are left out and counted: `tracing::Span::none()` in the
    // semaphore is no call to notify.rs's `AtomicNotification::none`.
    let has = |t: &loci_api::graph::TraversalPage, path: &str| {
        t.groups.iter().flatten().any(|g| g.path == path)
    };
    assert!(!has(&grouped, "src/sync/batch_semaphore.rs"), "{groups:?}");
    assert!(grouped.name_only_left_out > 0);
    let mut with_names = request(None);
    with_names.include_name_only = true;
    let all = traverse(&ws, Direction::Impact, &with_names, &opts).unwrap();
    assert_eq!(all.name_only_left_out, 0);
    // At depth 1 every node left out is one more node when name links are followed.
    assert_eq!(
        all.reached.len(),
        flat.reached.len() + flat.name_only_left_out as usize
    );
    assert!(
        all.reached
            .iter()
            .any(|r| r.path == "src/sync/batch_semaphore.rs"
                && r.confidence == loci_api::vocab::index::Confidence::Name),
        "name links followed when asked"
    );

    // An ambiguous name answers with its candidates, most used first, each with its
    // module: `Semaphore::add_permits` of semaphore.rs has callers, chan.rs's have none.
    let mut ambiguous = request(None);
    ambiguous.target = "add_permits".into();
    let e = traverse(&ws, Direction::Callers, &ambiguous, &opts).unwrap_err();
    assert_eq!(e.kind, loci_api::ErrorKind::Ambiguous);
    let candidates = e.detail.as_ref().unwrap()["candidates"].as_array().unwrap();
    assert_eq!(
        candidates[0]["path"], "src/sync/semaphore.rs",
        "{candidates:?}"
    );
    assert_eq!(candidates[0]["module"], "crate::sync::semaphore");
    assert!(candidates[0]["uses"].as_u64().unwrap() > 0);
    let uses: Vec<u64> = candidates
        .iter()
        .map(|c| c["uses"].as_u64().unwrap())
        .collect();
    assert!(uses.windows(2).all(|w| w[0] >= w[1]), "{uses:?}");

    // `MSRV` is written 9 times in tokio's README, 10 in its CHANGELOG and once in
    // src/sync: search reads every text file, `source_only` the indexed source alone.
    let msrv = |source_only| {
        let req = loci_api::graph::SearchRequest {
            pattern: "MSRV".into(),
            regex: false,
            ignore_case: false,
            path: None,
            source_only,
            page: loci_api::PageRequest::first(1000),
        };
        loci_api::graph::search(&ws, &req, &opts).unwrap().hits
    };
    let all = msrv(false);
    let count = |file: &str| all.iter().filter(|h| h.path == file).count();
    assert_eq!(count("README.md"), 9);
    assert_eq!(count("CHANGELOG.md"), 10);
    assert_eq!(count("src/sync/once_cell.rs"), 1);
    let source: Vec<String> = msrv(true).into_iter().map(|h| h.path).collect();
    assert_eq!(source, ["src/sync/once_cell.rs"]);

    // An edit to a file the answer reads: every answer naming it says so.
    let edited = groups[0].path.clone();
    let path = work.path().join(&edited);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}\n// edited\n")).unwrap();
    let again = traverse(&ws, Direction::Impact, &request(Some(GroupBy::File)), &opts).unwrap();
    assert_eq!(again.index.changed_files, vec![edited]);
}
