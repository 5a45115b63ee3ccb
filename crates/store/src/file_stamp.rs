//! What a file looks like from outside, to tell cheaply (one `stat`) whether anything
//! wrote, truncated, replaced or re-permissioned it since it was last looked at.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// A file's device, inode, size, and modification and status-change times: any write,
/// truncation, replacement (an editor's rename) or `chmod` changes one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileStamp {
    /// The stamp of the file at `path`; `None` when it cannot be looked at (absent).
    pub fn of(path: &Path) -> Option<FileStamp> {
        let m = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }
}
