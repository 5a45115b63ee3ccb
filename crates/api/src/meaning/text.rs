//! The text that stands for one code unit: what the model embeds and what full text
//! matches. Built only from what describes the unit (its name split into words, its
//! kind and container, its signature, the names it calls, its doc comment and the first
//! lines of its body), bounded so that it fits the model's window (256 tokens).

/// Most characters of the embedded text: about 256 word pieces of code, the model's
/// window, so nothing the model would truncate is stored.
pub const MAX_EMBED_CHARS: usize = 1_000;
/// Most body lines the embedded text carries (the first ones: what a function does is
/// mostly said near its top).
pub const EMBED_BODY_LINES: usize = 12;
/// Most characters of the full-text document: full text has no window, so it reads more
/// of the body than the model can.
pub const MAX_FTS_CHARS: usize = 8_000;
/// Most called names listed, in the order of their first call.
pub const MAX_CALLS: usize = 16;

/// What the index says about one unit, the input of [`embed_text`] and [`fts_name`] /
/// [`fts_body`].
#[derive(Debug, Clone, Default)]
pub struct UnitSource {
    /// Its name (`parse_header`, `HttpClient`).
    pub name: String,
    /// Its kind (`function`, `method`, `class`...).
    pub kind: String,
    /// The name of the definition it is inside, if any.
    pub parent: Option<String>,
    /// Its signature as the index stores it (may be empty).
    pub signature: String,
    /// Its doc comment, when the index stored one.
    pub doc: Option<String>,
    /// The names it calls, first call first, without repeats.
    pub calls: Vec<String>,
    /// Its source text (from its first to its last line).
    pub body: String,
}

/// An identifier split into lower-case words at `_`, `-`, `.`, `:` and case changes
/// (`parseHTTPHeader` → `parse http header`, `read_to_end` → `read to end`); digits stay
/// with their word.
pub fn split_words(ident: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in ident.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = part.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            // fooBar | HTTPHeader (split before the H of Header) | foo2Bar
            let boundary = (prev.is_lowercase() && cur.is_uppercase())
                || (prev.is_uppercase() && cur.is_uppercase() && next_lower)
                || (prev.is_numeric() && cur.is_alphabetic() && cur.is_uppercase());
            if boundary {
                words.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        if start < chars.len() {
            words.push(chars[start..].iter().collect::<String>().to_lowercase());
        }
    }
    words.retain(|w| !w.is_empty());
    words
}

/// Every identifier of `text` split into words ([`split_words`]), joined by spaces: how
/// full text sees code, so `read_to_end` matches a query saying "read to end".
pub fn words_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ident in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        for w in split_words(ident) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&w);
        }
    }
    out
}

/// `s` cut to at most `max` bytes, at a character boundary.
fn cap(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// The first `lines` non-blank lines of `body`, each trimmed.
fn first_lines(body: &str, lines: usize) -> String {
    body.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(lines)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text the model embeds: `kind name words (name) in parent words`, the doc
/// comment, `calls: …`, then the signature and first lines of the body, at most
/// [`MAX_EMBED_CHARS`].
pub fn embed_text(u: &UnitSource) -> String {
    let mut s = format!(
        "{} {}",
        u.kind.replace('_', " "),
        split_words(&u.name).join(" ")
    );
    if let Some(p) = u.parent.as_deref().filter(|p| !p.is_empty()) {
        s.push_str(" in ");
        s.push_str(&split_words(p).join(" "));
    }
    s.push('\n');
    if let Some(doc) = u.doc.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
        s.push_str(&first_lines(doc, 6));
        s.push('\n');
    }
    if !u.calls.is_empty() {
        let calls: Vec<String> = u
            .calls
            .iter()
            .take(MAX_CALLS)
            .map(|c| split_words(c).join(" "))
            .collect();
        s.push_str("calls: ");
        s.push_str(&calls.join(", "));
        s.push('\n');
    }
    let body = first_lines(&u.body, EMBED_BODY_LINES);
    if body.is_empty() {
        s.push_str(u.signature.trim());
    } else {
        s.push_str(&body);
    }
    cap(s, MAX_EMBED_CHARS)
}

/// Full text's name field: the unit's and its container's names in words.
pub fn fts_name(u: &UnitSource) -> String {
    let mut s = split_words(&u.name).join(" ");
    if let Some(p) = u.parent.as_deref() {
        s.push(' ');
        s.push_str(&split_words(p).join(" "));
    }
    s
}

/// Full text's body field: the doc comment, the called names and the body (at most
/// [`MAX_FTS_CHARS`] of it), identifiers split into words.
pub fn fts_body(u: &UnitSource) -> String {
    let mut s = String::new();
    if let Some(doc) = &u.doc {
        s.push_str(doc);
        s.push('\n');
    }
    s.push_str(&u.calls.join(" "));
    s.push('\n');
    s.push_str(&cap(u.body.clone(), MAX_FTS_CHARS));
    words_of(&s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_at_case_changes_underscores_and_acronyms() {
        assert_eq!(split_words("parseHTTPHeader"), ["parse", "http", "header"]);
        assert_eq!(split_words("read_to_end"), ["read", "to", "end"]);
        assert_eq!(split_words("HttpClient"), ["http", "client"]);
        assert_eq!(split_words("utf8Decode"), ["utf8", "decode"]);
        assert_eq!(split_words("Self::new"), ["self", "new"]);
        assert!(split_words("__").is_empty());
        assert_eq!(split_words("Überprüfen"), ["überprüfen"]);
    }

    #[test]
    fn the_embedded_text_names_kind_parent_calls_and_opens_the_body() {
        let u = UnitSource {
            name: "retryRequest".into(),
            kind: "method".into(),
            parent: Some("HttpClient".into()),
            signature: "retryRequest(req)".into(),
            doc: None,
            calls: vec!["sleep_backoff".into(), "send".into()],
            body: "retryRequest(req) {\n\n  for (let i = 0; i < 3; i++) {\n".into(),
        };
        let t = embed_text(&u);
        assert!(
            t.starts_with("method retry request in http client\n"),
            "{t}"
        );
        assert!(t.contains("calls: sleep backoff, send\n"), "{t}");
        assert!(t.contains("for (let i = 0; i < 3; i++) {"), "{t}");
        assert_eq!(fts_name(&u), "retry request http client");
        assert!(fts_body(&u).contains("sleep backoff send"));
    }

    #[test]
    fn texts_are_bounded_whatever_the_body_and_never_split_a_character() {
        let u = UnitSource {
            name: "f".into(),
            kind: "function".into(),
            body: "é".repeat(50_000),
            calls: (0..100).map(|i| format!("call{i}")).collect(),
            ..UnitSource::default()
        };
        assert!(embed_text(&u).len() <= MAX_EMBED_CHARS);
        assert!(fts_body(&u).len() <= MAX_FTS_CHARS + 2_000);
        let t = embed_text(&u);
        assert!(t.matches("call").count() <= MAX_CALLS + 1, "{t}");
    }
}
