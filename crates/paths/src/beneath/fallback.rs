//! Best-effort fallback where directory handles are not available (not
//! Unix): paths are used as strings, and barrier 3 is re-run immediately
//! before each operation. A symlink swapped in between that re-check and the
//! operation is not caught here; see `docs/paths.md`.

use std::path::PathBuf;

use super::{
    BeneathError, DirEntry, FileKind, Listing, MAX_LIST_ENTRIES, Probe, check_root, sub_segment,
};
use crate::{ContainedPath, Root, Segment, contain};

/// A root, used by path (no handles on this platform).
#[derive(Debug)]
pub struct RootDir {
    root: Root,
}

/// A directory under a root, re-checked when opened.
#[derive(Debug)]
pub struct OpenedDir {
    path: PathBuf,
    target: ContainedPath,
    created: bool,
}

impl RootDir {
    /// Checks that the root exists and is a directory.
    pub fn open(root: &Root) -> Result<RootDir, BeneathError> {
        root.real_path()?;
        Ok(RootDir { root: root.clone() })
    }

    /// The root.
    pub fn root(&self) -> &Root {
        &self.root
    }

    fn recheck(&self, target: &ContainedPath) -> Result<ContainedPath, BeneathError> {
        check_root(&self.root, target)?;
        Ok(contain(&self.root, target.segment())?)
    }

    fn io(&self, op: &'static str, segment: &str, source: std::io::Error) -> BeneathError {
        let root = self.root.path().to_path_buf();
        let segment = segment.to_owned();
        match source.kind() {
            std::io::ErrorKind::NotFound => BeneathError::NotFound { root, segment },
            std::io::ErrorKind::NotADirectory => BeneathError::NotADirectory { root, segment },
            _ => BeneathError::Io {
                op,
                root,
                segment,
                source,
            },
        }
    }

    /// `mkdir -p`, one component at a time, re-checking containment first.
    pub fn create_dir_all(&self, target: &ContainedPath) -> Result<OpenedDir, BeneathError> {
        let target = self.recheck(target)?;
        let mut path = self.root.path().to_path_buf();
        let mut prefix = String::new();
        let mut created = false;
        for component in target.segment().components() {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(component);
            path.push(component);
            created = match std::fs::create_dir(&path) {
                Ok(()) => true,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
                Err(e) => return Err(self.io("mkdir", &prefix, e)),
            };
            if !path.is_dir() {
                return Err(BeneathError::NotADirectory {
                    root: self.root.path().to_path_buf(),
                    segment: prefix,
                });
            }
        }
        Ok(OpenedDir {
            path,
            target,
            created,
        })
    }

    /// Opens `target` (re-checked) without creating anything.
    pub fn open_dir(&self, target: &ContainedPath) -> Result<OpenedDir, BeneathError> {
        let target = self.recheck(target)?;
        let path = target.path().to_path_buf();
        let meta =
            std::fs::metadata(&path).map_err(|e| self.io("open", target.segment().as_str(), e))?;
        if !meta.is_dir() {
            return Err(BeneathError::NotADirectory {
                root: self.root.path().to_path_buf(),
                segment: target.segment().to_string(),
            });
        }
        Ok(OpenedDir {
            path,
            target,
            created: false,
        })
    }

    /// What is at `target`.
    pub fn probe(&self, target: &ContainedPath) -> Result<Probe, BeneathError> {
        let target = self.recheck(target)?;
        match std::fs::metadata(target.path()) {
            Ok(m) if m.is_dir() => Ok(Probe::Directory),
            Ok(_) => Ok(Probe::NotADirectory),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Probe::Missing),
            Err(e) => Err(self.io("open", target.segment().as_str(), e)),
        }
    }

    /// The real directories directly under `under` (the root when `None`).
    pub fn list_dirs(&self, under: Option<&ContainedPath>) -> Result<Listing, BeneathError> {
        let (dir, label) = match under {
            Some(target) => {
                let target = self.recheck(target)?;
                (target.path().to_path_buf(), target.segment().to_string())
            }
            None => (self.root.path().to_path_buf(), ".".to_owned()),
        };
        let mut found: Vec<(String, Segment)> = Vec::new();
        let mut skipped = 0;
        let read = std::fs::read_dir(&dir).map_err(|e| self.io("read_dir", &label, e))?;
        for entry in read {
            let entry = entry.map_err(|e| self.io("read_dir", &label, e))?;
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if !kind.is_dir() || kind.is_symlink() {
                continue;
            }
            let name = entry.file_name();
            let name = name.to_str();
            match name.and_then(|n| sub_segment(under, n).map(|s| (n.to_owned(), s))) {
                Some(pair) => found.push(pair),
                None => skipped += 1,
            }
        }
        found.sort();
        let truncated = found.len().saturating_sub(MAX_LIST_ENTRIES);
        found.truncate(MAX_LIST_ENTRIES);
        let entries = found
            .into_iter()
            .map(|(name, segment)| DirEntry {
                repository: dir.join(&name).join(".git").symlink_metadata().is_ok(),
                hidden: name.starts_with('.'),
                name,
                segment,
            })
            .collect();
        Ok(Listing {
            root: self.root.kind(),
            segment: under.map(|t| t.segment().clone()),
            entries,
            skipped,
            truncated,
        })
    }
}

impl OpenedDir {
    /// The contained path this directory was opened as.
    pub fn target(&self) -> &ContainedPath {
        &self.target
    }

    /// Whether the last component was created.
    pub fn created(&self) -> bool {
        self.created
    }

    /// What the entry `name` (one component) is, without following a
    /// symlink.
    pub fn probe_entry(&self, name: &str) -> Result<Option<FileKind>, BeneathError> {
        let io = |source: std::io::Error| BeneathError::Io {
            op: "stat",
            root: self.target.root().path().to_path_buf(),
            segment: format!("{}/{name}", self.target.segment()),
            source,
        };
        if !super::is_one_component(name) {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a single path component",
            )));
        }
        match self.path.join(name).symlink_metadata() {
            Ok(m) if m.is_symlink() => Ok(Some(FileKind::Symlink)),
            Ok(m) if m.is_dir() => Ok(Some(FileKind::Directory)),
            Ok(m) if m.is_file() => Ok(Some(FileKind::File)),
            Ok(_) => Ok(Some(FileKind::Other)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(e)),
        }
    }

    /// Whether the directory has no entries.
    pub fn is_empty(&self) -> Result<bool, BeneathError> {
        let mut read = std::fs::read_dir(&self.path).map_err(|source| BeneathError::Io {
            op: "read_dir",
            root: self.target.root().path().to_path_buf(),
            segment: self.target.segment().to_string(),
            source,
        })?;
        Ok(read.next().is_none())
    }
}
