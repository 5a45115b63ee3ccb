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
//!
//! Before that, in TypeScript, a generic call signature that starts a line of an
//! interface or type literal (`  <T>(x: T): R` after a member ending in `A<B>`) gets a
//! `;` in place of its indentation's last space: tree-sitter reads the `<` as type
//! arguments of the member above and fails for the rest of the file (hono's
//! `HandlerInterface` lost every alias after it); TypeScript ends a member at the line
//! break. So does a member named after an operator keyword (`in<const T>(def: T): R`,
//! `in: A`, `instanceof(x): boolean`), which tree-sitter reads as that operator
//! applied to the member above (arktype's `MatchParser`, whose `in` overloads took the
//! whole file). The change is kept only when it leaves less of the file broken.

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
    /// Whether a generic call signature on its own line may be separated from the
    /// member above ([`separate_signatures`]): TypeScript, not TSX, where a line may
    /// start a JSX element.
    pub signatures: bool,
}

/// `tree` (of `source`) after, in TypeScript, one pass that separates generic signatures
/// ([`separate_signatures`]), then at most [`MAX_PASSES`] passes that each blank one
/// broken stretch ([`blank_broken`]) and parse again, with the text it is a tree of; a
/// parse that fails, or no time left, keeps the last tree.
pub(crate) fn recover<'s>(
    parser: &mut tree_sitter::Parser,
    source: &'s str,
    mut tree: Tree,
    passes: Passes<'_>,
) -> (Tree, Cow<'s, str>) {
    let mut text = Cow::Borrowed(source);
    if passes.signatures
        && let Some(separated) = separate_signatures(source, &tree)
        && let Some(again) = reparse(parser, &separated, &passes)
        && broken_bytes(&again) < broken_bytes(&tree)
    {
        tree = again;
        text = Cow::Owned(separated);
    }
    for _ in 0..MAX_PASSES {
        let Some(blanked) = blank_broken(&text, &tree) else {
            break;
        };
        let Some(again) = reparse(parser, &blanked, &passes) else {
            break;
        };
        tree = again;
        text = Cow::Owned(blanked);
    }
    (tree, text)
}

/// `text` parsed again, unless the passes' time is spent (every pass, the signatures'
/// too, within one budget) or the parse stops.
fn reparse(parser: &mut tree_sitter::Parser, text: &str, passes: &Passes<'_>) -> Option<Tree> {
    if passes.parsing.elapsed() > passes.budget {
        return None;
    }
    parse_within(parser, text, passes.max_bytes, passes.deadline).ok()
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

/// `source` with a `;` before each generic signature, or member named `in` or
/// `instanceof`, that starts a line of a broken top-level node after a line that ends a
/// member (see the module doc), in place of the indentation's last space; `None` when
/// there is none.
pub(crate) fn separate_signatures(source: &str, tree: &Tree) -> Option<String> {
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let bytes = source.as_bytes();
    // From the first broken top-level node to the end of the last: the parse may close
    // the interface early and start its error at the signature.
    let mut cursor = root.walk();
    let broken: Vec<Node<'_>> = root
        .children(&mut cursor)
        .filter(|n| n.has_error())
        .collect();
    let end = broken.last()?.end_byte().min(bytes.len());
    let mut line = line_start(bytes, broken.first()?.start_byte());
    let mut out: Option<Vec<u8>> = None;
    let mut last_code: Option<u8> = None;
    while line < end {
        let stop = bytes[line..end]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(end, |i| line + i);
        let text = &bytes[line..stop];
        let indent = text
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let rest = &text[indent..];
        let opens_type_parameters = rest.first() == Some(&b'<')
            && rest
                .get(1)
                .is_none_or(|&b| b.is_ascii_alphabetic() || b == b'_' || b == b' ');
        if indent > 0
            && (opens_type_parameters || names_operator_member(rest))
            && last_code.is_some_and(ends_member)
        {
            out.get_or_insert_with(|| bytes.to_vec())[line + indent - 1] = b';';
        }
        let comment = rest.starts_with(b"//") || rest.starts_with(b"/*") || rest.starts_with(b"*");
        if !comment && let Some(&b) = rest.iter().rev().find(|b| !b.is_ascii_whitespace()) {
            last_code = Some(b);
        }
        line = stop + 1;
    }
    // One ASCII space became an ASCII `;`: still UTF-8.
    out.and_then(|b| String::from_utf8(b).ok())
}

/// Whether a line (from its indentation on) starts a member named after an operator
/// keyword, `in<const T>(def: T): R`, `instanceof(x): boolean`, `in?: A`: tree-sitter
/// reads the keyword as an operator on the member above (`R in ..`) and fails.
fn names_operator_member(rest: &[u8]) -> bool {
    // What follows the keyword (past spaces) opens a member; a name going on (`inner`)
    // is no punctuation, so it does not pass.
    ["in", "instanceof"].iter().any(|keyword| {
        rest.strip_prefix(keyword.as_bytes()).is_some_and(|after| {
            matches!(
                after.trim_ascii_start().first(),
                Some(b'(' | b'<' | b':' | b'?')
            )
        })
    })
}

/// Whether a line ending in `b` can end a member (a type, a name, a closing bracket),
/// rather than leave it open (`,`, `|`, `=`, `(`, ...).
fn ends_member(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'>' | b')' | b']' | b'}' | b'_' | b'$' | b'\'' | b'"' | b'`'
        )
}

/// How many bytes of the file the top-level nodes holding an error cover.
fn broken_bytes(tree: &Tree) -> usize {
    let root = tree.root_node();
    let mut cursor = root.walk();
    root.children(&mut cursor)
        .filter(|n| n.has_error())
        .map(|n| n.end_byte() - n.start_byte())
        .sum()
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

    /// The shape of hono's `HandlerInterface`: generic call signatures, one a line,
    /// the first after a member whose type ends in `>`.
    const SIGNATURES: &str = "export interface Handler<E> {\n\
        \x20 (path: string): Base<E>\n\
        \n\
        \x20 // app.get(path, handler)\n\
        \x20 <\n\
        \x20   P extends string,\n\
        \x20 >(path: P): Base<\n\
        \x20   E,\n\
        \x20   P\n\
        \x20 >\n\
        \x20 <T>(x: T): T\n\
        }\n\
        \n\
        type After<T> = T extends string ? 1 : 2\n\
        export function after(): void {}\n";

    #[test]
    fn a_generic_signature_on_its_own_line_does_not_hide_what_follows() {
        assert_eq!(
            names(Lang::TypeScript, SIGNATURES),
            ["Handler:1", "After:14", "after:15"]
        );
        // The same members with their `;`s give the same.
        let with_semicolons = SIGNATURES
            .replace("Base<E>\n", "Base<E>;\n")
            .replace("  >\n  <T>", "  >;\n  <T>");
        assert_eq!(
            names(Lang::TypeScript, &with_semicolons),
            names(Lang::TypeScript, SIGNATURES)
        );
        // TSX is left as it is: a line there may start a JSX element.
        let tsx = "const el = (\n  <div>\n    <span/>\n  </div>\n)\nfunction after() {}\n";
        assert_eq!(names(Lang::Tsx, tsx), ["el:1", "after:6"]);
    }

    /// The shape of arktype's `MatchParser`: overloads of a member named `in`, the
    /// first after a member whose type ends in `>`, without `;`s.
    const OPERATOR_MEMBERS: &str = "export interface MatchParser<$> extends Base<$> {\n\
        \x20 in<const def>(\n\
        \x20   def: Validate<def, $>\n\
        \x20 ): Chainable<Init<$, def>>\n\
        \x20 in<const typedInput = never>(): Chainable<typedInput>\n\
        \x20 case: CaseParser<$>\n\
        \x20 in?: number\n\
        \x20 instanceof(x: unknown): boolean\n\
        }\n\
        \n\
        type After<T> = T extends string ? 1 : 2\n\
        export function after(): void {}\n";

    #[test]
    fn a_member_named_in_on_its_own_line_does_not_hide_what_follows() {
        let found = names(Lang::TypeScript, OPERATOR_MEMBERS);
        assert!(
            found.contains(&"After:11".to_string()) && found.contains(&"after:12".to_string()),
            "{found:?}"
        );
        // The same members with their `;`s give the same.
        let with_semicolons = OPERATOR_MEMBERS
            .replace("def>>\n", "def>>;\n")
            .replace("typedInput>\n", "typedInput>;\n")
            .replace("<$>\n  in?", "<$>;\n  in?")
            .replace("number\n", "number;\n");
        assert_eq!(names(Lang::TypeScript, &with_semicolons), found);
        // A line that goes on with the operator is no member: `a\n  in b`.
        let expression = "const has = key\n  in (table)\ntype Next = 1\n";
        assert_eq!(names(Lang::TypeScript, expression), ["has:1", "Next:3"]);
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
