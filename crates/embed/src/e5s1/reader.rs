//! A cursor over an E5S1 file that never reads past its end: every length it is told
//! is checked against the bytes left before anything is allocated or read, so a
//! truncated or garbled file is an error naming the field, never a panic or a huge
//! allocation.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::EmbedError;

/// Sequential little-endian reads of a file of known length.
pub struct Reader {
    file: BufReader<File>,
    path: PathBuf,
    pos: u64,
    len: u64,
}

impl Reader {
    /// Opens `path` (its length read once, now).
    pub fn open(path: &Path) -> Result<Reader, EmbedError> {
        let io = |source: std::io::Error| match source.kind() {
            std::io::ErrorKind::NotFound => EmbedError::MissingFile {
                path: path.to_path_buf(),
            },
            _ => EmbedError::Read {
                path: path.to_path_buf(),
                source,
            },
        };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        Ok(Reader {
            file: BufReader::with_capacity(1 << 16, file),
            path: path.to_path_buf(),
            pos: 0,
            len,
        })
    }

    /// The error "`path` is not a usable E5S1 model: `reason`".
    pub fn bad(&self, reason: impl Into<String>) -> EmbedError {
        EmbedError::Weights {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    /// The next `n` bytes, or an error naming `what` when fewer are left.
    pub fn bytes(&mut self, n: u64, what: &str) -> Result<Vec<u8>, EmbedError> {
        let left = self.len - self.pos;
        if n > left {
            return Err(self.bad(format!(
                "{what}: {n} bytes at offset {} but the file ends {left} bytes later \
                 (truncated?)",
                self.pos
            )));
        }
        let mut buf = vec![0u8; n as usize];
        self.file
            .read_exact(&mut buf)
            .map_err(|source| EmbedError::Read {
                path: self.path.clone(),
                source,
            })?;
        self.pos += n;
        Ok(buf)
    }

    /// `N` bytes as an array.
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], EmbedError> {
        let v = self.bytes(N as u64, what)?;
        Ok(v.try_into().expect("N bytes read"))
    }

    /// A `u8`.
    pub fn u8(&mut self, what: &str) -> Result<u8, EmbedError> {
        Ok(self.array::<1>(what)?[0])
    }

    /// A little-endian `u16`.
    pub fn u16(&mut self, what: &str) -> Result<u16, EmbedError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self, what: &str) -> Result<u32, EmbedError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `i32` that must lie in `range` (a count, a size, an id).
    pub fn i32_in(
        &mut self,
        what: &str,
        range: std::ops::RangeInclusive<i64>,
    ) -> Result<usize, EmbedError> {
        let v = i32::from_le_bytes(self.array(what)?);
        if !range.contains(&i64::from(v)) {
            return Err(self.bad(format!(
                "{what} is {v}, outside {}..={}",
                range.start(),
                range.end()
            )));
        }
        Ok(v as usize)
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self, what: &str) -> Result<u64, EmbedError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `f32`.
    pub fn f32(&mut self, what: &str) -> Result<f32, EmbedError> {
        Ok(f32::from_le_bytes(self.array(what)?))
    }

    /// `n` little-endian `u32`s.
    pub fn u32s(&mut self, n: usize, what: &str) -> Result<Vec<u32>, EmbedError> {
        let bytes = self.bytes(n as u64 * 4, what)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// `n` little-endian `f32`s.
    pub fn f32s(&mut self, n: usize, what: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self
            .u32s(n, what)?
            .into_iter()
            .map(f32::from_bits)
            .collect())
    }

    /// `nbytes` bytes at `offset` from the file's start (a tensor), checked to lie
    /// inside the file; the cursor moves past them.
    pub fn at(&mut self, offset: u64, nbytes: u64, what: &str) -> Result<Vec<u8>, EmbedError> {
        if offset.checked_add(nbytes).is_none_or(|end| end > self.len) {
            return Err(self.bad(format!(
                "{what}: {nbytes} bytes at offset {offset}, past the file's end ({} bytes)",
                self.len
            )));
        }
        self.file
            .seek(SeekFrom::Start(offset))
            .map_err(|source| EmbedError::Read {
                path: self.path.clone(),
                source,
            })?;
        self.pos = offset;
        self.bytes(nbytes, what)
    }
}
