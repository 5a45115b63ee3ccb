//! Graph answers say what they could not link: the references by a target's name that
//! reached no definition (callers, refs, impact) and the calls inside a target that
//! linked to nothing (callees), with a reason each, on a small tree and on tokio.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use loci_index::graph::{
    self, Graph, UnresolvedReason, UnresolvedSite, UseKinds, unresolved_calls_from, unresolved_uses,
};

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

const USER: &str = "import json
from pkg.sem import Semaphore


def grow(sem):
    sem.add_permits(3)
    sem.add_permit(1)


def typed():
    s = Semaphore()
    s.add_permits(4)


def dump(x):
    return json.dumps(x) + helper_nowhere(x)
";

fn indexed() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::write_tree(dir.path(), &[("pkg/sem.py", SEM), ("pkg/user.py", USER)]);
    common::index(dir.path());
    dir
}

fn place(s: &UnresolvedSite) -> String {
    format!("{}:{}", s.path, s.line)
}

#[test]
fn callers_count_the_same_named_calls_that_linked_nowhere() {
    let dir = indexed();
    let g = Graph::open(dir.path()).unwrap();
    let t = graph::callers(&g, "Semaphore.add_permits", 1).unwrap();
    // The two linked calls (self.add_permits, s.add_permits on a Semaphore) are answered.
    let sites: Vec<u32> = t.reached.iter().map(|r| r.site.line).collect();
    assert_eq!(sites, vec![6, 12], "{t:?}");
    // `sem.add_permits(3)` (four same-named methods, `sem` untyped) reached none: it is
    // counted, listed and explained; `sem.add_permit(1)` (another name) is not.
    let u = unresolved_uses(&g, &t.target_symbols, UseKinds::Calls, true).unwrap();
    assert!(u.complete);
    assert_eq!(u.count, 1, "{u:?}");
    assert_eq!(u.reasons.len(), 1);
    assert_eq!(u.reasons[0].reason, UnresolvedReason::UnknownReceiver);
    assert_eq!(u.files[0].path, "pkg/user.py");
    let sites = u.sites.unwrap();
    assert_eq!(sites.len(), 1);
    assert_eq!(place(&sites[0]), "pkg/user.py:6");
    assert_eq!(sites[0].qualifier.as_deref(), Some("sem"));
    assert_eq!(sites[0].from.as_deref(), Some("grow"));
    // Without `list`, the same summary and no sites.
    let brief = unresolved_uses(&g, &t.target_symbols, UseKinds::Calls, false).unwrap();
    assert_eq!(brief.count, 1);
    assert!(brief.sites.is_none());
}

#[test]
fn a_name_used_only_where_it_linked_has_nothing_unresolved() {
    let dir = indexed();
    let g = Graph::open(dir.path()).unwrap();
    let t = graph::callers(&g, "pkg/user.py:typed", 1).unwrap();
    let u = unresolved_uses(&g, &t.target_symbols, UseKinds::Calls, true).unwrap();
    assert_eq!((u.count, u.complete), (0, true), "{u:?}");
    assert!(u.reasons.is_empty() && u.files.is_empty());
    assert_eq!(u.sites.map(|s| s.len()), Some(0));
}

#[test]
fn callees_count_the_calls_inside_that_linked_to_nothing() {
    let dir = indexed();
    let g = Graph::open(dir.path()).unwrap();
    let t = graph::callees(&g, "dump", 1).unwrap();
    assert!(t.reached.is_empty(), "{t:?}");
    let u = unresolved_calls_from(&g, &t.target_symbols, true).unwrap();
    let got: BTreeSet<(String, &str)> = u
        .sites
        .as_ref()
        .unwrap()
        .iter()
        .map(|s| (s.name.clone(), s.reason.name()))
        .collect();
    let want: BTreeSet<(String, &str)> = [
        ("dumps".to_string(), "unknown_receiver"),
        ("helper_nowhere".to_string(), "unbound_name"),
    ]
    .into();
    assert_eq!(got, want);
    assert_eq!(u.count, 2);
    // A callee that links everything has nothing unresolved.
    let t = graph::callees(&g, "Semaphore.release", 1).unwrap();
    assert_eq!(t.reached.len(), 1);
    let u = unresolved_calls_from(&g, &t.target_symbols, false).unwrap();
    assert_eq!(u.count, 0, "{u:?}");
}

/// On tokio's `sync` module: every call site of a popular method name written in the
/// source is either a caller of one of its definitions or listed as unresolved. None
/// is lost silently, which is what an answer of "2 of 2" for 17 real call sites did.
#[test]
fn on_tokio_every_written_call_is_linked_or_listed() {
    let tokio = common::newest_registry_crate("tokio-1.");
    let work = tempfile::tempdir().unwrap();
    let sync = work.path().join("src/sync");
    common::copy_tree(&tokio.join("src/sync"), &sync);
    common::index(work.path());
    let g = Graph::open(work.path()).unwrap();
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(work.path())).unwrap();
    let mut checked = 0;
    let mut listed_total = 0;
    for name in [
        "add_permits",
        "release",
        "acquire",
        "close",
        "is_closed",
        "notify_waiters",
    ] {
        let written = call_sites(&sync, work.path(), name);
        let (defs, _) = graph::find(&g, name, None, None, 100).unwrap();
        assert!(!defs.is_empty(), "{name}");
        // What the callers of those definitions answer: their CALLS edges' sites.
        let mut stmt = conn
            .prepare(
                "SELECT f.path || ':' || e.line FROM edges e JOIN files f ON f.id = e.src_file
                 JOIN symbols s ON s.id = e.dst_symbol WHERE e.kind = 'CALLS' AND s.name = ?1",
            )
            .unwrap();
        let linked: BTreeSet<String> = stmt
            .query_map([name], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let u = unresolved_uses(&g, &defs, UseKinds::Calls, true).unwrap();
        assert!(u.complete, "{name}");
        let listed: BTreeSet<String> = u.sites.as_ref().unwrap().iter().map(place).collect();
        let lost: Vec<&String> = written
            .iter()
            .filter(|w| !linked.contains(*w) && !listed.contains(*w))
            .collect();
        assert!(
            lost.is_empty(),
            "`{name}` call sites neither linked nor listed: {lost:?}\nlinked {linked:?}\nlisted {listed:?}"
        );
        // A site both linked and listed must hold two calls of the name (one linked,
        // one not): a linked call is never also counted as unresolved.
        for site in listed.intersection(&linked) {
            let (path, line) = site.rsplit_once(':').unwrap();
            let text = std::fs::read_to_string(work.path().join(path)).unwrap();
            let code = text
                .lines()
                .nth(line.parse::<usize>().unwrap() - 1)
                .unwrap();
            assert!(
                code.matches(&format!("{name}(")).count() >= 2,
                "`{name}` at {site} is both linked and listed: {code}"
            );
        }
        checked += written.len();
        listed_total += listed.len();
    }
    assert!(checked >= 100, "only {checked} call sites checked");
    assert!(
        listed_total >= 10,
        "tokio's sync leaves calls unresolved: {listed_total}"
    );
}

/// `path:line` of every line under `dir` that calls `.name(` (not its definitions),
/// outside `macro_rules!` bodies: a macro's body is a token pattern, not code, and its
/// references are no facts of the index (documented in docs/cli.md).
fn call_sites(dir: &Path, root: &Path, name: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            // Brace depth at which the current `macro_rules!` body closes, if inside one.
            let mut depth = 0i32;
            let mut macro_until: Option<i32> = None;
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if macro_until.is_none() && code.contains("macro_rules!") {
                    macro_until = Some(depth);
                }
                let inside = macro_until.is_some();
                depth += code.matches('{').count() as i32 - code.matches('}').count() as i32;
                if macro_until.is_some_and(|d| depth <= d) {
                    macro_until = None;
                }
                if !inside
                    && code.contains(&format!(".{name}("))
                    && !code.contains(&format!("fn {name}"))
                {
                    out.insert(format!("{rel}:{}", i + 1));
                }
            }
        }
    }
    out
}
