//! Property: for random segments, every accepted one resolves to a path
//! strictly inside its root, lexically and physically (after `mkdir -p`
//! beneath the root handle); every refused one names its reason.

use std::os::unix::fs::symlink;
use std::path::Path;

use loci_paths::{
    Root, RootKind, SEGMENT_ERROR_KINDS, Segment, contain, create_dir_all, lookup_root,
    strictly_inside,
};
use proptest::prelude::*;

/// Pieces that, concatenated, make likely and unlikely segments: plain
/// names, separators, dot components, the tree's own traps, and hostile
/// characters.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z0-9_-]{1,6}",
        4 => Just("/".to_owned()),
        1 => Just(".".to_owned()),
        1 => Just("..".to_owned()),
        1 => Just("evil".to_owned()),
        1 => Just("inner".to_owned()),
        1 => Just("file".to_owned()),
        1 => Just("\\".to_owned()),
        1 => Just("\0".to_owned()),
        1 => Just("\n".to_owned()),
        1 => Just("\u{FF0F}".to_owned()),
        1 => Just("\u{2024}".to_owned()),
        1 => Just("\u{202E}".to_owned()),
        1 => Just("e\u{301}".to_owned()),
        1 => Just("é".to_owned()),
        1 => Just("a".repeat(256)),
        1 => any::<char>().prop_map(String::from),
    ]
}

fn segment_like() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..8).prop_map(|pieces| pieces.concat())
}

/// `tmp/root` with `evil -> tmp/outside`, `inner -> real` (inside) and a
/// file `file`.
fn tree() -> (tempfile::TempDir, Root) {
    let dir = tempfile::tempdir().unwrap();
    let root_path = dir.path().join("root");
    std::fs::create_dir(&root_path).unwrap();
    std::fs::create_dir(dir.path().join("outside")).unwrap();
    std::fs::create_dir(root_path.join("real")).unwrap();
    symlink(dir.path().join("outside"), root_path.join("evil")).unwrap();
    symlink("real", root_path.join("inner")).unwrap();
    std::fs::write(root_path.join("file"), b"x").unwrap();
    let root = lookup_root(RootKind::Base, Some(root_path.as_os_str()), None).unwrap();
    (dir, root)
}

fn check(raw: &str) -> Result<(), TestCaseError> {
    let (dir, root) = tree();
    let segment = match Segment::parse(raw) {
        Ok(segment) => segment,
        Err(e) => {
            prop_assert!(SEGMENT_ERROR_KINDS.contains(&e.kind()), "{}", e.kind());
            prop_assert!(!e.to_string().is_empty());
            return Ok(());
        }
    };
    prop_assert_eq!(segment.as_str(), raw, "nothing is rewritten");
    prop_assert!(
        segment
            .components()
            .all(|c| !c.is_empty() && c != "." && c != "..")
    );
    let contained = match contain(&root, &segment) {
        Ok(c) => c,
        Err(e) => {
            prop_assert!(
                ["escapes_root", "unresolvable", "path_too_long"].contains(&e.kind()),
                "{}",
                e
            );
            return Ok(());
        }
    };
    // lexically
    prop_assert!(strictly_inside(root.path(), contained.path()));
    let real_root = std::fs::canonicalize(root.path()).unwrap();
    prop_assert!(strictly_inside(&real_root, contained.real_path()));
    // physically, after creating it beneath the root handle
    match create_dir_all(&contained) {
        Ok(_) => {
            let real = std::fs::canonicalize(contained.path()).unwrap();
            prop_assert!(strictly_inside(&real_root, &real), "{:?}", real);
        }
        Err(e) => prop_assert!(
            ["not_a_directory", "escapes_root", "symlink_refused"].contains(&e.kind()),
            "{}",
            e
        ),
    }
    prop_assert!(
        std::fs::read_dir(dir.path().join("outside"))
            .unwrap()
            .next()
            .is_none(),
        "nothing was created outside the root"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn accepted_segments_stay_inside_and_refused_ones_name_their_reason(raw in segment_like()) {
        check(&raw)?;
    }

    #[test]
    fn arbitrary_strings_never_panic_and_accepted_ones_are_relative(raw in any::<String>()) {
        if let Ok(segment) = Segment::parse(&raw) {
            prop_assert!(!Path::new(segment.as_str()).is_absolute());
            prop_assert!(!raw.contains(['\0', '\\']));
        }
    }
}
