//! The lines of an indexed file around a definition, for a front end that shows code
//! (the web view's symbol page). The file is read beneath the workspace's root through
//! the one ruler (`loci_paths::read_file_beneath`: a symlink or `..` that leads out is
//! refused by the kernel), and both the file read and the lines answered are bounded.
//! Each line comes split into syntax-classed pieces (`loci_index::highlight`, the
//! grammars' own highlight queries) when the language has a query and the file is
//! classified within its budget; else each line is one unclassed piece.

use std::path::Path;

use serde::Serialize;

use crate::error::{ApiError, ErrorKind};
use crate::handle::{ReadOptions, Workspace};

use loci_index::Lang;
use loci_index::highlight::DefinitionSpans;
/// A run of text on one line and its syntax class (`keyword`, `function`, `string`...).
pub use loci_index::highlight::Piece;

/// Largest file read for an excerpt.
pub const MAX_FILE_BYTES: usize = 8 << 20;
/// Most lines one excerpt answers.
pub const MAX_LINES: u32 = 400;

/// Lines `first_line..` of one file.
#[derive(Debug, Clone, Serialize)]
pub struct Excerpt {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The number of the first line answered (1-based).
    pub first_line: u32,
    /// The lines, without their line ends (invalid UTF-8 replaced), each as pieces.
    pub lines: Vec<Vec<Piece>>,
    /// Whether the pieces carry syntax classes.
    pub highlighted: bool,
    /// Whether the range asked for was cut to [`MAX_LINES`].
    pub truncated: bool,
}

/// Lines `from..=to` (1-based, clamped to the file and to [`MAX_LINES`]) of `path`, a
/// path relative to the workspace root, classed as `lang` when given.
pub fn excerpt(
    ws: &Workspace,
    opts: &ReadOptions,
    path: &str,
    lang: Option<Lang>,
    from: u32,
    to: u32,
) -> Result<Excerpt, ApiError> {
    let relative = Path::new(path);
    let bytes = loci_paths::read_file_beneath(ws.root(), relative).map_err(|e| {
        ApiError::new(ErrorKind::Unreadable, format!("cannot read `{path}`: {e}"))
            .hint("sync the workspace if the file moved")
    })?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(ApiError::new(
            ErrorKind::TooLong,
            format!("`{path}` is larger than {MAX_FILE_BYTES} bytes: no excerpt is shown"),
        ));
    }
    let text = String::from_utf8_lossy(&bytes);
    let from = from.max(1);
    let wanted = to.max(from) - from + 1;
    let take = wanted.min(MAX_LINES);
    let first = (from - 1) as usize;
    // A large file is classed from a window of whole top-level definitions around
    // the lines (`highlight_excerpt`), when the index read its definitions from this
    // very content; otherwise from its whole parse.
    let spans = match lang {
        Some(_)
            if bytes.len() >= loci_index::highlight::WINDOW_FROM
                && matches!(text, std::borrow::Cow::Borrowed(_)) =>
        {
            definition_spans(ws, opts, path, &bytes)
        }
        _ => DefinitionSpans::default(),
    };
    let classed = lang.and_then(|l| {
        loci_index::highlight::highlight_excerpt(l, &text, first..first + take as usize, &spans)
    });
    let highlighted = classed.is_some();
    let lines: Vec<Vec<Piece>> = match classed {
        Some(lines) => lines,
        None => text
            .lines()
            .skip(first)
            .take(take as usize)
            .map(|l| {
                vec![Piece {
                    class: None,
                    text: l.to_string(),
                }]
            })
            .collect(),
    };
    Ok(Excerpt {
        path: path.to_string(),
        first_line: from,
        lines,
        highlighted,
        truncated: wanted > take,
    })
}

/// The spans of the definitions the index holds for `path`, when it read them from
/// `bytes` (same content hash); none otherwise (a file changed since).
fn definition_spans(
    ws: &Workspace,
    opts: &ReadOptions,
    path: &str,
    bytes: &[u8],
) -> DefinitionSpans {
    let hash = blake3::hash(bytes);
    match ws.run(opts, |g| g.definition_spans(path, hash.as_bytes())) {
        Ok(Some(spans)) => spans,
        _ => DefinitionSpans::default(),
    }
}
