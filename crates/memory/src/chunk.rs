//! Splitting a body into chunks for embedding: paragraphs packed up to a size, each
//! chunk a byte range of the body (so a hit can point into the text), never cutting a
//! UTF-8 character.

/// Most bytes in a chunk (about 256 tokens of English text).
pub const CHUNK_BYTES: usize = 1_000;

/// A byte range `[start, end)` of a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// The chunks of `body`: paragraphs (split at blank lines) packed up to
/// [`CHUNK_BYTES`]; a longer paragraph is cut at the last whitespace before the limit
/// (or at a character boundary). An empty body has one empty chunk.
pub fn chunks(body: &str) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < body.len() {
        let rest = &body[start..];
        if rest.len() <= CHUNK_BYTES {
            out.push(Chunk {
                start,
                end: body.len(),
            });
            break;
        }
        let mut cut = CHUNK_BYTES;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let window = &rest[..cut];
        let at = window
            .rfind("\n\n")
            .map(|i| i + 2)
            .or_else(|| window.rfind(char::is_whitespace).map(|i| i + 1))
            .filter(|&i| i > CHUNK_BYTES / 4)
            .unwrap_or(cut);
        out.push(Chunk {
            start,
            end: start + at,
        });
        start += at;
    }
    if out.is_empty() {
        out.push(Chunk { start: 0, end: 0 });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_body_in_order_without_cutting_characters() {
        let body = "é".repeat(3_000) + "\n\nsecond paragraph";
        let cs = chunks(&body);
        assert!(cs.len() > 1);
        let mut at = 0;
        for c in &cs {
            assert_eq!(c.start, at);
            assert!(c.end - c.start <= CHUNK_BYTES);
            assert!(body.is_char_boundary(c.start) && body.is_char_boundary(c.end));
            at = c.end;
        }
        assert_eq!(at, body.len());
    }

    #[test]
    fn a_short_body_is_one_chunk() {
        assert_eq!(chunks("hi"), vec![Chunk { start: 0, end: 2 }]);
        assert_eq!(chunks(""), vec![Chunk { start: 0, end: 0 }]);
    }
}
