//! Adversarial files, as data: each one alone in a workspace beside an ordinary file,
//! indexed for real. Every run finishes within twice the file's budget, the ordinary
//! file is always indexed, the adversarial one is indexed or skipped for a named
//! reason, the index passes `PRAGMA quick_check`, and the next run is a no-op.
//!
//! The nesting shapes run in every language; the big files (20 MB on one line, a
//! million lines) are in the `--ignored` tier that CI also runs.

use std::path::Path;
use std::time::{Duration, Instant};

use loci_index::{FileBudget, IndexOptions, IndexReport, Lang, NoProgress, index_workspace};

/// The budget of these runs: short enough that a file ignoring it shows, long enough
/// that a debug build on a loaded machine parses what is meant to be parsed.
const BUDGET: Duration = Duration::from_secs(10);

/// What may become of the adversarial file.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fate {
    /// Indexed (with this many definitions, when given).
    Indexed(Option<u64>),
    /// Skipped for this reason.
    Skipped(&'static str),
    /// Indexed, or refused as too complex or over its budget: what matters is that the
    /// run bounds it.
    Bounded,
}

struct Case {
    name: &'static str,
    file: String,
    bytes: Vec<u8>,
    fate: Fate,
}

/// Indexes `case` beside an ordinary file and checks every promise of this file.
fn check(case: &Case) -> Result<(Duration, String), String> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("ordinary.rs"), "fn ordinary() {}\n").unwrap();
    std::fs::write(root.join(&case.file), &case.bytes).unwrap();
    let mut opts = IndexOptions::new(root);
    opts.file_budget = FileBudget::new(BUDGET);
    opts.max_file_bytes = 64 << 20;
    let started = Instant::now();
    let report = index_workspace(&opts, &NoProgress).map_err(|e| e.to_string())?;
    let took = started.elapsed();
    let budget = opts.file_budget.for_size(case.bytes.len() as u64);
    let named = |what: String| format!("{} ({}): {what}", case.name, case.file);
    let fail = |what: String| Err(named(what));
    if took > budget * 2 {
        return fail(format!("took {took:?}, over twice its budget {budget:?}"));
    }
    let skipped: Vec<&str> = report.skipped.iter().map(|s| s.reason.name()).collect();
    let indexed = report.files_indexed == 2;
    let ordinary_symbols = 1;
    let fits = match case.fate {
        Fate::Indexed(symbols) => {
            indexed
                && skipped.is_empty()
                && symbols.is_none_or(|n| report.symbols == n + ordinary_symbols)
        }
        Fate::Skipped(reason) => report.files_indexed == 1 && skipped == [reason],
        Fate::Bounded => {
            indexed && skipped.is_empty()
                || report.files_indexed == 1
                    && (skipped == ["too_complex"] || skipped == ["timeout"])
        }
    };
    if !fits {
        return fail(format!(
            "expected {:?}, got {} files indexed, {} symbols, skipped {skipped:?}",
            case.fate, report.files_indexed, report.symbols
        ));
    }
    consistent_and_quiet(root, &opts, &report).map_err(named)?;
    let fate = if skipped.is_empty() {
        format!("indexed, {} symbols", report.symbols - ordinary_symbols)
    } else {
        format!("skipped: {}", skipped.join(", "))
    };
    Ok((took, fate))
}

/// The index passes quick_check and a second run does nothing.
fn consistent_and_quiet(
    root: &Path,
    opts: &IndexOptions,
    first: &IndexReport,
) -> Result<(), String> {
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root))
        .map_err(|e| e.to_string())?;
    if let Some(problem) = loci_store::quick_check(&conn).map_err(|e| e.to_string())? {
        return Err(format!("quick_check: {problem}"));
    }
    drop(conn);
    let again = index_workspace(opts, &NoProgress).map_err(|e| e.to_string())?;
    if again.wrote || again.files_parsed > 0 {
        return Err(format!("the second run was not a no-op: {again:?}"));
    }
    if again.skipped != first.skipped {
        return Err(format!(
            "the second run skipped {:?}, the first {:?}",
            again.skipped, first.skipped
        ));
    }
    Ok(())
}

fn run_all(cases: &[Case]) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| match check(case) {
            Ok((took, fate)) => {
                eprintln!("{:<32} {:<18} {:>8.0?}  {fate}", case.name, case.file, took);
                None
            }
            Err(e) => Some(e),
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn extension(lang: Lang) -> &'static str {
    match lang {
        Lang::Rust => "rs",
        Lang::Python => "py",
        Lang::JavaScript => "js",
        Lang::TypeScript => "ts",
        Lang::Tsx => "tsx",
        Lang::Go => "go",
        Lang::Java => "java",
        Lang::C => "c",
        Lang::Cpp => "cpp",
        Lang::CSharp => "cs",
        Lang::Ruby => "rb",
        Lang::Php => "php",
        Lang::Kotlin => "kt",
        Lang::Swift => "swift",
        Lang::Bash => "sh",
    }
}

/// `(before, open, close, after)` of one expression nested in parentheses.
fn nested_expression(lang: Lang) -> (&'static str, &'static str, &'static str, &'static str) {
    match lang {
        Lang::Rust => ("fn f() { let x = ", "(", ")", "; }\n"),
        Lang::Python | Lang::Ruby => ("x = ", "(", ")", "\n"),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => ("let x = ", "(", ")", ";\n"),
        Lang::Go => ("package p\nvar x = ", "(", ")", "\n"),
        Lang::Java | Lang::CSharp => ("class A { int x = ", "(", ")", "; }\n"),
        Lang::C | Lang::Cpp => ("int x = ", "(", ")", ";\n"),
        Lang::Php => ("<?php $x = ", "(", ")", ";\n"),
        Lang::Kotlin => ("val x = ", "(", ")", "\n"),
        Lang::Swift => ("let x = ", "(", ")", "\n"),
        Lang::Bash => ("x=$(( ", "(", ")", " ))\n"),
    }
}

/// `(before, open, close, after)` of nested blocks or definitions.
fn nested_blocks(lang: Lang) -> (&'static str, &'static str, &'static str, &'static str) {
    match lang {
        Lang::Rust => ("fn f() ", "{ g(); ", "}", "\n"),
        Lang::Python => ("", "if x:\n ", "", "pass\n"),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => ("function f() ", "{ g(); ", "}", "\n"),
        Lang::Go => ("package p\nfunc f() ", "{ g(); ", "}", "\n"),
        Lang::Java | Lang::CSharp => ("class A { void f() ", "{ g(); ", "}", " }\n"),
        Lang::C | Lang::Cpp => ("void f() ", "{ g(); ", "}", "\n"),
        Lang::Ruby => ("", "begin\n", "end\n", ""),
        Lang::Php => ("<?php function f() ", "{ g(); ", "}", "\n"),
        Lang::Kotlin => ("fun f() ", "{ g(); run ", "}", "\n"),
        Lang::Swift => ("func f() ", "{ g(); do ", "}", "\n"),
        Lang::Bash => ("f() ", "{ g; ", "}", "\n"),
    }
}

fn nested(shape: (&str, &str, &str, &str), depth: usize) -> Vec<u8> {
    let (before, open, close, after) = shape;
    format!(
        "{before}{}{}{after}",
        open.repeat(depth),
        close.repeat(depth)
    )
    .into_bytes()
}

/// 100,000 levels of nesting, two shapes, in every language.
#[test]
fn nesting_100000_deep_in_every_language_is_bounded() {
    let mut cases = Vec::new();
    for lang in Lang::ALL {
        let ext = extension(lang);
        cases.push(Case {
            name: "parentheses 100,000 deep",
            file: format!("parens.{ext}"),
            bytes: nested(nested_expression(lang), 100_000),
            fate: Fate::Bounded,
        });
        cases.push(Case {
            name: "blocks 100,000 deep",
            file: format!("blocks.{ext}"),
            bytes: nested(nested_blocks(lang), 100_000),
            fate: Fate::Bounded,
        });
    }
    run_all(&cases);
}

/// Small files whose bytes are the problem.
#[test]
fn hostile_bytes_are_indexed_or_named() {
    let mut invalid_utf8 = b"fn before() {}\n// \xFF\xFE\xC3 broken\nfn after() {}\n".to_vec();
    invalid_utf8.extend_from_slice(&[0xE2, 0x82]);
    let binary: Vec<u8> = (0..64 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(
            "def f():\n    pass\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        )
        .collect();
    run_all(&[
        Case {
            name: "empty",
            file: "empty.rs".into(),
            bytes: Vec::new(),
            fate: Fate::Indexed(Some(0)),
        },
        Case {
            name: "invalid UTF-8",
            file: "broken.rs".into(),
            bytes: invalid_utf8,
            fate: Fate::Indexed(Some(2)),
        },
        Case {
            name: "NUL bytes",
            file: "nul.py".into(),
            bytes: b"def f():\n    pass\n\0\0\0".to_vec(),
            fate: Fate::Skipped("binary"),
        },
        Case {
            name: "binary content",
            file: "image.js".into(),
            bytes: binary,
            fate: Fate::Skipped("binary"),
        },
        Case {
            name: "UTF-16 with its BOM",
            file: "wide.py".into(),
            bytes: utf16,
            fate: Fate::Skipped("not_utf8"),
        },
        Case {
            name: "UTF-8 BOM",
            file: "bom.py".into(),
            bytes: "\u{FEFF}def f():\n    pass\n".into(),
            fate: Fate::Indexed(Some(1)),
        },
        Case {
            name: "CRLF",
            file: "crlf.rs".into(),
            bytes: b"fn a() {}\r\nfn b() {}\r\n".to_vec(),
            fate: Fate::Indexed(Some(2)),
        },
        Case {
            name: "lone CR",
            file: "cr.py".into(),
            bytes: b"def a():\r    pass\rdef b():\r    pass\r".to_vec(),
            fate: Fate::Bounded,
        },
        Case {
            name: "1 MB of one identifier",
            file: "ident.rs".into(),
            bytes: vec![b'a'; 1 << 20],
            fate: Fate::Indexed(Some(0)),
        },
        Case {
            name: "1 MB of one identifier (Python)",
            file: "ident.py".into(),
            bytes: vec![b'a'; 1 << 20],
            fate: Fate::Indexed(Some(0)),
        },
    ]);
}

/// 20 MB of minified JavaScript on one line, and a million short lines.
#[test]
#[ignore = "slow tier (minutes in a debug build): `cargo test -- --ignored`, which CI runs"]
fn huge_files_are_bounded() {
    let mut minified = String::with_capacity(21 << 20);
    let mut i = 0u64;
    while minified.len() < 20 << 20 {
        minified.push_str(&format!(
            "function f{i}(a,b){{return a.g{i}(b)+h(a,{i})}};var v{i}=f{i}(1,[2,3]);"
        ));
        i += 1;
    }
    run_all(&[
        Case {
            name: "20 MB minified on one line",
            file: "bundle.min.js".into(),
            bytes: minified.into_bytes(),
            fate: Fate::Bounded,
        },
        Case {
            name: "1,000,000 short lines",
            file: "lines.py".into(),
            bytes: "a=1\n".repeat(1_000_000).into_bytes(),
            fate: Fate::Bounded,
        },
    ]);
}

/// Files that change, vanish, or turn into something else while a run reads them: the
/// run completes, the index stays consistent, and once the tree is still, a sync
/// brings it to exactly what a fresh index would be.
#[test]
fn files_that_change_or_vanish_during_a_run_leave_a_consistent_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    for i in 0..400 {
        std::fs::write(
            root.join(format!("f{i}.py")),
            format!("def f{i}():\n    g{i}()\n"),
        )
        .unwrap();
    }
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut round = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                round += 1;
                for i in (0..400).step_by(3) {
                    let path = root.join(format!("f{i}.py"));
                    match (round + i) % 4 {
                        0 => drop(std::fs::remove_file(&path)),
                        1 => drop(std::fs::write(
                            &path,
                            format!("def changed{round}():\n    pass\n"),
                        )),
                        2 => {
                            drop(std::fs::remove_file(&path));
                            let _ = rustix::fs::mknodat(
                                rustix::fs::CWD,
                                &path,
                                rustix::fs::FileType::Fifo,
                                rustix::fs::Mode::from_raw_mode(0o644),
                                0,
                            );
                        }
                        _ => {
                            drop(std::fs::remove_file(&path));
                            drop(std::os::unix::fs::symlink("/etc/hostname", &path));
                        }
                    }
                }
            }
        });
        for _ in 0..5 {
            let started = Instant::now();
            let report = index_workspace(&IndexOptions::new(&root), &NoProgress).unwrap();
            assert!(started.elapsed() < Duration::from_secs(60), "{report:?}");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    // Still: every special file becomes a plain one again, then a sync and a fresh
    // index of a copy agree.
    for i in 0..400 {
        let path = root.join(format!("f{i}.py"));
        let _ = std::fs::remove_file(&path);
        std::fs::write(&path, format!("def settled{i}():\n    pass\n")).unwrap();
    }
    index_workspace(&IndexOptions::new(&root), &NoProgress).unwrap();
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(&root)).unwrap();
    assert_eq!(loci_store::quick_check(&conn).unwrap(), None);
    let symbols: i64 = conn
        .query_row("SELECT count(*) FROM symbols", [], |r| r.get(0))
        .unwrap();
    assert_eq!(symbols, 400);
    drop(conn);
    let quiet = index_workspace(&IndexOptions::new(&root), &NoProgress).unwrap();
    assert!(!quiet.wrote, "{quiet:?}");
}
