//! Where a checkout is: `HEAD`'s commit and branch, whether the working tree differs,
//! and which files move `HEAD`.

use loci_git::{Head, Repo};

use crate::support::TempRepo;

#[test]
fn head_names_the_commit_and_branch_then_none_when_detached() {
    let r = TempRepo::new();
    assert_eq!(
        Repo::open(&r.root).unwrap().head_state().unwrap(),
        Head {
            commit: None,
            branch: Some("main".into())
        },
        "an unborn branch has a name but no commit"
    );
    r.write("a.rs", "fn a() {}\n");
    let first = r.commit("one");
    let repo = Repo::open(&r.root).unwrap();
    assert_eq!(
        repo.head_state().unwrap(),
        Head {
            commit: Some(first.clone()),
            branch: Some("main".into())
        }
    );
    r.write("a.rs", "fn a() { b() }\n");
    let second = r.commit("two");
    r.git(&["checkout", "-q", "--detach", &first]);
    let detached = Repo::open(&r.root).unwrap().head_state().unwrap();
    assert_eq!(detached.commit.as_deref(), Some(first.as_str()));
    assert_eq!(detached.branch, None);
    r.git(&["checkout", "-q", "main"]);
    assert_eq!(
        Repo::open(&r.root).unwrap().head_state().unwrap().commit,
        Some(second)
    );
}

#[test]
fn worktree_is_modified_by_edits_and_untracked_files_but_not_by_loci_own_folder() {
    let r = TempRepo::new();
    r.write("a.rs", "fn a() {}\n");
    r.commit("one");
    let repo = Repo::open(&r.root).unwrap();
    assert!(!repo.worktree_modified(".loci").unwrap());
    r.write(".loci/index.db", "x");
    assert!(
        !repo.worktree_modified(".loci").unwrap(),
        "loci's own folder is no change to the code"
    );
    r.write("b.rs", "fn b() {}\n");
    assert!(
        repo.worktree_modified(".loci").unwrap(),
        "an untracked file"
    );
    std::fs::remove_file(r.root.join("b.rs")).unwrap();
    r.write("a.rs", "fn a() { 1 }\n");
    assert!(repo.worktree_modified(".loci").unwrap(), "an edit");
}

#[test]
fn head_files_are_head_packed_refs_and_refs_but_not_locks_or_objects() {
    let r = TempRepo::new();
    r.write("a.rs", "fn a() {}\n");
    r.commit("one");
    let files = Repo::open(&r.root).unwrap().head_files();
    let git = r.root.join(".git");
    assert!(files.moves_head(&git.join("HEAD")));
    assert!(files.moves_head(&git.join("packed-refs")));
    assert!(files.moves_head(&git.join("refs/heads/main")));
    assert!(!files.moves_head(&git.join("refs/heads/main.lock")));
    assert!(!files.moves_head(&git.join("HEAD.lock")));
    assert!(!files.moves_head(&git.join("index")));
    assert!(!files.moves_head(&git.join("objects/ab/cdef")));
    assert!(!files.moves_head(&r.root.join("HEAD")));
}
