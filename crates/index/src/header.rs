//! Whether a `.h` file is C++: C and C++ share the extension, and parsing C++ with the C
//! grammar loses every class, namespace and template (fmt's headers: half of ctags'
//! definitions). Decided from the file's own text, so a header's language changes only
//! when the header does (an index run's result never depends on which other files exist).

/// Whether `text` reads as C++: outside comments, string and character literals, a `::`,
/// or a line starting with `namespace`, `template`, `class NAME`, `using namespace`,
/// `public:`, `private:` or `protected:`. `extern "C"` and `__cplusplus` guards are what
/// C headers written for C++ callers have, and count for nothing.
pub(crate) fn looks_like_cpp(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut line_start = true;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                line_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = find(bytes, i, b"\n").unwrap_or(bytes.len());
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = find(bytes, i + 2, b"*/").map_or(bytes.len(), |e| e + 2);
                continue;
            }
            b'"' | b'\'' => {
                i = skip_literal(bytes, i);
                line_start = false;
                continue;
            }
            b':' if bytes.get(i + 1) == Some(&b':') => return true,
            _ => {}
        }
        if line_start && starts_cpp_line(&bytes[i..]) {
            return true;
        }
        line_start = false;
        i += 1;
    }
    false
}

fn starts_cpp_line(rest: &[u8]) -> bool {
    let word = |w: &[u8]| {
        rest.starts_with(w)
            && !rest
                .get(w.len())
                .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_')
    };
    if word(b"namespace") || word(b"template") || word(b"using") && has_after(rest, 5, b"namespace")
    {
        return true;
    }
    for label in [&b"public"[..], b"private", b"protected"] {
        if word(label) && has_after(rest, label.len(), b":") {
            return true;
        }
    }
    // `class Name` followed by `{`, `:` or `;` (a definition or a forward declaration).
    if word(b"class") {
        let after = skip_spaces(rest, 5);
        let name_end = after
            + rest[after..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                .count();
        if name_end > after {
            let next = skip_spaces(rest, name_end);
            return matches!(rest.get(next), Some(b'{' | b':' | b';') | None);
        }
    }
    false
}

/// Whether `want` follows `rest[from..]` after spaces.
fn has_after(rest: &[u8], from: usize, want: &[u8]) -> bool {
    rest[skip_spaces(rest, from)..].starts_with(want)
}

fn skip_spaces(rest: &[u8], mut i: usize) -> usize {
    while rest.get(i).is_some_and(|c| *c == b' ' || *c == b'\t') {
        i += 1;
    }
    i.min(rest.len())
}

/// The index past the string or character literal opening at `start` (or the line's end).
fn skip_literal(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' => return i,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::looks_like_cpp;

    #[test]
    fn cpp_headers_are_told_from_c_headers() {
        let cpp = [
            "namespace fmt {\nint f();\n}\n",
            "template <typename T> T max(T a, T b);\n",
            "class Widget {\n public:\n  void draw();\n};\n",
            "class Widget;\n",
            "struct S {\nprivate:\n int x;\n};\n",
            "int v = std::max(1, 2);\n",
            "  using namespace std;\n",
        ];
        for text in cpp {
            assert!(looks_like_cpp(text), "{text:?} is C++");
        }
        let c = [
            "#ifdef __cplusplus\nextern \"C\" {\n#endif\nint f(void);\n",
            "/* see Foo::bar, a namespace or a class Foo { } */\nint f(void);\n",
            "// template <T>\nconst char *s = \"a::b\";\nchar c = ':';\n",
            "int class_count;\nstruct classes { int public_x; };\n",
            "#define NAMESPACE(x) x\n",
        ];
        for text in c {
            assert!(!looks_like_cpp(text), "{text:?} is C");
        }
    }
}
