//! JavaScript and TypeScript statements tree-sitter cannot parse, kept from taking the
//! rest of the file with them.
//!
//! A statement the grammar does not know (`expectType<keyof readonly [A, B]>(x)`, a
//! newer syntax) can leave an error node that runs on over the lines after it, so the
//! declarations there are never seen: every type alias after such a line in
//! type-fest's tests was lost. When a top-level statement holds an error and a line
//! within it, below its first, starts a declaration at the left margin (`type`,
//! `export`, `function`, ...), the statement is blanked up to that line (spaces, lines
//! and byte offsets unchanged, as C macros are masked) and the file parsed again. The
//! blanked statement's own facts are lost; it did not parse anyway.

use std::borrow::Cow;
use std::collections::HashSet;
use std::time::{Duration, Instant};

use tree_sitter::{Node, Tree};

use super::parser::parse_within;
use crate::budget::Deadline;

/// Most parses again one file gets (each blanks one broken stretch).
const MAX_PASSES: usize = 8;

/// How a line that starts a declaration at the left margin begins.
const DECLARATION_STARTS: &[&str] = &[
    "export ",
    "type ",
    "interface ",
    "class ",
    "abstract class ",
    "function ",
    "function*",
    "async function",
    "const ",
    "let ",
    "var ",
    "declare ",
    "enum ",
    "namespace ",
    "module ",
    "import ",
];

/// How far [`recover`] may go: its passes stop once `parsing.elapsed()` passes `budget`.
pub(crate) struct Passes<'d> {
    /// When the file's first parse started.
    pub parsing: Instant,
    /// How long the first parse and the passes may take together.
    pub budget: Duration,
    /// The largest parse (see `parser::parse_within`).
    pub max_bytes: usize,
    /// The file's deadline.
    pub deadline: &'d Deadline,
}

/// `tree` (of `source`) after at most [`MAX_PASSES`] passes that each blank one broken
/// stretch ([`blank_broken`]) and parse again, with the text it is a tree of; a parse
/// that fails, or no time left, keeps the last tree.
pub(crate) fn recover<'s>(
    parser: &mut tree_sitter::Parser,
    source: &'s str,
    mut tree: Tree,
    passes: Passes<'_>,
) -> (Tree, Cow<'s, str>) {
    let mut text = Cow::Borrowed(source);
    for _ in 0..MAX_PASSES {
        if passes.parsing.elapsed() > passes.budget {
            break;
        }
        let Some(blanked) = blank_broken(&text, &tree) else {
            break;
        };
        let Ok(again) = parse_within(parser, &blanked, passes.max_bytes, passes.deadline) else {
            break;
        };
        tree = again;
        text = Cow::Owned(blanked);
    }
    (tree, text)
}

/// `source` with the first stretch of broken top-level code blanked, from the start of
/// the line where it breaks to the next line that starts a declaration at the left
/// margin, when the parse did not recover by that line (no clean top-level node starts
/// there); `None` when nothing is so broken. One stretch a pass: the errors after it
/// may be its doing, and change once it is blanked.
pub(crate) fn blank_broken(source: &str, tree: &Tree) -> Option<String> {
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let mut cursor = root.walk();
    let children: Vec<Node<'_>> = root.children(&mut cursor).collect();
    let clean_starts: HashSet<usize> = children
        .iter()
        .filter(|n| !n.has_error())
        .map(|n| n.start_byte())
        .collect();
    let mut after = 0;
    let mut cut = None;
    for n in children.iter().filter(|n| n.has_error()) {
        if n.start_byte() < after {
            continue;
        }
        let to = restart(source, n.start_byte())?;
        let from = line_start(source.as_bytes(), n.start_byte());
        // A declaration in the stretch (a class whose body holds the error, say) still
        // gives its definitions as it parsed: it is never blanked.
        let holds_declaration = children
            .iter()
            .filter(|c| (from..to).contains(&c.start_byte()))
            .any(|c| is_declaration(c.kind()));
        if !clean_starts.contains(&to) && !holds_declaration {
            cut = Some((from, to));
            break;
        }
        after = to;
    }
    let (from, to) = cut?;
    let mut bytes = source.as_bytes().to_vec();
    for b in &mut bytes[from..to] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
    // Whole characters were replaced by ASCII spaces, so this is still UTF-8.
    String::from_utf8(bytes).ok()
}

/// Whether a top-level node of this kind declares something (its definitions are kept
/// even when it holds an error).
fn is_declaration(kind: &str) -> bool {
    kind.ends_with("_declaration")
        || matches!(
            kind,
            "export_statement"
                | "import_statement"
                | "class"
                | "function"
                | "internal_module"
                | "module"
                | "ambient_declaration"
        )
}

/// Where the line holding byte `at` starts (bytes: a node's offsets need not fall on a
/// character boundary of text the parser found broken).
fn line_start(bytes: &[u8], at: usize) -> usize {
    let at = at.min(bytes.len());
    bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1)
}

/// Where the first line below the one holding byte `at` that starts a declaration at
/// the left margin begins.
fn restart(source: &str, at: usize) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut line = at + bytes.get(at..)?.iter().position(|&b| b == b'\n')? + 1;
    while line < bytes.len() {
        let end = bytes[line..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| line + i);
        if DECLARATION_STARTS
            .iter()
            .any(|d| bytes[line..end].starts_with(d.as_bytes()))
        {
            return Some(line);
        }
        line = end + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::Lang;
    use crate::extract::extract;

    fn names(lang: Lang, source: &str) -> Vec<String> {
        extract(lang, source)
            .unwrap()
            .symbols
            .iter()
            .map(|s| format!("{}:{}", s.name, s.span.start_line))
            .collect()
    }

    /// The shape of type-fest's `test-d/required-keys-of.ts`: three statements this
    /// grammar cannot parse (`keyof readonly [..]`), after which its error recovery
    /// runs to the end of the file.
    const BROKEN: &str = "type Before = 1;\n\
        check<keyof readonly [string, number]>({} as Keys<readonly [string, number]>);\n\
        check<Omit<keyof [string, number?], '1'>>({} as Keys<[string, number?]>);\n\
        check<Omit<keyof [string, boolean?], '2'>>({} as Keys<[string?] | readonly [string]>);\n\
        \n\
        // a comment\n\
        type Pair<T, _K extends keyof T> = unknown;\n\
        export function after(x: number): number {\n    return x;\n}\n";

    #[test]
    fn declarations_after_a_statement_that_does_not_parse_are_found_on_their_lines() {
        assert_eq!(
            names(Lang::TypeScript, BROKEN),
            ["Before:1", "Pair:7", "after:8"]
        );
        // The same file without the statements that do not parse gives the same.
        let fixed = BROKEN.replace("keyof readonly", "keyof");
        assert_eq!(
            names(Lang::TypeScript, &fixed),
            names(Lang::TypeScript, BROKEN)
        );
        // Characters of several bytes in the blanked stretch and around it.
        let accented = BROKEN
            .replace("a comment", "ünïcödé — a comment")
            .replace("number?]>);", "number?]>); /* é */");
        assert_eq!(
            names(Lang::TypeScript, &accented),
            names(Lang::TypeScript, BROKEN)
        );
    }

    #[test]
    fn a_statement_that_parses_and_a_string_at_the_left_margin_are_left_alone() {
        // A template literal whose lines start like declarations: no error, no cut.
        let source = "const s = `\ntype NotCode = 1;\nfunction notCode() {}\n`;\ntype Real = 2;\n";
        assert_eq!(names(Lang::TypeScript, source), ["s:1", "Real:5"]);
        let js = "const t = `\nfunction notCode() {}\n`;\nfunction real() {}\n";
        assert_eq!(names(Lang::JavaScript, js), ["t:1", "real:4"]);
    }
}
