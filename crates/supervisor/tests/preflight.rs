//! The preflight gate: one case per guard, in the seed's order (each case
//! also fails every later guard, so the first failing guard is the one
//! reported), every error variant, the per-argument limit, telemetry, and the
//! empty MCP config temp file's removal. (The telemetry test has its own
//! binary: `preflight_events.rs`.)

use crate::common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use loci_supervisor::{
    ARG_MAX_MARGIN, EMPTY_MCP_CONFIG, PER_ARG_LIMIT, PreflightArgs, PreflightError, SpawnSpec,
    Supervisor, preflight_check, write_empty_mcp_config_tempfile,
};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        common::write_script(&root.join("tool"), "#!/bin/sh\n");
        std::fs::write(root.join("noexec"), "").unwrap();
        std::fs::write(root.join("valid.json"), r#"{"mcpServers":{}}"#).unwrap();
        std::fs::write(root.join("invalid.json"), "{").unwrap();
        std::fs::create_dir_all(root.join("bad/a/b")).unwrap();
        std::fs::write(root.join("bad/.mcp.json"), "{ nope").unwrap();
        std::fs::create_dir_all(root.join("good/a/b")).unwrap();
        std::fs::create_dir_all(root.join("cfg_full")).unwrap();
        std::fs::write(root.join("cfg_full/settings.json"), "{}").unwrap();
        std::fs::create_dir_all(root.join("cfg_empty")).unwrap();
        Fixture { _dir: dir, root }
    }

    fn p(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

fn arg_limit() -> usize {
    // SAFETY: sysconf takes an int.
    (unsafe { libc::sysconf(libc::_SC_ARG_MAX) }) as usize - ARG_MAX_MARGIN
}

/// Which guards a case fails; `fails_from(k)` fails guard k and every later one.
#[derive(Clone, Copy)]
struct Case {
    total_too_big: bool,
    one_arg_too_big: bool,
    binary_missing: bool,
    output_too_big: bool,
    inline_json: bool,
    mcp_path_missing: bool,
    walk_up_invalid: bool,
    config_dir_full: bool,
}

impl Case {
    fn fails_from(k: usize) -> Self {
        Case {
            total_too_big: k <= 1,
            one_arg_too_big: k <= 2,
            binary_missing: k <= 3,
            output_too_big: k <= 4,
            inline_json: k <= 5,
            mcp_path_missing: k <= 6,
            walk_up_invalid: k <= 7,
            config_dir_full: k <= 8,
        }
    }

    fn check(self, fx: &Fixture) -> Result<(), PreflightError> {
        let mut argv: Vec<OsString> = vec!["-p".into()];
        if self.one_arg_too_big {
            argv.push("x".repeat(PER_ARG_LIMIT + 1).into());
        }
        if self.total_too_big {
            let chunk = 100 * 1024;
            for _ in 0..arg_limit() / chunk + 1 {
                argv.push("y".repeat(chunk).into());
            }
        }
        if self.inline_json {
            argv.extend(["--mcp-config".into(), r#"{"mcpServers":{}}"#.into()]);
        }
        argv.push("--mcp-config".into());
        argv.push(if self.mcp_path_missing {
            fx.p("missing.json").into()
        } else {
            fx.p("valid.json").into()
        });
        let binary = if self.binary_missing {
            fx.p("no-such-tool")
        } else {
            fx.p("tool")
        };
        let cwd = if self.walk_up_invalid {
            fx.p("bad/a/b")
        } else {
            fx.p("good/a/b")
        };
        let cfg = if self.config_dir_full {
            fx.p("cfg_full")
        } else {
            fx.p("cfg_empty")
        };
        let args = PreflightArgs {
            expected_output_bytes: if self.output_too_big {
                2_000_000
            } else {
                1_000
            },
            output_cap_bytes: 1_000_000,
            claude_config_dir: Some(&cfg),
            ..PreflightArgs::new("test_spawner", &binary, &argv, &cwd)
        };
        preflight_check(&args)
    }
}

#[test]
fn guards_run_in_the_seed_order_and_the_first_failure_is_reported() {
    let fx = Fixture::new();
    let expected = [
        "argv_too_large",
        "argument_too_large",
        "binary_not_found",
        "output_cap_too_small",
        "mcp_config_inline_json",
        "mcp_config_path_missing",
        "walk_up_mcp_json_invalid",
        "claude_config_dir_not_empty",
    ];
    for (i, kind) in expected.iter().enumerate() {
        let err = Case::fails_from(i + 1).check(&fx).unwrap_err();
        assert_eq!(err.kind(), *kind, "case {}: {err}", i + 1);
    }
    Case::fails_from(9)
        .check(&fx)
        .expect("a clean spawn passes");
}

fn base<'a>(argv: &'a [OsString], binary: &'a Path, cwd: &'a Path) -> PreflightArgs<'a> {
    PreflightArgs::new("test_spawner", binary, argv, cwd)
}

#[test]
fn argv_over_arg_max_names_both_sizes() {
    let fx = Fixture::new();
    let chunk = "z".repeat(64 * 1024);
    let argv: Vec<OsString> = (0..arg_limit() / chunk.len() + 2)
        .map(|_| chunk.clone().into())
        .collect();
    let (bin, cwd) = (fx.p("tool"), fx.p("good"));
    match preflight_check(&base(&argv, &bin, &cwd)).unwrap_err() {
        PreflightError::ArgvTooLarge { total_bytes, limit } => {
            assert_eq!(limit, arg_limit());
            assert!(total_bytes > limit);
        }
        e => panic!("{e}"),
    }
}

#[test]
fn a_single_argument_over_128_kib_is_rejected_with_its_index() {
    let fx = Fixture::new();
    let argv: Vec<OsString> = vec!["-p".into(), "a".repeat(PER_ARG_LIMIT).into()];
    let (bin, cwd) = (fx.p("tool"), fx.p("good"));
    match preflight_check(&base(&argv, &bin, &cwd)).unwrap_err() {
        PreflightError::ArgumentTooLarge {
            index,
            bytes,
            limit,
        } => {
            assert_eq!((index, bytes, limit), (2, PER_ARG_LIMIT + 1, 128 * 1024));
        }
        e => panic!("{e}"),
    }
    // Exactly at the limit (NUL included) passes.
    let argv: Vec<OsString> = vec!["a".repeat(PER_ARG_LIMIT - 1).into()];
    preflight_check(&base(&argv, &bin, &cwd)).unwrap();
}

#[test]
fn missing_and_non_executable_binaries_are_distinct() {
    let fx = Fixture::new();
    let cwd = fx.p("good");
    let missing = fx.p("nope");
    let err = preflight_check(&base(&[], &missing, &cwd)).unwrap_err();
    assert!(
        matches!(&err, PreflightError::BinaryNotFound { path } if *path == missing),
        "{err}"
    );
    assert!(err.to_string().contains("nope"));
    let noexec = fx.p("noexec");
    let err = preflight_check(&base(&[], &noexec, &cwd)).unwrap_err();
    assert!(
        matches!(&err, PreflightError::BinaryNotExecutable { path } if *path == noexec),
        "{err}"
    );
    let dir = fx.p("good");
    let err = preflight_check(&base(&[], &dir, &cwd)).unwrap_err();
    assert_eq!(err.kind(), "binary_not_executable");
}

#[test]
fn bare_binary_names_are_looked_up_in_path() {
    let fx = Fixture::new();
    let cwd = fx.p("good");
    preflight_check(&base(&[], Path::new("sh"), &cwd)).unwrap();
    let err = preflight_check(&base(&[], Path::new("loci-no-such-llm-tool"), &cwd)).unwrap_err();
    assert_eq!(err.kind(), "binary_not_found");
}

#[test]
fn expected_output_over_the_cap_names_both() {
    let fx = Fixture::new();
    let (bin, cwd) = (fx.p("tool"), fx.p("good"));
    let args = PreflightArgs {
        expected_output_bytes: 70_000,
        output_cap_bytes: 65_536,
        ..base(&[], &bin, &cwd)
    };
    match preflight_check(&args).unwrap_err() {
        PreflightError::OutputCapTooSmall {
            expected,
            configured,
        } => {
            assert_eq!((expected, configured), (70_000, 65_536))
        }
        e => panic!("{e}"),
    }
}

#[test]
fn inline_mcp_json_is_rejected_in_every_form() {
    let fx = Fixture::new();
    let (bin, cwd) = (fx.p("tool"), fx.p("good"));
    let field = PreflightArgs {
        mcp_config_inline_json: Some("{}"),
        ..base(&[], &bin, &cwd)
    };
    assert_eq!(
        preflight_check(&field).unwrap_err().kind(),
        "mcp_config_inline_json"
    );
    for argv in [
        vec!["--mcp-config", "{}"],
        vec!["--mcp-config={\"mcpServers\":{}}"],
        vec!["--mcp-config", "valid.json", "  {}"],
    ] {
        let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
        let err = preflight_check(&base(&argv, &bin, &cwd)).unwrap_err();
        assert_eq!(err.kind(), "mcp_config_inline_json", "{argv:?}");
    }
}

#[test]
fn mcp_config_path_must_exist_and_be_valid_json() {
    let fx = Fixture::new();
    let (bin, cwd) = (fx.p("tool"), fx.root.clone());
    let argv: Vec<OsString> = vec!["--mcp-config".into(), "missing.json".into()];
    match preflight_check(&base(&argv, &bin, &cwd)).unwrap_err() {
        PreflightError::McpConfigPathMissing { path } => assert_eq!(path, fx.p("missing.json")),
        e => panic!("{e}"),
    }
    // Relative paths resolve against the child's working directory.
    let argv: Vec<OsString> = vec!["--mcp-config".into(), "invalid.json".into()];
    match preflight_check(&base(&argv, &bin, &cwd)).unwrap_err() {
        PreflightError::McpConfigPathInvalidJson { path, error } => {
            assert_eq!(path, fx.p("invalid.json"));
            assert!(!error.is_empty());
        }
        e => panic!("{e}"),
    }
    let argv: Vec<OsString> = vec!["--mcp-config".into(), "valid.json".into()];
    preflight_check(&base(&argv, &bin, &cwd)).unwrap();
}

#[test]
fn walk_up_finds_an_invalid_mcp_json_above_the_child_cwd_within_16_levels() {
    let fx = Fixture::new();
    let bin = fx.p("tool");
    // 16 levels below the invalid file: found.
    let deep16: PathBuf = (0..16).fold(fx.p("bad"), |p, i| p.join(format!("d{i}")));
    std::fs::create_dir_all(&deep16).unwrap();
    match preflight_check(&base(&[], &bin, &deep16)).unwrap_err() {
        PreflightError::WalkUpMcpJsonInvalid { path, .. } => {
            assert_eq!(path, fx.p("bad/.mcp.json"))
        }
        e => panic!("{e}"),
    }
    // 17 levels below: out of reach.
    let deep17 = deep16.join("d16");
    std::fs::create_dir_all(&deep17).unwrap();
    preflight_check(&base(&[], &bin, &deep17)).unwrap();
    // A valid inherited .mcp.json is accepted.
    std::fs::write(fx.p("good/.mcp.json"), r#"{"mcpServers":{}}"#).unwrap();
    let cwd = fx.p("good/a/b");
    preflight_check(&base(&[], &bin, &cwd)).unwrap();
}

#[test]
fn claude_config_dir_must_be_empty_or_absent() {
    let fx = Fixture::new();
    let (bin, cwd) = (fx.p("tool"), fx.p("good"));
    for (dir, ok) in [
        ("cfg_empty", true),
        ("cfg_absent", true),
        ("cfg_full", false),
        ("valid.json", false),
    ] {
        let d = fx.p(dir);
        let args = PreflightArgs {
            claude_config_dir: Some(&d),
            ..base(&[], &bin, &cwd)
        };
        match preflight_check(&args) {
            Ok(()) => assert!(ok, "{dir}"),
            Err(PreflightError::ClaudeConfigDirNotEmpty { path }) => {
                assert!(!ok, "{dir}");
                assert_eq!(path, d);
            }
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn empty_mcp_config_file_is_removed_when_the_spawn_ends() {
    let file = write_empty_mcp_config_tempfile().unwrap();
    let path = file.path().to_path_buf();
    assert!(path.exists());
    let sup = Supervisor::new();
    let out = sup
        .run(SpawnSpec::new("cat").arg(&path).hold_until_exit(file))
        .unwrap();
    assert_eq!(out.stdout.head, EMPTY_MCP_CONFIG.as_bytes());
    assert!(!path.exists(), "{} outlived the spawn", path.display());
}
