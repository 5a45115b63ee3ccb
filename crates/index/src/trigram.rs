//! The terms of the code search index: each file's *distinct* case-folded trigrams.
//!
//! `code_fts` has `detail=none`, so it only records which files hold a term, never how
//! often or where. Feeding FTS5's own trigram tokenizer the raw text therefore did the
//! same hash-table work once per occurrence (~10× more than once per distinct trigram on
//! real code) to store the same index. Instead the indexer computes the distinct trigrams
//! here, on the parse threads, and hands FTS5 one term per trigram through its plain
//! `ascii` tokenizer. Queries are encoded by the same functions, so documents and queries
//! always agree on folding and encoding.
//!
//! A term is the trigram itself when its three characters are ASCII letters or digits
//! (`par`), else the lowercase hex of its UTF-8 bytes (`2e2875` for `.(u`), at least six
//! characters: the two forms never collide.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use rustc_hash::FxHasher;

/// Case folding shared by documents and queries: the lowercase of a character when that
/// is a single character, else the character itself (so positions map one to one).
pub(crate) fn fold(c: char) -> char {
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

/// A trigram as one integer: three 21-bit code points.
fn pack(t: [char; 3]) -> u64 {
    (u64::from(t[0]) << 42) | (u64::from(t[1]) << 21) | u64::from(t[2])
}

/// Appends the index term of one trigram to `out`.
fn push_term(t: [char; 3], out: &mut String) {
    if t.iter().all(char::is_ascii_alphanumeric) {
        out.extend(t);
        return;
    }
    let mut utf8 = [0u8; 4];
    for c in t {
        for b in c.encode_utf8(&mut utf8).bytes() {
            out.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
            out.push(char::from_digit(u32::from(b & 0xf), 16).unwrap_or('0'));
        }
    }
}

/// The folded trigrams of `text`, in order, overlapping.
fn trigrams(text: &str) -> impl Iterator<Item = [char; 3]> + '_ {
    let mut chars = text.chars().map(fold);
    let mut window = [chars.next(), chars.next()];
    chars.filter_map(move |c| {
        let t = match window {
            [Some(a), Some(b)] => Some([a, b, c]),
            _ => None,
        };
        window = [window[1], Some(c)];
        t
    })
}

/// Computes documents' terms, reusing its scratch space from one file to the next.
///
/// Most source files are ASCII: their folded trigrams fit in 21 bits, so a bitmap of
/// every possible one (256 KiB) replaces hashing, and only the bits a file set are
/// cleared after it. Other files take the general path; both give the same terms.
pub struct TermsBuilder {
    /// One bit per 7-bit ASCII trigram.
    seen: Vec<u64>,
    /// The trigrams set in `seen` by the current file, in first-seen order.
    order: Vec<u32>,
}

impl Default for TermsBuilder {
    fn default() -> Self {
        TermsBuilder {
            seen: vec![0; (1 << 21) / 64],
            order: Vec::new(),
        }
    }
}

impl TermsBuilder {
    /// The document to index for a file: its distinct trigram terms separated by spaces.
    pub fn document_terms(&mut self, text: &str) -> String {
        if !text.is_ascii() {
            return general_terms(text);
        }
        let bytes = text.as_bytes();
        for w in bytes.windows(3) {
            let key = (u32::from(w[0].to_ascii_lowercase()) << 14)
                | (u32::from(w[1].to_ascii_lowercase()) << 7)
                | u32::from(w[2].to_ascii_lowercase());
            let (word, bit) = ((key >> 6) as usize, 1u64 << (key & 63));
            if self.seen[word] & bit == 0 {
                self.seen[word] |= bit;
                self.order.push(key);
            }
        }
        let mut out = String::with_capacity(self.order.len() * 4);
        for key in self.order.drain(..) {
            self.seen[(key >> 6) as usize] = 0;
            let c = |shift: u32| char::from(((key >> shift) & 0x7f) as u8);
            push_term([c(14), c(7), c(0)], &mut out);
            out.push(' ');
        }
        out.pop();
        out
    }
}

/// Terms of any text, through a hash set of packed code points.
fn general_terms(text: &str) -> String {
    let mut seen: HashSet<u64, BuildHasherDefault<FxHasher>> =
        HashSet::with_capacity_and_hasher(text.len().min(1 << 16) / 2, Default::default());
    let mut order = Vec::new();
    for t in trigrams(text) {
        if seen.insert(pack(t)) {
            order.push(t);
        }
    }
    let mut out = String::with_capacity(order.len() * 4);
    for t in order {
        push_term(t, &mut out);
        out.push(' ');
    }
    out.pop();
    out
}

/// The distinct terms of `literal` (whose length in characters is at least 3), in order.
pub(crate) fn query_terms(literal: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in trigrams(literal) {
        let mut term = String::new();
        push_term(t, &mut term);
        if !out.contains(&term) {
            out.push(term);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document_terms(text: &str) -> String {
        TermsBuilder::default().document_terms(text)
    }

    fn sorted(doc: &str) -> Vec<&str> {
        let mut terms: Vec<&str> = doc.split(' ').filter(|t| !t.is_empty()).collect();
        terms.sort_unstable();
        terms
    }

    #[test]
    fn documents_hold_each_folded_trigram_once() {
        assert_eq!(sorted(&document_terms("ParPar")), vec!["arp", "par", "rpa"]);
        assert_eq!(document_terms("ab"), "");
        assert_eq!(document_terms(""), "");
    }

    #[test]
    fn the_ascii_path_gives_the_terms_of_the_general_path_in_the_same_order() {
        let mut builder = TermsBuilder::default();
        for text in [
            "",
            "ab",
            "fn Parse_Line(x: &str) -> Result<(), E> {}\r\n\t~",
            "AAAAaaaa",
        ] {
            assert!(text.is_ascii());
            assert_eq!(
                builder.document_terms(text),
                general_terms(text),
                "{text:?}"
            );
        }
        // The scratch space is clean between files: a later file has only its own terms.
        assert_eq!(builder.document_terms("xyz"), "xyz");
    }

    #[test]
    fn punctuation_and_non_ascii_are_hex_and_never_collide_with_plain_terms() {
        assert_eq!(query_terms("a.b"), vec!["612e62"]);
        // 'É' folds to 'é' (c3 a9).
        assert_eq!(query_terms("Éab"), vec!["c3a96162"]);
        // A trigram spelled with hex digits stays itself, three characters long.
        assert_eq!(query_terms("616"), vec!["616"]);
        for term in sorted(&document_terms("x.y = \"çà\"; fn f()")) {
            let plain = term.len() == 3 && term.chars().all(|c| c.is_ascii_alphanumeric());
            let hex = term.len() >= 6
                && term.len() % 2 == 0
                && term.chars().all(|c| c.is_ascii_hexdigit());
            assert!(plain || hex, "{term:?}");
        }
    }

    #[test]
    fn a_query_for_any_substring_finds_its_terms_in_the_document() {
        let text = "fn Parse_Line(x: &str) -> Result<(), Ünïcödé> { x.len() }";
        let doc = document_terms(text);
        let terms: HashSet<&str> = doc.split(' ').collect();
        let chars: Vec<char> = text.chars().collect();
        for start in 0..chars.len() {
            for end in start + 3..=chars.len() {
                let sub: String = chars[start..end].iter().collect();
                for term in query_terms(&sub) {
                    assert!(terms.contains(term.as_str()), "{sub:?} → {term:?}");
                }
                // Case never hides a match (the upper case of these characters folds back).
                assert_eq!(
                    query_terms(&sub.to_uppercase()),
                    query_terms(&sub),
                    "{sub:?}"
                );
            }
        }
    }
}
