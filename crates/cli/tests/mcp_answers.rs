//! `relations` over MCP answers what an agent can act on: the same-named calls it could
//! not link (counted, explained, listed on request, in the text after the title and in
//! the structured content), broad answers grouped by file and filtered, and an
//! ambiguous selector answered with candidates an agent can name by `path:line`.

use crate::mcp_support;

use mcp_support::*;
use serde_json::{Value, json};

const SEM: &str = "class Semaphore:\n    def add_permits(self, n):\n        pass\n\n\nclass Pool:\n    def add_permits(self, n):\n        pass\n\n\nclass Batch:\n    def add_permits(self, n):\n        pass\n\n\nclass Queue:\n    def add_permits(self, n):\n        pass\n";
const USER: &str = "from pkg.sem import Semaphore\n\n\ndef grow(sem):\n    sem.add_permits(3)\n\n\ndef typed():\n    s = Semaphore()\n    s.add_permits(4)\n";

fn session() -> (tempfile::TempDir, tempfile::TempDir, Stdio_) {
    session_over(&[
        ("pkg/sem.py", SEM),
        ("pkg/user.py", USER),
        ("setup.py", "def main():\n    pass\n"),
    ])
}

/// An MCP session over a workspace of `files`, indexed.
fn session_over(files: &[(&str, &str)]) -> (tempfile::TempDir, tempfile::TempDir, Stdio_) {
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for (path, text) in files {
        let path = ws.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let out = loci(home.path())
        .args(["index", "--json"])
        .arg(ws.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut cmd = loci(home.path());
    cmd.arg("mcp").arg("--workspace").arg(ws.path());
    let mut s = Stdio_::start(cmd);
    s.initialize();
    (home, ws, s)
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn relations_say_what_they_could_not_link_and_list_it_on_request() {
    let (_home, _ws, mut s) = session();
    let r = s.call(
        "relations",
        json!({"target": "Semaphore.add_permits", "direction": "callers"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let sc = &r["structuredContent"];
    assert_eq!(sc["relations"].as_array().unwrap().len(), 1, "{sc}");
    assert_eq!(sc["unresolved"]["count"], 1, "{sc}");
    assert_eq!(sc["unresolved"]["reasons"][0]["reason"], "unknown_receiver");
    assert!(sc["unresolved"].get("sites").is_none());
    let t = text(&r);
    assert!(
        t.contains("+ 1 same-named uses linked to no definition (unknown_receiver 1) in pkg/user.py (1); include_unresolved: true lists them"),
        "{t}"
    );
    let r = s.call(
        "relations",
        json!({"target": "Semaphore.add_permits", "direction": "callers", "include_unresolved": "true"}),
    );
    let site = &r["structuredContent"]["unresolved"]["sites"][0];
    assert_eq!(
        (site["path"].as_str(), site["line"].as_u64()),
        (Some("pkg/user.py"), Some(5))
    );
    assert!(
        text(&r).contains("? pkg/user.py:5 sem.add_permits [unknown_receiver] in grow"),
        "{}",
        text(&r)
    );
    // A target whose every use linked says nothing of the kind.
    let r = s.call(
        "relations",
        json!({"target": "typed", "direction": "callers"}),
    );
    assert!(r["structuredContent"].get("unresolved").is_none(), "{r}");
}

#[test]
fn relations_group_by_file_filter_and_name_ambiguity_candidates() {
    let (_home, _ws, mut s) = session();
    let r = s.call(
        "relations",
        json!({"target": "pkg/sem.py", "direction": "impact", "group_by": "file"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let sc = &r["structuredContent"];
    assert_eq!(sc["relations"], json!([]));
    let groups = sc["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{sc}");
    assert_eq!(groups[0]["path"], "pkg/user.py");
    assert!(text(&r).contains("pkg/user.py "), "{}", text(&r));
    let r = s.call(
        "relations",
        json!({"target": "pkg/sem.py", "direction": "impact", "edges": ["IMPORTS"], "path": "pkg"}),
    );
    let edges: Vec<&str> = r["structuredContent"]["relations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["edge"].as_str().unwrap())
        .collect();
    assert_eq!(edges, ["IMPORTS"], "{r}");
    let r = s.call(
        "relations",
        json!({"target": "pkg/sem.py", "direction": "impact", "path": "nowhere"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).starts_with("not_found:"), "{}", text(&r));
    let r = s.call(
        "relations",
        json!({"target": "add_permits", "direction": "refs", "group_by": "file"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    // A hint names the tool call that helps, not a CLI command.
    let r = s.call(
        "relations",
        json!({"target": "add_permit", "direction": "callers"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    let hint = r["_meta"]["loci/error"]["hint"].as_str().unwrap();
    assert!(
        hint.starts_with("`find {\"pattern\":\"*add_permit*\"}`"),
        "{hint}"
    );
    assert!(text(&r).contains("hint: `find {"), "{}", text(&r));

    // Four `add_permits`: answered with data, not an error: each candidate with the
    // path:line that names it alone, its module and uses, in the structured content and
    // the text, most used first (only `Semaphore`'s has a linked call).
    let r = s.call(
        "relations",
        json!({"target": "add_permits", "direction": "callers"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let sc = &r["structuredContent"];
    assert_eq!(sc["relations"], json!([]), "{r}");
    let candidates = sc["candidates"].as_array().unwrap();
    let targets: Vec<&str> = candidates
        .iter()
        .map(|c| c["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        [
            "pkg/sem.py:2",
            "pkg/sem.py:7",
            "pkg/sem.py:12",
            "pkg/sem.py:17"
        ],
        "{r}"
    );
    assert_eq!(candidates[0]["module"], "pkg.sem", "{r}");
    assert_eq!(candidates[0]["uses"], 1, "{r}");
    assert_eq!(candidates[0]["qualified_name"], "Semaphore.add_permits");
    assert_eq!(sc["page"]["total"], 4, "{r}");
    assert_eq!(sc["candidate_count"], 4, "{r}");
    let t = text(&r);
    assert!(
        t.starts_with("`add_permits` is ambiguous: 4 definitions, most used first"),
        "{t}"
    );
    assert!(
        t.contains("\npkg/sem.py:2 method Semaphore.add_permits (pkg.sem; 1 uses)  def add_permits(self, n)"),
        "{t}"
    );
    let r = s.call(
        "relations",
        json!({"target": "pkg/sem.py:7", "direction": "callers"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(
        r["structuredContent"]["targets"],
        json!(["pkg/sem.py:Pool.add_permits"])
    );
}

#[test]
fn symbol_on_a_file_path_answers_the_file_outline() {
    let (_home, _ws, mut s) = session();
    let r = s.call("symbol", json!({"symbol": "pkg/sem.py"}));
    assert_ne!(r["isError"], true, "{r}");
    let defs = r["structuredContent"]["definitions"].as_array().unwrap();
    let tops: Vec<&str> = defs.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(tops, ["Semaphore", "Pool", "Batch", "Queue"], "{r}");
    assert_eq!(defs[0]["members"][0]["name"], "add_permits", "{r}");
    assert_eq!(defs[0]["members"][0]["depth"], 1, "{r}");
    assert_eq!(defs[0]["members"].as_array().unwrap().len(), 1, "{r}");
    assert!(
        defs[0].get("body").is_none(),
        "an outline shows no bodies: {r}"
    );
    let t = text(&r);
    assert!(t.contains("outline of `pkg/sem.py`"), "{t}");
    assert!(
        t.contains("1-3 class Semaphore\n  2: method add_permits"),
        "{t}"
    );
    // A page of the top-level definitions, members riding with each.
    let r = s.call("symbol", json!({"symbol": "pkg/sem.py", "limit": 2}));
    let sc = &r["structuredContent"];
    assert_eq!(sc["definitions"].as_array().unwrap().len(), 2, "{r}");
    assert_eq!(sc["page"]["total"], 4, "{r}");
    assert_eq!(sc["page"]["next_cursor"], "2", "{r}");
    // A name no definition has that names a file at the root is that file; a name a
    // definition has stays that definition.
    let r = s.call("symbol", json!({"symbol": "setup.py"}));
    assert_eq!(
        r["structuredContent"]["definitions"][0]["name"], "main",
        "{r}"
    );
    assert!(text(&r).contains("outline of `setup.py`"), "{r}");
    let r = s.call("symbol", json!({"symbol": "main"}));
    assert_eq!(
        r["structuredContent"]["definitions"][0]["path"], "setup.py",
        "{r}"
    );
    assert!(text(&r).contains("definitions of `main`"), "{r}");
    // A path no file has is not_found, naming what the agent can do.
    let r = s.call("symbol", json!({"symbol": "pkg/nope.py"}));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["_meta"]["loci/error"]["kind"], "not_found", "{r}");
    let r = s.call("symbol", json!({"symbol": "no_such_name"}));
    assert_eq!(r["_meta"]["loci/error"]["kind"], "not_found", "{r}");
}

#[test]
fn impact_leaves_out_name_only_links_says_how_many_and_follows_them_when_asked() {
    let store = "class Store:\n    def frobnicate(self):\n        return 1\n";
    let users = "from store import Store\n\n\ndef typed():\n    s = Store()\n    return s.frobnicate()\n\n\ndef guessed(thing):\n    return thing.frobnicate()\n";
    let (_home, _ws, mut s) = session_over(&[("store.py", store), ("users.py", users)]);
    let names = |r: &Value| -> Vec<String> {
        let mut n: Vec<String> = r["structuredContent"]["relations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["symbol"].as_str().unwrap().to_string())
            .collect();
        n.sort();
        n
    };
    let r = s.call(
        "relations",
        json!({"target": "Store.frobnicate", "direction": "impact", "depth": 1}),
    );
    assert_eq!(names(&r), ["typed"], "{r}");
    assert_eq!(r["structuredContent"]["name_only_left_out"], 1, "{r}");
    assert!(
        text(&r).contains("+ 1 reached only by links made by name alone, left out; include_name_only: true follows them"),
        "{}",
        text(&r)
    );
    let r = s.call(
        "relations",
        json!({"target": "Store.frobnicate", "direction": "impact", "depth": 1, "include_name_only": true}),
    );
    assert_eq!(names(&r), ["guessed", "typed"], "{r}");
    assert!(
        r["structuredContent"].get("name_only_left_out").is_none(),
        "{r}"
    );
    // Callers keep every link, the name-only one labelled so.
    let r = s.call(
        "relations",
        json!({"target": "Store.frobnicate", "direction": "callers"}),
    );
    let guessed = r["structuredContent"]["relations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["symbol"] == "guessed")
        .cloned()
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(guessed["confidence"], "name", "{r}");
}

#[test]
fn ambiguity_candidates_come_most_used_first() {
    let store = "class A:\n    def run(self):\n        pass\n\n\nclass B:\n    def run(self):\n        pass\n";
    let users = "from store import A, B\n\n\ndef one():\n    b = B()\n    b.run()\n\n\ndef two():\n    b = B()\n    b.run()\n\n\ndef three():\n    a = A()\n    a.run()\n";
    let (_home, _ws, mut s) = session_over(&[("store.py", store), ("users.py", users)]);
    let r = s.call("relations", json!({"target": "run", "direction": "impact"}));
    let c = &r["structuredContent"]["candidates"];
    assert_eq!(c[0]["qualified_name"], "B.run", "{r}");
    assert_eq!(c[0]["uses"], 2, "{r}");
    assert_eq!(c[1]["qualified_name"], "A.run", "{r}");
    assert_eq!(c[1]["uses"], 1, "{r}");
    // The first candidate's target answers.
    let target = c[0]["target"].as_str().unwrap().to_string();
    let r = s.call(
        "relations",
        json!({"target": target, "direction": "callers"}),
    );
    assert_eq!(
        r["structuredContent"]["relations"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "{r}"
    );
}

#[test]
fn search_reads_docs_and_configs_and_source_only_keeps_to_the_index() {
    let (_home, _ws, mut s) = session_over(&[
        ("README.md", "Call `add_permits` to grow the pool.\n"),
        ("pkg/sem.py", SEM),
    ]);
    let paths = |r: &Value| -> Vec<String> {
        r["structuredContent"]["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| format!("{}:{}", h["path"].as_str().unwrap(), h["line"]))
            .collect()
    };
    let r = s.call("search", json!({"pattern": "add_permits"}));
    assert_eq!(
        paths(&r),
        [
            "README.md:1",
            "pkg/sem.py:2",
            "pkg/sem.py:7",
            "pkg/sem.py:12",
            "pkg/sem.py:17"
        ],
        "{r}"
    );
    let r = s.call(
        "search",
        json!({"pattern": "add_permits", "source_only": true}),
    );
    assert_eq!(paths(&r).len(), 4, "{r}");
    assert!(paths(&r).iter().all(|p| p.starts_with("pkg/")), "{r}");
}
