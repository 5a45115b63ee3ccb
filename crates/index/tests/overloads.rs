//! Java overloads share a qualified name: each is its own definition, a call reaches
//! the ones its argument count fits, and an incremental index that moves, adds or
//! removes an overload still equals a fresh one.

use crate::common;

use common::{assert_same_as_fresh, index, write_tree};

const POOL: &str = "package pool;
class Pool {
    void interrupt() { interrupt(false); }
    void interrupt(boolean onlyOne) {}
    void put(int value) {}
    void put(String value) {}
}
";

const USER: &str = "package pool;
class User {
    void stop(Pool pool) { pool.interrupt(true); }
    void fill(Pool pool) { pool.put(1); }
}
";

/// (caller, target's line, confidence) of every CALLS edge into `Pool.name`.
fn calls_into(root: &std::path::Path, name: &str) -> Vec<(String, i64, String)> {
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT src.qualified_name, dst.start_line, e.confidence FROM edges e
             JOIN symbols dst ON dst.id = e.dst_symbol JOIN symbols src ON src.id = e.src_symbol
             WHERE e.kind = 'CALLS' AND dst.qualified_name = ?1 ORDER BY 1, 2",
        )
        .unwrap();
    stmt.query_map([format!("Pool.{name}")], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

fn edge(caller: &str, line: i64, confidence: &str) -> (String, i64, String) {
    (caller.to_string(), line, confidence.to_string())
}

#[test]
fn a_call_reaches_the_overload_its_argument_count_fits() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(
        dir.path(),
        &[("pool/Pool.java", POOL), ("pool/User.java", USER)],
    );
    index(dir.path());
    // interrupt(false) and pool.interrupt(true): the one-argument overload (line 4), at
    // the confidence of the rule that found it.
    assert_eq!(
        calls_into(dir.path(), "interrupt"),
        [
            edge("Pool.interrupt", 4, "exact"),
            edge("User.stop", 4, "exact")
        ]
    );
    // pool.put(1): both one-argument overloads fit; both kept, marked `name`.
    assert_eq!(
        calls_into(dir.path(), "put"),
        [edge("User.fill", 5, "name"), edge("User.fill", 6, "name")]
    );
}

#[test]
fn overloads_moved_added_or_removed_index_as_a_fresh_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(root, &[("pool/Pool.java", POOL), ("pool/User.java", USER)]);
    index(root);
    // The overloads swap places: the ids kept by name and order now hold the other
    // arity, so User.java, unchanged, must be resolved again.
    let swapped = POOL.replace(
        "    void interrupt() { interrupt(false); }\n    void interrupt(boolean onlyOne) {}\n",
        "    void interrupt(boolean onlyOne) {}\n    void interrupt() { interrupt(false); }\n",
    );
    write_tree(root, &[("pool/Pool.java", &swapped)]);
    index(root);
    assert_eq!(
        calls_into(root, "interrupt"),
        [
            edge("Pool.interrupt", 3, "exact"),
            edge("User.stop", 3, "exact")
        ]
    );
    assert_same_as_fresh(root);
    // A two-argument overload appears first; then the one-argument one goes.
    let added = swapped.replace(
        "class Pool {\n",
        "class Pool {\n    void interrupt(boolean a, int b) {}\n",
    );
    write_tree(root, &[("pool/Pool.java", &added)]);
    index(root);
    assert_same_as_fresh(root);
    let removed = added.replace("    void interrupt(boolean onlyOne) {}\n", "");
    write_tree(root, &[("pool/Pool.java", &removed)]);
    index(root);
    assert_same_as_fresh(root);
    // No overload takes one argument now: the call keeps both candidates by name.
    assert_eq!(
        calls_into(root, "interrupt")
            .into_iter()
            .filter(|(caller, ..)| caller == "User.stop")
            .collect::<Vec<_>>(),
        [edge("User.stop", 3, "name"), edge("User.stop", 4, "name")]
    );
}
