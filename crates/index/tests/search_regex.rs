//! A search through the index finds exactly what a line-by-line regex scan of the same
//! files finds, in the same (path, line) order, up to the limit: the trigram prefilter
//! never hides a match, whatever the pattern's escapes, flags, classes or repetitions.

use crate::common;

use std::path::Path;

use common::{index, write_tree};
use loci_index::graph::{Graph, SearchOptions, search};
use proptest::prelude::*;
use regex::RegexBuilder;

/// (path, line, column) of every hit.
type Hits = Vec<(String, u32, u32)>;

/// The scan the index must agree with: every file, in path order, line by line.
fn scan(
    root: &Path,
    files: &[String],
    source: &str,
    ignore_case: bool,
    limit: usize,
) -> (Hits, bool) {
    let matcher = RegexBuilder::new(source)
        .case_insensitive(ignore_case)
        .build()
        .unwrap();
    let mut sorted = files.to_vec();
    sorted.sort();
    sorted.dedup();
    let mut hits = Vec::new();
    for rel in &sorted {
        let bytes = std::fs::read(root.join(rel)).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for (i, line) in text.lines().enumerate() {
            if let Some(m) = matcher.find(line) {
                hits.push((rel.clone(), i as u32 + 1, m.start() as u32 + 1));
            }
        }
    }
    let truncated = hits.len() > limit;
    hits.truncate(limit);
    (hits, truncated)
}

fn searched(
    graph: &Graph,
    pattern: &str,
    regex: bool,
    ignore_case: bool,
    limit: usize,
) -> (Hits, bool) {
    let opts = SearchOptions {
        regex,
        ignore_case,
        limit,
        path_glob: None,
        source_only: false,
    };
    let (hits, truncated) = search(graph, pattern, &opts).unwrap();
    let hits = hits.into_iter().map(|h| (h.path, h.line, h.col)).collect();
    (hits, truncated)
}

/// Indexes `files` in a fresh directory and checks each regex against the scan.
fn assert_agrees(files: &[(&str, &str)], regexes: &[(&str, bool)], limit: usize) {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), files);
    index(dir.path());
    let graph = Graph::open(dir.path()).unwrap();
    let names: Vec<String> = files.iter().map(|(p, _)| p.to_string()).collect();
    for (pattern, ignore_case) in regexes {
        let expected = scan(dir.path(), &names, pattern, *ignore_case, limit);
        let got = searched(&graph, pattern, true, *ignore_case, limit);
        assert_eq!(
            got, expected,
            "pattern {pattern:?} (ignore case: {ignore_case})"
        );
    }
}

const PLAIN: &[(&str, &str)] = &[
    (
        "src/a.rs",
        "fn main() {\n    let s = \"ABCDEF\";\n    helloworld();\n}\n",
    ),
    (
        "src/b.py",
        "def f():\r\n    return 'Éxyz'\r\n# h e l l o hello\r\n",
    ),
];

#[test]
fn a_hex_escape_is_the_letter_it_spells() {
    assert_agrees(
        PLAIN,
        &[(r"\x41BCDEF", false), (r"\x{41}\u0042CDEF", false)],
        100,
    );
}

#[test]
fn a_pattern_repeated_zero_times_vanishes_from_the_literal() {
    assert_agrees(
        PLAIN,
        &[(r"helloX{0}world", false), (r"hello(?:X{0})world", false)],
        100,
    );
}

#[test]
fn a_unicode_class_escape_is_not_a_literal() {
    assert_agrees(PLAIN, &[(r"\pLxyz", false), (r"\p{Lu}xyz", false)], 100);
}

#[test]
fn extended_mode_whitespace_is_not_part_of_the_literal() {
    assert_agrees(
        PLAIN,
        &[
            (r"(?x) h e l l o", false),
            (r"(?x) h e l l o   # comment", false),
        ],
        100,
    );
}

#[test]
fn a_pattern_with_many_literal_runs_searches_instead_of_failing() {
    let runs: Vec<String> = (0..30).map(|i| format!("w{i:02}")).collect();
    let line = runs.join(" ");
    let file = format!("fn x() {{}}\n// {line}\n");
    let pattern = runs.join(".");
    assert_agrees(
        &[("src/many.rs", &file)],
        &[(&pattern, false), (&pattern, true)],
        100,
    );
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &[("src/many.rs", &file)]);
    index(dir.path());
    let graph = Graph::open(dir.path()).unwrap();
    let (hits, _) = searched(&graph, &pattern, true, false, 10);
    assert_eq!(hits, vec![("src/many.rs".to_string(), 2, 4)]);
}

#[test]
fn case_insensitive_search_finds_the_letters_that_fold_apart() {
    // 'ſ' (long s) and 'K' (Kelvin sign) match 's' and 'k' case-insensitively; the
    // index folds 'K' to 'k' but keeps 'ſ'.
    let files = &[
        ("src/long_s.rs", "// ma\u{17F}k\nfn unrelated() {}\n"),
        ("src/kelvin.rs", "// MA\u{212A}E\nfn unrelated() {}\n"),
        ("src/plain.rs", "// mask\n"),
    ];
    assert_agrees(
        files,
        &[
            ("mask", true),
            ("MASK", true),
            ("ma(s|x)k", true),
            ("make", true),
            ("maſk", false),
        ],
        100,
    );
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), files);
    index(dir.path());
    let graph = Graph::open(dir.path()).unwrap();
    // The literal (non-regex) search goes through the same prefilter.
    let paths = |pattern: &str| -> Vec<String> {
        let (hits, _) = searched(&graph, pattern, false, true, 10);
        hits.into_iter().map(|h| h.0).collect()
    };
    assert_eq!(paths("MASK"), ["src/long_s.rs", "src/plain.rs"]);
    assert_eq!(paths("maſk"), ["src/long_s.rs", "src/plain.rs"]);
    assert_eq!(paths("mAke"), ["src/kelvin.rs"]);
}

// The generated corpus: short lines over an alphabet that mixes cases, letters that
// fold apart, accents, CJK, punctuation and the three line endings.

const PIECES: &[&str] = &[
    "a", "b", "c", "ab", "abc", "bca", "A", "B", "C", "ABC", "s", "S", "\u{17F}", "k", "K",
    "\u{212A}", "é", "É", "日本", "_", ".", "(", ")", "{", "}", " ", "  ", "\t", "fn", "Fn",
    "hello", "HeLLo", "world", "x", "xyz", "0", "12", "\r",
];

fn line() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..12).prop_map(|p| p.concat())
}

fn file_text() -> impl Strategy<Value = String> {
    let ending = prop::sample::select(&["\n", "\r\n", "\n", ""][..]);
    prop::collection::vec((line(), ending), 0..8).prop_map(|lines| {
        let mut out = String::new();
        for (text, end) in lines {
            out.push_str(&text);
            out.push_str(if end.is_empty() { "\n" } else { end });
        }
        out
    })
}

/// Regexes built from pieces: escaped literals, classes, escapes, groups, repeats,
/// alternations and inline flags.
fn regex_source() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        4 => prop::sample::select(PIECES).prop_map(regex::escape),
        1 => prop::sample::select(
            &[
                "[a-c]", "[sk]", "[^a]", r"\pL", r"\p{Lu}", r"\w", r"\d", r"\s", ".", r"\x41",
                r"\u{17F}", r"\x{212A}", "[[:alpha:]]", r"\b", "^", "$", r"\.", "[é日]",
            ][..],
        )
        .prop_map(str::to_string),
    ];
    atom.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..5).prop_map(|v| v.concat()),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| format!("(?:{})", v.join("|"))),
            (
                inner.clone(),
                prop::sample::select(&["*", "+", "?", "{0}", "{1,3}", "{2}", "{0,1}"][..])
            )
                .prop_map(|(r, q)| format!("(?:{r}){q}")),
            inner.clone().prop_map(|r| format!("(?i:{r})")),
            inner.clone().prop_map(|r| format!("({r})")),
        ]
    })
}

/// A regex that matches `chars` (taken from a file's line) written in a roundabout way:
/// each character through the syntax that `op` picks, so the pattern finds its line
/// only if the prefilter reads that syntax right.
fn spelled(chars: &[char], ops: &[u8]) -> String {
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let esc = regex::escape(&c.to_string());
        let hex = format!(r"\x{{{:x}}}", c as u32);
        let swapped: String = if c.is_lowercase() {
            c.to_uppercase().collect()
        } else {
            c.to_lowercase().collect()
        };
        let piece = match ops.get(i).copied().unwrap_or(0) % 10 {
            0 => esc,
            1 => hex,
            2 => format!("[{hex}]"),
            3 => format!("(?i:{})", regex::escape(&swapped)),
            4 => format!("{esc}Q{{0}}"),
            5 => format!("(?x: {hex} # note\n)"),
            6 if c.is_alphabetic() => r"\pL".to_string(),
            6 => ".".to_string(),
            7 => format!("(?:{esc}|ZZZ)"),
            8 => format!("{esc}?"),
            _ => format!("(?:{esc})+"),
        };
        out.push_str(&piece);
    }
    out
}

const NAMES: &[&str] = &["a.rs", "b/c.py", "b/d.js", "e.go", "z/y/x.rs"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn index_search_equals_a_line_scan_of_the_files(
        texts in prop::collection::vec(file_text(), NAMES.len()),
        patterns in prop::collection::vec((regex_source(), any::<bool>(), any::<bool>()), 1..12),
        limit in 1usize..40,
        picks in prop::collection::vec((any::<usize>(), any::<usize>(), 3usize..12, prop::collection::vec(any::<u8>(), 12), any::<bool>()), 1..8),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<(&str, &str)> = NAMES.iter().copied().zip(texts.iter().map(String::as_str)).collect();
        write_tree(dir.path(), &files);
        index(dir.path());
        let graph = Graph::open(dir.path()).unwrap();
        let names: Vec<String> = NAMES.iter().map(|n| n.to_string()).collect();
        for (at, start, len, ops, ignore_case) in &picks {
            let lines: Vec<&str> = texts.iter().flat_map(|t| t.lines()).filter(|l| !l.is_empty()).collect();
            if lines.is_empty() {
                break;
            }
            let chars: Vec<char> = lines[at % lines.len()].chars().collect();
            let from = start % chars.len();
            let source = spelled(&chars[from..(from + len).min(chars.len())], ops);
            let expected = scan(dir.path(), &names, &source, *ignore_case, limit);
            prop_assert!(!expected.0.is_empty(), "{:?} finds its own line", source);
            let got = searched(&graph, &source, true, *ignore_case, limit);
            prop_assert_eq!(got, expected, "spelled pattern {:?} ignore case {}", source, ignore_case);
        }
        for (source, ignore_case, literal) in &patterns {
            // Half the time the pattern is searched as a plain literal: the source itself.
            let (pattern, regex_source) = if *literal {
                (source.clone(), regex::escape(source))
            } else {
                (source.clone(), source.clone())
            };
            if RegexBuilder::new(&regex_source).case_insensitive(*ignore_case).build().is_err() {
                continue;
            }
            let expected = scan(dir.path(), &names, &regex_source, *ignore_case, limit);
            let got = searched(&graph, &pattern, !*literal, *ignore_case, limit);
            prop_assert_eq!(got, expected, "pattern {:?} regex {} ignore case {}", pattern, !*literal, ignore_case);
        }
    }
}
