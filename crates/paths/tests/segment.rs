//! Barrier 2 as data: each row is an input and the verdict it must get.

use loci_paths::{SEGMENT_ERROR_KINDS, Segment, WorkspaceName};

/// `Ok` for accepted, otherwise the refusal's kind.
const CASES: &[(&str, Result<(), &str>)] = &[
    // accepted
    ("app", Ok(())),
    ("team/app", Ok(())),
    ("a/b/c/d", Ok(())),
    ("my.project", Ok(())),
    ("...", Ok(())),
    ("..a", Ok(())),
    ("a..", Ok(())),
    (".hidden", Ok(())),
    ("-rf", Ok(())),
    ("projeto-ação", Ok(())), // NFC
    ("проект", Ok(())),
    ("with space", Ok(())),
    // the seeds' adversarial cases
    ("", Err("empty")),
    ("/", Err("absolute")),
    ("/etc", Err("absolute")),
    ("//etc", Err("absolute")),
    ("../etc", Err("parent_dir_component")),
    ("..", Err("parent_dir_component")),
    ("a/../../etc", Err("parent_dir_component")),
    ("a/..", Err("parent_dir_component")),
    (".", Err("current_dir_component")),
    ("./a", Err("current_dir_component")),
    ("a/./b", Err("current_dir_component")),
    ("a/.", Err("current_dir_component")),
    (".git", Err("git_dir_component")),
    ("team/app/.git", Err("git_dir_component")),
    ("team/app/.git/hooks", Err("git_dir_component")),
    ("a/.GIT/b", Err("git_dir_component")),
    ("a/.Git", Err("git_dir_component")),
    ("app.git", Ok(())),
    (".github", Ok(())),
    (".gitx/a", Ok(())),
    ("a//b", Err("empty_component")),
    ("a/", Err("empty_component")),
    ("a\0b", Err("nul")),
    ("\0", Err("nul")),
    // beyond the seeds
    ("a\\b", Err("backslash")),
    ("..\\etc", Err("backslash")),
    ("\\", Err("backslash")),
    ("a\nb", Err("control_character")),
    ("a\tb", Err("control_character")),
    ("a\x1bb", Err("control_character")),
    ("a\x7fb", Err("control_character")),
    ("a\u{85}b", Err("control_character")),
    ("a\u{202E}b", Err("format_character")),
    ("a\u{200B}b", Err("format_character")),
    ("\u{FEFF}a", Err("format_character")),
    // Unicode look-alikes of path syntax
    ("a\u{FF0F}b", Err("look_alike")), // fullwidth solidus
    ("\u{2024}\u{2024}/etc", Err("look_alike")), // one dot leader x2
    ("\u{2025}", Err("look_alike")),   // two dot leader
    ("a\u{2215}b", Err("look_alike")), // division slash
    ("a\u{2044}b", Err("look_alike")), // fraction slash
    ("a\u{FF3C}b", Err("look_alike")), // fullwidth reverse solidus
    ("\u{FF0E}\u{FF0E}", Err("look_alike")), // fullwidth full stops
    ("a\u{FE52}b", Err("look_alike")), // small full stop
    // normalisation: refused, not normalised
    ("cafe\u{301}", Err("not_nfc")),   // e + combining acute (NFD)
    ("a/cafe\u{301}", Err("not_nfc")), // in a deeper component
    ("\u{212B}", Err("not_nfc")),      // angstrom sign, NFC is U+00C5
];

#[test]
fn every_case_gets_its_verdict() {
    for (input, expected) in CASES {
        let got = Segment::parse(input).map(|_| ()).map_err(|e| e.kind());
        assert_eq!(&got, expected, "segment {input:?}");
    }
}

#[test]
fn every_kind_in_the_table_is_a_documented_kind() {
    for (_, expected) in CASES {
        if let Err(kind) = expected {
            assert!(SEGMENT_ERROR_KINDS.contains(kind), "{kind}");
        }
    }
}

#[test]
fn nfc_form_of_a_refused_segment_is_accepted_unchanged() {
    let nfd = "cafe\u{301}";
    assert_eq!(Segment::parse(nfd).unwrap_err().kind(), "not_nfc");
    let nfc = "caf\u{e9}";
    assert_eq!(Segment::parse(nfc).unwrap().as_str(), nfc);
}

#[test]
fn component_of_255_bytes_is_accepted_and_256_refused() {
    let ok = "a".repeat(255);
    assert!(Segment::parse(&ok).is_ok());
    let err = Segment::parse(&format!("x/{}", "a".repeat(256))).unwrap_err();
    assert_eq!(err.kind(), "component_too_long");
    assert!(err.to_string().contains("256") && err.to_string().contains("255"));
    // bytes, not characters: 128 two-byte characters are 256 bytes
    let err = Segment::parse(&"é".repeat(128)).unwrap_err();
    assert_eq!(err.kind(), "component_too_long");
}

#[test]
fn segment_of_4096_bytes_is_accepted_and_4097_refused() {
    let component = "a".repeat(255);
    let short = "a".repeat(254);
    let mut parts = vec![component.as_str(); 15];
    parts.extend([short.as_str(), "b"]);
    let mut ok = parts.join("/"); // 15*255 + 254 + 1 + 16 separators
    assert_eq!(ok.len(), 4096);
    assert!(Segment::parse(&ok).is_ok());
    ok.push('c');
    let err = Segment::parse(&ok).unwrap_err();
    assert_eq!(err.kind(), "too_long");
    assert!(err.to_string().contains("4097") && err.to_string().contains("4096"));
}

#[test]
fn nothing_is_trimmed() {
    assert_eq!(Segment::parse(" a ").unwrap().as_str(), " a ");
    assert_eq!(Segment::parse("a /b").unwrap().depth(), 2);
}

#[test]
fn errors_name_the_offending_value() {
    let err = Segment::parse("a/../../etc").unwrap_err();
    assert!(err.to_string().contains("a/../../etc"), "{err}");
    let err = Segment::parse("a\u{FF0F}b").unwrap_err();
    assert!(err.to_string().contains("U+FF0F"), "{err}");
}

#[test]
fn serde_validates_segments() {
    let ok: Segment = serde_json::from_str(r#""team/app""#).unwrap();
    assert_eq!(ok.as_str(), "team/app");
    let err = serde_json::from_str::<Segment>(r#""../etc""#).unwrap_err();
    assert!(err.to_string().contains("'..'"), "{err}");
    assert_eq!(serde_json::to_string(&ok).unwrap(), r#""team/app""#);
}

#[test]
fn non_utf8_paths_are_refused_by_name() {
    use std::os::unix::ffi::OsStrExt;
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(b"a/\xff"));
    assert_eq!(Segment::from_path(path).unwrap_err().kind(), "not_utf8");
}

/// Managed names: `^[A-Za-z0-9_-]{1,64}$`, no trimming, no coercion.
const NAMES: &[(&str, Result<(), &str>)] = &[
    ("app", Ok(())),
    ("App_1-x", Ok(())),
    ("0", Ok(())),
    ("-", Ok(())),
    ("", Err("empty_name")),
    (" app", Err("invalid_name_character")),
    ("app ", Err("invalid_name_character")),
    ("a/b", Err("invalid_name_character")),
    ("a.b", Err("invalid_name_character")),
    ("..", Err("invalid_name_character")),
    ("ação", Err("invalid_name_character")),
    ("a\0", Err("invalid_name_character")),
];

#[test]
fn managed_names_follow_the_pattern_exactly() {
    for (input, expected) in NAMES {
        let got = WorkspaceName::parse(input)
            .map(|_| ())
            .map_err(|e| e.kind());
        assert_eq!(&got, expected, "name {input:?}");
    }
    assert!(WorkspaceName::parse(&"a".repeat(64)).is_ok());
    assert_eq!(
        WorkspaceName::parse(&"a".repeat(65)).unwrap_err().kind(),
        "name_too_long"
    );
}

#[test]
fn managed_names_are_not_coerced_from_numbers() {
    assert!(serde_json::from_str::<WorkspaceName>("42").is_err());
    assert_eq!(
        serde_json::from_str::<WorkspaceName>(r#""42""#)
            .unwrap()
            .as_str(),
        "42"
    );
}
