//! Kotlin that tree-sitter-kotlin-ng 1.1 misreads, rewritten in place before the parse
//! (every line keeps its number, every byte but a moved token its offset), so that one
//! construct does not take the rest of the file with it.
//!
//! **A header whose primary constructor starts the next line.** ktfmt and ktlint break a long header before its constructor:
//!
//! ```kotlin
//! class Outer {
//!   public class Builder
//!   internal constructor(val name: String) : Taggable.Builder<Builder> {
//! ```
//!
//! Inside a class body tree-sitter-kotlin reads that `constructor` as a secondary
//! constructor of `Outer`, fails, and its error runs to the end of the file: every
//! definition after such a header was lost (kotlinpoet's builders). Kotlin itself reads
//! it as one header. The line break is moved after the constructor line's first token
//! (`class Builder internal` / `constructor(..`), which the grammar accepts, so each
//! byte keeps its offset but that token's, and every line its number.
//!
//! **Destructuring written with brackets** (Kotlin 2.4's positional form: `val [a, b] =
//! pair`, `for ([k, v] in map)`, `{ [k, v] -> .. }`): the brackets become parentheses,
//! the older form the grammar knows. The name-based form that starts a statement,
//! `(val a, val b = type) = x`, which the grammar cannot take in any shape, is blanked
//! (its line's facts are lost, as a C macro's are).

use std::borrow::Cow;

/// What may stand before `class` in a header.
const HEADER_MODIFIERS: &[&str] = &[
    "public",
    "private",
    "internal",
    "protected",
    "open",
    "abstract",
    "sealed",
    "data",
    "inner",
    "value",
    "annotation",
    "enum",
    "final",
    "expect",
    "actual",
];

/// What may stand before `constructor` on the line after a header.
const CONSTRUCTOR_MODIFIERS: &[&str] = &["public", "private", "internal", "protected"];

/// `source` with both rewrites of the module doc; borrowed when there is nothing to
/// rewrite.
pub(crate) fn rewrite(source: &str) -> Cow<'_, str> {
    match join_constructor_lines(source) {
        Cow::Borrowed(s) => destructuring(s),
        Cow::Owned(joined) => Cow::Owned(destructuring(&joined).into_owned()),
    }
}

/// `source` with bracket destructuring made parenthesised and name-based destructuring
/// statements blanked; borrowed when there is none.
fn destructuring(source: &str) -> Cow<'_, str> {
    if !source.contains('[') && !source.contains("(val ") && !source.contains("(var ") {
        return Cow::Borrowed(source);
    }
    let bytes = source.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    for (start, end) in lines(source) {
        let line = &source[start..end];
        let trimmed = line.trim_start();
        if (trimmed.starts_with("(val ") || trimmed.starts_with("(var "))
            && trimmed.contains(") = ")
        {
            let buf = out.get_or_insert_with(|| bytes.to_vec());
            for b in &mut buf[start + line.len() - trimmed.len()..end] {
                *b = b' ';
            }
        } else {
            for (open, close) in bracket_lists(line) {
                let buf = out.get_or_insert_with(|| bytes.to_vec());
                buf[start + open] = b'(';
                buf[start + close] = b')';
            }
        }
    }
    // ASCII replaced by ASCII: still UTF-8.
    out.and_then(|b| String::from_utf8(b).ok())
        .map_or(Cow::Borrowed(source), Cow::Owned)
}

/// The `[` and `]` of each destructuring list on `line`: after `val`/`var` and before
/// `=` or `:`, after `for (` and before ` in`, or opening a lambda's parameters and
/// before `->` or `,`; holding only names, commas and type annotations.
fn bracket_lists(line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    for (open, _) in line.match_indices('[') {
        let Some(len) = bytes[open + 1..].iter().position(|&b| b == b']') else {
            continue;
        };
        let close = open + 1 + len;
        let inside = &line[open + 1..close];
        let plain = inside.contains(',')
            && inside
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b" _,:.<>?".contains(&b));
        if !plain {
            continue;
        }
        let before = line[..open].trim_end();
        let after = line[close + 1..].trim_start();
        let declared = (before.ends_with("val") || before.ends_with("var"))
            && before[..before.len() - 3]
                .chars()
                .last()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
            && (after.starts_with('=') || after.starts_with(':'));
        let looped = before.ends_with("for (") && after.starts_with("in ");
        let lambda = before.ends_with('{') && (after.starts_with("->") || after.starts_with(','));
        if declared || looped || lambda {
            out.push((open, close));
        }
    }
    out
}

/// `source` with each header whose constructor begins the next line joined to it (see
/// the module doc); borrowed when there is none.
fn join_constructor_lines(source: &str) -> Cow<'_, str> {
    let bytes = source.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let mut prev: Option<(usize, usize)> = None; // the previous line: start, end (at its '\n')
    for (start, end) in lines(source) {
        if let Some((p_start, p_end)) = prev
            && end < bytes.len()
            && is_header_without_constructor(&source[p_start..p_end])
            && let Some((indent, first)) = constructor_line(&source[start..end])
            && indent > 0
        {
            // "\n" + indent + first  ->  " " + first + "\n" + indent less one space
            let buf = out.get_or_insert_with(|| bytes.to_vec());
            let token = start + indent;
            buf[p_end] = b' ';
            buf[p_end + 1..p_end + 1 + first].copy_from_slice(&bytes[token..token + first]);
            buf[p_end + 1 + first] = b'\n';
            for b in &mut buf[p_end + 2 + first..token + first] {
                *b = b' ';
            }
        }
        prev = Some((start, end));
    }
    // Only ASCII bytes moved or were replaced by ASCII, at character boundaries.
    out.and_then(|b| String::from_utf8(b).ok())
        .map_or(Cow::Borrowed(source), Cow::Owned)
}

/// Each line of `source` as (start, end) byte offsets, the end at its `\n` or the end.
fn lines(source: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let bytes = source.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| start + i);
        let line = (start, end);
        start = end + 1;
        Some(line)
    })
}

/// Whether `line` is `[modifiers] class Name[<..>]` and nothing after: a header whose
/// constructor, if any, is on a later line.
fn is_header_without_constructor(line: &str) -> bool {
    let mut words = line.split_whitespace().peekable();
    while words.peek().is_some_and(|w| HEADER_MODIFIERS.contains(w)) {
        words.next();
    }
    if words.next() != Some("class") {
        return false;
    }
    let rest: String = words.collect::<Vec<_>>().join(" ");
    let name_end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    if name_end == 0 {
        return false;
    }
    let after = rest[name_end..].trim();
    after.is_empty() || (after.starts_with('<') && after.ends_with('>'))
}

/// For `line` = `<indent>[modifier] constructor(..`: the indentation's length and the
/// length of its first token (the modifier, else `constructor`).
fn constructor_line(line: &str) -> Option<(usize, usize)> {
    let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
    let text = &line[indent..];
    let first = text
        .find(|c: char| !(c.is_ascii_alphabetic()))
        .unwrap_or(text.len());
    let word = &text[..first];
    let after = text[first..].trim_start();
    let opens = if word == "constructor" {
        after.starts_with('(')
    } else {
        CONSTRUCTOR_MODIFIERS.contains(&word)
            && after
                .strip_prefix("constructor")
                .is_some_and(|r| r.trim_start().starts_with('('))
    };
    opens.then_some((indent, first))
}

#[cfg(test)]
mod tests {
    use super::{join_constructor_lines, rewrite};
    use crate::Lang;
    use crate::extract::extract;

    fn names(source: &str) -> Vec<String> {
        extract(Lang::Kotlin, source)
            .unwrap()
            .symbols
            .iter()
            .map(|s| format!("{}:{}", s.name, s.span.start_line))
            .collect()
    }

    /// kotlinpoet's `TypeAliasSpec`: a builder whose constructor starts the line after
    /// its header, then more members of the outer class.
    const NESTED: &str = "class TypeAliasSpec {\n\
        \x20 fun emit() {}\n\
        \n\
        \x20 public class Builder\n\
        \x20 internal constructor(internal val name: String) :\n\
        \x20   Taggable.Builder<Builder> {\n\
        \x20   fun addModifiers() {}\n\
        \x20 }\n\
        \n\
        \x20 class Plain\n\
        \x20 constructor(val x: Int) {\n\
        \x20   fun plain() {}\n\
        \x20 }\n\
        \n\
        \x20 fun toBuilder() {}\n\
        }\n\
        fun after() {}\n";

    #[test]
    fn definitions_after_a_constructor_on_its_own_line_are_found_on_their_lines() {
        let got = names(NESTED);
        for want in [
            "TypeAliasSpec:1",
            "emit:2",
            "Builder:4",
            "addModifiers:7",
            "Plain:10",
            "plain:12",
            "toBuilder:15",
            "after:17",
        ] {
            assert!(got.contains(&want.to_string()), "{want} not in {got:?}");
        }
    }

    #[test]
    fn the_rewrite_keeps_every_offset_but_the_moved_token_and_every_line() {
        let joined = join_constructor_lines(NESTED);
        assert_eq!(joined.len(), NESTED.len());
        assert_eq!(joined.lines().count(), NESTED.lines().count());
        assert!(
            joined.contains("  public class Builder internal\n  constructor(internal val name")
        );
        assert!(joined.contains("  class Plain constructor\n (val x: Int) {"));
        // Unchanged outside the two headers.
        let (a, b) = (joined.as_bytes(), NESTED.as_bytes());
        let differing = (0..a.len()).filter(|&i| a[i] != b[i]).count();
        assert!(differing <= 2 * (1 + "internal".len() + 1 + "constructor".len() + 1));
    }

    #[test]
    fn bracket_destructuring_reads_as_parentheses_and_hides_nothing_after_it() {
        let source = "fun write(p: Pair<Int, Int>, m: Map<String, Int>) {\n\
            \x20 val [d1, d2] = p\n\
            \x20 for ([k, v] in m) {}\n\
            \x20 m.forEach { [k, v] -> println(k) }\n\
            \x20 (val variance, val argType = type) = p\n\
            \x20 val list = arr[0]\n\
            \x20 val xs = listOf(a[1, 2])\n\
            }\n\
            fun after() {}\n";
        let rewritten = rewrite(source);
        assert_eq!(rewritten.len(), source.len());
        assert!(rewritten.contains("val (d1, d2) = p"));
        assert!(rewritten.contains("for ((k, v) in m)"));
        assert!(rewritten.contains("{ (k, v) -> println"));
        assert!(!rewritten.contains("variance"));
        // Indexing is left alone.
        assert!(rewritten.contains("arr[0]") && rewritten.contains("a[1, 2]"));
        let got = names(source);
        assert!(got.contains(&"after:9".to_string()), "{got:?}");
    }

    #[test]
    fn headers_with_their_constructor_or_body_on_the_line_are_left_alone() {
        for source in [
            "class A(val x: Int)\nconstructor(y: Int) : this(y)\n",
            "class A {\n  constructor(x: Int) {}\n}\n",
            "class A : B()\n  private constructor(x: Int)\n",
            "val s = \"class A\"\n  constructor(\n",
            "class A\nprivate constructor(x: Int)\n", // top level: parses as it is
        ] {
            assert!(
                matches!(
                    join_constructor_lines(source),
                    std::borrow::Cow::Borrowed(_)
                ),
                "{source:?}"
            );
        }
        // Multi-byte text around a header.
        let source =
            "// é\nclass É {\n  class B\n  private constructor(val x: Int)\n  fun f() {}\n}\n";
        let joined = join_constructor_lines(source);
        assert_eq!(joined.len(), source.len());
        assert!(
            names(source).contains(&"f:5".to_string()),
            "{:?}",
            names(source)
        );
    }
}
