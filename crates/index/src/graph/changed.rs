//! Whether the files an answer reads still are what the index read: an answer given
//! from an index that a file's edit has outrun says so, instead of a stamp that only
//! knows when the last sync ran. The check compares each file's size, modification
//! time and inode with the ones stored when it was indexed, as a sync does.

use std::os::unix::ffi::OsStrExt;

use super::handle::{Graph, QueryError};
use crate::walk::stat_of;

/// Most distinct files one answer checks (a page rarely names more; past it, the
/// first ones in answer order are checked).
pub const MAX_FILES_CHECKED: usize = 500;

impl Graph {
    /// The files among `paths` (as answers show them, relative to the root) that
    /// changed on disk, or disappeared, since the index last read them, in the order
    /// given, each once. A path the index does not hold is left out.
    pub fn changed_since_indexed<'p>(
        &self,
        paths: impl IntoIterator<Item = &'p str>,
    ) -> Result<Vec<String>, QueryError> {
        let err = QueryError::sqlite(&self.index_path);
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path_bytes, size, mtime_ns, inode FROM files WHERE path = ?1")
            .map_err(&err)?;
        let mut seen: Vec<&str> = Vec::new();
        let mut changed = Vec::new();
        for path in paths {
            if seen.contains(&path) {
                continue;
            }
            if seen.len() == MAX_FILES_CHECKED {
                break;
            }
            seen.push(path);
            let mut rows = stmt.query([path]).map_err(&err)?;
            while let Some(row) = rows.next().map_err(&err)? {
                let bytes: Vec<u8> = row.get(0).map_err(&err)?;
                let stored: (i64, i64, i64) = (
                    row.get(1).map_err(&err)?,
                    row.get(2).map_err(&err)?,
                    row.get(3).map_err(&err)?,
                );
                let abs = self.root.join(std::ffi::OsStr::from_bytes(&bytes));
                let now = std::fs::metadata(&abs).ok().map(|m| stat_of(&m));
                let same =
                    now.is_some_and(|s| (s.size as i64, s.mtime_ns, s.inode as i64) == stored);
                if !same {
                    changed.push(path.to_string());
                    break;
                }
            }
        }
        Ok(changed)
    }
}
