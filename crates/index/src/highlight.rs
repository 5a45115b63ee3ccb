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

/// The lines `wanted` (0-based) of `source`, each split into classed pieces; `None`
/// when the language has no highlight query here, the text is too large, or the budget
/// ran out. The whole text is parsed (a line's class can depend on what came before),
/// but classification stops at the last line wanted.
pub fn highlight_lines(lang: Lang, source: &str, wanted: Range<usize>) -> Option<Vec<Vec<Piece>>> {
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
        if started.elapsed() > BUDGET {
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

    #[test]
    fn every_shipped_query_compiles() {
        for lang in Lang::ALL {
            if lang != Lang::Kotlin {
                assert!(config(lang).is_some(), "{lang:?}");
            }
        }
    }
}
