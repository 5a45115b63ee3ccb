//! A page that does not show the references an answer could not link skips their scan
//! (`Unlinked::Skip`, issue #32: on rust-analyzer's tree that scan was most of a large
//! file's impact page and a third of a common name's symbol page): the same nodes and
//! references, and an `unresolved` that counted nothing. The JSON answers still count.

use loci_api::graph::{
    Direction, Reach, RefsRequest, TraversalRequest, Unlinked, refs, refs_with, traverse,
    traverse_with,
};
use loci_api::{Located, PageRequest, ReadOptions, Workspace};

const SEM: &str = "class Semaphore:
    def add_permits(self, n):
        self.n = n

    def release(self):
        self.add_permits(1)


class Pool:
    def add_permits(self, n):
        pass


class Batch:
    def add_permits(self, n):
        pass


class Queue:
    def add_permits(self, n):
        pass
";

const USER: &str = "from pkg.sem import Semaphore


def grow(sem):
    sem.add_permits(3)


def typed():
    s = Semaphore()
    s.add_permits(4)
";

#[test]
fn a_page_skips_the_unlinked_scan_and_keeps_every_node() {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join("pkg")).unwrap();
    std::fs::write(work.path().join("pkg/sem.py"), SEM).unwrap();
    std::fs::write(work.path().join("pkg/user.py"), USER).unwrap();
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
    let target = "Semaphore.add_permits";
    let sites = |t: &loci_api::graph::TraversalPage| -> Vec<(String, u32)> {
        t.reached
            .iter()
            .map(|r| (r.site.path.clone(), r.site.line))
            .collect()
    };

    for direction in [Direction::Callers, Direction::Impact] {
        let req = TraversalRequest::plain(target.into(), 2, PageRequest::first(50));
        let counted = traverse(&ws, direction, &req, &opts).unwrap();
        // `sem.add_permits(3)` (four same-named methods, `sem` untyped) linked nowhere.
        assert_eq!(counted.unresolved.count, 1, "{direction:?}: {counted:?}");
        assert!(counted.unresolved.complete);
        let skipped =
            traverse_with(&ws, direction, &req, &opts, Unlinked::Skip, Reach::Whole).unwrap();
        assert_eq!(skipped.unresolved.count, 0, "{direction:?}: {skipped:?}");
        assert!(!skipped.unresolved.complete, "nothing was counted");
        assert!(skipped.unresolved.reasons.is_empty() && skipped.unresolved.files.is_empty());
        assert_eq!(sites(&skipped), sites(&counted), "{direction:?}");
        assert!(!sites(&counted).is_empty());
        assert_eq!(skipped.page.total, counted.page.total);
    }

    let impact = TraversalRequest::plain(target.into(), 3, PageRequest::first(50));
    let counted = loci_api::memory::impact(&ws, &impact, &opts).unwrap();
    let skipped =
        loci_api::memory::impact_with(&ws, &impact, &opts, Unlinked::Skip, Reach::Whole).unwrap();
    assert_eq!(counted.traversal.unresolved.count, 1);
    assert_eq!(skipped.traversal.unresolved.count, 0);
    assert_eq!(sites(&skipped.traversal), sites(&counted.traversal));

    let req = RefsRequest {
        symbol: target.into(),
        include_unresolved: true,
        page: PageRequest::first(50),
    };
    let counted = refs(&ws, &req, &opts).unwrap();
    assert_eq!(counted.unresolved.count, 1, "{counted:?}");
    assert_eq!(counted.unresolved.sites.as_ref().map(Vec::len), Some(1));
    let skipped = refs_with(&ws, &req, &opts, Unlinked::Skip).unwrap();
    assert_eq!(skipped.unresolved.count, 0);
    assert!(skipped.unresolved.sites.is_none(), "nothing listed either");
    let lines = |p: &loci_api::graph::RefsPage| -> Vec<(String, u32)> {
        p.refs.iter().map(|r| (r.path.clone(), r.line)).collect()
    };
    assert_eq!(lines(&skipped), lines(&counted));
    assert_eq!(lines(&counted).len(), 2, "{counted:?}");
}
