//! A method called on a JavaScript or TypeScript literal, or on a variable holding one
//! (`/re/.test(x)`, `const re = /x/; re.test(y)`, `'a'.split()`), or on a builtin made by
//! `new` (`this.map = new Map(); this.map.delete(k)`), is the language's
//! builtin's: none of the workspace's same-named methods is its callee. A class of the
//! workspace with the builtin's name (`class Array`) keeps its calls.

use crate::common;

use loci_index::graph::Graph;

const RANGE: &str = "class Range {
  test(v) { return v > 0 }
  split() { return [] }
}
module.exports = Range
";

const USERS: &str = "const Range = require('./range')
const numeric = /^[0-9]+$/

function literal(id) {
  return /^[0-9]+$/.test(id)
}

function held(a) {
  return numeric.test(a)
}

function text(s) {
  return 'a,b'.split(',') + `${s}`.split('')
}

function typed(v) {
  const r = new Range()
  return r.test(v)
}

function unknown(x, v) {
  return x.test(v)
}

class Cache {
  constructor() { this.map = new Map() }
  drop(k) { return this.map.delete(k) }
  delete(k) { return this.drop(k) }
}
";

#[test]
fn calls_on_literals_reach_no_method_of_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    common::write_tree(dir.path(), &[("range.js", RANGE), ("users.js", USERS)]);
    common::index(dir.path());
    let g = Graph::open(dir.path()).unwrap();
    // The typed call links, the unknown receiver by name; the literals never.
    assert_eq!(common::caller_names(&g, "Range.test"), ["typed", "unknown"]);
    assert!(common::caller_names(&g, "Range.split").is_empty());
    // `this.map = new Map()`: the field's `delete` is the Map's, not `Cache.delete`.
    assert!(common::caller_names(&g, "Cache.delete").is_empty());
}

#[test]
fn a_workspace_class_named_like_a_builtin_keeps_its_calls() {
    let dir = tempfile::tempdir().unwrap();
    let own = "class RegExp {\n  test(v) { return true }\n}\n\nfunction f() {\n  return /x/.test('x')\n}\n";
    common::write_tree(dir.path(), &[("own.js", own)]);
    common::index(dir.path());
    let g = Graph::open(dir.path()).unwrap();
    assert_eq!(common::caller_names(&g, "RegExp.test"), ["f"]);
}
