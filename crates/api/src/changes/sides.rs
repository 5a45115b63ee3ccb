//! One side of a changed file as loci's own extractor sees it: its bytes from the
//! commit's or the index's blob (nothing checked out, the live index untouched), or from
//! the working tree beneath the workspace root, and the definitions in them.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use loci_git::{Content, FileChange, Repo};
use loci_index::Lang;
use loci_index::extract::Symbol;

use super::kinds::NotRead;

/// A side's bytes and definitions.
pub(super) struct SideFacts {
    /// The language the extractor read it as.
    pub lang: Lang,
    /// Its definitions, in document order (`extract::in_document_order`).
    pub symbols: Arc<Vec<Symbol>>,
    /// Its bytes (a definition's text is compared across sides to tell a move).
    pub bytes: Vec<u8>,
}

/// A side's bytes, read, in a language loci extracts: its definitions still to find.
pub(super) struct SideBytes {
    /// Its path on its side.
    pub path: String,
    /// The language it is read as.
    pub lang: Lang,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl SideBytes {
    /// Its definitions by loci's extractor, in document order; `TooComplex` when the
    /// extractor gives up.
    pub fn extract(self) -> Result<SideFacts, NotRead> {
        let text = String::from_utf8_lossy(&self.bytes);
        let facts =
            loci_index::extract::extract(self.lang, &text).map_err(|_| NotRead::TooComplex)?;
        let symbols = loci_index::extract::in_document_order(facts.symbols);
        Ok(self.with(Arc::new(symbols)))
    }

    /// These bytes with their definitions, found or parsed before.
    pub fn with(self, symbols: Arc<Vec<Symbol>>) -> SideFacts {
        SideFacts {
            lang: self.lang,
            symbols,
            bytes: self.bytes,
        }
    }
}

/// Where one side of one file is read from.
pub(super) struct SideSource<'a> {
    /// The repository.
    pub repo: &'a Repo,
    /// The workspace root (working-tree files are read beneath it).
    pub root: &'a Path,
    /// Whether this side is the working tree.
    pub worktree: bool,
    /// Largest file read.
    pub max_bytes: u64,
}

impl SideSource<'_> {
    /// The bytes of `change`'s old (`new == false`) or new side, with the language
    /// they are read as; `Ok(None)` when the file does not exist on that side.
    pub fn read(&self, change: &FileChange, new: bool) -> Result<Option<SideBytes>, NotRead> {
        let path = if new {
            change.new_path.as_deref()
        } else {
            change.old_path.as_deref()
        };
        let Some(path) = path else {
            return Ok(None);
        };
        match change.content {
            Content::Text => {}
            Content::Binary => return Err(NotRead::Binary),
            Content::Symlink | Content::Submodule => return Err(NotRead::NotSource),
        }
        let bytes = if new && self.worktree {
            self.read_worktree(path)?
        } else {
            self.repo
                .blob(change, new, self.max_bytes)
                .map_err(|_| NotRead::Unreadable)?
                .ok_or(NotRead::TooLarge)?
        };
        let lang = Lang::detect(Path::new(path), &bytes[..bytes.len().min(256)])
            .ok_or(NotRead::NotSource)?;
        let lang = lang.for_content(Path::new(path), &String::from_utf8_lossy(&bytes));
        Ok(Some(SideBytes {
            path: path.to_string(),
            lang,
            bytes,
        }))
    }

    /// A working-tree file, beneath the root (no link followed out of it), bounded.
    fn read_worktree(&self, path: &str) -> Result<Vec<u8>, NotRead> {
        let file = loci_paths::open_file_beneath(self.root, Path::new(path))
            .map_err(|_| NotRead::Unreadable)?;
        let meta = file.metadata().map_err(|_| NotRead::Unreadable)?;
        if !meta.is_file() {
            return Err(NotRead::NotSource);
        }
        if meta.len() > self.max_bytes {
            return Err(NotRead::TooLarge);
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(self.max_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|_| NotRead::Unreadable)?;
        if bytes.len() as u64 > self.max_bytes {
            return Err(NotRead::TooLarge);
        }
        Ok(bytes)
    }
}
