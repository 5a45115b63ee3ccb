//! Reading one file and turning it into facts: the parallel half of indexing.

use std::io::Read;

use crate::Lang;
use crate::budget::FileBudget;
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

/// What a run allows one file: its size (`index.maxFileBytes`) and the time its parse
/// and extraction may take (`index.fileBudgetMs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileLimits {
    pub max_bytes: u64,
    pub budget: FileBudget,
}

/// Reads, hashes and (if the hash differs from `known_hash`) parses one file.
pub(crate) fn parse_file(
    found: &Found,
    lang: Lang,
    limits: FileLimits,
    known_hash: Option<&[u8]>,
) -> Outcome {
    let max_bytes = limits.max_bytes;
    let skipped = |reason, detail: Option<String>| skip(found, reason, detail);
    if found.stat.size > max_bytes {
        return skipped(
            SkipReason::TooLarge,
            Some(format!("{} bytes > {max_bytes}", found.stat.size)),
        );
    }
    let bytes = match read_regular_file(&found.abs, max_bytes) {
        Ok(Contents::Bytes(bytes)) => bytes,
        Ok(Contents::TooLarge) => {
            return skipped(
                SkipReason::TooLarge,
                Some(format!("more than {max_bytes} bytes")),
            );
        }
        Err(e) => return skipped(SkipReason::Unreadable, Some(e.to_string())),
    };
    if let Some(encoding) = other_encoding(&bytes) {
        return skipped(
            SkipReason::NotUtf8,
            Some(format!("its byte-order mark says {encoding}")),
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
    let parse_limits = extract::ParseLimits::within(&text, limits.budget);
    let facts = match extract::extract_within(lang, &text, &parse_limits) {
        Ok(facts) => facts,
        Err(e @ extract::ExtractError::TooComplex { .. }) => {
            return skipped(SkipReason::TooComplex, Some(e.to_string()));
        }
        Err(e @ extract::ExtractError::OverTime { .. }) => {
            return skipped(SkipReason::Timeout, Some(e.to_string()));
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

/// The outcome for a file not indexed, with its reason.
pub(crate) fn skip(found: &Found, reason: SkipReason, detail: Option<String>) -> Outcome {
    Outcome::Skipped {
        rel: found.rel.clone(),
        skip: Skipped {
            path: found.rel.display().into_owned(),
            reason,
            detail,
        },
    }
}

enum Contents {
    Bytes(Vec<u8>),
    TooLarge,
}

/// Reads the regular file at `path`, at most `max_bytes`. The file may have changed
/// since the walk saw it: it is opened without following a symbolic link (one put in
/// its place would lead outside the workspace) and without blocking (a FIFO put in its
/// place would wait forever for a writer), and refused unless what was opened is a
/// regular file.
fn read_regular_file(path: &std::path::Path, max_bytes: u64) -> std::io::Result<Contents> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("no longer a regular file"));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(max_bytes) as usize + 1);
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Ok(Contents::TooLarge);
    }
    Ok(Contents::Bytes(bytes))
}

/// The encoding a byte-order mark other than UTF-8's declares (UTF-16 and UTF-32
/// text is not read as UTF-8: its ASCII would be full of NULs).
fn other_encoding(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0xFF, 0xFE, 0, 0, ..] | [0, 0, 0xFE, 0xFF, ..] => Some("UTF-32"),
        [0xFF, 0xFE, ..] | [0xFE, 0xFF, ..] => Some("UTF-16"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walk::{RelPath, Stat};

    /// The walk saw `name` in `dir` as a small regular file.
    fn walked(dir: &std::path::Path, name: &str) -> Found {
        Found {
            rel: RelPath::from_bytes(name.as_bytes().to_vec()),
            abs: dir.join(name),
            stat: Stat {
                size: 12,
                mtime_ns: 1,
                inode: 1,
            },
        }
    }

    fn limits() -> FileLimits {
        FileLimits {
            max_bytes: 1 << 20,
            budget: FileBudget::default(),
        }
    }

    /// The reason and detail of a skipped outcome; panics on any other.
    fn skip_of(outcome: Outcome) -> (SkipReason, String) {
        match outcome {
            Outcome::Skipped { skip, .. } => (skip.reason, skip.detail.unwrap_or_default()),
            Outcome::Changed(p) => panic!("parsed {}", p.rel.display()),
            Outcome::Touched { rel, .. } => panic!("touched {}", rel.display()),
        }
    }

    #[test]
    fn a_file_that_vanished_after_the_walk_is_unreadable() {
        let dir = tempfile::tempdir().unwrap();
        let found = walked(dir.path(), "gone.rs");
        let (reason, _) = skip_of(parse_file(&found, Lang::Rust, limits(), None));
        assert_eq!(reason, SkipReason::Unreadable);
    }

    #[test]
    fn a_fifo_put_in_a_files_place_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.path().join("pipe.rs"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let found = walked(dir.path(), "pipe.rs");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(skip_of(parse_file(&found, Lang::Rust, limits(), None)));
        });
        let (reason, detail) = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("reading a FIFO blocked");
        assert_eq!(reason, SkipReason::Unreadable);
        assert!(detail.contains("no longer a regular file"), "{detail}");
    }

    #[test]
    fn a_symlink_put_in_a_files_place_is_not_followed_out_of_the_workspace() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.rs"), "fn secret() {}\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.rs"), dir.path().join("a.rs"))
            .unwrap();
        let found = walked(dir.path(), "a.rs");
        let (reason, _) = skip_of(parse_file(&found, Lang::Rust, limits(), None));
        assert_eq!(reason, SkipReason::Unreadable);
    }

    #[test]
    fn a_utf16_file_is_not_utf8_and_a_utf8_bom_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("fn a() {}".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        std::fs::write(dir.path().join("wide.rs"), utf16).unwrap();
        let (reason, detail) = skip_of(parse_file(
            &walked(dir.path(), "wide.rs"),
            Lang::Rust,
            limits(),
            None,
        ));
        assert_eq!(
            (reason, detail.as_str()),
            (SkipReason::NotUtf8, "its byte-order mark says UTF-16")
        );

        std::fs::write(dir.path().join("bom.rs"), "\u{FEFF}fn with_bom() {}\n").unwrap();
        match parse_file(&walked(dir.path(), "bom.rs"), Lang::Rust, limits(), None) {
            Outcome::Changed(p) => {
                let names: Vec<&str> = p.facts.symbols.iter().map(|s| s.name.as_str()).collect();
                assert_eq!(names, ["with_bom"]);
            }
            _ => panic!("a UTF-8 file with a BOM was not parsed"),
        }
    }

    #[test]
    fn byte_order_marks_of_other_encodings_are_named_and_utf8_passes() {
        assert_eq!(other_encoding(b"\xFF\xFEa\0"), Some("UTF-16"));
        assert_eq!(other_encoding(b"\xFE\xFF\0a"), Some("UTF-16"));
        assert_eq!(other_encoding(b"\xFF\xFE\0\0a\0\0\0"), Some("UTF-32"));
        assert_eq!(other_encoding(b"\0\0\xFE\xFF"), Some("UTF-32"));
        assert_eq!(other_encoding(b"\xEF\xBB\xBFfn main() {}"), None);
        assert_eq!(other_encoding(b""), None);
        assert_eq!(other_encoding(b"\xFF"), None);
    }
}
