//! What every fuzz target runs, so that each target is one line naming its language.
//!
//! A target fails (libFuzzer keeps the input) on a panic, on running past libFuzzer's
//! `-timeout` (a loop that makes no progress, a quadratic blow-up), on memory past
//! `-rss_limit_mb`, and on facts that break the invariants the index relies on
//! ([`check_facts`]).

use std::path::Path;

use loci_index::Lang;
use loci_index::extract::FileFacts;

/// Extracts `data` as `lang`, read as the index reads a file (invalid UTF-8 replaced),
/// and checks what comes out.
pub fn extract(lang: Lang, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(facts) = loci_index::extract::extract(lang, &text) {
        check_facts(&facts, text.len());
    }
}

/// The invariants of [`FileFacts`] that storing and resolving rely on: parents come
/// before their children, every index points into `symbols`, spans lie in the file.
pub fn check_facts(facts: &FileFacts, len: usize) {
    let symbols = facts.symbols.len();
    for (i, symbol) in facts.symbols.iter().enumerate() {
        if let Some(parent) = symbol.parent {
            assert!(
                (parent as usize) < i,
                "symbol {i}'s parent {parent} is not before it"
            );
        }
        let span = symbol.span;
        assert!(
            span.start_byte <= span.end_byte && span.end_byte as usize <= len,
            "symbol {i}'s span {span:?} is outside the {len}-byte file"
        );
        assert!(
            span.start_line >= 1 && span.start_line <= span.end_line,
            "{span:?}"
        );
    }
    for r in &facts.refs {
        assert!(r.from.is_none_or(|f| (f as usize) < symbols), "{r:?}");
        assert!(r.line >= 1 && r.col >= 1, "{r:?}");
    }
    for b in &facts.bases {
        assert!(b.symbol.is_none_or(|s| (s as usize) < symbols), "{b:?}");
    }
}

/// The language decisions made from a file's bytes alone: a `#!` line, and whether a
/// `.h` file reads as C++.
pub fn header(data: &[u8]) {
    let _ = Lang::detect(Path::new("bin/tool"), data);
    let text = String::from_utf8_lossy(data);
    let lang = Lang::C.for_content(Path::new("include/x.h"), &text);
    assert!(matches!(lang, Lang::C | Lang::Cpp));
}

/// Most files one resolution input may hold, and how deep their paths may go.
const MAX_FILES: usize = 12;
const MAX_PATH_DEPTH: usize = 4;

/// The line that starts a file in a resolution input: `//// path/to/file.ext`.
const FILE_MARK: &str = "//// ";

/// Indexes a small workspace written from `data` (files after `//// path` lines) from
/// scratch: walks, extracts, stores and resolves it, as `loci index` does.
pub fn resolve(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let files = split_files(&text);
    if files.is_empty() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (rel, content) in &files {
        let path = dir.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("a directory in the temporary one");
        }
        // Two marks may name a file and a folder the same: the later one loses.
        let _ = std::fs::write(&path, content);
    }
    let mut opts = loci_index::IndexOptions::new(dir.path());
    opts.threads = 1;
    let report = loci_index::index_workspace(&opts, &loci_index::NoProgress);
    if let Err(e) = report {
        panic!("indexing a small workspace failed: {e}");
    }
}

/// The files of a resolution input: each `//// path` line starts one. Paths are kept to
/// plain relative ones (letters, digits, `_`, `-`, `.`; no `..`; a few levels).
fn split_files(text: &str) -> Vec<(String, &str)> {
    let mut files = Vec::new();
    let mut rest = text;
    while files.len() < MAX_FILES {
        let Some(start) = rest.find(FILE_MARK) else {
            break;
        };
        let after = &rest[start + FILE_MARK.len()..];
        let line_end = after.find('\n').unwrap_or(after.len());
        let path = sanitize(&after[..line_end]);
        let body = &after[(line_end + 1).min(after.len())..];
        let body_end = body.find(FILE_MARK).unwrap_or(body.len());
        if let Some(path) = path {
            files.push((path, &body[..body_end]));
        }
        rest = &body[body_end..];
    }
    files
}

fn sanitize(path: &str) -> Option<String> {
    let parts: Vec<&str> = path
        .trim()
        .split('/')
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .collect();
    let plain = |p: &&str| {
        p.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            && !p.starts_with('.')
    };
    if parts.is_empty() || parts.len() > MAX_PATH_DEPTH || !parts.iter().all(plain) {
        return None;
    }
    Some(parts.join("/"))
}
