//! Barriers 1 and 3 and the loop check, on a real temporary tree:
//!
//! ```text
//! tmp/base/            the projects base
//! tmp/base-outra/      a sibling whose name extends the base's
//! tmp/outside/         anything else
//! ```

use std::ffi::OsStr;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use loci_paths::{
    Locator, Root, RootKind, Segment, check_no_loop, contain, locate, lookup_root, segment_under,
    strictly_inside,
};

struct Tree {
    dir: tempfile::TempDir,
    root: Root,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        for d in ["base", "base-outra", "outside"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        let root = lookup_root(
            RootKind::Base,
            Some(dir.path().join("base").as_os_str()),
            None,
        )
        .unwrap();
        Tree { dir, root }
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn contain(&self, segment: &str) -> Result<PathBuf, &'static str> {
        let segment = Segment::parse(segment).map_err(|e| e.kind())?;
        contain(&self.root, &segment)
            .map(|c| c.path().to_path_buf())
            .map_err(|e| e.kind())
    }
}

#[test]
fn sibling_prefix_is_not_inside_either_way() {
    let t = Tree::new();
    assert!(!strictly_inside(&t.path("base"), &t.path("base-outra")));
    assert!(!strictly_inside(&t.path("base"), &t.path("base-outra/x")));
    assert!(!strictly_inside(&t.path("base-outra"), &t.path("base")));
    assert!(!strictly_inside(&t.path("base-outra"), &t.path("base/x")));
    assert!(strictly_inside(&t.path("base"), &t.path("base/x")));
    assert_eq!(
        segment_under(&t.path("base"), &t.path("base-outra/x"))
            .unwrap_err()
            .kind(),
        "not_under_root"
    );
    assert_eq!(
        segment_under(&t.path("base-outra"), &t.path("base/x"))
            .unwrap_err()
            .kind(),
        "not_under_root"
    );
}

#[test]
fn caller_side_check_returns_the_relative_segment() {
    let t = Tree::new();
    let base = t.path("base");
    let seg = segment_under(&base, &t.path("base/team/app")).unwrap();
    assert_eq!(seg.as_str(), "team/app");
    // lexically harmless spellings of the absolute path are accepted
    let raw = format!("{}//team/./app/", base.display());
    assert_eq!(
        segment_under(&base, Path::new(&raw)).unwrap().as_str(),
        "team/app"
    );
}

/// Each row: an absolute path (relative to the temp dir unless it starts
/// with `/`) and the caller-side verdict.
#[test]
fn caller_side_check_refuses_what_is_not_strictly_under() {
    let t = Tree::new();
    let base = t.path("base");
    let cases: &[(PathBuf, &str)] = &[
        (base.clone(), "is_root"),
        (PathBuf::from(format!("{}/", base.display())), "is_root"),
        (PathBuf::from(format!("{}/.", base.display())), "is_root"),
        (t.path("base/../etc"), "parent_dir_component"),
        (t.path("base/a/../../etc"), "parent_dir_component"),
        (PathBuf::from("/etc"), "not_under_root"),
        (PathBuf::from("/"), "not_under_root"),
        (PathBuf::from("base/a"), "not_absolute"),
        (PathBuf::from(""), "not_absolute"),
        (t.path("base/a\\b"), "backslash"),
        (t.path("base/a\u{FF0F}b"), "look_alike"),
    ];
    for (path, kind) in cases {
        let got = segment_under(&base, path).unwrap_err();
        assert_eq!(got.kind(), *kind, "{path:?}: {got}");
    }
}

#[test]
fn the_base_itself_is_unavailable_never_an_empty_segment() {
    let t = Tree::new();
    match locate(&t.root, &t.path("base")) {
        Locator::Unavailable { reason } => assert!(reason.contains("root itself"), "{reason}"),
        other => panic!("{other:?}"),
    }
    match locate(&t.root, &t.path("base-outra/app")) {
        Locator::Unavailable { reason } => assert!(reason.contains("not under"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        locate(&t.root, &t.path("base/team/app")),
        Locator::Mounted {
            segment: Segment::parse("team/app").unwrap()
        }
    );
}

#[test]
fn contained_paths_are_strictly_inside() {
    let t = Tree::new();
    assert_eq!(t.contain("team/app"), Ok(t.path("base/team/app")));
    assert_eq!(t.contain("app"), Ok(t.path("base/app")));
}

#[test]
fn a_symlink_inside_the_root_pointing_outside_is_refused() {
    let t = Tree::new();
    symlink(t.path("outside"), t.path("base/evil")).unwrap();
    assert_eq!(t.contain("evil"), Err("escapes_root"));
    assert_eq!(t.contain("evil/app"), Err("escapes_root"));
    // to the sibling whose name extends the base's: still outside
    symlink(t.path("base-outra"), t.path("base/sib")).unwrap();
    assert_eq!(t.contain("sib/x"), Err("escapes_root"));
}

#[test]
fn a_symlinked_middle_component_with_a_missing_child_is_refused() {
    let t = Tree::new();
    symlink(t.path("outside"), t.path("base/mid")).unwrap();
    // base/mid exists (a symlink), base/mid/new/deeper does not: the real
    // path of the nearest existing ancestor is outside, suffix re-appended.
    assert_eq!(t.contain("mid/new/deeper"), Err("escapes_root"));
    let err = contain(&t.root, &Segment::parse("mid/new/deeper").unwrap()).unwrap_err();
    assert!(
        err.to_string().contains("outside/new/deeper"),
        "names the real path: {err}"
    );
}

#[test]
fn a_relative_symlink_escaping_through_dotdot_is_refused() {
    let t = Tree::new();
    symlink("../outside", t.path("base/rel")).unwrap();
    assert_eq!(t.contain("rel/x"), Err("escapes_root"));
}

#[test]
fn a_symlink_that_stays_inside_the_root_is_accepted() {
    let t = Tree::new();
    std::fs::create_dir(t.path("base/real")).unwrap();
    symlink("real", t.path("base/alias")).unwrap();
    assert_eq!(t.contain("alias/x"), Ok(t.path("base/alias/x")));
}

#[test]
fn a_symlink_back_to_the_root_itself_is_refused() {
    let t = Tree::new();
    symlink(".", t.path("base/self")).unwrap();
    assert_eq!(t.contain("self"), Err("escapes_root"));
}

#[test]
fn a_dangling_symlink_is_unresolvable() {
    let t = Tree::new();
    symlink(t.path("outside/missing"), t.path("base/dangling")).unwrap();
    assert_eq!(t.contain("dangling"), Err("unresolvable"));
    assert_eq!(t.contain("dangling/x"), Err("unresolvable"));
}

#[test]
fn a_root_reached_through_a_symlink_still_contains() {
    let t = Tree::new();
    symlink(t.path("base"), t.path("base-link")).unwrap();
    let root = lookup_root(RootKind::Base, Some(t.path("base-link").as_os_str()), None).unwrap();
    let c = contain(&root, &Segment::parse("a/b").unwrap()).unwrap();
    assert_eq!(c.path(), t.path("base-link/a/b"));
    assert_eq!(
        c.real_path(),
        std::fs::canonicalize(t.path("base")).unwrap().join("a/b")
    );
}

#[test]
fn a_missing_root_is_named() {
    let root = lookup_root(
        RootKind::Base,
        Some(OsStr::new("/nonexistent/loci-base")),
        None,
    )
    .unwrap();
    let err = contain(&root, &Segment::parse("a").unwrap()).unwrap_err();
    assert_eq!(err.kind(), "root_unavailable");
    assert!(err.to_string().contains("LOCI_PROJECTS_BASE"), "{err}");
}

#[test]
fn an_overlong_joined_path_is_refused() {
    let t = Tree::new();
    let component = "a".repeat(255);
    let segment = vec![component.as_str(); 16].join("/"); // 4095 bytes
    assert_eq!(t.contain(&segment), Err("path_too_long"));
}

#[test]
fn loop_check_refuses_both_directions() {
    let t = Tree::new();
    let ws = t.path("base/app");
    std::fs::create_dir(&ws).unwrap();
    let kind = |dest: &Path| check_no_loop(&ws, dest).map_err(|e| e.kind());
    assert_eq!(
        kind(&t.path("base/app/mirror")),
        Err("destination_inside_workspace")
    );
    assert_eq!(kind(&ws), Err("destination_inside_workspace"));
    assert_eq!(kind(&t.path("base")), Err("workspace_inside_destination"));
    assert_eq!(kind(Path::new("/")), Err("workspace_inside_destination"));
    assert_eq!(kind(&t.path("base/app-mirror")), Ok(()));
    assert_eq!(kind(&t.path("outside/mirror")), Ok(()));
    assert_eq!(kind(Path::new("relative")), Err("not_clean"));
    assert_eq!(kind(&t.path("outside/../base/app/x")), Err("not_clean"));
}

#[test]
fn loop_check_sees_through_symlinks() {
    let t = Tree::new();
    let ws = t.path("base/app");
    std::fs::create_dir(&ws).unwrap();
    // a destination that looks outside but is a symlink into the workspace
    symlink(&ws, t.path("outside/into-ws")).unwrap();
    assert_eq!(
        check_no_loop(&ws, &t.path("outside/into-ws/mirror"))
            .unwrap_err()
            .kind(),
        "destination_inside_workspace"
    );
    // a destination that looks elsewhere but is a symlink to the base
    symlink(t.path("base"), t.path("outside/to-base")).unwrap();
    assert_eq!(
        check_no_loop(&ws, &t.path("outside/to-base"))
            .unwrap_err()
            .kind(),
        "workspace_inside_destination"
    );
}
