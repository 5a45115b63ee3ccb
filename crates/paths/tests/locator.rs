//! The discriminated locator, the permit-list and the roots it resolves
//! against.

use std::ffi::OsStr;
use std::path::Path;

use loci_paths::{
    Locator, LocatorError, LocatorWire, Mode, RootKind, RootValues, Roots, SERVED_MODES,
    lookup_root,
};

fn parse(json: &str) -> Result<Locator, LocatorError> {
    let wire: LocatorWire = serde_json::from_str(json).expect("well-formed JSON");
    Locator::try_from(wire)
}

#[test]
fn the_three_kinds_round_trip() {
    for json in [
        r#"{"kind":"managed","name":"app-1"}"#,
        r#"{"kind":"mounted","segment":"team/app"}"#,
        r#"{"kind":"unavailable","reason":"the folder is on the user's machine"}"#,
    ] {
        let locator: Locator = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&locator).unwrap(), json);
    }
}

/// Each row: a wire locator and the refusal's kind.
const REFUSED: &[(&str, &str)] = &[
    (r#"{"kind":"runner","segment":"a"}"#, "unknown_kind"),
    (r#"{"kind":"Mounted","segment":"a"}"#, "unknown_kind"),
    (r#"{"kind":"","segment":"a"}"#, "unknown_kind"),
    (r#"{"segment":"a"}"#, "missing_kind"),
    (r#"{"kind":"mounted"}"#, "missing_field"),
    (r#"{"kind":"mounted","segment":null}"#, "missing_field"),
    (r#"{"kind":"managed"}"#, "missing_field"),
    (r#"{"kind":"unavailable"}"#, "missing_field"),
    (r#"{"kind":"unavailable","reason":""}"#, "empty_reason"),
    (
        r#"{"kind":"mounted","segment":"a","path":"/etc"}"#,
        "unexpected_field",
    ),
    (
        r#"{"kind":"managed","name":"a","segment":"b"}"#,
        "unexpected_field",
    ),
    (
        r#"{"kind":"unavailable","reason":"x","segment":"a"}"#,
        "unexpected_field",
    ),
    (
        r#"{"kind":"mounted","segment":"../etc"}"#,
        "parent_dir_component",
    ),
    (r#"{"kind":"mounted","segment":"/etc"}"#, "absolute"),
    (r#"{"kind":"mounted","segment":""}"#, "empty"),
    (
        r#"{"kind":"managed","name":"a/b"}"#,
        "invalid_name_character",
    ),
    (
        r#"{"kind":"managed","name":" app"}"#,
        "invalid_name_character",
    ),
];

#[test]
fn refused_locators_name_their_reason() {
    for (json, kind) in REFUSED {
        let err = parse(json).unwrap_err();
        assert_eq!(err.kind(), *kind, "{json}: {err}");
        // the plain serde path refuses too, with the same message
        let serde_err = serde_json::from_str::<Locator>(json).unwrap_err();
        assert!(
            serde_err.to_string().contains(&err.to_string()),
            "{serde_err}"
        );
    }
}

#[test]
fn unknown_kind_is_named() {
    let err = parse(r#"{"kind":"runner","segment":"a"}"#).unwrap_err();
    assert!(err.to_string().contains("\"runner\""), "{err}");
}

#[test]
fn numbers_are_not_coerced_into_names() {
    assert!(serde_json::from_str::<LocatorWire>(r#"{"kind":"managed","name":42}"#).is_err());
}

#[test]
fn unavailable_is_never_reasonless() {
    let locator = Locator::unavailable("");
    match locator {
        Locator::Unavailable { reason } => assert!(!reason.is_empty()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn permit_list_refuses_modes_not_served() {
    assert_eq!(
        Mode::permit("mounted", SERVED_MODES).unwrap(),
        Mode::Mounted
    );
    for raw in ["runner", "container", "", "MOUNTED", "unavailable"] {
        let err = Mode::permit(raw, SERVED_MODES).unwrap_err();
        assert_eq!(err.kind(), "mode_not_served");
        assert!(err.to_string().contains("managed, mounted"), "{err}");
    }
    let only_mounted = &[Mode::Mounted];
    let managed: Locator = serde_json::from_str(r#"{"kind":"managed","name":"a"}"#).unwrap();
    assert_eq!(
        managed.permit(only_mounted).unwrap_err().kind(),
        "mode_not_served"
    );
    let unavailable = Locator::unavailable("legacy folder outside the base");
    let err = unavailable.permit(SERVED_MODES).unwrap_err();
    assert_eq!(err.kind(), "unavailable");
    assert!(err.to_string().contains("legacy folder outside the base"));
}

#[test]
fn missing_root_names_its_own_variable() {
    let managed = lookup_root(RootKind::Managed, None, None).unwrap_err();
    assert_eq!(managed.kind(), "managed_root_not_configured");
    assert!(managed.to_string().contains("LOCI_MANAGED_ROOT"));
    assert!(managed.to_string().contains("roots.managed"));
    let base = lookup_root(RootKind::Base, None, None).unwrap_err();
    assert_eq!(base.kind(), "projects_base_not_configured");
    assert!(base.to_string().contains("LOCI_PROJECTS_BASE"));
    assert!(base.to_string().contains("roots.base"));
}

#[test]
fn env_wins_over_config_and_empty_counts_as_unset() {
    let root = lookup_root(
        RootKind::Base,
        Some(OsStr::new("/env")),
        Some(Path::new("/cfg")),
    )
    .unwrap();
    assert_eq!(root.path(), Path::new("/env"));
    assert_eq!(root.setting(), "LOCI_PROJECTS_BASE");
    let root = lookup_root(
        RootKind::Base,
        Some(OsStr::new("")),
        Some(Path::new("/cfg")),
    )
    .unwrap();
    assert_eq!(root.path(), Path::new("/cfg"));
    assert_eq!(root.setting(), "roots.base");
}

#[test]
fn roots_must_be_absolute_and_without_dotdot() {
    let err = lookup_root(RootKind::Base, Some(OsStr::new("rel/base")), None).unwrap_err();
    assert_eq!(err.kind(), "root_not_absolute");
    assert!(err.to_string().contains("LOCI_PROJECTS_BASE"));
    let err = lookup_root(RootKind::Managed, None, Some(Path::new("/a/../b"))).unwrap_err();
    assert_eq!(err.kind(), "root_has_parent_component");
    assert!(err.to_string().contains("roots.managed"));
    let root = lookup_root(RootKind::Base, Some(OsStr::new("/srv//base/")), None).unwrap();
    assert_eq!(root.path(), Path::new("/srv/base"));
}

#[test]
fn no_inheritance_between_the_roots() {
    let roots = Roots::from_values(
        RootValues::default(),
        RootValues {
            env: Some("/srv/base".into()),
            config: None,
        },
    )
    .unwrap();
    assert_eq!(roots.base().unwrap().path(), Path::new("/srv/base"));
    // The managed root is missing: it does not fall back to the base.
    assert_eq!(
        roots.managed().unwrap_err().kind(),
        "managed_root_not_configured"
    );
    let managed: Locator = serde_json::from_str(r#"{"kind":"managed","name":"app"}"#).unwrap();
    let err = roots.resolve(&managed, SERVED_MODES).unwrap_err();
    assert_eq!(err.kind(), "managed_root_not_configured");
    assert!(err.to_string().contains("LOCI_MANAGED_ROOT"));
}

#[test]
fn the_same_name_resolves_to_different_folders_in_each_root() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("managed")).unwrap();
    std::fs::create_dir(dir.path().join("base")).unwrap();
    let roots = Roots::from_values(
        RootValues {
            env: None,
            config: Some(dir.path().join("managed")),
        },
        RootValues {
            env: Some(dir.path().join("base").into()),
            config: None,
        },
    )
    .unwrap();
    let managed: Locator = serde_json::from_str(r#"{"kind":"managed","name":"app"}"#).unwrap();
    let mounted: Locator = serde_json::from_str(r#"{"kind":"mounted","segment":"app"}"#).unwrap();
    let a = roots.resolve(&managed, SERVED_MODES).unwrap();
    let b = roots.resolve(&mounted, SERVED_MODES).unwrap();
    assert_eq!(a.path(), dir.path().join("managed/app"));
    assert_eq!(b.path(), dir.path().join("base/app"));
    assert_eq!(a.locator(), managed);
    assert_eq!(b.locator(), mounted);
}

#[test]
fn messages_for_the_network_can_be_redacted_of_root_paths() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("base")).unwrap();
    let base = dir.path().join("base");
    let roots = Roots::from_values(
        RootValues::default(),
        RootValues {
            env: Some(base.clone().into()),
            config: None,
        },
    )
    .unwrap();
    let text = format!("cannot create {}/team/app", base.display());
    assert_eq!(
        roots.redact(&text),
        "cannot create $LOCI_PROJECTS_BASE/team/app"
    );
}
