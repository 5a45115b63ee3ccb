//! Accuracy against universal-ctags: for real trees on this machine, how many of the
//! definitions ctags finds does loci find too, at the same line with the same name?
//!
//! - Python: the standard library of `python3` (a deterministic sample: every Nth sorted
//!   path); recall of ctags' classes, functions and members must be at least 95%.
//! - C: the CPython headers (plus C examples under `/usr/share/doc` when present): functions,
//!   structs, unions, enums, typedefs and macros, at least 95%. ctags gives the line of the name, which for
//!   `static int\nf(void)` and `typedef struct {..} T;` is not the first line of the definition,
//!   so a C definition matches when ctags' line is inside loci's span (the strict figure is
//!   printed too).
//! - JavaScript: `npm`'s sources under `/usr/lib/node_modules` (else the packages
//!   `.ci/run` installs under `$LOCI_NODE_TOOLS`): classes, functions, methods and
//!   generators, at least 80% (86% on npm 11: ctags also calls a constructor function or
//!   a compiled `var C = (function () {..})()` a class, where loci sees a function or a
//!   variable).
//!
//! Run with `cargo test -p loci-index --test integration ctags_recall -- --nocapture` to see the
//! figures. `LOCI_RECALL_STRIDE=1` compares every file instead of a sample;
//! `LOCI_RECALL_JS_ROOT=<dir>` compares JavaScript on that tree instead of npm's;
//! `LOCI_RECALL_MISSES=<dir>` writes every missed definition to `<dir>/<language>.misses`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common;

use loci_index::Lang;
use loci_index::extract::extract;

const CTAGS_HINT: &str = "this test needs universal-ctags: install it with \
     `apt-get install universal-ctags` (the .ci/run script does), or put a `ctags` \
     built from https://github.com/universal-ctags/ctags on PATH";

/// One tree to compare on.
struct Corpus {
    /// The language, for the report.
    label: &'static str,
    lang: Lang,
    /// ctags' name for the language (`--language-force`).
    ctags_lang: &'static str,
    /// ctags' kind letters to compare (`--kinds-<lang>=`).
    ctags_kinds: &'static str,
    /// The same kinds by the long names ctags prints (other kinds are dropped, whatever
    /// the ctags version enables by default).
    kind_names: &'static [&'static str],
    /// Whether ctags' line may be anywhere in loci's span rather than its first line: C
    /// puts return types and `typedef struct {` on lines before the name ctags reports.
    within_span: bool,
    files: Vec<PathBuf>,
}

#[test]
fn python_stdlib_recall_of_ctags_definitions_is_at_least_95_percent() {
    let ctags = ctags();
    let stdlib = python_path("stdlib");
    let mut files = Vec::new();
    collect(&stdlib, &["py"], &mut files);
    // Third-party packages are not the standard library.
    files.retain(|f| !f.components().any(|c| c.as_os_str() == "site-packages"));
    assert!(!files.is_empty(), "no .py files under {}", stdlib.display());
    let corpus = Corpus {
        label: "Python",
        lang: Lang::Python,
        ctags_lang: "Python",
        ctags_kinds: "cfm",
        kind_names: &["class", "function", "member"],
        within_span: false,
        files: sample(files, 2),
    };
    let recall = measure(&ctags, &corpus);
    assert!(
        recall >= 0.95,
        "Python recall {:.2}% is below 95%",
        recall * 100.0
    );
}

#[test]
fn c_recall_of_ctags_definitions_is_at_least_95_percent() {
    let ctags = ctags();
    let mut files = Vec::new();
    collect(&python_path("include"), &["h"], &mut files);
    let examples = Path::new("/usr/share/doc");
    if examples.is_dir() {
        let mut docs = Vec::new();
        collect(examples, &["c"], &mut docs);
        files.extend(docs);
    }
    if files.is_empty() {
        eprintln!("C: no C tree found on this machine, nothing to compare");
        return;
    }
    let corpus = Corpus {
        label: "C",
        lang: Lang::C,
        ctags_lang: "C",
        ctags_kinds: "fsugtd",
        kind_names: &["function", "struct", "union", "enum", "typedef", "macro"],
        within_span: true,
        files: sample(files, 1),
    };
    let recall = measure(&ctags, &corpus);
    assert!(
        recall >= 0.95,
        "C recall {:.2}% is below 95%",
        recall * 100.0
    );
}

#[test]
fn javascript_recall_of_ctags_definitions_is_at_least_80_percent() {
    let ctags = ctags();
    let candidates: Vec<PathBuf> = match std::env::var_os("LOCI_RECALL_JS_ROOT") {
        Some(root) => vec![PathBuf::from(root)],
        None => [
            Some(PathBuf::from("/usr/lib/node_modules/npm")),
            std::env::var_os("LOCI_NODE_TOOLS").map(|t| PathBuf::from(t).join("node_modules")),
        ]
        .into_iter()
        .flatten()
        .collect(),
    };
    let Some(root) = candidates.iter().find(|r| r.is_dir()) else {
        // CI installs the node tools: there an absent tree is a broken setup, not a skip.
        assert!(
            std::env::var_os("CI").is_none(),
            "JavaScript: none of {candidates:?} is a directory"
        );
        eprintln!("JavaScript: none of {candidates:?} is present, nothing to compare");
        return;
    };
    let mut files = Vec::new();
    collect(root, &["js"], &mut files);
    let corpus = Corpus {
        label: "JavaScript",
        lang: Lang::JavaScript,
        ctags_lang: "JavaScript",
        ctags_kinds: "cfmg",
        kind_names: &["class", "function", "method", "generator"],
        within_span: false,
        files: sample(files, 2),
    };
    let recall = measure(&ctags, &corpus);
    assert!(
        recall >= 0.80,
        "JavaScript recall of ctags' definitions fell to {:.1}%",
        recall * 100.0
    );
}

#[test]
fn cpp_header_library_recall_of_ctags_definitions_is_at_least_95_percent() {
    let ctags = ctags();
    // fmt's headers (Debian's libfmt-dev, which .ci/run installs): C++ in `.h` files.
    let root = Path::new("/usr/include/fmt");
    if !root.is_dir() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is absent: apt-get install libfmt-dev (.ci/run does)",
            root.display()
        );
        eprintln!("C++: {} is absent, nothing to compare", root.display());
        return;
    }
    let mut files = Vec::new();
    collect(root, &["h"], &mut files);
    let corpus = Corpus {
        label: "C++ (fmt headers)",
        lang: Lang::C,
        ctags_lang: "C++",
        ctags_kinds: "cfgnstu",
        kind_names: &[
            "class",
            "function",
            "enum",
            "namespace",
            "struct",
            "typedef",
            "union",
        ],
        within_span: true,
        files: sample(files, 1),
    };
    let recall = measure(&ctags, &corpus);
    assert!(
        recall >= 0.95,
        "C++ header recall {:.2}% is below 95%",
        recall * 100.0
    );
}

#[test]
fn rust_tokio_recall_of_ctags_definitions_is_at_least_95_percent() {
    let ctags = ctags();
    let tokio = common::newest_registry_crate("tokio-1.");
    let mut files = Vec::new();
    collect(&tokio.join("src"), &["rs"], &mut files);
    assert!(!files.is_empty(), "no .rs files under {}", tokio.display());
    // Modules are left out: ctags counts every `mod m;`, which only points at the file
    // that is the module (loci records `mod m { .. }`, a module with a body).
    let corpus = Corpus {
        label: "Rust (tokio)",
        lang: Lang::Rust,
        ctags_lang: "Rust",
        ctags_kinds: "MPfgist",
        kind_names: &[
            "macro",
            "method",
            "function",
            "enum",
            "interface",
            "struct",
            "typedef",
        ],
        within_span: false,
        files: sample(files, 1),
    };
    let recall = measure(&ctags, &corpus);
    assert!(
        recall >= 0.95,
        "tokio recall {:.2}% is below 95%",
        recall * 100.0
    );
}

/// Prints per-kind and total recall of ctags' definitions by (file, line, name); returns the total.
fn measure(ctags: &Path, corpus: &Corpus) -> f64 {
    let expected = run_ctags(ctags, corpus);
    let mut found: HashSet<(String, u32, String)> = HashSet::new();
    let mut spans: HashMap<(String, String), Vec<(u32, u32)>> = HashMap::new();
    let mut loci_symbols = 0usize;
    for file in &corpus.files {
        let bytes =
            std::fs::read(file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let source = String::from_utf8_lossy(&bytes);
        let lang = corpus.lang.for_content(file, &source);
        let facts = extract(lang, &source).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let path = file.to_string_lossy().into_owned();
        for symbol in facts.symbols {
            loci_symbols += 1;
            let name = comparable(&symbol.name).to_string();
            spans
                .entry((path.clone(), name.clone()))
                .or_default()
                .push((symbol.span.start_line, symbol.span.end_line));
            found.insert((path.clone(), symbol.span.start_line, name));
        }
    }

    let matches = |tag: &Tag| {
        found.contains(&(tag.path.clone(), tag.line, tag.name.clone()))
            || (corpus.within_span
                && spans
                    .get(&(tag.path.clone(), tag.name.clone()))
                    .is_some_and(|s| {
                        s.iter()
                            .any(|(start, end)| (*start..=*end).contains(&tag.line))
                    }))
    };
    let strict = expected
        .iter()
        .filter(|t| found.contains(&(t.path.clone(), t.line, t.name.clone())))
        .count();
    // kind -> (total, matched, a few misses)
    let mut per_kind: BTreeMap<String, (usize, usize, Vec<String>)> = BTreeMap::new();
    for tag in &expected {
        let entry = per_kind.entry(tag.kind.clone()).or_default();
        entry.0 += 1;
        if matches(tag) {
            entry.1 += 1;
        } else if entry.2.len() < 8 {
            entry
                .2
                .push(format!("{}:{} {}", tag.path, tag.line, tag.name));
        }
    }
    if let Some(dump) = std::env::var_os("LOCI_RECALL_MISSES") {
        let mut out = String::new();
        for tag in &expected {
            if !matches(tag) {
                out.push_str(&format!(
                    "{} {}:{} {}\n",
                    tag.kind, tag.path, tag.line, tag.name
                ));
            }
        }
        let path = PathBuf::from(dump).join(format!("{}.misses", corpus.label));
        std::fs::write(&path, out)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
    let total: usize = per_kind.values().map(|v| v.0).sum();
    let matched: usize = per_kind.values().map(|v| v.1).sum();
    let recall = if total == 0 {
        1.0
    } else {
        matched as f64 / total as f64
    };
    eprintln!(
        "{}: {} files, {} ctags definitions, {} loci symbols (all kinds)",
        corpus.label,
        corpus.files.len(),
        total,
        loci_symbols
    );
    for (kind, (n, m, misses)) in &per_kind {
        eprintln!(
            "  {kind:<12} {m:>6} / {n:<6} {:>6.2}%",
            100.0 * *m as f64 / (*n).max(1) as f64
        );
        for miss in misses {
            eprintln!("      missed {miss}");
        }
    }
    eprintln!(
        "  {:<12} {matched:>6} / {total:<6} {:>6.2}%",
        "total",
        recall * 100.0
    );
    if corpus.within_span {
        eprintln!(
            "  (matched by name with ctags' line inside loci's span; on loci's first line only: {strict} / {total} {:.2}%)",
            100.0 * strict as f64 / total.max(1) as f64
        );
    }
    recall
}

struct Tag {
    path: String,
    line: u32,
    name: String,
    kind: String,
}

fn run_ctags(ctags: &Path, corpus: &Corpus) -> Vec<Tag> {
    let mut child = Command::new(ctags)
        .args([
            "--output-format=json",
            "--fields=+nKz",
            &format!("--language-force={}", corpus.ctags_lang),
            &format!("--kinds-{}={}", corpus.ctags_lang, corpus.ctags_kinds),
            "-L",
            "-",
            "-f",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {CTAGS_HINT}", ctags.display()));
    let mut list = String::new();
    for file in &corpus.files {
        list.push_str(&file.to_string_lossy());
        list.push('\n');
    }
    let mut stdin = child.stdin.take().expect("piped stdin");
    // Written from a thread so a large output cannot deadlock against a full input pipe.
    let writer = std::thread::spawn(move || stdin.write_all(list.as_bytes()));
    let output = child.wait_with_output().expect("ctags output");
    writer
        .join()
        .expect("writer thread")
        .expect("write the file list to ctags");
    assert!(
        output.status.success(),
        "ctags failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let mut tags = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if value["_type"] != "tag" {
            continue;
        }
        let name = comparable(value["name"].as_str().unwrap_or_default()).to_string();
        // ctags names anonymous structs, classes and functions (`__anon<hash>`,
        // `AnonymousFunction<hash>`); loci does not record what has no name.
        if name.starts_with("__anon")
            || name.starts_with("AnonymousClass")
            || name.starts_with("AnonymousFunction")
        {
            continue;
        }
        let kind = value["kind"].as_str().unwrap_or_default().to_string();
        if !corpus.kind_names.contains(&kind.as_str()) {
            continue;
        }
        tags.push(Tag {
            path: value["path"].as_str().unwrap_or_default().to_string(),
            line: value["line"].as_u64().unwrap_or(0) as u32,
            name,
            kind,
        });
    }
    tags
}

/// A definition's name as compared: C++ operators are written differently by ctags
/// (`operator ()`, `operator basic_string_view<Char>`) and loci (`operator()`, the
/// conversion's type without its arguments), so any operator is `operator` (the line
/// still has to match).
fn comparable(name: &str) -> &str {
    if name.starts_with("operator")
        && !name[8..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
    {
        "operator"
    } else {
        name
    }
}

/// universal-ctags, or a failure that says how to install it.
fn ctags() -> PathBuf {
    let candidates = [PathBuf::from("/usr/bin/ctags"), PathBuf::from("ctags")];
    for candidate in candidates {
        if let Ok(out) = Command::new(&candidate).arg("--version").output()
            && String::from_utf8_lossy(&out.stdout).contains("Universal Ctags")
        {
            return candidate;
        }
    }
    panic!("no universal-ctags found at /usr/bin/ctags or on PATH; {CTAGS_HINT}");
}

/// A `sysconfig` path of this machine's `python3` (`stdlib`, `include`).
fn python_path(key: &str) -> PathBuf {
    let out = Command::new("python3")
        .args([
            "-c",
            &format!("import sysconfig; print(sysconfig.get_paths()[{key:?}])"),
        ])
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 to find its {key} path: {e}"));
    assert!(
        out.status.success(),
        "python3 could not tell its {key} path"
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// Every file under `dir` (sorted, symlinks not followed) whose extension is in `exts`.
fn collect(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            collect(&path, exts, out);
        } else if meta.is_file()
            && path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| exts.contains(&e))
        {
            out.push(path);
        }
    }
}

/// Every `stride`th file of the sorted list (`LOCI_RECALL_STRIDE` overrides the default).
fn sample(mut files: Vec<PathBuf>, default_stride: usize) -> Vec<PathBuf> {
    files.sort();
    let stride = std::env::var("LOCI_RECALL_STRIDE")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|s| *s > 0)
        .unwrap_or(default_stride);
    files.into_iter().step_by(stride).collect()
}
