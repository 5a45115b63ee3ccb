//! `changes` over real repositories made with the `git` CLI and real indexes: what a
//! working-tree edit, a commit range, a rename, a merge, a rebase, a detached HEAD, a
//! shallow clone and a submodule change in the graph, and the errors of a folder
//! outside git and a revision that does not exist.

use std::path::Path;

use loci_api::changes::{
    ChangesAnswer, ChangesRequest, FileStatus, NotRead, SymbolChange, changes,
};
use loci_api::{ErrorKind, Located, ReadOptions, Workspace};

use crate::git_support::{TempRepo, git};

fn index(root: &Path) {
    loci_index::index_workspace(
        &loci_index::IndexOptions::new(root),
        &loci_index::NoProgress,
    )
    .unwrap();
}

fn handle(root: &Path) -> Workspace {
    Workspace::new(Located {
        root: root.to_path_buf(),
        index_path: loci_store::index_path_for(root),
        decider: loci_lifecycle::state::Decider::Marker,
    })
}

fn ask(root: &Path, req: ChangesRequest) -> Result<ChangesAnswer, loci_api::ApiError> {
    changes(&handle(root), &req, &ReadOptions::default())
}

fn rev(r: &str) -> ChangesRequest {
    ChangesRequest {
        rev: Some(r.into()),
        ..ChangesRequest::default()
    }
}

/// (change, qualified name) of every changed definition.
fn changed(a: &ChangesAnswer) -> Vec<(SymbolChange, &str)> {
    a.symbols
        .iter()
        .map(|s| (s.change, s.qualified_name.as_str()))
        .collect()
}

const CORE: &str = "def target(x):\n    return x + 1\n\n\ndef other():\n    return 2\n";
const APP: &str = "from pkg.core import target\n\n\ndef run():\n    return target(1)\n\n\ndef main():\n    return run()\n";
const TEST: &str =
    "from pkg.core import target\n\n\ndef test_target():\n    assert target(1) == 2\n";

/// A Python project: `target` called by `run` (called by `main`) and by a test.
fn project() -> TempRepo {
    let r = TempRepo::new();
    r.write("pkg/core.py", CORE);
    r.write("pkg/app.py", APP);
    r.write("tests/test_core.py", TEST);
    r.commit("one");
    r
}

#[test]
fn a_working_tree_edit_names_its_definitions_callers_impact_and_tests() {
    let r = project();
    index(&r.root);
    r.write(
        "pkg/core.py",
        "def target(x):\n    return x + 2\n\n\ndef added():\n    return 3\n",
    );
    let a = ask(&r.root, ChangesRequest::default()).unwrap();
    assert_eq!(a.base.label, "HEAD");
    assert!(a.base.commit.is_some() && a.head.commit.is_none());
    assert_eq!(a.files.len(), 1);
    assert_eq!(a.files[0].status, FileStatus::Modified);
    assert_eq!(
        changed(&a),
        [
            (SymbolChange::Changed, "target"),
            (SymbolChange::Added, "added"),
            (SymbolChange::Removed, "other")
        ]
    );
    let t = &a.symbols[0];
    assert!(t.reach.in_index);
    let callers: Vec<&str> = t
        .reach
        .callers
        .iter()
        .map(|c| c.qualified_name.as_str())
        .collect();
    assert_eq!(callers, ["run", "test_target"]);
    assert_eq!(t.reach.callers_total, 2);
    assert_eq!(t.reach.impact.depth, 2);
    assert_eq!(
        t.reach.impact.symbols, 3,
        "run, main (depth 2) and the test"
    );
    let tests: Vec<&str> = t
        .reach
        .tests
        .iter()
        .map(|c| c.qualified_name.as_str())
        .collect();
    assert_eq!(tests, ["test_target"]);
    assert!(!a.symbols[1].reach.in_index, "`added` is not indexed yet");
    assert_eq!(
        a.index.changed_files,
        ["pkg/core.py"],
        "the answer says the index lags"
    );
    // Depth 1 leaves `main` out.
    let shallow = ask(
        &r.root,
        ChangesRequest {
            depth: Some(1),
            ..ChangesRequest::default()
        },
    )
    .unwrap();
    assert_eq!(shallow.symbols[0].reach.impact.symbols, 2);
    // Paged: one definition per page, the cursor going on.
    let first = ask(
        &r.root,
        ChangesRequest {
            page: loci_api::PageRequest::first(1),
            ..ChangesRequest::default()
        },
    )
    .unwrap();
    assert_eq!((first.symbols.len(), first.page.total), (1, 3));
    assert_eq!(first.page.next_cursor.as_deref(), Some("1"));
}

#[test]
fn a_commit_range_reads_each_side_from_its_blobs_and_leaves_tree_and_index_alone() {
    let r = project();
    let one = r.git(&["rev-parse", "HEAD"]).trim().to_string();
    r.write("pkg/core.py", CORE.replace("x + 1", "x * 3"));
    r.write("pkg/extra.py", "def extra():\n    return 1\n");
    let two = r.commit("two");
    // The working tree moves on to a third state; the index reflects it.
    r.write("pkg/core.py", "def target(x):\n    return 0\n");
    r.commit("three");
    index(&r.root);
    let index_path = loci_store::index_path_for(&r.root);
    let before = std::fs::read(&index_path).unwrap();
    let a = ask(&r.root, rev(&format!("{one}..{two}"))).unwrap();
    assert_eq!(a.base.commit.as_deref(), Some(one.as_str()));
    assert_eq!(a.head.commit.as_deref(), Some(two.as_str()));
    let mut got = changed(&a);
    got.sort();
    assert_eq!(
        got,
        [
            (SymbolChange::Added, "extra"),
            (SymbolChange::Changed, "target")
        ]
    );
    let target = a
        .symbols
        .iter()
        .find(|s| s.qualified_name == "target")
        .unwrap();
    assert_eq!(
        (target.line, target.end_line),
        (1, 2),
        "the span on B's side"
    );
    assert_eq!(
        std::fs::read(&index_path).unwrap(),
        before,
        "the index is untouched"
    );
    assert_eq!(r.git(&["status", "--porcelain"]), "", "nothing checked out");
    assert_eq!(
        std::fs::read_to_string(r.root.join("pkg/core.py")).unwrap(),
        "def target(x):\n    return 0\n"
    );
    // A...B starts from the merge base; REV alone compares with the working tree.
    let from_base = ask(&r.root, rev(&format!("{one}...{two}"))).unwrap();
    assert!(from_base.base.label.starts_with("merge-base("));
    assert_eq!(from_base.symbols.len(), 2);
    let against_tree = ask(&r.root, rev(&one)).unwrap();
    assert!(against_tree.head.commit.is_none());
}

#[test]
fn a_renamed_file_keeps_its_definitions_and_a_moved_one_is_paired() {
    let r = project();
    let doc: String = (0..20).map(|i| format!("# the core, line {i}\n")).collect();
    r.write("pkg/core.py", format!("{doc}{CORE}"));
    r.commit("a longer core");
    // Renamed with an edit inside `target`; `other` moves to another file unchanged.
    git(&r.root, &["mv", "pkg/core.py", "pkg/kernel é.py"]);
    r.write(
        "pkg/kernel é.py",
        format!("{doc}def target(x):\n    return x + 5\n"),
    );
    r.write("pkg/util.py", "def other():\n    return 2\n");
    r.commit("rename");
    index(&r.root);
    let a = ask(&r.root, rev("HEAD~1..HEAD")).unwrap();
    let renamed = a
        .files
        .iter()
        .find(|f| f.status == FileStatus::Renamed)
        .unwrap();
    assert_eq!(renamed.path, "pkg/kernel é.py");
    assert_eq!(renamed.old_path.as_deref(), Some("pkg/core.py"));
    assert!(renamed.similarity.is_some());
    let target = a
        .symbols
        .iter()
        .find(|s| s.qualified_name == "target")
        .unwrap();
    assert_eq!(target.change, SymbolChange::Changed);
    assert_eq!(target.old.as_ref().unwrap().path, "pkg/core.py");
    let other = a
        .symbols
        .iter()
        .find(|s| s.qualified_name == "other")
        .unwrap();
    assert_eq!(other.change, SymbolChange::Moved);
    assert_eq!(
        (
            other.path.as_str(),
            other.old.as_ref().unwrap().path.as_str()
        ),
        ("pkg/util.py", "pkg/core.py")
    );
    assert_eq!(a.symbols.len(), 2, "{:?}", changed(&a));
}

#[test]
fn merges_rebases_and_a_detached_head_are_ordinary_sides() {
    let r = project();
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write("pkg/feature.py", "def feature():\n    return 1\n");
    r.commit("feature");
    r.git(&["checkout", "-q", "main"]);
    r.write(
        "pkg/app.py",
        APP.replace("return run()", "return run() + 0"),
    );
    r.commit("main moves");
    // Rebased onto main, `main..feature` holds the feature's own change only.
    r.git(&["checkout", "-q", "feature"]);
    r.git(&["rebase", "-q", "main"]);
    index(&r.root);
    let a = ask(&r.root, rev("main..feature")).unwrap();
    assert_eq!(changed(&a), [(SymbolChange::Added, "feature")]);
    // Merged into main: the merge's first parent to it is the feature's change.
    r.git(&["checkout", "-q", "main"]);
    r.git(&["merge", "-q", "--no-ff", "-m", "merge", "feature"]);
    let merged = ask(&r.root, rev("HEAD^1..HEAD")).unwrap();
    assert_eq!(changed(&merged), [(SymbolChange::Added, "feature")]);
    // Detached: HEAD is the commit checked out.
    r.git(&["checkout", "-q", "--detach", "HEAD~1"]);
    let detached = ask(&r.root, ChangesRequest::default()).unwrap();
    assert!(detached.symbols.is_empty() && detached.base.commit.is_some());
    let back = ask(&r.root, rev("HEAD..main")).unwrap();
    assert_eq!(changed(&back), [(SymbolChange::Added, "feature")]);
}

#[test]
fn a_shallow_clone_answers_what_it_has_and_names_what_it_lacks() {
    let r = project();
    r.write("pkg/core.py", CORE.replace("x + 1", "x + 9"));
    r.commit("two");
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", r.root.display());
    git(
        dir.path(),
        &["clone", "-q", "--depth", "1", &url, "shallow"],
    );
    let clone = dir.path().join("shallow");
    index(&clone);
    std::fs::write(clone.join("pkg/core.py"), CORE).unwrap();
    let a = ask(&clone, ChangesRequest::default()).unwrap();
    assert_eq!(changed(&a), [(SymbolChange::Changed, "target")]);
    let e = ask(&clone, rev("HEAD~1..HEAD")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotFound, "{e:?}");
    assert!(e.message.contains("HEAD~1..HEAD"), "{}", e.message);
}

#[test]
fn a_submodule_change_is_listed_without_definitions() {
    let sub = project();
    let r = project();
    git(
        &r.root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            sub.root.to_str().unwrap(),
            "vendor/sub",
        ],
    );
    r.commit("add submodule");
    sub.write("pkg/core.py", CORE.replace("x + 1", "x + 4"));
    sub.commit("sub moves");
    git(
        &r.root.join("vendor/sub"),
        &["pull", "-q", "origin", "main"],
    );
    index(&r.root);
    let a = ask(&r.root, ChangesRequest::default()).unwrap();
    let f = a.files.iter().find(|f| f.path == "vendor/sub").unwrap();
    assert_eq!(f.content, loci_api::changes::FileContent::Submodule);
    assert_eq!(f.not_read, Some(NotRead::NotSource));
    assert!(a.symbols.is_empty(), "{:?}", changed(&a));
}

#[test]
fn binary_huge_and_odd_files_are_listed_not_read() {
    let r = project();
    index(&r.root);
    r.write("blob.bin", [0u8, 159, 146, 150, 0, 1]);
    r.write(
        "big.py",
        format!("def big():\n    return 1\n{}", "# pad\n".repeat(200_000)),
    );
    r.write("notes with space.txt", "not code\n");
    let a = ask(&r.root, ChangesRequest::default()).unwrap();
    let why = |p: &str| a.files.iter().find(|f| f.path == p).unwrap().not_read;
    assert_eq!(why("blob.bin"), Some(NotRead::Binary));
    assert_eq!(
        why("big.py"),
        Some(NotRead::Binary),
        "past git's size limit: no hunks"
    );
    assert_eq!(why("notes with space.txt"), Some(NotRead::NotSource));
    assert!(a.symbols.is_empty());
}

#[test]
fn a_committed_source_file_that_turns_binary_is_listed_not_read() {
    // Between two commits libgit2 learns that a file is binary only once it loads the
    // blobs for the hunks, after the sides were read for parsing.
    let r = project();
    r.write("pkg/data.py", "def data():\n    return 1\n");
    r.commit("text");
    let mut bytes = b"def data():\n".to_vec();
    bytes.extend([0u8, 159, 146, 150, 0, 1]);
    r.write("pkg/data.py", bytes);
    r.commit("binary");
    index(&r.root);
    let a = ask(&r.root, rev("HEAD~1..HEAD")).unwrap();
    let file = a.files.iter().find(|f| f.path == "pkg/data.py").unwrap();
    assert_eq!(file.not_read, Some(NotRead::Binary));
    assert!(a.symbols.is_empty(), "{:?}", changed(&a));
}

#[test]
fn a_page_of_many_definitions_keeps_their_order_and_each_its_own_reach() {
    // Enough changed definitions that their callers are walked on several connections
    // at once: each answer must still be its own definition's, in file and line order.
    const N: usize = 40;
    let r = TempRepo::new();
    let defs = |body: &str| -> String {
        (0..N)
            .map(|i| format!("def f{i:02}():\n    return {body}\n\n\n"))
            .collect()
    };
    r.write("pkg/many.py", defs("1"));
    let callers: String = (0..N)
        .map(|i| format!("def call_{i:02}():\n    return f{i:02}()\n\n\n"))
        .collect();
    r.write(
        "pkg/users.py",
        format!("from pkg.many import *\n\n\n{callers}"),
    );
    r.commit("one");
    r.write("pkg/many.py", defs("2"));
    r.commit("two");
    index(&r.root);
    let a = ask(&r.root, rev("HEAD~1..HEAD")).unwrap();
    let names: Vec<&str> = a
        .symbols
        .iter()
        .map(|s| s.qualified_name.as_str())
        .collect();
    let expected: Vec<String> = (0..N).map(|i| format!("f{i:02}")).collect();
    assert_eq!(names, expected);
    for s in &a.symbols {
        assert!(s.reach.in_index, "{}", s.qualified_name);
        let callers: Vec<&str> = s
            .reach
            .callers
            .iter()
            .map(|c| c.qualified_name.as_str())
            .collect();
        assert_eq!(
            callers,
            [format!("call_{}", &s.qualified_name[1..])],
            "{}",
            s.qualified_name
        );
    }
}

#[test]
fn a_folder_outside_git_a_missing_revision_and_conflicting_sides_are_refused() {
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join("a.py"), "def a():\n    pass\n").unwrap();
    index(plain.path());
    let e = ask(plain.path(), ChangesRequest::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotARepository);
    assert_eq!(e.exit_code(), loci_api::ExitCode::InvalidInput);
    assert!(
        !e.message.contains(&*plain.path().to_string_lossy()),
        "no host path"
    );
    let r = project();
    index(&r.root);
    let e = ask(&r.root, rev("no-such-branch")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotFound);
    let both = ChangesRequest {
        rev: Some("HEAD".into()),
        staged: true,
        ..ChangesRequest::default()
    };
    assert!(
        ask(&r.root, both).unwrap().head.commit.is_none(),
        "the revision wins"
    );
    let deep = ChangesRequest {
        depth: Some(33),
        ..ChangesRequest::default()
    };
    assert_eq!(
        ask(&r.root, deep).unwrap_err().kind,
        ErrorKind::InvalidInput
    );
}

#[test]
fn staged_and_unstaged_split_the_working_tree() {
    let r = project();
    index(&r.root);
    r.write("pkg/core.py", CORE.replace("x + 1", "x + 7"));
    git(&r.root, &["add", "pkg/core.py"]);
    r.write("pkg/app.py", APP.replace("target(1)", "target(2)"));
    let staged = ask(
        &r.root,
        ChangesRequest {
            staged: true,
            ..ChangesRequest::default()
        },
    )
    .unwrap();
    assert_eq!(changed(&staged), [(SymbolChange::Changed, "target")]);
    assert_eq!(staged.head.label, "index");
    let unstaged = ask(
        &r.root,
        ChangesRequest {
            worktree: true,
            ..ChangesRequest::default()
        },
    )
    .unwrap();
    assert_eq!(changed(&unstaged), [(SymbolChange::Changed, "run")]);
    let all = ask(&r.root, ChangesRequest::default()).unwrap();
    assert_eq!(all.symbols.len(), 2);
}

/// Everything a changed definition says that does not depend on the live index.
fn definitions_of(a: &ChangesAnswer) -> Vec<String> {
    a.symbols
        .iter()
        .map(|s| {
            let old = s
                .old
                .as_ref()
                .map(|o| (o.path.as_str(), o.line, o.end_line));
            format!(
                "{:?} {} {} {:?} {} {}-{} {:?} {}",
                s.change,
                s.name,
                s.qualified_name,
                s.kind,
                s.path,
                s.line,
                s.end_line,
                old,
                s.signature
            )
        })
        .collect()
}

#[test]
fn either_side_read_from_the_index_gives_the_answer_parsing_gives() {
    // Real code on the old side (this crate's own module), edited on the new side: one
    // function changed, one removed, one added, one moved to another file; and a Rust
    // file whose macro-made definitions the extractor emits out of document order.
    let own = include_str!("../src/changes/mod.rs");
    let macros = "macro_rules! make { ($n:ident) => { fn $n() {} }; }\nmake!(made);\nfn kept() {}\nfn edited() { 1; }\n";
    let r = TempRepo::new();
    r.write("src/changes.rs", own);
    r.write("src/macros.rs", macros);
    r.write("src/other.rs", "fn other() {}\n");
    let one = r.commit("one");
    let moved_out = "fn side_of(s: &loci_git::SideInfo) -> ChangeSide {";
    let at = own.find(moved_out).expect("side_of is in the module");
    let (head, moved) = own.split_at(at);
    r.write(
        "src/changes.rs",
        head.replace(
            "let window = req.page.window",
            "let _x = 1;\n    let window = req.page.window",
        )
        .replace(
            "/// loci's own folder is never a change",
            "fn added_here() {}\n\n/// loci's own folder is never a change",
        ),
    );
    r.write("src/other.rs", format!("fn other() {{}}\n{moved}"));
    r.write(
        "src/macros.rs",
        format!(
            "fn first() {{}}\n{}",
            macros
                .replace("1;", "2;")
                .replace("fn kept() {}\n", "")
                .replace("make!(made);", "make!(remade);")
        ),
    );
    let two = r.commit("two");
    let range = rev(&format!("{one}..{two}"));

    // The index holds the new side, then the old side, then neither.
    index(&r.root);
    let new_indexed = ask(&r.root, range.clone()).unwrap();
    r.git(&["checkout", "-q", &one]);
    index(&r.root);
    let old_indexed = ask(&r.root, range.clone()).unwrap();
    r.write("src/changes.rs", "// neither side\n");
    r.write("src/other.rs", "// neither side\n");
    r.write("src/macros.rs", "// neither side\n");
    index(&r.root);
    let parsed = ask(&r.root, range).unwrap();

    let expected = definitions_of(&parsed);
    let changes: Vec<SymbolChange> = parsed.symbols.iter().map(|s| s.change).collect();
    for kind in [
        SymbolChange::Changed,
        SymbolChange::Added,
        SymbolChange::Removed,
        SymbolChange::Moved,
    ] {
        assert!(changes.contains(&kind), "{kind:?} in {expected:#?}");
    }
    assert!(
        expected
            .iter()
            .any(|d| d.contains(" changes ") || d.contains("fn changes(")),
        "{expected:#?}"
    );
    assert_eq!(definitions_of(&new_indexed), expected);
    assert_eq!(definitions_of(&old_indexed), expected);
}
