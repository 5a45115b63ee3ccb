//! Diffs between commits, the index and the working tree: statuses, exact line
//! ranges, renames with their score, binary files, bad revisions, subfolders.

use loci_git::{Compare, Content, GitError, Limits, LineRange, Repo, Status};

use crate::support::{TempRepo, git};

const LIMITS: Limits = Limits {
    max_files: 1000,
    max_file_bytes: 1 << 20,
};

fn lines(n: u32) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn a_modified_file_gives_the_exact_removed_and_added_lines() {
    let r = TempRepo::new();
    r.write("a.txt", lines(10));
    let first = r.commit("one");
    let edited = lines(10)
        .replace("line 3\n", "line three\n")
        .replace("line 8\n", "");
    r.write("a.txt", format!("{edited}line 11\n"));
    let second = r.commit("two");
    let repo = Repo::open(&r.root).unwrap();
    let d = repo
        .diff(&Compare::Rev(format!("{first}..{second}")), LIMITS)
        .unwrap();
    assert_eq!(d.old.commit.as_deref(), Some(first.as_str()));
    assert_eq!(d.new.commit.as_deref(), Some(second.as_str()));
    assert_eq!(d.files.len(), 1);
    let f = &d.files[0];
    assert_eq!(f.status, Status::Modified);
    assert_eq!(f.path(), "a.txt");
    let r1 = |s, e| LineRange { start: s, end: e };
    assert_eq!(f.removed, vec![r1(3, 3), r1(8, 8)]);
    assert_eq!(f.added, vec![r1(3, 3), r1(10, 10)]);
    assert_eq!((f.lines_removed, f.lines_added), (2, 2));
    // The old side's bytes come from the blob, the new side's too (both committed).
    assert_eq!(
        repo.blob(f, false, 1 << 20).unwrap().unwrap(),
        lines(10).into_bytes()
    );
    assert!(repo.blob(f, true, 1 << 20).unwrap().is_some());
    assert_eq!(repo.blob(f, false, 5).unwrap(), None, "over the size limit");
}

#[test]
fn renames_are_followed_with_their_score_and_deletions_listed() {
    let r = TempRepo::new();
    r.write("src/old name.rs", lines(40));
    r.write("gone.rs", "fn gone() {}\n");
    r.commit("one");
    git(&r.root, &["mv", "src/old name.rs", "src/nouveau é.rs"]);
    r.write(
        "src/nouveau é.rs",
        lines(40).replace("line 20\n", "line twenty\n"),
    );
    std::fs::remove_file(r.root.join("gone.rs")).unwrap();
    r.commit("two");
    let repo = Repo::open(&r.root).unwrap();
    let d = repo
        .diff(&Compare::Rev("HEAD~1..HEAD".into()), LIMITS)
        .unwrap();
    let renamed = d
        .files
        .iter()
        .find(|f| f.status == Status::Renamed)
        .unwrap();
    assert_eq!(renamed.old_path.as_deref(), Some("src/old name.rs"));
    assert_eq!(renamed.new_path.as_deref(), Some("src/nouveau é.rs"));
    let score = renamed.similarity.unwrap();
    assert!((90..100).contains(&score), "{score}");
    assert_eq!(renamed.removed, vec![LineRange { start: 20, end: 20 }]);
    let gone = d
        .files
        .iter()
        .find(|f| f.status == Status::Deleted)
        .unwrap();
    assert_eq!(
        (gone.old_path.as_deref(), gone.new_path.as_deref()),
        (Some("gone.rs"), None)
    );
    assert_eq!(gone.removed, vec![LineRange { start: 1, end: 1 }]);
}

#[test]
fn worktree_staged_and_unstaged_are_three_different_sides() {
    let r = TempRepo::new();
    r.write("a.txt", lines(3));
    r.write("b.txt", lines(3));
    r.commit("one");
    r.write("a.txt", lines(4));
    r.git(&["add", "a.txt"]);
    r.write("b.txt", lines(5));
    r.write("new.txt", "untracked\n");
    let repo = Repo::open(&r.root).unwrap();
    let paths = |c: Compare| {
        let d = repo.diff(&c, LIMITS).unwrap();
        d.files
            .iter()
            .map(|f| f.path().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(paths(Compare::Worktree), ["a.txt", "b.txt", "new.txt"]);
    assert_eq!(paths(Compare::Staged), ["a.txt"]);
    assert_eq!(paths(Compare::Unstaged), ["b.txt", "new.txt"]);
    let d = repo.diff(&Compare::Worktree, LIMITS).unwrap();
    assert!(d.new.worktree && d.old.label == "HEAD");
    let new = d.files.iter().find(|f| f.path() == "new.txt").unwrap();
    assert_eq!(new.status, Status::Added);
    assert_eq!(
        repo.blob(new, true, 1 << 20).unwrap(),
        None,
        "worktree side: read from disk"
    );
    assert_eq!(
        new.added,
        vec![LineRange { start: 1, end: 1 }],
        "an untracked file's lines"
    );
}

#[test]
fn binary_files_have_no_hunks_and_the_file_limit_counts_the_rest() {
    let r = TempRepo::new();
    r.write("keep.txt", "x\n");
    r.commit("one");
    r.write("blob.bin", [0u8, 1, 2, 0, 255, 0]);
    for i in 0..5 {
        r.write(&format!("f{i}.txt"), "y\n");
    }
    let repo = Repo::open(&r.root).unwrap();
    let d = repo.diff(&Compare::Worktree, LIMITS).unwrap();
    let bin = d.files.iter().find(|f| f.path() == "blob.bin").unwrap();
    assert_eq!(bin.content, Content::Binary);
    assert!(bin.added.is_empty());
    let small = Limits {
        max_files: 2,
        ..LIMITS
    };
    let d = repo.diff(&Compare::Worktree, small).unwrap();
    assert_eq!((d.files.len(), d.files_total), (2, 6));
}

#[test]
fn bad_revisions_and_folders_outside_git_are_named_errors() {
    let r = TempRepo::new();
    r.write("a.txt", "a\n");
    r.commit("one");
    let repo = Repo::open(&r.root).unwrap();
    for rev in ["no-such-branch", "HEAD~5", "HEAD..nope"] {
        match repo.diff(&Compare::Rev(rev.into()), LIMITS) {
            Err(GitError::UnknownRevision { rev: got, .. }) => assert_eq!(got, rev),
            other => panic!("{rev}: {other:?}"),
        }
    }
    assert!(matches!(
        repo.diff(&Compare::Rev(String::new()), LIMITS),
        Err(GitError::BadRevision(_))
    ));
    let plain = tempfile::tempdir().unwrap();
    assert!(matches!(
        Repo::open(plain.path()),
        Err(GitError::NotARepository { .. })
    ));
}

#[test]
fn a_workspace_in_a_subfolder_sees_only_its_files_relative_to_itself() {
    let r = TempRepo::new();
    r.write("ws/src/a.rs", "fn a() {}\n");
    r.write("other/b.rs", "fn b() {}\n");
    r.commit("one");
    r.write("ws/src/a.rs", "fn a() { b() }\n");
    r.write("other/b.rs", "fn b() { a() }\n");
    let repo = Repo::open(&r.root.join("ws")).unwrap();
    let d = repo.diff(&Compare::Worktree, LIMITS).unwrap();
    let paths: Vec<&str> = d.files.iter().map(|f| f.path()).collect();
    assert_eq!(paths, ["src/a.rs"]);
}

#[test]
fn an_empty_repository_diffs_everything_as_added() {
    let r = TempRepo::new();
    r.write("a.txt", "a\n");
    let repo = Repo::open(&r.root).unwrap();
    let d = repo.diff(&Compare::Worktree, LIMITS).unwrap();
    assert_eq!(d.old.commit, None);
    assert_eq!(d.files[0].status, Status::Added);
}
