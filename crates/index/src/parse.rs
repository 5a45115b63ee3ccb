//! Reading one file and turning it into facts: the parallel half of indexing.

use std::io::Read;

use crate::Lang;
use crate::extract::{self, FileFacts};
use crate::walk::{Found, RelPath, SkipReason, Skipped, Stat};

/// A file read and parsed, ready for the writer.
pub(crate) struct Parsed {
    pub rel: RelPath,
    pub lang: Lang,
    pub stat: Stat,
    pub hash: [u8; 32],
    /// The file was not valid UTF-8 and was decoded lossily.
    pub lossy: bool,
    pub lines: u32,
    pub text: String,
    pub facts: FileFacts,
}

/// The outcome of looking at one changed-by-stat file.
pub(crate) enum Outcome {
    /// Content differs from the stored hash (or the file is new): new facts.
    Changed(Box<Parsed>),
    /// Stat changed but content hash is the same: only the stat needs updating.
    Touched { rel: RelPath, stat: Stat },
    /// Not indexed (the file at `rel`), with the reason.
    Skipped { rel: RelPath, skip: Skipped },
}

/// Bytes looked at for a NUL to call a file binary.
pub(crate) const BINARY_SNIFF: usize = 8192;

/// Whether a file starting with `bytes` is binary: a NUL in its first [`BINARY_SNIFF`]
/// bytes. Drift uses the same rule to tell what an index run would skip.
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0)
}

/// Reads, hashes and (if the hash differs from `known_hash`) parses one file.
pub(crate) fn parse_file(
    found: &Found,
    lang: Lang,
    max_bytes: u64,
    known_hash: Option<&[u8]>,
) -> Outcome {
    let skipped = |reason, detail: Option<String>| Outcome::Skipped {
        rel: found.rel.clone(),
        skip: Skipped {
            path: found.rel.display().into_owned(),
            reason,
            detail,
        },
    };
    if found.stat.size > max_bytes {
        return skipped(
            SkipReason::TooLarge,
            Some(format!("{} bytes > {max_bytes}", found.stat.size)),
        );
    }
    let mut bytes = Vec::with_capacity(found.stat.size as usize + 1);
    let read =
        std::fs::File::open(&found.abs).and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        return skipped(SkipReason::Unreadable, Some(e.to_string()));
    }
    if bytes.len() as u64 > max_bytes {
        return skipped(
            SkipReason::TooLarge,
            Some(format!("more than {max_bytes} bytes")),
        );
    }
    if is_binary(&bytes) {
        return skipped(SkipReason::Binary, None);
    }
    let hash = *blake3::hash(&bytes).as_bytes();
    if known_hash == Some(&hash[..]) {
        return Outcome::Touched {
            rel: found.rel.clone(),
            stat: found.stat,
        };
    }
    let (text, lossy) = match String::from_utf8(bytes) {
        Ok(text) => (text, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    };
    let lines = text.lines().count() as u32;
    let lang = lang.for_content(&found.abs, &text);
    let facts = match extract::extract(lang, &text) {
        Ok(facts) => facts,
        Err(e @ extract::ExtractError::TooComplex { .. }) => {
            return skipped(SkipReason::TooComplex, Some(e.to_string()));
        }
        Err(e) => {
            tracing::warn!(path = %found.rel.display(), error = %e, "parse failed; file indexed without symbols");
            FileFacts::default()
        }
    };
    Outcome::Changed(Box::new(Parsed {
        rel: found.rel.clone(),
        lang,
        stat: found.stat,
        hash,
        lossy,
        lines,
        text,
        facts,
    }))
}
