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
//! - a macro name between `class`/`struct`/`union` and the name (`class FMT_API error`,
//!   with the bases or the body on that line or the next: `class GTEST_API_ Foo\n  :
//!   public Base {`);
//! - after a function head's parameter list and its qualifiers, a macro name or call
//!   (`bool f() const GTEST_LOCK_EXCLUDED_(mu) {`, `size_type size() const
//!   BOOST_NOEXCEPT`), before the body, the `;`, the initializers or the line's end; or
//!   at the start of the line after such a head (`void Mock::f(int a)` / `
//!   GTEST_LOCK_EXCLUDED_(mu) {`).
//!
//! A macro name here is upper case with at least one `_` and four characters
//! (`FMT_API`, `G_BEGIN_DECLS`), or, for the wrapped return type, any name with both an
//! upper-case letter and a `_` (`PyAPI_FUNC`, `Py_LOCAL_INLINE`). Not handled: macros
//! that expand to a whole definition from their arguments (`DEFINE_GETTER(x)` making
//! `get_x`), whose names are not in the text; macros elsewhere in a head
//! (`enum type FMT_UNDERLYING(int) {..}`); lower-case or underscore-free markers
//! (`WINAPI`), which cannot be told from type names.

use std::borrow::Cow;

/// `source` with the macros above replaced by spaces (borrowed when there are none).
pub(crate) fn mask(source: &str) -> Cow<'_, str> {
    let mut out: Option<Vec<u8>> = None;
    let mut previous_ends_statement = true;
    // Whether the last line of code ended a function head (see `continuing_macros`).
    let mut previous_ends_head = false;
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
            previous_ends_head &= !trimmed.starts_with('#');
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
        .or_else(|| {
            let mut cuts = head_macro(trimmed).unwrap_or_default();
            let continuing = if previous_ends_head {
                continuing_macros(trimmed)
            } else {
                Vec::new()
            };
            if continuing.is_empty() {
                cuts.extend(trailing_macros(trimmed));
            } else {
                cuts.extend(continuing);
            }
            (!cuts.is_empty()).then(|| shift(cuts, indent))
        });
        if let Some(cuts) = blanks {
            let buf = out.get_or_insert_with(|| source.as_bytes().to_vec());
            for (at, len) in cuts {
                buf[start + at..start + at + len].fill(b' ');
            }
        }
        previous_ends_statement = trimmed.ends_with([';', '{', '}']) || trimmed.ends_with("*/");
        previous_ends_head = ends_head(trimmed);
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
        // The name, then the bases or body on this line, or nothing more (they follow).
        let after_name = rest.trim_start();
        let name_ends_line = after_name[ident_len(after_name)..]
            .trim()
            .trim_start_matches("final")
            .trim()
            .is_empty();
        if is_macro_name(marker)
            && (rest.contains(['{', ':']) || name_ends_line)
            && rest.starts_with([' ', '\t'])
            && after_name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
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
        if next.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '~') {
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

/// Words that may follow a function head's parameter list before a trailing macro.
const HEAD_QUALIFIERS: &[&str] = &["const", "volatile", "override", "final", "mutable"];

/// Words before a `(` that make a line a statement, not a function head.
const CONTROL_WORDS: &[&str] = &[
    "if", "while", "for", "switch", "return", "sizeof", "catch", "decltype", "alignof",
];

/// The cuts that blank macros after a function head's parameter list on `line` (see
/// the module doc). The list ends on this line: either it opens here, after a plain name
/// (or an `operator`) that is no keyword or macro with no `=` or `;` before it, or it
/// opened on an earlier line and the line's first unmatched `)` closes it.
fn trailing_macros(line: &str) -> Vec<(usize, usize)> {
    match head_list_end(line).or_else(|| continued_list_end(line)) {
        Some(at) => macros_before_body(line, at, true),
        None => Vec::new(),
    }
}

/// The cuts that blank the macros a line starts with when the line before ended a
/// function head (`void f(int a) const` / `    GTEST_LOCK_EXCLUDED_(mu) {`): the body,
/// the initializers or nothing may follow them, not a `;` (a statement after an `if
/// (..)` is left alone).
fn continuing_macros(line: &str) -> Vec<(usize, usize)> {
    if !is_macro_name(&line[..ident_len(line)]) {
        return Vec::new();
    }
    macros_before_body(line, 0, false)
}

/// Whether `line` (trimmed) ends like a function head that may go on with a macro on the
/// next line: with its parameter list's `)` or a qualifier, and is no control statement.
fn ends_head(line: &str) -> bool {
    let code = match line.find("//") {
        Some(i) if !line.contains('"') => line[..i].trim_end(),
        _ => line,
    };
    let first = &code[..ident_len(code)];
    let last = code
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    !matches!(
        first,
        "if" | "while" | "for" | "switch" | "return" | "else" | "do"
    ) && (code.ends_with(')') || HEAD_QUALIFIERS.contains(&last) || last == "noexcept")
}

/// From `at`, qualifiers and macros up to the end of a function head; the macros' cuts
/// when the head ends there (the line's end, `{`, `:`, `=`, a comment, or `;` when
/// `semicolon`), else none.
fn macros_before_body(line: &str, at: usize, semicolon: bool) -> Vec<(usize, usize)> {
    let mut at = at;
    let mut cuts = Vec::new();
    loop {
        at += line[at..].len() - line[at..].trim_start().len();
        let rest = &line[at..];
        if rest.starts_with("&&") {
            at += 2;
            continue;
        }
        if rest.starts_with('&') {
            at += 1;
            continue;
        }
        let word_len = ident_len(rest);
        let word = &rest[..word_len];
        if HEAD_QUALIFIERS.contains(&word) {
            at += word_len;
            continue;
        }
        if matches!(word, "noexcept" | "throw") {
            at += word_len;
            let after = line[at..].trim_start();
            if after.starts_with('(') {
                at = line.len() - after.len();
                let Some(close) = matching_paren(after) else {
                    return Vec::new();
                };
                at += close + 1;
            }
            continue;
        }
        if word_len > 0 && is_macro_name(word) {
            let mut len = word_len;
            let after = &rest[word_len..];
            if after.trim_start().starts_with('(') {
                let gap = after.len() - after.trim_start().len();
                let Some(close) = matching_paren(after.trim_start()) else {
                    return Vec::new();
                };
                len += gap + close + 1;
            }
            cuts.push((at, len));
            at += len;
            continue;
        }
        let ends = rest.is_empty()
            || rest.starts_with(['{', ':', '='])
            || (semicolon && rest.starts_with(';'))
            || rest.starts_with("//")
            || rest.starts_with("/*");
        return if ends { cuts } else { Vec::new() };
    }
}

/// Past the `)` of a parameter list that opens on `line` after a function's name
/// (`f(..)`, `~T(..)`, `operator==(..)`, `operator()(..)`).
fn head_list_end(line: &str) -> Option<usize> {
    let mut open = line.find('(')?;
    let mut head = line[..open].trim_end();
    if line[open..].starts_with("()") && head.ends_with("operator") {
        // `operator()(..)`: the name's own parentheses come first.
        head = &line[..open + 2];
        open = open + 2 + line[open + 2..].find('(')?;
    }
    let head_name = head.trim_end_matches(|c: char| "+-*/%^&|~!=<>,[]() ".contains(c));
    let head = if head_name.ends_with("operator") {
        head_name
    } else {
        head
    };
    let name_at = head
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '~'))
        .map_or(0, |i| i + 1);
    let name = head[name_at..].trim_start_matches('~');
    if head.contains(['=', ';'])
        || ident_len(name) == 0
        || ident_len(name) != name.len()
        || is_macro_name(name)
        || CONTROL_WORDS.contains(&name)
    {
        return None;
    }
    Some(open + matching_paren(&line[open..])? + 1)
}

/// Past the first `)` on `line` that closes a parenthesis opened on an earlier line.
fn continued_list_end(line: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in line.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Some(i + 1),
            ')' => depth -= 1,
            _ => {}
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
            (
                "class GTEST_API_ AssertionException\n    : public E {\n",
                "class            AssertionException\n    : public E {\n",
            ),
            (
                "  bool Sat() const GTEST_LOCK_REQUIRED_(mu) {\n",
                "  bool Sat() const                          {\n",
            ),
            (
                "  size_type size() const BOOST_ASIO_NOEXCEPT\n",
                "  size_type size() const                    \n",
            ),
            (
                "  ~Mocker() override GTEST_LOCK_EXCLUDED_(mu) {\n",
                "  ~Mocker() override                          {\n",
            ),
            (
                "FMT_INLINE int f() noexcept(true) FMT_NOEXCEPT;\n",
                "           int f() noexcept(true)             ;\n",
            ),
            (
                "      allowed_t<I>) const BOOST_ASIO_NOEXCEPT\n",
                "      allowed_t<I>) const                    \n",
            ),
            (
                "  FMT_CONSTEXPR20 ~buffer() {}\n",
                "                  ~buffer() {}\n",
            ),
            (
                "void Mock::f(int a)\n    GTEST_LOCK_EXCLUDED_(mu) {\n",
                "void Mock::f(int a)\n                             {\n",
            ),
            (
                "  reference operator*() const BOOST_NOEXCEPT\n",
                "  reference operator*() const               \n",
            ),
            (
                "  bool operator()(int a) const BOOST_NOEXCEPT {\n",
                "  bool operator()(int a) const                {\n",
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
            "if (x) RETURN_IF_ERROR(y);\n",
            "  return f(x) OP_MACRO y;\n",
            "  ASSERT_TRUE(ok) << MESSAGE_TEXT;\n",
            "struct FOO_T x;\n",
            "if (ready)\n  RUN_TASK(t);\n",
        ] {
            assert_eq!(mask(input), input, "{input:?}");
        }
    }
}
