//! Syntax classes of source text for display (the web view's source excerpts), from
//! tree-sitter-highlight and the highlight queries the grammar crates ship: the same
//! grammars the index parses with, nothing downloaded. Bounded like extraction: a
//! file over [`MAX_BYTES`] or one that runs past [`BUDGET`] is answered without
//! classes rather than late.

use std::ops::Range;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tree_sitter_highlight::{HighlightConfiguration, HighlightEvent, Highlighter};

use crate::Lang;

/// Largest text classified.
pub const MAX_BYTES: usize = 1 << 20;
/// Longest one classification may run.
pub const BUDGET: Duration = Duration::from_millis(250);

/// The classes a front end styles; a capture such as `function.method` takes the
/// longest of these that prefixes it.
pub const CLASSES: &[&str] = &[
    "attribute",
    "comment",
    "constant",
    "constant.builtin",
    "constructor",
    "function",
    "function.builtin",
    "keyword",
    "number",
    "operator",
    "property",
    "string",
    "type",
    "type.builtin",
    "variable.builtin",
];

/// A run of text on one line, with its class (an entry of [`CLASSES`]) if it has one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Piece {
    /// The class, if any.
    pub class: Option<&'static str>,
    /// The text (no line end).
    pub text: String,
}

/// The byte spans of a file's definitions, as the index read them from the very text
/// classed (the caller checks the content hash): those with no parent, and the others
/// (methods, nested items). What [`highlight_excerpt`] cuts a window by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DefinitionSpans {
    /// Definitions with no parent.
    pub outer: Vec<Range<usize>>,
    /// Definitions within another (a method's parent may be a type defined elsewhere).
    pub inner: Vec<Range<usize>>,
}

/// The lines `wanted` (0-based) of `source`, each split into classed pieces; `None`
/// when the language has no highlight query here, the text is too large, or the budget
/// ran out. The whole text is parsed (a line's class can depend on what came before),
/// but classification stops at the last line wanted.
pub fn highlight_lines(lang: Lang, source: &str, wanted: Range<usize>) -> Option<Vec<Vec<Piece>>> {
    classify(lang, source, wanted, BUDGET)
}

fn classify(
    lang: Lang,
    source: &str,
    wanted: Range<usize>,
    budget: Duration,
) -> Option<Vec<Vec<Piece>>> {
    if source.len() > MAX_BYTES {
        return None;
    }
    let config = config(lang)?;
    let mut highlighter = Highlighter::new();
    let started = Instant::now();
    let events = highlighter
        .highlight(config, source.as_bytes(), None, |_| None)
        .ok()?;
    let mut out: Vec<Vec<Piece>> = Vec::new();
    let mut current: Vec<Piece> = Vec::new();
    let mut line = 0usize;
    let mut stack: Vec<&'static str> = Vec::new();
    for event in events {
        if started.elapsed() > budget {
            return None;
        }
        match event.ok()? {
            HighlightEvent::HighlightStart(h) => stack.push(CLASSES.get(h.0).copied()?),
            HighlightEvent::HighlightEnd => {
                stack.pop();
            }
            HighlightEvent::Source { start, end } => {
                let class = stack.last().copied();
                let text = source.get(start..end)?;
                for (i, part) in text.split('\n').enumerate() {
                    if i > 0 {
                        if wanted.contains(&line) {
                            out.push(std::mem::take(&mut current));
                        }
                        line += 1;
                        if line >= wanted.end {
                            return Some(out);
                        }
                    }
                    let part = part.strip_suffix('\r').unwrap_or(part);
                    if !part.is_empty() && wanted.contains(&line) {
                        current.push(Piece {
                            class,
                            text: part.to_string(),
                        });
                    }
                }
            }
        }
    }
    // The text after the last line end is a line unless it is empty.
    if !source.ends_with('\n') && wanted.contains(&line) {
        out.push(current);
    }
    Some(out)
}

/// Files at least this large are classed from a window around the lines wanted
/// ([`highlight_excerpt`]); smaller ones are parsed whole (a few milliseconds).
pub const WINDOW_FROM: usize = 64 << 10;

/// [`highlight_lines`] of a file whose definitions' spans are known (`spans`). A file
/// of [`WINDOW_FROM`] bytes or more is classed from a window alone: from the line where
/// the last outermost definition that starts at or before the first line wanted starts
/// (nothing but blanks before it on that line) to the end of the first one that ends
/// at or after the last line wanted. Such a definition starts and ends where the whole
/// file's parse is between top-level items (not within a comment, a string or a
/// block), so the window parses into the same items and gets the same classes: parsing
/// the whole of a 350 KB file took 55–69 ms, the window is a few items.
///
/// Rust's `impl` blocks are no definitions of their own (their methods' parent is the
/// type), so in a file of impl blocks that window reaches far: there a window of whole
/// items at the left margin is tried first ([`margin_window`]). A window whose own
/// parse has an error (it was not cut between top-level items after all) is not
/// trusted: the next is tried, then the whole text is classed.
pub fn highlight_excerpt(
    lang: Lang,
    source: &str,
    wanted: Range<usize>,
    spans: &DefinitionSpans,
) -> Option<Vec<Vec<Piece>>> {
    excerpt_from(lang, source, wanted, spans, WINDOW_FROM)
}

fn excerpt_from(
    lang: Lang,
    source: &str,
    wanted: Range<usize>,
    spans: &DefinitionSpans,
    window_from: usize,
) -> Option<Vec<Vec<Piece>>> {
    // A small file, or one without known spans, is parsed whole: no window to find.
    let windowed =
        source.len() >= window_from && source.len() <= MAX_BYTES && !spans.outer.is_empty();
    if windowed {
        for w in windows(lang, source, &wanted, spans) {
            let text = &source[w.clone()];
            if text.len() < source.len() && parses_clean(lang, text) {
                let before = source[..w.start].bytes().filter(|b| *b == b'\n').count();
                return highlight_lines(lang, text, wanted.start - before..wanted.end - before);
            }
        }
    }
    highlight_lines(lang, source, wanted)
}

/// The windows [`highlight_excerpt`] tries for the lines `wanted` (0-based), narrowest
/// first; none when no window holds them (lines past the end, spans that do not fit).
fn windows(
    lang: Lang,
    source: &str,
    wanted: &Range<usize>,
    spans: &DefinitionSpans,
) -> Vec<Range<usize>> {
    let Some((lines, by_spans)) = window(source, wanted, &spans.outer) else {
        return Vec::new();
    };
    let margin = (lang == Lang::Rust)
        .then(|| margin_window(source, &lines, &by_spans, spans))
        .flatten()
        .filter(|m| m.len() < by_spans.len());
    margin.into_iter().chain([by_spans]).collect()
}

/// Where a margin window is looked for: when the window by spans reaches this much
/// past the lines wanted on either side.
const FAR: usize = 8 << 10;

/// A narrower window than `by_spans` around the bytes `lines` of Rust source: from the
/// nearest line above that starts an item at the left margin (a letter or `#` in the
/// first column, after a blank line or a lone `}`) to the nearest lone `}` at the left
/// margin below, neither within any definition the index knows (a string or comment
/// inside one). An `impl` block is cut so.
fn margin_window(
    source: &str,
    lines: &Range<usize>,
    by_spans: &Range<usize>,
    spans: &DefinitionSpans,
) -> Option<Range<usize>> {
    let inside = |at: usize| {
        spans
            .outer
            .iter()
            .chain(&spans.inner)
            .any(|s| s.start < at && at < s.end)
    };
    let mut start = by_spans.start;
    if lines.start - by_spans.start > FAR {
        let mut at = lines.start;
        while at > by_spans.start {
            let previous = source[..at - 1].rfind('\n').map_or(0, |i| i + 1);
            let line = source[at..].lines().next().unwrap_or_default();
            let above = source[previous..at - 1].trim_end();
            let opens = line
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '#');
            if opens && (above.is_empty() || above == "}") && !inside(at) {
                start = at;
                break;
            }
            at = previous;
        }
    }
    let mut end = by_spans.end;
    if by_spans.end - lines.end > FAR {
        let mut at = lines.end;
        while at < by_spans.end {
            let line_end = source[at..].find('\n').map_or(source.len(), |i| at + i);
            let line = &source[at..line_end];
            if line.trim_end() == "}" && !inside(at) {
                end = at + 1;
                break;
            }
            at = line_end + 1;
        }
    }
    (start > by_spans.start || end < by_spans.end).then_some(start..end)
}

/// The bytes of the lines `wanted` (0-based), and the window of whole outermost
/// definitions around them; `None` when no window holds them (lines past the end,
/// spans that do not fit).
fn window(
    source: &str,
    wanted: &Range<usize>,
    outer: &[Range<usize>],
) -> Option<(Range<usize>, Range<usize>)> {
    if wanted.is_empty() {
        return None;
    }
    // Where the first line wanted starts and the last one ends.
    let from = if wanted.start == 0 {
        0
    } else {
        source.match_indices('\n').nth(wanted.start - 1)?.0 + 1
    };
    let to = source[from..]
        .match_indices('\n')
        .nth(wanted.len() - 1)
        .map_or(source.len(), |(i, _)| from + i);
    // The outermost spans only: a definition within another is not at the top level.
    let mut spans: Vec<&Range<usize>> = outer
        .iter()
        .filter(|s| {
            s.start < s.end
                && s.end <= source.len()
                && source.is_char_boundary(s.start)
                && source.is_char_boundary(s.end)
        })
        .collect();
    spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let mut top: Vec<&Range<usize>> = Vec::new();
    for s in spans {
        if top.last().is_none_or(|t| s.start >= t.end) {
            top.push(s);
        }
    }
    let line_start = |at: usize| source[..at].rfind('\n').map_or(0, |i| i + 1);
    let start = top
        .iter()
        .rev()
        .filter(|s| s.start <= from)
        .map(|s| (line_start(s.start), s.start))
        .find(|(line, at)| source[*line..*at].trim().is_empty())
        .map_or(0, |(line, _)| line);
    let end = top
        .iter()
        .find(|s| s.end >= to && s.start >= start)
        .map_or(source.len(), |s| s.end);
    Some((from..to, start..end))
}

/// Whether `text` parses as `lang` without an error.
fn parses_clean(lang: Lang, text: &str) -> bool {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&lang.grammar()).is_ok()
        && parser
            .parse(text, None)
            .is_some_and(|t| !t.root_node().has_error())
}

/// The highlight configuration of `lang`, built on its first use (compiling a query
/// takes a while: only the languages shown pay for it).
fn config(lang: Lang) -> Option<&'static HighlightConfiguration> {
    static CONFIGS: [OnceLock<Option<HighlightConfiguration>>; Lang::ALL.len()] =
        [const { OnceLock::new() }; Lang::ALL.len()];
    let slot = Lang::ALL.iter().position(|l| *l == lang)?;
    CONFIGS[slot].get_or_init(|| build(lang)).as_ref()
}

fn build(lang: Lang) -> Option<HighlightConfiguration> {
    let js = tree_sitter_javascript::HIGHLIGHT_QUERY;
    let query: String = match lang {
        Lang::Rust => tree_sitter_rust::HIGHLIGHTS_QUERY.into(),
        Lang::Python => tree_sitter_python::HIGHLIGHTS_QUERY.into(),
        Lang::JavaScript => js.into(),
        // TypeScript's query extends JavaScript's, C++'s extends C's.
        Lang::TypeScript | Lang::Tsx => {
            format!("{}\n{js}", tree_sitter_typescript::HIGHLIGHTS_QUERY)
        }
        Lang::Go => tree_sitter_go::HIGHLIGHTS_QUERY.into(),
        Lang::Java => tree_sitter_java::HIGHLIGHTS_QUERY.into(),
        Lang::C => tree_sitter_c::HIGHLIGHT_QUERY.into(),
        Lang::Cpp => format!(
            "{}\n{}",
            tree_sitter_cpp::HIGHLIGHT_QUERY,
            tree_sitter_c::HIGHLIGHT_QUERY
        ),
        Lang::CSharp => tree_sitter_c_sharp::HIGHLIGHTS_QUERY.into(),
        Lang::Ruby => tree_sitter_ruby::HIGHLIGHTS_QUERY.into(),
        Lang::Php => tree_sitter_php::HIGHLIGHTS_QUERY.into(),
        Lang::Swift => tree_sitter_swift::HIGHLIGHTS_QUERY.into(),
        Lang::Bash => tree_sitter_bash::HIGHLIGHT_QUERY.into(),
        // The Kotlin grammar crate ships no highlight query.
        Lang::Kotlin => return None,
    };
    let mut config =
        HighlightConfiguration::new(lang.grammar(), lang.name(), &query, "", "").ok()?;
    config.configure(CLASSES);
    Some(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_keywords_functions_and_strings_get_their_classes() {
        let lines = highlight_lines(Lang::Rust, SOURCE, 0..usize::MAX).expect("rust has a query");
        assert_eq!(lines.len(), 3);
        let class_of = |line: usize, text: &str| {
            lines[line]
                .iter()
                .find(|p| p.text == text)
                .map(|p| p.class)
                .unwrap_or_else(|| panic!("no piece {text:?} in {:?}", lines[line]))
        };
        assert_eq!(class_of(0, "fn"), Some("keyword"));
        assert_eq!(class_of(0, "main"), Some("function"));
        assert_eq!(class_of(1, "\"hi\""), Some("string"));
        assert_eq!(class_of(1, "// c"), Some("comment"));
        let joined: Vec<String> = lines
            .iter()
            .map(|l| l.iter().map(|p| p.text.as_str()).collect())
            .collect();
        assert_eq!(joined, ["fn main() {", "    let s = \"hi\"; // c", "}"]);
    }

    const SOURCE: &str = "fn main() {\n    let s = \"hi\"; // c\n}\n";

    #[test]
    fn a_range_of_lines_is_those_lines_of_the_whole() {
        let all = highlight_lines(Lang::Rust, SOURCE, 0..usize::MAX).unwrap();
        for (from, to) in [(0, 1), (1, 2), (1, 3), (2, 3), (2, 9), (3, 9), (0, 0)] {
            let some = highlight_lines(Lang::Rust, SOURCE, from..to).unwrap();
            let end = to.min(all.len());
            assert_eq!(some, all[from.min(end)..end], "{from}..{to}");
        }
        let no_end = highlight_lines(Lang::Rust, "fn a() {}\n// tail", 0..9).unwrap();
        assert_eq!(no_end.len(), 2, "{no_end:?}");
        assert_eq!(highlight_lines(Lang::Rust, "", 0..9).unwrap().len(), 1);
    }

    /// The spans the index keeps of a file's definitions.
    fn spans_of(lang: Lang, source: &str) -> DefinitionSpans {
        let facts = crate::extract::extract(lang, source).unwrap();
        let mut spans = DefinitionSpans::default();
        for s in &facts.symbols {
            let span = s.span.start_byte as usize..s.span.end_byte as usize;
            match s.parent {
                None => spans.outer.push(span),
                Some(_) => spans.inner.push(span),
            }
        }
        spans
    }

    /// For the lines around every definition of `source` (3 above, 3 below, as the
    /// symbol page shows them), the window's classes are the whole parse's; returns how
    /// many of those excerpts were classed from a window smaller than the file.
    fn windows_agree(lang: Lang, name: &str, source: &str) -> usize {
        // A debug build's parse of a large file needs more than a test thread's stack.
        let (name, source) = (name.to_string(), source.to_string());
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || windows_agree_here(lang, &name, &source))
            .unwrap()
            .join()
            .unwrap()
    }

    fn windows_agree_here(lang: Lang, name: &str, source: &str) -> usize {
        // Without the budget: a debug build parses a large file slowly.
        let whole = classify(lang, source, 0..usize::MAX, Duration::MAX).unwrap();
        let spans = spans_of(lang, source);
        let facts = crate::extract::extract(lang, source).unwrap();
        let mut windowed = 0;
        for s in &facts.symbols {
            let from = (s.span.start_line as usize).saturating_sub(4);
            let to = s.span.end_line as usize + 3;
            // The others are classed from the whole parse, as before.
            let used = windows(lang, source, &(from..to), &spans)
                .into_iter()
                .any(|w| w.len() < source.len() && parses_clean(lang, &source[w]));
            if !used {
                continue;
            }
            // A window nearly as large as a large file can pass a debug build's budget.
            let Some(got) = excerpt_from(lang, source, from..to, &spans, 0) else {
                continue;
            };
            windowed += 1;
            let end = to.min(whole.len());
            assert_eq!(
                got,
                whole[from.min(end)..end],
                "{name}: {} lines {from}..{to}",
                s.name
            );
        }
        windowed
    }

    /// Code a window cut in the wrong place would parse otherwise: lines at the left
    /// margin within a raw string and a block comment, impl blocks (not definitions of
    /// their own: their methods' parent is the type), attributes, doc comments, an
    /// inline module, a macro, items on one line.
    const TRICKY: &str = r##"//! A module.

#[derive(Debug, Clone)]
pub struct Abi {
    pub(crate) syntax: SyntaxNode,
}
impl Abi {
    /// A token.
    #[inline]
    pub fn extern_token(&self) -> Option<SyntaxToken> { support::token(&self.syntax, T![extern]) }
    pub fn string_token(&self) -> Option<SyntaxToken> { support::token(&self.syntax, T![string]) }
}

const FAKE: &str = r#"
fn not_code() {
    let x = "}";
}
"#;

/* A block comment
fn also_not_code() -> u32 { 1 }
struct Nope;
*/
fn after_comment(a: u32) -> u32 {
    let s = "/* not a comment */";
    a + s.len() as u32 // 'c'
}

macro_rules! make {
    ($name:ident) => {
        fn $name() {}
    };
}

mod inner {
    pub fn nested() -> &'static str {
        "}"
    }
    pub struct Deep<T>(T);
}

pub enum Kind { A, B(u8), C { x: i32 } }
pub trait Walk { fn walk(&self) -> usize { 0 } }
impl Walk for Abi { fn walk(&self) -> usize { 1 } }
type Alias = Vec<Abi>; fn tail() {}
"##;

    const PYTHON: &str = r#"import os


@decorated
def a(x):
    '''doc
def fake(): pass
'''
    return x


class B:
    def m(self):
        return """
class Fake:
"""


def c():
    pass
"#;

    #[test]
    fn a_window_of_whole_top_level_definitions_gets_the_whole_files_classes() {
        let n = windows_agree(Lang::Rust, "tricky", TRICKY);
        assert!(n > 5, "{n} excerpts classed from a window");
        // The index's own sources.
        for (name, text) in [
            ("highlight.rs", include_str!("highlight.rs")),
            ("collector.rs", include_str!("extract/collector.rs")),
            ("cpp.rs", include_str!("extract/cpp.rs")),
            ("traverse.rs", include_str!("graph/traverse.rs")),
        ] {
            assert!(windows_agree(Lang::Rust, name, text) > 0, "{name}");
        }
        assert!(windows_agree(Lang::Python, "python", PYTHON) > 0);
    }

    /// The same on other trees' files: `LOCI_HIGHLIGHT_FILES=a.rs:b.py cargo test -p
    /// loci-index --lib -- --ignored windows_agree_on` (rust-analyzer's largest files
    /// were checked so).
    #[test]
    #[ignore = "reads the files named in LOCI_HIGHLIGHT_FILES"]
    fn windows_agree_on_the_files_named() {
        let files = std::env::var("LOCI_HIGHLIGHT_FILES").unwrap_or_default();
        for path in files.split(':').filter(|p| !p.is_empty()) {
            let bytes = std::fs::read(path).unwrap();
            let lang = Lang::detect(std::path::Path::new(path), &bytes).unwrap();
            let text = String::from_utf8(bytes).unwrap();
            let n = windows_agree(lang, path, &text);
            eprintln!("{path}: {n} excerpts classed from a window, each as the whole parse");
        }
    }

    #[test]
    fn a_window_that_does_not_parse_alone_is_not_trusted() {
        // A method's span (within an impl block) given as outermost: the window from
        // it parses with an error, so the whole file is classed.
        let facts = crate::extract::extract(Lang::Rust, TRICKY).unwrap();
        let method = facts
            .symbols
            .iter()
            .find(|s| s.name == "string_token")
            .unwrap();
        let span = method.span.start_byte as usize..method.span.end_byte as usize;
        let spans = DefinitionSpans {
            outer: vec![span],
            inner: Vec::new(),
        };
        // The line after it: the window starts at the method, within the block.
        let line = method.span.start_line as usize;
        let (_, w) = window(TRICKY, &(line..line + 3), &spans.outer).unwrap();
        assert!(TRICKY[w.clone()].starts_with("    pub fn string_token"));
        assert!(!parses_clean(Lang::Rust, &TRICKY[w]));
        let whole = highlight_lines(Lang::Rust, TRICKY, line..line + 3).unwrap();
        assert_eq!(
            excerpt_from(Lang::Rust, TRICKY, line..line + 3, &spans, 0).unwrap(),
            whole
        );
        // Lines past the end, or none: the whole file answers as before.
        let spans = spans_of(Lang::Rust, TRICKY);
        assert!(windows(Lang::Rust, TRICKY, &(500..510), &spans).is_empty());
        assert!(windows(Lang::Rust, TRICKY, &(3..3), &spans).is_empty());
    }

    /// A generated file as rust-analyzer's `nodes.rs` is: types first, then hundreds of
    /// `impl` blocks, none a definition of its own; a method with a raw string whose
    /// lines start at the left margin, a blank line among them.
    fn impl_blocks() -> String {
        let mut text = String::from("//! Generated.\n\n");
        for i in 0..300 {
            text.push_str(&format!("pub struct Node{i} {{\n    syntax: u32,\n}}\n"));
        }
        for i in 0..300 {
            text.push_str(&format!(
                "impl Node{i} {{\n    pub fn syntax(&self) -> u32 {{ self.syntax + {i} }}\n    \
                 pub fn name(&self) -> &'static str {{ \"node {i}\" }}\n}}\n\n"
            ));
        }
        text.push_str(
            "impl Node0 {\n    pub fn fake(&self) -> &'static str {\n        r#\"\n\n\
             impl Fake {\n    fn f() {}\n}\n\"#\n    }\n}\n\n",
        );
        for i in 0..300 {
            text.push_str(&format!(
                "impl std::fmt::Debug for Node{i} {{\n    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {{\n        write!(f, \"{i}\")\n    }}\n}}\n"
            ));
        }
        text
    }

    #[test]
    fn impl_blocks_far_from_any_definition_are_classed_from_a_few_items() {
        // A debug build's parse of a large file needs more than a test thread's stack.
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(impl_blocks_are_classed_from_a_few_items)
            .unwrap()
            .join()
            .unwrap();
    }

    fn impl_blocks_are_classed_from_a_few_items() {
        let text = impl_blocks();
        assert!(text.len() > 3 * FAR, "{}", text.len());
        let spans = spans_of(Lang::Rust, &text);
        // A method of the last impl block: the spans alone reach back to the types.
        let line = text.lines().count() - 4;
        let tried = windows(Lang::Rust, &text, &(line - 3..line + 3), &spans);
        assert_eq!(tried.len(), 2, "{tried:?}");
        assert!(tried[0].len() < 1024, "{:?}", &text[tried[0].clone()]);
        assert!(text[tried[0].clone()].starts_with("impl std::fmt::Debug for Node"));
        assert!(tried[1].len() > 3 * FAR);
        // Every definition's excerpt, the raw string's lines included, gets the whole
        // parse's classes.
        assert!(windows_agree(Lang::Rust, "impl blocks", &text) > 600);
        // The raw string's left-margin `impl` is within `fake`'s span: no cut there.
        let fake = text.find("impl Fake").unwrap();
        let in_string = text[..fake].lines().count();
        for w in windows(Lang::Rust, &text, &(in_string..in_string + 1), &spans) {
            assert!(w.start < fake - 40 && w.end > fake, "{:?}", &text[w]);
        }
    }

    #[test]
    fn every_shipped_query_compiles() {
        for lang in Lang::ALL {
            if lang != Lang::Kotlin {
                assert!(config(lang).is_some(), "{lang:?}");
            }
        }
    }
}
