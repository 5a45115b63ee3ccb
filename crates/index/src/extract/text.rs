//! Plain-text helpers of extraction: whitespace collapsed and cut at a char boundary,
//! comment markers and docstring quotes stripped. No tree, no collector.

/// Longest doc comment kept, in bytes.
pub(crate) const MAX_DOC: usize = 2000;

/// `text` with every run of whitespace collapsed to one space (a qualifier written over
/// several lines), cut to at most `max` bytes at a char boundary.
pub(crate) fn compact(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max));
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() > max {
            break;
        }
    }
    truncate_at_char(&mut out, max);
    out
}

pub(crate) fn truncate_at_char(s: &mut String, max: usize) {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
}

/// Strips comment markers (`///`, `//!`, `//`, `#`, `/** */`, leading `*`) from a comment block.
pub(crate) fn clean_comment(raw: &str) -> String {
    let mut out = String::new();
    for line in raw.lines() {
        let mut l = line.trim();
        for prefix in ["///", "//!", "//", "/**", "/*!", "/*", "#", "--"] {
            if let Some(rest) = l.strip_prefix(prefix) {
                l = rest;
                break;
            }
        }
        l = l.strip_suffix("*/").unwrap_or(l).trim();
        l = l.strip_prefix('*').map(str::trim_start).unwrap_or(l);
        if !out.is_empty() || !l.is_empty() {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(l);
        }
    }
    let mut out = out.trim_end().to_string();
    truncate_at_char(&mut out, MAX_DOC);
    out
}

/// Cleans a docstring literal (Python triple quotes, etc.) into plain text.
pub(crate) fn clean_docstring(raw: &str) -> String {
    let mut s = raw.trim();
    s = s.trim_start_matches(|c: char| c.is_ascii_alphabetic()); // r"", u"", b"" prefixes
    for q in ["\"\"\"", "'''", "\"", "'"] {
        if s.starts_with(q) && s.ends_with(q) && s.len() >= 2 * q.len() {
            s = &s[q.len()..s.len() - q.len()];
            break;
        }
    }
    let mut out = s.trim().to_string();
    truncate_at_char(&mut out, MAX_DOC);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_comment_markers() {
        assert_eq!(
            clean_comment("/// Parses a file.\n/// Twice."),
            "Parses a file.\nTwice."
        );
        assert_eq!(clean_comment("/**\n * Javadoc here.\n */"), "Javadoc here.");
        assert_eq!(clean_comment("# shell doc"), "shell doc");
        assert_eq!(clean_docstring("\"\"\"Doc string.\"\"\""), "Doc string.");
    }
}
