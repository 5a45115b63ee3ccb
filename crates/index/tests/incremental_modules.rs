//! Incremental runs equal a fresh index for every kind of dependency between files:
//! imported modules, crate names and re-exports, receiver types and bases, return
//! types, tsconfig paths, go.mod module paths and new files in a package.

use crate::common;

use common::{calls_from, differs_from_fresh, index, reindex_equals_fresh, write_tree};

/// One language's module-level import: a tree where one file imports a module or
/// package (a directory, or a file), then files added to and removed from it.
struct ModuleCase {
    lang: &'static str,
    base: &'static [(&'static str, &'static str)],
    /// Files added inside the imported module (defining names nobody uses), one run each.
    added: &'static [(&'static str, &'static str)],
    /// Files removed from it afterwards, one run each.
    removed: &'static [&'static str],
    /// Files added elsewhere under a directory of the same name, which the import cannot
    /// name: nothing but the new file is re-resolved.
    beside: &'static [(&'static str, &'static str)],
}

const MODULE_CASES: &[ModuleCase] = &[
    ModuleCase {
        lang: "rust (mod + use)",
        base: &[
            (
                "src/lib.rs",
                "mod m;\nuse crate::m::Handler;\npub fn run(h: Handler) {}\n",
            ),
            ("src/m/a.rs", "pub fn a_fn() {}\n"),
        ],
        added: &[
            ("src/m/b.rs", "pub fn qq_other() {}\n"),
            ("src/m/c.rs", "pub struct Handler;\n"),
        ],
        removed: &["src/m/a.rs", "src/m/b.rs"],
        beside: &[("src/other/Handler/x.rs", "pub fn qq_x() {}\n")],
    },
    ModuleCase {
        lang: "python (package, from pkg import)",
        base: &[
            (
                "app/main.py",
                "import pkg\nfrom pkg import tools\n\ndef main():\n    return tools.run()\n",
            ),
            ("pkg/__init__.py", "VERSION = 1\n"),
            ("pkg/tools.py", "def run():\n    return 1\n"),
        ],
        added: &[("pkg/qq_extra.py", "def qq_other():\n    return 2\n")],
        removed: &["pkg/tools.py", "pkg/__init__.py"],
        beside: &[("lib/tools/helpers.py", "def qq_help():\n    return 3\n")],
    },
    ModuleCase {
        lang: "javascript (directory import)",
        base: &[
            (
                "web/app.js",
                "import * as lib from './lib';\nexport function start() { return lib.greet(); }\n",
            ),
            (
                "web/lib/index.js",
                "export function greet() { return 1; }\n",
            ),
        ],
        added: &[("web/lib/qq_more.js", "export function qqOther() {}\n")],
        removed: &["web/lib/index.js"],
        beside: &[],
    },
    ModuleCase {
        lang: "typescript (directory import)",
        base: &[
            (
                "web/app.ts",
                "import * as lib from './lib';\nexport function start(): number { return lib.greet(); }\n",
            ),
            (
                "web/lib/index.ts",
                "export function greet(): number { return 1; }\n",
            ),
        ],
        added: &[("web/lib/qq_more.ts", "export function qqOther(): void {}\n")],
        removed: &["web/lib/index.ts"],
        beside: &[],
    },
    ModuleCase {
        lang: "go (package directory)",
        base: &[
            (
                "main.go",
                "package main\n\nimport \"example.com/proj/util\"\n\nfunc main() { util.Do() }\n",
            ),
            ("util/do.go", "package util\n\nfunc Do() {}\n"),
        ],
        added: &[("util/qq_more.go", "package util\n\nfunc QqOther() {}\n")],
        removed: &["util/do.go"],
        beside: &[("other/util/x.go", "package util\n\nfunc QqX() {}\n")],
    },
    ModuleCase {
        lang: "java (package import)",
        base: &[
            (
                "src/app/Main.java",
                "package app;\nimport lib.tools.*;\nclass Main { void m() { new Tool(); } }\n",
            ),
            (
                "src/lib/tools/Tool.java",
                "package lib.tools;\npublic class Tool {}\n",
            ),
        ],
        added: &[(
            "src/lib/tools/QqExtra.java",
            "package lib.tools;\npublic class QqExtra {}\n",
        )],
        removed: &["src/lib/tools/Tool.java"],
        beside: &[],
    },
    ModuleCase {
        lang: "kotlin (package import)",
        base: &[
            (
                "src/app/Main.kt",
                "package app\nimport lib.tools.*\nfun main() { Tool() }\n",
            ),
            ("src/lib/tools/Tool.kt", "package lib.tools\nclass Tool\n"),
        ],
        added: &[(
            "src/lib/tools/QqExtra.kt",
            "package lib.tools\nclass QqExtra\n",
        )],
        removed: &["src/lib/tools/Tool.kt"],
        beside: &[],
    },
    ModuleCase {
        lang: "c# (namespace directory)",
        base: &[
            (
                "App/Main.cs",
                "using Lib.Tools;\nclass Program { void M() { new Tool(); } }\n",
            ),
            (
                "Lib/Tools/Tool.cs",
                "namespace Lib.Tools { public class Tool {} }\n",
            ),
        ],
        added: &[(
            "Lib/Tools/QqExtra.cs",
            "namespace Lib.Tools { public class QqExtra {} }\n",
        )],
        removed: &["Lib/Tools/Tool.cs"],
        beside: &[],
    },
    ModuleCase {
        lang: "swift (module directory)",
        base: &[
            (
                "App/main.swift",
                "import Tools\nfunc start() { helper() }\n",
            ),
            ("Tools/Helper.swift", "func helper() {}\n"),
        ],
        added: &[("Tools/QqExtra.swift", "func qqOther() {}\n")],
        removed: &["Tools/Helper.swift"],
        beside: &[],
    },
    ModuleCase {
        lang: "c (include of a file that appears)",
        base: &[(
            "src/main.c",
            "#include \"inc/tools.h\"\nint main(void) { return tool(); }\n",
        )],
        added: &[("src/inc/tools.h", "int qq_other(void);\n")],
        removed: &["src/inc/tools.h"],
        beside: &[],
    },
    ModuleCase {
        lang: "c++ (include of a file that appears)",
        base: &[(
            "src/main.cpp",
            "#include \"inc/tools.hpp\"\nint main() { return tool(); }\n",
        )],
        added: &[("src/inc/tools.hpp", "int qq_other();\n")],
        removed: &["src/inc/tools.hpp"],
        beside: &[],
    },
    ModuleCase {
        lang: "php (require, use of a namespace)",
        base: &[
            (
                "src/main.php",
                "<?php\nrequire 'lib/tools.php';\nuse App\\Models\\User;\nfunction start() { return new User(); }\n",
            ),
            (
                "App/Models/User.php",
                "<?php\nnamespace App\\Models;\nclass User {}\n",
            ),
        ],
        added: &[
            ("src/lib/tools.php", "<?php\nfunction qq_other() {}\n"),
            (
                "App/Models/QqOther.php",
                "<?php\nnamespace App\\Models;\nclass QqOther {}\n",
            ),
        ],
        removed: &["App/Models/User.php", "src/lib/tools.php"],
        beside: &[],
    },
    ModuleCase {
        lang: "ruby (require of a directory's files)",
        base: &[
            (
                "app/main.rb",
                "require_relative 'lib/tools'\ndef start\n  run_tool\nend\n",
            ),
            ("lib/tools/runner.rb", "def run_tool\n  1\nend\n"),
        ],
        added: &[("lib/tools/qq_extra.rb", "def qq_other\n  2\nend\n")],
        removed: &["lib/tools/runner.rb"],
        beside: &[],
    },
    ModuleCase {
        lang: "bash (source of a file that appears)",
        base: &[(
            "bin/run.sh",
            "#!/bin/bash\nsource ./lib/tools.sh\nstart() { tool; }\n",
        )],
        added: &[("bin/lib/tools.sh", "qq_other() { :; }\n")],
        removed: &["bin/lib/tools.sh"],
        beside: &[],
    },
];

#[test]
fn files_added_to_and_removed_from_imported_modules_equal_fresh_index() {
    let mut failures = Vec::new();
    for case in MODULE_CASES {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_tree(root, case.base);
        index(root);
        let mut check = |what: String| {
            let report = index(root);
            assert!(report.wrote, "{}: {what}: nothing written", case.lang);
            if let Some(diff) = differs_from_fresh(root) {
                failures.push(format!("{}: after {what}:\n{diff}", case.lang));
            }
        };
        for &(path, content) in case.added {
            write_tree(root, &[(path, content)]);
            check(format!("adding {path}"));
        }
        for &path in case.removed {
            std::fs::remove_file(root.join(path)).unwrap();
            check(format!("removing {path}"));
        }
        for &(path, content) in case.beside {
            write_tree(root, &[(path, content)]);
            let report = index(root);
            if report.files_resolved != 1 {
                failures.push(format!(
                    "{}: adding {path}, which no import names, re-resolved {} files",
                    case.lang, report.files_resolved
                ));
            }
            if let Some(diff) = differs_from_fresh(root) {
                failures.push(format!("{}: after adding {path}:\n{diff}", case.lang));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn crate_renames_reexport_changes_and_new_module_files_equal_fresh_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(
        root,
        &[
            ("Cargo.toml", "[workspace]\nmembers = [\"core\", \"app\"]\n"),
            ("core/Cargo.toml", "[package]\nname = \"my-core\"\n"),
            ("core/src/lib.rs", "mod engine;\npub use engine::start;\n"),
            (
                "core/src/engine.rs",
                "pub fn start() {}\npub fn begin() {}\n",
            ),
            ("app/Cargo.toml", "[package]\nname = \"app\"\n"),
            (
                "app/src/main.rs",
                "fn main() {\n    my_core::start();\n    core2::start();\n    core2::tools::run();\n}\n",
            ),
        ],
    );
    index(root);
    assert_eq!(calls_from(root, "main"), ["core/src/engine.rs:start"]);
    let step = |what: &str, files: &[(&str, &str)], expected: &[&str]| {
        write_tree(root, files);
        reindex_equals_fresh(root, what, "main", expected);
    };
    // `my_core::start()` no longer names a crate; `core2::start()` now does.
    step(
        "renaming the crate",
        &[("core/Cargo.toml", "[package]\nname = \"core2\"\n")],
        &["core/src/engine.rs:start"],
    );
    step(
        "re-exporting another function under the same name",
        &[(
            "core/src/lib.rs",
            "mod engine;\npub use engine::begin as start;\n",
        )],
        &["core/src/engine.rs:begin"],
    );
    step(
        "adding the module file a path names",
        &[("core/src/tools.rs", "pub fn run() {}\n")],
        &["core/src/engine.rs:begin", "core/src/tools.rs:run"],
    );
}

#[test]
fn a_receiver_types_changed_bases_equal_fresh_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let rt = |bases: &str| {
        format!(
            "pub struct Handle;\npub struct Other;\nimpl Handle {{ pub fn current() -> Handle {{ Handle }} }}\n\
             impl Other {{ pub fn spawn_it(&self) {{}} }}\npub trait Spawn {{ fn spawn_it(&self) {{}} }}\n{bases}"
        )
    };
    write_tree(
        root,
        &[
            ("src/lib.rs", "mod rt;\nmod user;\n"),
            ("src/rt.rs", &rt("impl Spawn for Handle {}\n")),
            (
                "src/user.rs",
                "pub fn go() {\n    let h = crate::rt::Handle::current();\n    h.spawn_it();\n}\n",
            ),
        ],
    );
    index(root);
    let spawn_edges = |root: &std::path::Path| -> Vec<String> {
        let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
        conn.prepare(
            "SELECT d.qualified_name FROM edges e JOIN symbols d ON d.id = e.dst_symbol
             WHERE e.kind = 'CALLS' AND d.name = 'spawn_it'",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
    };
    // Only the trait Handle implements, never Other's method of the same name.
    assert_eq!(spawn_edges(root), ["Spawn::spawn_it"]);
    write_tree(root, &[("src/rt.rs", &rt(""))]);
    assert!(index(root).wrote);
    if let Some(diff) = differs_from_fresh(root) {
        panic!("after removing the trait impl:\n{diff}");
    }
    assert_eq!(spawn_edges(root), Vec::<String>::new());
}

#[test]
fn a_changed_return_type_equals_fresh_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let gin = |returns: &str| {
        format!(
            "package gin\ntype Engine struct{{}}\ntype node struct{{}}\nfunc (e *Engine) addRoute() {{}}\n\
             func (n *node) addRoute() {{}}\nfunc New() {returns} {{ return nil }}\n"
        )
    };
    write_tree(
        root,
        &[
            ("gin.go", &gin("*Engine")),
            (
                "use.go",
                "package gin\nfunc use() {\n\tr := New()\n\tr.addRoute()\n}\n",
            ),
        ],
    );
    index(root);
    let targets = |root: &std::path::Path| -> Vec<String> {
        let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
        conn.prepare(
            "SELECT d.qualified_name FROM edges e JOIN symbols d ON d.id = e.dst_symbol
             WHERE e.kind = 'CALLS' AND d.name = 'addRoute'",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
    };
    assert_eq!(targets(root), ["Engine.addRoute"]);
    // Only the signature changes: New keeps its id, and use.go must follow it.
    write_tree(root, &[("gin.go", &gin("*node"))]);
    assert!(index(root).wrote);
    if let Some(diff) = differs_from_fresh(root) {
        panic!("after changing New's return type:\n{diff}");
    }
    assert_eq!(targets(root), ["node.addRoute"]);
}

#[test]
fn tsconfig_and_go_mod_changes_and_new_package_files_equal_fresh_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(
        root,
        &[
            (
                "tsconfig.json",
                "{\n  // paths\n  \"compilerOptions\": { \"paths\": { \"@lib/*\": [\"lib/*\"] } }\n}\n",
            ),
            ("lib/a.ts", "export function pad() {}\n"),
            ("vendor/a.ts", "export function pad() {}\n"),
            ("web/b.ts", "export function pad() {}\n"),
            (
                "app/main.ts",
                "import { pad } from '@lib/a';\nimport { fmt } from './fmt';\nexport function run() {\n  pad();\n  fmt();\n}\n",
            ),
            ("go.mod", "module example.com/m\n"),
            ("pkg/x/x.go", "package x\n\nfunc F() {}\n"),
            ("other/x/x.go", "package x\n\nfunc F() {}\n\nfunc G() {}\n"),
            (
                "main.go",
                "package main\n\nimport \"example.com/m/pkg/x\"\n\nfunc main() {\n\tx.F()\n\tx.G()\n}\n",
            ),
        ],
    );
    index(root);
    assert_eq!(calls_from(root, "run"), ["lib/a.ts:pad"]);
    assert_eq!(calls_from(root, "main"), ["pkg/x/x.go:F"]);
    let step = |what: &str, files: &[(&str, &str)], caller: &str, expected: &[&str]| {
        write_tree(root, files);
        reindex_equals_fresh(root, what, caller, expected);
    };
    step(
        "pointing the tsconfig alias at another folder",
        &[(
            "tsconfig.json",
            "{ \"compilerOptions\": { \"paths\": { \"@lib/*\": [\"web/*\",] } } }\n",
        )],
        "run",
        // The import names no file now: the call is linked by name alone.
        &["lib/a.ts:pad", "vendor/a.ts:pad", "web/b.ts:pad"],
    );
    step(
        "adding the file the alias now names",
        &[("web/a.ts", "export function pad() {}\n")],
        "run",
        &["web/a.ts:pad"],
    );
    step(
        "adding the folder index file a relative import names",
        &[("app/fmt/index.ts", "export function fmt() {}\n")],
        "run",
        &["app/fmt/index.ts:fmt", "web/a.ts:pad"],
    );
    step(
        "adding a file to the imported Go package",
        &[("pkg/x/y.go", "package x\n\nfunc G() {}\n")],
        "main",
        &["pkg/x/x.go:F", "pkg/x/y.go:G"],
    );
    // No module of the workspace declares the path now: the folder-suffix rules decide
    // (they still reach pkg/x's F); what matters is that both runs agree.
    write_tree(root, &[("go.mod", "module example.com/other\n")]);
    assert!(index(root).wrote, "renaming the Go module: nothing written");
    if let Some(diff) = differs_from_fresh(root) {
        panic!("after renaming the Go module:\n{diff}");
    }
    assert!(calls_from(root, "main").contains(&"pkg/x/x.go:F".to_string()));
}
