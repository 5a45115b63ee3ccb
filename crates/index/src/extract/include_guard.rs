//! The include guard of a C or C++ header: `#ifndef NAME` (or `#if !defined(NAME)`) then
//! `#define NAME` with no value, before any other code (comments aside). It names no
//! code, so the C++ rules leave it out of the definitions; read from the text, not the
//! tree, so that a parse that goes wrong later in the file cannot change the answer.

/// The first two lines of code in `text` (comments and blank lines skipped), trimmed.
fn first_code_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::with_capacity(2);
    let mut in_comment = false;
    for line in text.lines() {
        let mut rest = line.trim();
        loop {
            if in_comment {
                match rest.find("*/") {
                    Some(end) => {
                        rest = rest[end + 2..].trim();
                        in_comment = false;
                    }
                    None => break,
                }
            }
            if let Some(after) = rest.strip_prefix("/*") {
                rest = after;
                in_comment = true;
                continue;
            }
            if rest.starts_with("//") {
                rest = "";
            }
            break;
        }
        if in_comment || rest.is_empty() {
            continue;
        }
        lines.push(rest);
        if lines.len() == 2 {
            break;
        }
    }
    lines
}

/// The guard's name when `text` opens with an include guard (see the module doc).
pub(crate) fn guard_name(text: &str) -> Option<&str> {
    let [open, define] = first_code_lines(text)[..] else {
        return None;
    };
    let name = directive(open, "ifndef")
        .or_else(|| {
            directive(open, "if")?
                .trim_start()
                .strip_prefix("!defined")?
                .trim()
                .strip_prefix('(')?
                .strip_suffix(')')
                .map(str::trim)
        })?
        .trim();
    let defined = directive(define, "define")?.trim();
    (!name.is_empty() && defined == name).then_some(name)
}

/// The rest of a `# word rest` line, without a trailing `//` comment.
fn directive<'t>(line: &'t str, word: &str) -> Option<&'t str> {
    let rest = line.strip_prefix('#')?.trim_start().strip_prefix(word)?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    Some(
        rest.split("//")
            .next()
            .unwrap_or(rest)
            .split("/*")
            .next()
            .unwrap_or(rest),
    )
}

#[cfg(test)]
mod tests {
    use super::guard_name;

    #[test]
    fn a_header_opening_with_ifndef_and_define_has_a_guard() {
        let cases = [
            ("#ifndef A_H\n#define A_H\nint x;\n#endif\n", Some("A_H")),
            (
                "/* license\n * text */\n// more\n#ifndef B_H\n#define B_H // guard\n",
                Some("B_H"),
            ),
            ("#if !defined(C_H)\n#define C_H\n", Some("C_H")),
            ("#ifndef D\n#define D 1\n", None),
            ("#include <x.h>\n#ifndef E_H\n#define E_H\n", None),
            ("#ifndef F_H\n#define G_H\n", None),
            ("int x;\n", None),
        ];
        for (text, want) in cases {
            assert_eq!(guard_name(text), want, "{text:?}");
        }
    }
}
