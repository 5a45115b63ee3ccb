//! One side of a changed file as loci's own extractor sees it: its bytes from the
//! commit's or the index's blob (nothing checked out, the live index untouched), or from
//! the working tree beneath the workspace root, and the definitions in them.

use std::io::Read;
use std::path::Path;

use loci_git::{Content, FileChange, Repo};
use loci_index::Lang;
use loci_index::extract::Symbol;

use super::kinds::NotRead;

/// A side's bytes and definitions.
pub(super) struct SideFacts {
    /// The language the extractor read it as.
    pub lang: Lang,
    /// Its definitions, parents before children.
    pub symbols: Vec<Symbol>,
    /// Its bytes (a definition's text is compared across sides to tell a move).
    pub bytes: Vec<u8>,
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
    /// The definitions of `change`'s old (`new == false`) or new side; `Ok(None)` when
    /// the file does not exist on that side.
    pub fn facts(&self, change: &FileChange, new: bool) -> Result<Option<SideFacts>, NotRead> {
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
        let head = |bytes: &[u8]| Lang::detect(Path::new(path), &bytes[..bytes.len().min(256)]);
        let bytes = if new && self.worktree {
            self.read_worktree(path)?
        } else {
            self.repo
                .blob(change, new, self.max_bytes)
                .map_err(|_| NotRead::Unreadable)?
                .ok_or(NotRead::TooLarge)?
        };
        let lang = head(&bytes).ok_or(NotRead::NotSource)?;
        let text = String::from_utf8_lossy(&bytes);
        let lang = lang.for_content(Path::new(path), &text);
        let facts = loci_index::extract::extract(lang, &text).map_err(|_| NotRead::TooComplex)?;
        Ok(Some(SideFacts {
            lang,
            symbols: facts.symbols,
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
