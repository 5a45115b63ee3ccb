//! Bounded capture of one output stream: the first half of the cap, the last
//! half of the cap, and an exact count of everything in between.
//!
//! Why head *and* tail: the head holds what a tool prints first (banners,
//! the start of a JSON document), the tail holds what it prints last (the
//! error that made it fail). Dropping the middle keeps both while memory stays
//! bounded by the cap whatever the child prints.

/// What was kept of one stream of a child.
///
/// When `truncated` is false, `head` is the whole stream and `tail` is empty.
/// When it is true, `head` is the first `cap / 2` bytes, `tail` the last
/// `cap - cap / 2` bytes, and `total_bytes - head.len() - tail.len()` bytes in
/// between were counted and dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capture {
    /// The first bytes of the stream (all of it when not truncated).
    pub head: Vec<u8>,
    /// The last bytes of the stream; empty when not truncated.
    pub tail: Vec<u8>,
    /// Exact number of bytes the child wrote to the stream.
    pub total_bytes: u64,
    /// Whether bytes were dropped between `head` and `tail`.
    pub truncated: bool,
}

impl Capture {
    /// Bytes counted but not kept.
    pub fn omitted_bytes(&self) -> u64 {
        self.total_bytes - (self.head.len() + self.tail.len()) as u64
    }

    /// Head and tail as text (lossy UTF-8) with a marker naming the number of
    /// omitted bytes between them, for messages and logs.
    pub fn to_string_lossy(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.head).into_owned();
        if self.truncated {
            s.push_str(&format!(
                "\n[... {} bytes omitted ...]\n",
                self.omitted_bytes()
            ));
            s.push_str(&String::from_utf8_lossy(&self.tail));
        }
        s
    }
}

/// Accumulates a stream into a [`Capture`] without ever growing past the cap.
pub(crate) struct CaptureBuf {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    /// Ring buffer of the last `tail_cap` bytes once the head is full.
    ring: Vec<u8>,
    /// Next write position in `ring` once it is full.
    ring_pos: usize,
    total: u64,
}

impl CaptureBuf {
    pub(crate) fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        CaptureBuf {
            head_cap,
            tail_cap: cap - head_cap,
            head: Vec::new(),
            ring: Vec::new(),
            ring_pos: 0,
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, mut chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if self.head.len() < self.head_cap {
            let n = chunk.len().min(self.head_cap - self.head.len());
            self.head.extend_from_slice(&chunk[..n]);
            chunk = &chunk[n..];
        }
        if chunk.is_empty() || self.tail_cap == 0 {
            return;
        }
        if chunk.len() >= self.tail_cap {
            self.ring.clear();
            self.ring
                .extend_from_slice(&chunk[chunk.len() - self.tail_cap..]);
            self.ring_pos = 0;
            return;
        }
        if self.ring.len() < self.tail_cap {
            let n = chunk.len().min(self.tail_cap - self.ring.len());
            self.ring.extend_from_slice(&chunk[..n]);
            chunk = &chunk[n..];
            if chunk.is_empty() {
                return;
            }
        }
        // Ring is full: overwrite the oldest bytes, wrapping around.
        while !chunk.is_empty() {
            let n = chunk.len().min(self.tail_cap - self.ring_pos);
            self.ring[self.ring_pos..self.ring_pos + n].copy_from_slice(&chunk[..n]);
            self.ring_pos = (self.ring_pos + n) % self.tail_cap;
            chunk = &chunk[n..];
        }
    }

    pub(crate) fn finish(mut self) -> Capture {
        // Linearise the ring: oldest byte first.
        self.ring.rotate_left(self.ring_pos);
        let kept = (self.head.len() + self.ring.len()) as u64;
        let truncated = self.total > kept;
        if truncated {
            Capture {
                head: self.head,
                tail: self.ring,
                total_bytes: self.total,
                truncated,
            }
        } else {
            // Everything fitted: present it as one piece.
            let mut head = self.head;
            head.extend_from_slice(&self.ring);
            Capture {
                head,
                tail: Vec::new(),
                total_bytes: self.total,
                truncated,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(cap: usize, chunks: &[&[u8]]) -> Capture {
        let mut b = CaptureBuf::new(cap);
        for c in chunks {
            b.push(c);
        }
        b.finish()
    }

    #[test]
    fn short_stream_is_kept_whole() {
        let c = capture(8, &[b"abc", b"de"]);
        assert_eq!(c.head, b"abcde");
        assert!(c.tail.is_empty() && !c.truncated);
        assert_eq!(c.total_bytes, 5);
    }

    #[test]
    fn exactly_cap_is_not_truncated() {
        let c = capture(8, &[b"abcdefgh"]);
        assert_eq!(c.head, b"abcdefgh");
        assert!(!c.truncated);
    }

    #[test]
    fn long_stream_keeps_head_and_tail_in_small_chunks() {
        let data: Vec<u8> = (0..100u8).collect();
        let chunks: Vec<&[u8]> = data.chunks(3).collect();
        let c = capture(10, &chunks);
        assert_eq!(c.head, &data[..5]);
        assert_eq!(c.tail, &data[95..]);
        assert_eq!(c.total_bytes, 100);
        assert_eq!(c.omitted_bytes(), 90);
        assert!(c.truncated);
    }

    #[test]
    fn long_stream_keeps_head_and_tail_in_one_chunk() {
        let data: Vec<u8> = (0..100u8).collect();
        let c = capture(10, &[&data]);
        assert_eq!(c.head, &data[..5]);
        assert_eq!(c.tail, &data[95..]);
    }

    #[test]
    fn zero_cap_counts_only() {
        let c = capture(0, &[b"abc"]);
        assert!(c.head.is_empty() && c.tail.is_empty() && c.truncated);
        assert_eq!(c.total_bytes, 3);
    }

    #[test]
    fn lossy_text_names_omitted_bytes() {
        let c = capture(4, &[b"abcdefgh"]);
        assert_eq!(c.to_string_lossy(), "ab\n[... 4 bytes omitted ...]\ngh");
    }
}
