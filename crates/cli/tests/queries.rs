//! Every query command, through the real binary: JSON shapes, selectors, ambiguity, depth.

use crate::common;

use common::Env;
use serde_json::Value;

const REPO: &[(&str, &str)] = &[
    (
        "src/parser.rs",
        "use crate::lexer::tokenize;\n\n/// Parses input.\npub struct Parser;\n\nimpl Parser {\n    /// Runs the parse.\n    pub fn parse(&self) -> usize {\n        tokenize(\"x\").len()\n    }\n}\n\npub fn run() -> usize {\n    Parser.parse()\n}\n",
    ),
    (
        "src/lexer.rs",
        "/// Splits text.\npub fn tokenize(s: &str) -> Vec<&str> {\n    vec![s]\n}\n\npub fn parse() {}\n",
    ),
    (
        "src/main.rs",
        "mod parser;\nmod lexer;\nfn main() {\n    parser::run();\n}\n",
    ),
];

fn indexed() -> Env {
    let env = Env::new();
    env.write(REPO);
    let (code, report) = env.json(&["index"]);
    assert_eq!(code, 0, "{report}");
    for key in [
        "files_indexed",
        "files_skipped",
        "symbols",
        "edges",
        "elapsed_ms",
    ] {
        assert!(report[key].is_u64(), "index --json lacks {key}: {report}");
    }
    env
}

fn assert_symbol_shape(v: &Value) {
    for key in ["name", "qualified_name", "kind", "path"] {
        assert!(v[key].is_string(), "symbol lacks {key}: {v}");
    }
    assert!(v["line"].is_u64(), "symbol lacks line: {v}");
    assert!(
        !v["path"].as_str().unwrap().starts_with('/'),
        "path must be relative: {v}"
    );
}

fn names(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|s| s[field].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn find_by_name_glob_kind_and_lang() {
    let env = indexed();
    let (code, out) = env.json(&["find", "tok*"]);
    assert_eq!(code, 0);
    assert_eq!(names(&out["symbols"], "qualified_name"), ["tokenize"]);
    out["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .for_each(assert_symbol_shape);
    let (_, out) = env.json(&["find", "parse", "--kind", "method"]);
    assert_eq!(names(&out["symbols"], "qualified_name"), ["Parser::parse"]);
    let (_, out) = env.json(&["find", "*", "--kind", "struct", "--lang", "rust"]);
    assert_eq!(names(&out["symbols"], "name"), ["Parser"]);
    let (code, out) = env.json(&["find", "x", "--kind", "gizmo"]);
    assert_eq!(code, 5);
    assert!(out["error"]["message"].as_str().unwrap().contains("gizmo"));
}

#[test]
fn ambiguous_symbol_lists_candidates_and_selectors_disambiguate() {
    let env = indexed();
    let (code, out) = env.json(&["callers", "parse"]);
    assert_eq!(code, 5);
    assert_eq!(out["error"]["kind"], "ambiguous");
    let candidates = &out["error"]["detail"]["candidates"];
    assert_eq!(candidates.as_array().unwrap().len(), 2);
    candidates
        .as_array()
        .unwrap()
        .iter()
        .for_each(assert_symbol_shape);

    let (code, out) = env.json(&["callers", "Parser::parse"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        names(&out["target_symbols"], "qualified_name"),
        ["Parser::parse"]
    );
    let (code, out) = env.json(&["def", "src/lexer.rs:parse"]);
    assert_eq!(code, 0);
    assert_eq!(out["symbols"][0]["path"], "src/lexer.rs");
    let (code, out) = env.json(&["def", "nothing_like_this"]);
    assert_eq!(code, 4);
    assert_eq!(out["error"]["kind"], "not_found");
}

#[test]
fn def_carries_doc_and_signature() {
    let env = indexed();
    let (_, out) = env.json(&["def", "tokenize"]);
    let s = &out["symbols"][0];
    assert_symbol_shape(s);
    assert_eq!(s["doc"], "Splits text.");
    assert_eq!(s["signature"], "pub fn tokenize(s: &str) -> Vec<&str>");
    assert_eq!(s["line"], 2);
}

#[test]
fn callers_callees_with_depth_and_paths() {
    let env = indexed();
    let (_, out) = env.json(&["callers", "tokenize", "--depth", "3"]);
    let reached = out["reached"].as_array().unwrap();
    let chain: Vec<(String, u64)> = reached
        .iter()
        .map(|r| {
            (
                r["symbol"]["qualified_name"].as_str().unwrap().to_string(),
                r["depth"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        chain,
        [
            ("Parser::parse".into(), 1),
            ("run".into(), 2),
            ("main".into(), 3)
        ]
    );
    assert_eq!(
        reached[2]["via"],
        serde_json::json!(["tokenize", "Parser::parse", "run", "main"])
    );
    assert_eq!(reached[0]["site"]["path"], "src/parser.rs");
    assert_eq!(reached[0]["site"]["line"], 9);
    reached
        .iter()
        .for_each(|r| assert_symbol_shape(&r["symbol"]));

    let (_, out) = env.json(&["callers", "tokenize"]);
    assert_eq!(
        out["reached"].as_array().unwrap().len(),
        1,
        "depth 1 by default"
    );

    let (_, out) = env.json(&["callees", "run", "--depth", "2"]);
    let got = names(
        &out["reached"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["symbol"].clone())
            .collect(),
        "qualified_name",
    );
    assert_eq!(got, ["Parser::parse", "tokenize"]);
}

#[test]
fn impact_of_symbol_and_of_file() {
    let env = indexed();
    let (_, out) = env.json(&["impact", "tokenize"]);
    let got: Vec<String> = out["reached"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["symbol"]["qualified_name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, ["Parser::parse", "run", "main"]);
    let (code, out) = env.json(&["impact", "src/lexer.rs", "--depth", "1"]);
    assert_eq!(code, 0, "{out}");
    let paths: Vec<&str> = out["reached"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"src/parser.rs"), "{out}");
}

#[test]
fn refs_outline_search_stats_list() {
    let env = indexed();
    let (_, out) = env.json(&["refs", "tokenize"]);
    let refs = out["refs"].as_array().unwrap();
    assert!(
        refs.iter()
            .any(|r| r["edge"] == "CALLS" && r["path"] == "src/parser.rs" && r["line"] == 9),
        "{out}"
    );
    assert!(refs.iter().any(|r| r["edge"] == "IMPORTS"), "{out}");
    assert_symbol_shape(&out["target"]);

    let (_, out) = env.json(&["outline", "src/parser.rs"]);
    let items = out["symbols"].as_array().unwrap();
    let outline: Vec<(String, u64)> = items
        .iter()
        .map(|i| {
            (
                i["qualified_name"].as_str().unwrap().to_string(),
                i["depth"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        outline,
        [
            ("Parser".into(), 0),
            ("Parser::parse".into(), 1),
            ("run".into(), 0)
        ]
    );
    items.iter().for_each(assert_symbol_shape);
    let (code, _) = env.json(&["outline", "src/missing.rs"]);
    assert_eq!(code, 4);

    let (_, out) = env.json(&["search", "tokenize(\""]);
    assert_eq!(out["hits"][0]["path"], "src/parser.rs");
    assert_eq!(out["hits"][0]["line"], 9);
    let (_, out) = env.json(&["search", "-e", r"fn \w+\(s: &str\)"]);
    assert_eq!(out["hits"].as_array().unwrap().len(), 1);
    let (_, out) = env.json(&["search", "PARSER", "-i", "--path", "src/main.rs"]);
    let lines: Vec<u64> = out["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [1, 4]);
    let (code, _) = env.json(&["search", "-e", "("]);
    assert_eq!(code, 5);

    let (_, out) = env.json(&["stats"]);
    assert_eq!(out["files"], 3);
    assert_eq!(out["state"], "complete");
    let (_, out) = env.json(&["list"]);
    let roots = names(&out["workspaces"], "root");
    assert_eq!(
        roots,
        [std::fs::canonicalize(env.root())
            .unwrap()
            .to_string_lossy()
            .to_string()]
    );
}

#[test]
fn callers_and_def_take_a_crate_path_through_pub_use_reexports() {
    let env = Env::new();
    env.write(&[
        ("Cargo.toml", "[workspace]\nmembers = [\"core\", \"app\", \"other\"]\n"),
        ("core/Cargo.toml", "[package]\nname = \"my-core\"\n"),
        (
            "core/src/lib.rs",
            "mod engine;\npub use engine::spawn;\npub use engine::Engine as Motor;\n",
        ),
        (
            "core/src/engine.rs",
            "pub struct Engine;\n\nimpl Engine {\n    pub fn start(&self) {}\n}\n\npub fn spawn() {}\n",
        ),
        ("other/Cargo.toml", "[package]\nname = \"other\"\n"),
        ("other/src/lib.rs", "pub fn spawn() {}\n"),
        ("app/Cargo.toml", "[package]\nname = \"app\"\n"),
        (
            "app/src/main.rs",
            "fn main() {\n    my_core::spawn();\n    other::spawn();\n}\n",
        ),
    ]);
    let (code, report) = env.json(&["index"]);
    assert_eq!(code, 0, "{report}");
    // `spawn` alone is ambiguous; the crate path names core's, through `pub use`.
    let (code, _) = env.json(&["callers", "spawn"]);
    assert_eq!(
        code,
        i32::from(loci_api::ErrorKind::Ambiguous.exit().code())
    );
    let (code, out) = env.json(&["callers", "my_core::spawn"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["reached"][0]["symbol"]["qualified_name"], "main");
    assert_eq!(out["reached"].as_array().unwrap().len(), 1, "{out}");
    let (code, out) = env.json(&["def", "my_core::Motor::start"]);
    assert_eq!(code, 0, "{out}");
    let defs = names(&out["symbols"], "qualified_name");
    assert_eq!(defs, ["Engine::start"], "{out}");
    let (code, _) = env.json(&["def", "my_core::Motor::stop"]);
    assert_eq!(code, i32::from(loci_api::ErrorKind::NotFound.exit().code()));
}

#[test]
fn callers_of_one_overload_by_arity_and_a_bad_arity_lists_the_overloads() {
    let env = Env::new();
    env.write(&[
        (
            "pool/Pool.java",
            "package pool;\nclass Pool {\n    void interrupt() { interrupt(false); }\n    void interrupt(boolean one) {}\n}\n",
        ),
        (
            "pool/User.java",
            "package pool;\nclass User {\n    void stop(Pool p) { p.interrupt(); }\n    void one(Pool p) { p.interrupt(true); }\n}\n",
        ),
    ]);
    let (code, report) = env.json(&["index"]);
    assert_eq!(code, 0, "{report}");
    let (code, out) = env.json(&["callers", "Pool.interrupt/0"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        names(&out["target_symbols"], "signature"),
        ["void interrupt()"]
    );
    assert_eq!(names(&out["reached"], "path"), ["pool/User.java"]);
    let (code, out) = env.json(&["callers", "Pool.interrupt/1"]);
    assert_eq!(code, 0, "{out}");
    let mut callers: Vec<String> = out["reached"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["symbol"]["qualified_name"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    callers.sort();
    assert_eq!(callers, ["Pool.interrupt", "User.one"]);

    let (code, out) = env.json(&["callers", "Pool.interrupt/3"]);
    assert_eq!(
        code,
        i32::from(loci_api::ErrorKind::NotFound.exit().code()),
        "{out}"
    );
    assert_eq!(out["error"]["kind"], "not_found");
    let message = out["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("Pool.interrupt/3") && message.contains("pool/Pool.java:Pool.interrupt/0"),
        "{message}"
    );
    assert_eq!(
        out["error"]["detail"]["overloads"],
        serde_json::json!([
            "pool/Pool.java:Pool.interrupt/0",
            "pool/Pool.java:Pool.interrupt/1"
        ])
    );
}

/// A call the resolver could not link (`sem.add_permits` on a value whose type the
/// file does not say, four same-named methods) is not lost: `callers` and `refs` count
/// it with its reason and file, list it on request, and the text output says so.
#[test]
fn callers_and_refs_say_what_they_could_not_link() {
    let env = Env::new();
    let methods: String = ["Semaphore", "Pool", "Batch", "Queue"]
        .iter()
        .map(|c| format!("class {c}:\n    def add_permits(self, n):\n        pass\n\n"))
        .collect();
    env.write(&[
        ("pkg/sem.py", methods.as_str()),
        (
            "pkg/user.py",
            "from pkg.sem import Semaphore\n\ndef grow(sem):\n    sem.add_permits(3)\n\ndef typed():\n    s = Semaphore()\n    s.add_permits(4)\n",
        ),
    ]);
    let (code, v) = env.json(&["index"]);
    assert_eq!(code, 0, "{v}");
    let (code, out) = env.json(&["callers", "Semaphore.add_permits"]);
    assert_eq!(code, 0, "{out}");
    let u = &out["unresolved"];
    assert_eq!(u["count"], 1, "{out}");
    assert_eq!(u["complete"], true);
    assert_eq!(
        u["reasons"],
        serde_json::json!([{"reason": "unknown_receiver", "count": 1}])
    );
    assert_eq!(
        u["files"],
        serde_json::json!([{"path": "pkg/user.py", "count": 1}])
    );
    assert!(u.get("sites").is_none(), "sites only on request: {u}");

    let (_, out) = env.json(&["callers", "Semaphore.add_permits", "--include-unresolved"]);
    assert_eq!(
        out["unresolved"]["sites"],
        serde_json::json!([{"path": "pkg/user.py", "line": 4, "name": "add_permits",
            "qualifier": "sem", "reason": "unknown_receiver", "from": "grow"}])
    );
    let (_, out) = env.json(&["refs", "Semaphore.add_permits", "--include-unresolved"]);
    assert_eq!(out["unresolved"]["count"], 1, "{out}");
    assert_eq!(out["unresolved"]["sites"][0]["line"], 4);

    let text = env
        .cmd()
        .args(["callers", "Semaphore.add_permits"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains(
            "unresolved: 1 call of `add_permits` that linked to no definition (unknown receiver 1) in pkg/user.py (1)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("--include-unresolved lists them"),
        "{stdout}"
    );
    // A target whose every use linked prints no such line.
    let text = env.cmd().args(["callers", "typed"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&text.stdout).contains("unresolved:"));
}

/// An answer given from an index that an edit has outrun says which of its files
/// changed (JSON `index.changed_files`, a note on stderr), until a sync catches up.
#[test]
fn an_answer_names_its_files_that_changed_since_indexed() {
    let env = indexed();
    let (_, out) = env.json(&["callers", "tokenize"]);
    assert!(out["index"].get("changed_files").is_none(), "{out}");
    std::fs::write(
        env.root().join("src/parser.rs"),
        format!("{}\n// edited\n", REPO[0].1),
    )
    .unwrap();
    let (code, out) = env.json(&["callers", "tokenize"]);
    assert_eq!(code, 0);
    assert_eq!(
        out["index"]["changed_files"],
        serde_json::json!(["src/parser.rs"])
    );
    let text = env.cmd().args(["callers", "tokenize"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&text.stderr);
    assert!(
        stderr.contains("note: 1 file this answer reads changed since indexed (src/parser.rs)"),
        "{stderr}"
    );
    // A file the answer does not read is not named.
    let (_, out) = env.json(&["def", "tokenize"]);
    assert!(out["index"].get("changed_files").is_none(), "{out}");
    assert_eq!(env.json(&["sync"]).0, 0);
    let (_, out) = env.json(&["callers", "tokenize"]);
    assert!(out["index"].get("changed_files").is_none(), "{out}");
}

/// A broad impact grouped by file: one row per file with its nodes counted by edge
/// kind (the page counts files), the same nodes as the flat answer; filters by path
/// (a folder, a glob) and edge kind keep only those; a filter that matches no indexed
/// file is `not_found`, never an empty answer.
#[test]
fn impact_groups_by_file_and_filters_by_path_and_edge_kind() {
    let env = indexed();
    let (code, flat) = env.json(&["impact", "src/lexer.rs"]);
    assert_eq!(code, 0, "{flat}");
    let reached = flat["reached"].as_array().unwrap();
    assert!(reached.len() >= 3, "{flat}");
    assert!(flat.get("groups").is_none());

    let (code, grouped) = env.json(&["impact", "src/lexer.rs", "--group-by", "file"]);
    assert_eq!(code, 0, "{grouped}");
    assert_eq!(grouped["reached"], serde_json::json!([]));
    let groups = grouped["groups"].as_array().unwrap();
    assert_eq!(grouped["total"].as_u64().unwrap() as usize, groups.len());
    let counted: u64 = groups.iter().map(|g| g["count"].as_u64().unwrap()).sum();
    assert_eq!(counted as usize, reached.len(), "{grouped}");
    let mut files: Vec<&str> = reached
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    files.sort();
    files.dedup();
    assert_eq!(groups.len(), files.len());
    for g in groups {
        let by_edge: u64 = g["edges"]
            .as_object()
            .unwrap()
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(by_edge, g["count"].as_u64().unwrap(), "{g}");
    }
    let counts: Vec<u64> = groups
        .iter()
        .map(|g| g["count"].as_u64().unwrap())
        .collect();
    assert!(
        counts.windows(2).all(|w| w[0] >= w[1]),
        "most first: {counts:?}"
    );

    // A folder keeps only the nodes under it; a glob the same way.
    for filter in ["src/parser.rs", "src/", "src/p*.rs"] {
        let (code, out) = env.json(&["impact", "src/lexer.rs", "--path", filter]);
        assert_eq!(code, 0, "{out}");
        let paths: Vec<&str> = out["reached"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap())
            .collect();
        assert!(!paths.is_empty(), "{filter}: {out}");
        if filter != "src/" {
            assert!(
                paths.iter().all(|p| *p == "src/parser.rs"),
                "{filter}: {paths:?}"
            );
        }
    }
    let (_, calls) = env.json(&["impact", "src/lexer.rs", "--edge", "calls"]);
    let edges: Vec<&str> = calls["reached"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["edge"].as_str().unwrap())
        .collect();
    assert!(
        !edges.is_empty() && edges.iter().all(|e| *e == "CALLS"),
        "{calls}"
    );

    let (code, err) = env.json(&["impact", "src/lexer.rs", "--path", "no/such/dir"]);
    assert_eq!(code, 4, "{err}");
    assert_eq!(err["error"]["kind"], "not_found");
    assert!(
        err["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("path filter"),
        "{err}"
    );
    let (code, _) = env.json(&["impact", "src/lexer.rs", "--edge", "nonsense"]);
    assert_eq!(code, 2);

    let text = env
        .cmd()
        .args(["impact", "src/lexer.rs", "--group-by", "file"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains(&format!("in {} files on this page", groups.len())),
        "{stdout}"
    );

    // search's path filter reads a folder the same way.
    let (code, out) = env.json(&["search", "tokenize", "--path", "src"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out["hits"].as_array().unwrap().is_empty(), "{out}");
    let (code, _) = env.json(&["search", "tokenize", "--path", "nowhere"]);
    assert_eq!(code, 4);
}
