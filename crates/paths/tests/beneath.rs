//! Creating and listing through the root handle: what is checked is what is
//! used, even when the tree changes in between.

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use loci_paths::{
    FileKind, Probe, Root, RootDir, RootKind, Segment, contain, create_dir_all, list_dirs,
    lookup_root,
};

fn setup() -> (tempfile::TempDir, Root) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("base")).unwrap();
    std::fs::create_dir(dir.path().join("outside")).unwrap();
    let root = lookup_root(
        RootKind::Base,
        Some(dir.path().join("base").as_os_str()),
        None,
    )
    .unwrap();
    (dir, root)
}

fn seg(s: &str) -> Segment {
    Segment::parse(s).unwrap()
}

#[test]
fn mkdir_p_creates_every_missing_component_and_keeps_existing_ones() {
    let (_dir, root) = setup();
    std::fs::create_dir(root.path().join("team")).unwrap();
    let target = contain(&root, &seg("team/app/src")).unwrap();
    let opened = create_dir_all(&target).unwrap();
    assert!(opened.created());
    assert!(root.path().join("team/app/src").is_dir());
    assert!(opened.is_empty().unwrap());
    let again = create_dir_all(&target).unwrap();
    assert!(!again.created());
}

#[test]
fn a_symlink_swapped_in_between_check_and_use_is_refused() {
    let (dir, root) = setup();
    std::fs::create_dir(root.path().join("ws")).unwrap();
    // The check passes: base/ws is a real directory.
    let target = contain(&root, &seg("ws/new")).unwrap();
    let ws = contain(&root, &seg("ws")).unwrap();
    // Then base/ws is replaced by a symlink pointing outside.
    std::fs::remove_dir(root.path().join("ws")).unwrap();
    symlink(dir.path().join("outside"), root.path().join("ws")).unwrap();
    let err = create_dir_all(&target).unwrap_err();
    assert!(
        matches!(err.kind(), "escapes_root" | "symlink_refused"),
        "{err}"
    );
    assert!(!dir.path().join("outside/new").exists());
    // listing through the swapped link is refused too
    let dir_handle = RootDir::open(&root).unwrap();
    let err = dir_handle.list_dirs(Some(&target)).unwrap_err();
    assert!(
        matches!(err.kind(), "escapes_root" | "symlink_refused" | "not_found"),
        "{err}"
    );
    let err = dir_handle.open_dir(&ws).unwrap_err();
    assert!(
        matches!(err.kind(), "escapes_root" | "symlink_refused"),
        "{err}"
    );
}

#[test]
fn an_absolute_symlink_swapped_in_at_the_leaf_is_refused() {
    let (dir, root) = setup();
    let target = contain(&root, &seg("leaf")).unwrap();
    symlink(dir.path().join("outside"), root.path().join("leaf")).unwrap();
    let err = create_dir_all(&target).unwrap_err();
    assert!(
        matches!(err.kind(), "escapes_root" | "symlink_refused"),
        "{err}"
    );
    let err = RootDir::open(&root).unwrap().probe(&target).unwrap_err();
    assert!(
        matches!(err.kind(), "escapes_root" | "symlink_refused"),
        "{err}"
    );
}

#[test]
fn a_file_in_the_way_is_not_a_directory() {
    let (_dir, root) = setup();
    std::fs::write(root.path().join("file"), b"x").unwrap();
    let target = contain(&root, &seg("file")).unwrap();
    assert_eq!(
        create_dir_all(&target).unwrap_err().kind(),
        "not_a_directory"
    );
    let target = contain(&root, &seg("file/child")).unwrap();
    let err = create_dir_all(&target).unwrap_err();
    assert_eq!(err.kind(), "not_a_directory");
    assert!(
        err.to_string().contains("\"file\""),
        "names the component: {err}"
    );
    let handle = RootDir::open(&root).unwrap();
    assert_eq!(handle.probe(&target).unwrap(), Probe::NotADirectory);
    let missing = contain(&root, &seg("nothing/here")).unwrap();
    assert_eq!(handle.probe(&missing).unwrap(), Probe::Missing);
}

#[test]
fn a_contained_path_of_another_root_is_refused() {
    let (dir, root) = setup();
    let other = lookup_root(
        RootKind::Managed,
        Some(dir.path().join("outside").as_os_str()),
        None,
    )
    .unwrap();
    let target = contain(&other, &seg("x")).unwrap();
    let err = RootDir::open(&root)
        .unwrap()
        .create_dir_all(&target)
        .unwrap_err();
    assert_eq!(err.kind(), "wrong_root");
}

#[test]
fn listing_shows_real_directories_only_and_never_outside() {
    let (dir, root) = setup();
    for d in ["b-app", "a-app", ".hidden", "repo/.git"] {
        std::fs::create_dir_all(root.path().join(d)).unwrap();
    }
    std::fs::write(root.path().join("file"), b"x").unwrap();
    std::fs::create_dir(dir.path().join("outside/secret")).unwrap();
    symlink(dir.path().join("outside"), root.path().join("link-out")).unwrap();
    symlink("a-app", root.path().join("link-in")).unwrap();
    std::fs::create_dir(root.path().join("bad\u{202E}name")).unwrap();

    let listing = list_dirs(&root, None).unwrap();
    let names: Vec<&str> = listing.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, [".hidden", "a-app", "b-app", "repo"]);
    assert_eq!(listing.skipped, 1);
    let repo = listing.entries.iter().find(|e| e.name == "repo").unwrap();
    assert!(repo.repository);
    assert!(listing.entries[0].hidden);

    let json = serde_json::to_string(&listing).unwrap();
    assert!(
        !json.contains(&dir.path().display().to_string()),
        "no absolute path in the listing: {json}"
    );

    // `.git` is a directory no segment may name: skipped, never offered.
    let nested = list_dirs(&root, Some(&seg("repo"))).unwrap();
    assert!(nested.entries.is_empty(), "{:?}", nested.entries);
    assert_eq!(nested.skipped, 1);

    let err = list_dirs(&root, Some(&seg("link-out"))).unwrap_err();
    assert_eq!(err.kind(), "escapes_root");
    let err = list_dirs(&root, Some(&seg("missing"))).unwrap_err();
    assert_eq!(err.kind(), "not_found");
}

#[test]
fn probe_entry_does_not_follow_symlinks() {
    let (dir, root) = setup();
    let target = contain(&root, &seg("ws")).unwrap();
    let opened = create_dir_all(&target).unwrap();
    symlink(dir.path().join("outside"), root.path().join("ws/.git")).unwrap();
    assert_eq!(opened.probe_entry(".git").unwrap(), Some(FileKind::Symlink));
    assert_eq!(opened.probe_entry("nope").unwrap(), None);
    assert!(opened.probe_entry("../x").is_err());
}

#[cfg(target_os = "linux")]
#[test]
fn proc_path_names_the_opened_directory() {
    let (_dir, root) = setup();
    let target = contain(&root, &seg("ws")).unwrap();
    let opened = create_dir_all(&target).unwrap();
    let resolved: PathBuf = std::fs::canonicalize(opened.proc_path()).unwrap();
    assert_eq!(
        resolved,
        std::fs::canonicalize(root.path().join("ws")).unwrap()
    );
}
