//! C and C++ definitions wrapped in macros, made parseable: tree-sitter does not expand
//! the preprocessor, so a line like `FMT_BEGIN_NAMESPACE` (a macro that opens a
//! namespace), an export marker in front of a definition (`SQLITE_API int f(..)`,
//! `FMT_CONSTEXPR auto g(..)`) or a return type wrapped in a macro (`PyAPI_FUNC(int)
//! h(..)`) turns the definitions after it into syntax errors. These macros are blanked
//! out (replaced by as many spaces, so every byte offset, line and column stays the same)
//! before the parse:
//!
//! - a line that is only a macro name, or a macro call without `;` (`G_BEGIN_DECLS`,
//!   `Q_OBJECT`, `FMT_BEGIN_NAMESPACE`, `G_DEFINE_TYPE(A, a, B)`), after a line that ends
//!   a statement, opens or closes a block, or is a preprocessor line or a comment;
//! - at the start of a line (after `static`/`inline`/`extern`, or a `template <..>`), a
//!   macro name followed by more of a definition's head on the same line
//!   (`SQLITE_API int f(`), or a macro call whose argument is the return type
//!   (`PyAPI_FUNC(int) f(`: the call's name and parentheses are blanked, the type kept);
//! - a macro name between `class`/`struct`/`union` and the name (`class FMT_API error`).
//!
//! A macro name here is upper case with at least one `_` and four characters
//! (`FMT_API`, `G_BEGIN_DECLS`), or, for the wrapped return type, any name with both an
//! upper-case letter and a `_` (`PyAPI_FUNC`, `Py_LOCAL_INLINE`). Not handled: macros
//! that expand to a whole definition from their arguments (`DEFINE_GETTER(x)` making
//! `get_x`), whose names are not in the text; macros in the middle of a head
//! (`enum type FMT_UNDERLYING(int) {..}`); lower-case or underscore-free markers
//! (`WINAPI`), which cannot be told from type names.

use std::borrow::Cow;

/// `source` with the macros above replaced by spaces (borrowed when there are none).
pub(crate) fn mask(source: &str) -> Cow<'_, str> {
    let mut out: Option<Vec<u8>> = None;
    let mut previous_ends_statement = true;
    let mut in_comment = false;
    let mut offset = 0;
    for line in source.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim();
        if in_comment {
            in_comment = !trimmed.contains("*/");
            previous_ends_statement = true;
            continue;
        }
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with('#') || trimmed.starts_with("//") {
            previous_ends_statement = !trimmed.ends_with('\\');
            continue;
        }
        if trimmed.starts_with("/*") {
            in_comment = !trimmed.contains("*/");
            previous_ends_statement = true;
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let blanks = if previous_ends_statement {
            lone_macro(trimmed).map(|len| vec![(indent, len)])
        } else {
            None
        }
        .or_else(|| head_macro(trimmed).map(|cuts| shift(cuts, indent)));
        if let Some(cuts) = blanks {
            let buf = out.get_or_insert_with(|| source.as_bytes().to_vec());
            for (at, len) in cuts {
                buf[start + at..start + at + len].fill(b' ');
            }
        }
        previous_ends_statement = trimmed.ends_with([';', '{', '}']) || trimmed.ends_with("*/");
    }
    match out {
        // Only ASCII bytes were replaced, by ASCII spaces: still UTF-8.
        Some(bytes) => Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| source.to_string())),
        None => Cow::Borrowed(source),
    }
}

fn shift(cuts: Vec<(usize, usize)>, by: usize) -> Vec<(usize, usize)> {
    cuts.into_iter().map(|(at, len)| (at + by, len)).collect()
}

/// The length to blank when `line` is only a macro name or a macro call without `;`.
fn lone_macro(line: &str) -> Option<usize> {
    let name = ident_len(line);
    if name == 0 || !is_macro_name(&line[..name]) {
        return None;
    }
    let rest = &line[name..];
    if rest.trim().is_empty() {
        return Some(name);
    }
    let rest_trimmed = rest.trim_start();
    if rest_trimmed.starts_with('(') {
        let close = matching_paren(rest_trimmed)?;
        if rest_trimmed[close + 1..].trim().is_empty() {
            return Some(line.len());
        }
    }
    None
}

/// The cuts (offset, length) that blank a macro at the head of a definition on `line`.
fn head_macro(line: &str) -> Option<Vec<(usize, usize)>> {
    let at = skip_prefixes(line);
    let name = ident_len(&line[at..]);
    if name == 0 {
        return None;
    }
    let word = &line[at..at + name];
    let after = &line[at + name..];
    // `class FMT_API format_error : ..`: the marker between the keyword and the name.
    if matches!(word, "class" | "struct" | "union") {
        let next = at + name + (after.len() - after.trim_start().len());
        let len = ident_len(&line[next..]);
        let marker = &line[next..next + len];
        let rest = &line[next + len..];
        if is_macro_name(marker)
            && rest.contains(['{', ':'])
            && rest.starts_with([' ', '\t'])
            && rest
                .trim_start()
                .starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        {
            return Some(vec![(next, len)]);
        }
        return None;
    }
    // A function's head has a parameter list, and no `=` or `;` before it (not
    // `X y = f(z);`).
    let paren = line.find('(')?;
    if line[..paren].contains(['=', ';']) {
        return None;
    }
    if is_macro_name(word) && after.starts_with([' ', '\t']) {
        let next = after.trim_start();
        if next.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return Some(vec![(at, name)]);
        }
        return None;
    }
    if has_upper_and_underscore(word) && after.starts_with('(') {
        let close = matching_paren(after)?;
        let inner = after[1..close].trim();
        let next = after[close + 1..].trim_start();
        let is_type = !inner.is_empty() && !inner.contains([',', '(']);
        if is_type && next.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '*') {
            let open_at = at + name;
            let close_at = open_at + close;
            return Some(vec![(at, name + 1), (close_at, 1)]);
        }
    }
    None
}

/// Past leading `static`, `inline`, `extern` and a `template <..>` on the line.
fn skip_prefixes(line: &str) -> usize {
    let mut at = 0;
    loop {
        let rest = &line[at..];
        let word = ident_len(rest);
        let w = &rest[..word];
        if matches!(w, "static" | "inline" | "extern") {
            at += word + (rest[word..].len() - rest[word..].trim_start().len());
            continue;
        }
        if w == "template" {
            let Some(open) = rest.find('<') else {
                return at;
            };
            let mut depth = 0;
            for (i, c) in rest[open..].char_indices() {
                match c {
                    '<' => depth += 1,
                    '>' => {
                        depth -= 1;
                        if depth == 0 {
                            let end = open + i + 1;
                            at += end + (rest[end..].len() - rest[end..].trim_start().len());
                            break;
                        }
                    }
                    _ => {}
                }
            }
            if depth != 0 {
                return at;
            }
            continue;
        }
        return at;
    }
}

fn ident_len(s: &str) -> usize {
    let first_ok = s
        .as_bytes()
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_');
    if !first_ok {
        return 0;
    }
    s.bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count()
}

/// Upper case, digits and `_`, with a `_` and at least four characters.
fn is_macro_name(word: &str) -> bool {
    word.len() >= 4
        && word.contains('_')
        && word.bytes().any(|c| c.is_ascii_uppercase())
        && word
            .bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
}

fn has_upper_and_underscore(word: &str) -> bool {
    word.contains('_') && word.bytes().any(|c| c.is_ascii_uppercase())
}

/// The index of the `)` matching the `(` that `s` starts with, on this line.
fn matching_paren(s: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::mask;

    #[test]
    fn wrapping_macros_are_blanked_in_place() {
        let cases = [
            (
                "FMT_BEGIN_NAMESPACE\nint f();\n",
                "                   \nint f();\n",
            ),
            ("SQLITE_API int f(void) {}\n", "           int f(void) {}\n"),
            ("PyAPI_FUNC(int) f(void);\n", "           int  f(void);\n"),
            (
                "static FMT_INLINE auto g() {}\n",
                "static            auto g() {}\n",
            ),
            (
                "template <typename T> FMT_CONSTEXPR auto h(T t) {}\n",
                "template <typename T>               auto h(T t) {}\n",
            ),
            (
                "G_DEFINE_TYPE(A, a, B)\nint x;\n",
                "                      \nint x;\n",
            ),
            (
                "class FMT_API error : public E {\n",
                "class         error : public E {\n",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(mask(input), want, "{input:?}");
        }
    }

    #[test]
    fn ordinary_code_is_left_alone() {
        for input in [
            "enum { A_ONE,\n  B_TWO\n};\n",
            "x = y |\n  FLAG_A\n;\n",
            "MY_TYPE *make(void);\n",
            "struct FOO_T x;\n",
            "FOO_T x = 1;\n",
            "int v = MAX_SIZE(3);\n",
            "CALL_IT(a, b);\n",
            "#define FOO_BAR int x\n",
            "/* SQLITE_API int f(void) */\n",
        ] {
            assert_eq!(mask(input), input, "{input:?}");
        }
    }
}
