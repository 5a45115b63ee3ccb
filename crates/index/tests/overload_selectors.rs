//! A selector with an arity names one overload: `Pool.interrupt/0` and
//! `Pool.interrupt/1` (the `overloads_java` fixture) have disjoint callers, each the
//! calls that reach that overload; an arity no overload takes is a not-found error that
//! lists the overloads there are.

use crate::common;

use std::path::Path;

use loci_index::graph::{Graph, QueryError, callers};

fn indexed_fixture() -> tempfile::TempDir {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/overloads_java");
    let work = tempfile::tempdir().unwrap();
    common::copy_tree(&fixture, work.path());
    common::index(work.path());
    work
}

/// `(caller, call line)` of every direct caller of `selector`, and the target's line.
fn callers_of(graph: &Graph, selector: &str) -> (Vec<u32>, Vec<(String, u32)>) {
    let t = callers(graph, selector, 1).unwrap();
    let targets = t.target_symbols.iter().map(|s| s.line).collect();
    let mut reached: Vec<(String, u32)> = t
        .reached
        .iter()
        .map(|r| {
            let name = r.symbol.as_ref().map(|s| s.qualified_name.clone());
            (name.unwrap_or_default(), r.site.line)
        })
        .collect();
    reached.sort();
    (targets, reached)
}

#[test]
fn each_overload_selected_by_arity_has_its_own_callers() {
    let work = indexed_fixture();
    let graph = Graph::open(work.path()).unwrap();
    // Without an arity the name is ambiguous between the two.
    assert!(matches!(
        callers(&graph, "Pool.interrupt", 1),
        Err(QueryError::Ambiguous { .. })
    ));
    let (target, none) = callers_of(&graph, "Pool.interrupt/0");
    assert_eq!(target, [6]);
    assert_eq!(
        none,
        [("Pool.run".to_string(), 22), ("User.stop".to_string(), 5)]
    );
    let (target, one) = callers_of(&graph, "Pool.interrupt/1");
    assert_eq!(target, [10]);
    assert_eq!(
        one,
        [
            ("Pool.interrupt".to_string(), 7),
            ("Pool.run".to_string(), 23),
            ("User.stopOne".to_string(), 9)
        ]
    );
    // In a file, and the variadic one by its own form.
    let (target, _) = callers_of(&graph, "pool/Pool.java:Pool.interrupt/1");
    assert_eq!(target, [10]);
    let (target, log) = callers_of(&graph, "Pool.log/1+");
    assert_eq!(target, [12]);
    let log: Vec<&str> = log.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(log, ["Pool.run", "User.level"]);
    // `/2` is what a two-argument call reaches: log(int, int) and the variadic one.
    assert!(matches!(
        callers(&graph, "Pool.log/2", 1),
        Err(QueryError::Ambiguous { candidates, .. }) if candidates.len() == 2
    ));
}

#[test]
fn an_arity_no_overload_takes_lists_the_overloads_there_are() {
    let work = indexed_fixture();
    let graph = Graph::open(work.path()).unwrap();
    match callers(&graph, "Pool.interrupt/3", 1) {
        Err(QueryError::NoSuchOverload {
            selector,
            arity,
            overloads,
        }) => {
            assert_eq!(
                (selector.as_str(), arity.as_str()),
                ("Pool.interrupt/3", "3")
            );
            assert_eq!(
                overloads,
                [
                    "pool/Pool.java:Pool.interrupt/0",
                    "pool/Pool.java:Pool.interrupt/1"
                ]
            );
        }
        other => panic!("expected NoSuchOverload, got {other:?}"),
    }
    // A name that is not defined at all is plain not-found, arity or not.
    assert!(matches!(
        callers(&graph, "Pool.missing/1", 1),
        Err(QueryError::NotFound { .. })
    ));
}
